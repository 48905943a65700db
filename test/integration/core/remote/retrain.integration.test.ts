import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { OnnxRunner } from '../../../../src/core/estimators/onnx/onnxRunner';
import { RemoteError } from '../../../../src/core/remote/errors';
import { spawnProcess, type ProcessRunner } from '../../../../src/core/remote/processRunner';
import { RemoteRunner, type RunRecord } from '../../../../src/core/remote/remoteRun';
import { MAX_MODEL_BYTES, installModels, summarizeTraining } from '../../../../src/core/remote/retrain';
import { REPO_ROOT } from '../../../unit/fixtures';
import { SshServer, startForSuite, TORCH_PYTHON } from '../../sshServer';

/**
 * "Retrain estimator from collected data" end to end against a real OpenSSH server on 127.0.0.1:
 * a CPU collect run on the host, `python3 -m harness train` on its rows (started detached,
 * followed), the models downloaded, installed into a user models folder without replacing files
 * unasked, and loaded by the ONNX runner from there.
 */

const CONFIG = path.join(REPO_ROOT, 'harness', 'configs', 'cpu-smoke.yaml');
const REFERENCE = process.env.GPUMEMNET_DATA ?? path.join(REPO_ROOT, '..', 'shared', 'data', 'gpumemnet-a100');

