import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunRecord } from '../../../../src/core/remote/remoteRun';
import { MAX_MODEL_BYTES, installModels, summarizeTraining } from '../../../../src/core/remote/retrain';

const RECORD: RunRecord = {
  version: 1,
  runId: 'r',
  kind: 'train',
  host: 'gpu',
  python: 'python3',
  remoteDir: '.gpu-estimator/runs/r',
  harnessArgs: [],
  device: 'cpu',
  label: 'results.jsonl',
  startedAt: '2025-01-01T00:00:00Z',
  state: 'finished',
};

const card = (family: string, file: unknown = `${family}.onnx`): string => JSON.stringify({ family, file, training: { data: [{ path: 'reference/mlp.csv', runs: 300, gpu: 'A100', what: 'reference' }], runs: { trainSuccessful: 300 } } });

describe('remote: a downloaded train run is read as untrusted', () => {
  let root: string;
  let download: string;
  let models: string;
  let installed: string;
  let secret: string;

  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'gpu-estimator-retrain-'));
    download = path.join(root, 'download');
    models = path.join(download, 'models');
    installed = path.join(root, 'user-models');
    secret = path.join(root, 'secret.txt');
    mkdirSync(models, { recursive: true });
    writeFileSync(secret, 'local secret\n');
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('installs a good family and refuses cards naming other files, linked models, oversized models and stray files, saying why', async () => {
    writeFileSync(path.join(models, 'mlp.card.json'), card('mlp'));
    writeFileSync(path.join(models, 'mlp.onnx'), 'model bytes');
    writeFileSync(path.join(models, 'cnn.card.json'), card('cnn', '../../etc/hostname'));
    writeFileSync(path.join(models, 'cnn.onnx'), 'model bytes');
    writeFileSync(path.join(models, 'transformer.card.json'), card('transformer', 'payload.sh'));
    writeFileSync(path.join(models, 'transformer.onnx'), 'model bytes');
    writeFileSync(path.join(models, 'payload.sh'), 'echo owned\n');
    const summary = summarizeTraining(download, RECORD);
    assert.deepEqual(summary.trained.map((t) => t.family), ['mlp']);
    assert.deepEqual(summary.trained[0]!.sources, [{ path: 'reference/mlp.csv', runs: 300, gpu: 'A100', what: 'reference' }]);
    assert.deepEqual(summary.refused, [
      'payload.sh: not a model or card of a known family (mlp, cnn, transformer)',
      'cnn.card.json: names "../../etc/hostname" instead of cnn.onnx',
      'transformer.card.json: names "payload.sh" instead of transformer.onnx',
    ]);
    assert.match(summary.text, /Not installed from the download: payload\.sh: .*cnn\.card\.json: names "\.\.\/\.\.\/etc\/hostname"/);
    await installModels(summary.trained, installed, async () => assert.fail('nothing to replace'));
    assert.deepEqual(readdirSync(installed).sort(), ['mlp.card.json', 'mlp.onnx']);
  });

  it('refuses a model that is a link to a local file, a FIFO, or over the size cap', () => {
    writeFileSync(path.join(models, 'mlp.card.json'), card('mlp'));
    symlinkSync(secret, path.join(models, 'mlp.onnx'));
    writeFileSync(path.join(models, 'cnn.card.json'), card('cnn'));
    writeFileSync(path.join(models, 'cnn.onnx'), '');
    truncateSync(path.join(models, 'cnn.onnx'), MAX_MODEL_BYTES + 1); // sparse: no disk used
    writeFileSync(path.join(models, 'transformer.card.json'), card('transformer'));
    execFileSync('mkfifo', [path.join(models, 'transformer.onnx')]);
    const summary = summarizeTraining(download, RECORD);
    assert.deepEqual(summary.trained, []);
    assert.deepEqual(summary.refused, [
      'mlp.onnx: a symbolic link, not a file',
      `cnn.onnx: ${MAX_MODEL_BYTES + 1} bytes, over the ${MAX_MODEL_BYTES}-byte limit`,
      'transformer.onnx: not a regular file',
    ]);
    assert.match(summary.text, /No model could be installed\. Not installed from the download: mlp\.onnx: a symbolic link/);
  });

  it('refuses a linked card, a card that is not JSON, and a models folder that is a link, without throwing', () => {
    symlinkSync(secret, path.join(models, 'mlp.card.json'));
    writeFileSync(path.join(models, 'mlp.onnx'), 'model bytes');
    writeFileSync(path.join(models, 'cnn.card.json'), '{"file": "cnn.onnx"');
    writeFileSync(path.join(models, 'cnn.onnx'), 'model bytes');
    writeFileSync(path.join(models, 'transformer.card.json'), '[]');
    writeFileSync(path.join(models, 'transformer.onnx'), 'model bytes');
    const summary = summarizeTraining(download, RECORD);
    assert.deepEqual(summary.trained, []);
    assert.equal(summary.refused[0], 'mlp.card.json: a symbolic link, not a file');
    assert.match(summary.refused[1]!, /^cnn\.card\.json: not a model card \(.*JSON/);
    assert.equal(summary.refused[2], 'transformer.card.json: not a model card (not a JSON object)');

    // models/ itself pointing at another folder with a valid-looking model is refused too.
    const elsewhere = path.join(root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(path.join(elsewhere, 'mlp.card.json'), card('mlp'));
    writeFileSync(path.join(elsewhere, 'mlp.onnx'), readFileSync(secret));
    rmSync(models, { recursive: true });
    symlinkSync(elsewhere, models);
    const linked = summarizeTraining(download, RECORD);
    assert.deepEqual(linked.trained, []);
    assert.deepEqual(linked.refused, ['models: not a folder of its own (a link or a file)']);
  });
});