describe('retraining the estimators on a remote host over a real OpenSSH server', function () {
  this.timeout(240_000);
  const server = new SshServer();
  const invocations: string[] = [];
  let workDir: string;
  let workspace: string;
  let collected: RunRecord;
  let collectedLocal: string;

  const recording: ProcessRunner = (command, args, options) => {
    invocations.push(command);
    return spawnProcess(command, args, options);
  };

  function runner(): RemoteRunner {
    return new RemoteRunner({
      target: { host: 'gpu-test', configFile: server.configFile, connectTimeoutSeconds: 5 },
      python: TORCH_PYTHON,
      workDir,
      harnessDir: path.join(REPO_ROOT, 'harness'),
      runner: recording,
      pollIntervalMs: 250,
    });
  }

  before(async function () {
    ({ workDir, workspace } = await startForSuite(this, server));
    // The data: a real CPU collect run on the host (3 tiny configurations).
    const remote = runner();
    collected = await remote.startCollect(CONFIG, 'cpu', 0.3);
    const result = await remote.follow(collected);
    assert.equal(result.state, 'finished', `${result.message ?? ''}\n${result.stderrTail}`);
    const { directory } = await remote.download(collected, workspace);
    collectedLocal = path.join(directory, 'out', 'results.jsonl');
    assert.equal(readFileSync(collectedLocal, 'utf8').split('\n').filter(Boolean).length, 3);
  });

  after(async () => {
    await server.dispose();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('trains on a collect run still on the host; CPU rows alone give no models, and the summary says what was used and why', async () => {
    const remote = runner();
    const record = await remote.startTrain({ data: { collectRun: collected }, families: ['mlp', 'cnn'], steps: 5, utilizationSteps: 5 });
    assert.equal(record.kind, 'train');
    assert.deepEqual(record.harnessArgs.slice(0, 3), ['train', '--data', `${collected.remoteDir}/out/results.jsonl`]);
    assert.ok(record.harnessArgs.includes('--no-reference-data'));
    assert.ok(existsSync(path.join(record.remoteDir, 'src', 'core', 'features', 'featureDefinition.json')), 'the feature definition is uploaded beside the harness');
    const result = await remote.follow(record);
    assert.equal(result.state, 'finished', `${result.message ?? ''}\n${result.stderrTail}`);
    const { directory } = await remote.download(record, workspace);
    const summary = summarizeTraining(directory, record);
    assert.deepEqual(summary.trained, []);
    assert.deepEqual(summary.notTrained, [
      'mlp: 0 successful runs (< 200); no ensemble, the analytical model serves this family',
      'cnn: 0 successful runs (< 200); no ensemble, the analytical model serves this family',
    ]);
    assert.match(summary.text, new RegExp(`^Trained on gpu-test:${collected.remoteDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/out/results\\.jsonl only \\(no reference data`));
    assert.match(summary.text, /No models came out: .*CPU rows/);
    assert.ok(invocations.every((command) => command === 'ssh' || command === 'scp'));
  });

  it('refuses a collect run whose rows are gone from the host, before starting anything', async () => {
    const remote = runner();
    const gone: RunRecord = { ...collected, runId: 'gone', remoteDir: `${workDir}/runs/gone` };
    await assert.rejects(remote.startTrain({ data: { collectRun: gone } }), (error: unknown) => error instanceof RemoteError && /out\/results\.jsonl is missing or empty/.test(error.message));
  });

  it('with the reference data uploaded: trains a real model, installs it into the models folder without replacing files unasked, and the runner loads it', async function () {
    if (!existsSync(path.join(REFERENCE, 'mlp.csv'))) {
      throw new Error(`cannot run: the GPUMemNet reference data is not at ${REFERENCE} (the repository expects shared/ beside it, or set GPUMEMNET_DATA)`);
    }
    const remote = runner();
    const record = await remote.startTrain({ data: { localFile: collectedLocal }, referenceDataDir: REFERENCE, families: ['mlp'], steps: 5, utilizationSteps: 5 });
    assert.ok(record.harnessArgs.includes('--reference-data'));
    const result = await remote.follow(record);
    assert.equal(result.state, 'finished', `${result.message ?? ''}\n${result.stderrTail}`);
    const { directory } = await remote.download(record, workspace);
    const summary = summarizeTraining(directory, record);
    assert.deepEqual(summary.trained.map((t) => t.family), ['mlp']);
    const sources = summary.trained[0]!.sources;
    assert.deepEqual(sources.map((s) => s.path), ['reference/mlp.csv', 'data/results.jsonl']);
    assert.ok(sources[0]!.runs > 200, `reference runs ${sources[0]!.runs}`);
    assert.equal(sources[1]!.runs, 0, 'CPU rows are read and skipped');
    assert.match(summary.text, /and the GPUMemNet reference data \(mlp\.csv(, cnn\.csv)?\)/);

    const modelsFolder = path.join(workspace, '.gpu-estimator', 'models');
    const first = await installModels(summary.trained, modelsFolder, async () => assert.fail('nothing to replace yet'));
    assert.deepEqual(first.installed.sort(), ['mlp.card.json', 'mlp.onnx']);
    const again = await installModels(summary.trained, modelsFolder, async () => assert.fail('identical files need no question'));
    assert.deepEqual(again.unchanged.sort(), ['mlp.card.json', 'mlp.onnx']);

    // The user's own edit is kept unless replacing it is confirmed.
    const card = path.join(modelsFolder, 'mlp.card.json');
    writeFileSync(card, readFileSync(card, 'utf8').replace('"family"', '"note": "mine", "family"'));
    const edited = readFileSync(card, 'utf8');
    let asked: string[] = [];
    const declined = await installModels(summary.trained, modelsFolder, async (files) => {
      asked = files;
      return false;
    });
    assert.deepEqual(asked, [card]);
    assert.deepEqual(declined.declined, ['mlp.card.json']);
    assert.deepEqual(declined.installed, []);
    assert.equal(readFileSync(card, 'utf8'), edited);
    const replaced = await installModels(summary.trained, modelsFolder, async () => true);
    assert.deepEqual(replaced.installed, ['mlp.card.json']);
    assert.equal(readFileSync(card, 'utf8'), readFileSync(summary.trained[0]!.card, 'utf8'));

    const warnings: string[] = [];
    const onnx = new OnnxRunner({ modelsDir: path.join(REPO_ROOT, 'models'), userModelsDir: modelsFolder, executionProvider: 'cpu', log: (level, message) => level === 'warning' && warnings.push(message) });
    try {
      const loaded = await onnx.model('mlp');
      assert.equal(loaded?.source, 'user', warnings.join('\n'));
      assert.equal(loaded?.modelPath, path.join(modelsFolder, 'mlp.onnx'));
      const bundled = JSON.parse(readFileSync(path.join(REPO_ROOT, 'models', 'mlp.card.json'), 'utf8')) as { sha256: string };
      assert.notEqual((loaded?.card as unknown as { sha256: string }).sha256, bundled.sha256, 'a model trained with 5 steps is not the bundled one');
      const out = await onnx.run('mlp', [loaded.card.selfTest!.features[0]!]);
      assert.ok(out && [...out.outputs[loaded.card.outputs.memory.name]!].every((v) => Number.isFinite(v) && v > 0));
      assert.deepEqual(warnings, []);
    } finally {
      await onnx.dispose();
    }
  });
});

describe('installing models from a hostile host over a real OpenSSH server', function () {
  this.timeout(120_000);
  const server = new SshServer();
  let workDir: string;
  let workspace: string;

  before(async function () {
    ({ workDir, workspace } = await startForSuite(this, server));
  });

  after(async () => {
    await server.dispose();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  /** A finished train run on the host whose models/ folder the host filled as it liked. */
  function hostileRun(runId: string, fill: (models: string) => void): { record: RunRecord; remote: RemoteRunner } {
    const remote = new RemoteRunner({ target: { host: 'gpu-test', configFile: server.configFile, connectTimeoutSeconds: 5 }, python: TORCH_PYTHON, workDir, harnessDir: path.join(REPO_ROOT, 'harness') });
    const record: RunRecord = { version: 1, runId, kind: 'train', host: 'gpu-test', sshConfigFile: server.configFile, python: TORCH_PYTHON, remoteDir: `${workDir}/runs/${runId}`, harnessArgs: [], device: 'cpu', label: 'hostile', startedAt: new Date().toISOString(), state: 'finished' };
    const models = path.join(record.remoteDir, 'models');
    mkdirSync(models, { recursive: true });
    writeFileSync(path.join(record.remoteDir, 'stdout.jsonl'), '');
    fill(models);
    return { record, remote };
  }

  const card = (family: string, file: string): string => readFileSync(path.join(REPO_ROOT, 'models', 'mlp.card.json'), 'utf8').replace('"family": "mlp"', `"family": "${family}"`).replace('"file": "mlp.onnx"', `"file": ${JSON.stringify(file)}`);
  const model = readFileSync(path.join(REPO_ROOT, 'models', 'mlp.onnx'));

  it('refuses cards naming other files, a model linked to a local file and an oversized model; only the valid pair lands in the models folder', async () => {
    const secret = path.join(server.dir, 'local-secret');
    writeFileSync(secret, 'not for the models folder\n');
    const first = hostileRun('20250101-000000-train-aaaaaa', (models) => {
      writeFileSync(path.join(models, 'mlp.card.json'), card('mlp', 'mlp.onnx'));
      symlinkSync(secret, path.join(models, 'mlp.onnx'));
      writeFileSync(path.join(models, 'cnn.card.json'), card('cnn', '../../etc/hostname'));
      writeFileSync(path.join(models, 'cnn.onnx'), model);
      writeFileSync(path.join(models, 'transformer.card.json'), card('transformer', 'payload.sh'));
      writeFileSync(path.join(models, 'transformer.onnx'), model);
      writeFileSync(path.join(models, 'payload.sh'), '#!/bin/sh\necho owned\n');
    });
    const second = hostileRun('20250101-000000-train-bbbbbb', (models) => {
      writeFileSync(path.join(models, 'mlp.card.json'), card('mlp', 'mlp.onnx'));
      writeFileSync(path.join(models, 'mlp.onnx'), model);
      writeFileSync(path.join(models, 'cnn.card.json'), card('cnn', 'cnn.onnx'));
      writeFileSync(path.join(models, 'cnn.onnx'), '');
      truncateSync(path.join(models, 'cnn.onnx'), MAX_MODEL_BYTES + 1); // sparse on the host; downloaded in full
    });
    const modelsFolder = path.join(workspace, 'user-models');

    const a = await first.remote.download(first.record, workspace);
    assert.deepEqual(a.skipped, ['models/mlp.onnx: a symbolic link']);
    const refusedA = summarizeTraining(a.directory, first.record, a.skipped);
    assert.deepEqual(refusedA.trained, []);
    assert.deepEqual(refusedA.refused, [
      'payload.sh: not a model or card of a known family (mlp, cnn, transformer)',
      'mlp.onnx: missing',
      'cnn.card.json: names "../../etc/hostname" instead of cnn.onnx',
      'transformer.card.json: names "payload.sh" instead of transformer.onnx',
    ]);
    assert.match(refusedA.text, /No model could be installed\. Not installed from the download: payload\.sh: .*\. Left on the host, not downloaded: models\/mlp\.onnx: a symbolic link\.$/);
    await installModels(refusedA.trained, modelsFolder, async () => assert.fail('nothing to replace'));

    const b = await second.remote.download(second.record, workspace);
    assert.deepEqual(b.skipped, []);
    const refusedB = summarizeTraining(b.directory, second.record, b.skipped);
    assert.deepEqual(refusedB.trained.map((t) => t.family), ['mlp']);
    assert.deepEqual(refusedB.refused, [`cnn.onnx: ${MAX_MODEL_BYTES + 1} bytes, over the ${MAX_MODEL_BYTES}-byte limit`]);
    assert.match(refusedB.text, /Models: mlp .* Not installed from the download: cnn\.onnx: \d+ bytes, over the/);
    const installed = await installModels(refusedB.trained, modelsFolder, async () => assert.fail('nothing to replace'));

    assert.deepEqual(installed.installed.sort(), ['mlp.card.json', 'mlp.onnx']);
    assert.deepEqual(readdirSync(modelsFolder).sort(), ['mlp.card.json', 'mlp.onnx'], 'nothing but the valid pair lands in the models folder');
    assert.deepEqual(readFileSync(path.join(modelsFolder, 'mlp.onnx')), model);
  });
});
