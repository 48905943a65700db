import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { RemoteError } from '../../../../src/core/remote/errors';
import type { ProcessRunner } from '../../../../src/core/remote/processRunner';
import { RemoteRunner, type RunRecord } from '../../../../src/core/remote/remoteRun';
import { REPO_ROOT } from '../../fixtures';

/** startTrain's arguments and upload, with a recording process runner in place of ssh and scp. */
describe('RemoteRunner.startTrain (no ssh)', () => {
  let uploaded: string[] = [];
  let started: string[] = [];
  let rowsPresent = true;
  const fake: ProcessRunner = async (command, args) => {
    if (command === 'scp') {
      const source = args[args.length - 2]!;
      uploaded = listFiles(source);
      return { code: 0, signal: null, stdout: '', stderr: '' };
    }
    const [script = '', ...words] = quotedWords(args[args.length - 1]!);
    if (script.includes('nohup')) {
      started = words;
      return { code: 0, signal: null, stdout: 'pid=4242\n', stderr: '' };
    }
    if (script.includes('test -s')) return { code: 0, signal: null, stdout: rowsPresent ? 'present\n' : '', stderr: '' };
    return { code: 0, signal: null, stdout: '', stderr: '' };
  };
  const runner = (featuresDir?: string) =>
    new RemoteRunner({ target: { host: 'gpu-box' }, python: 'python3', workDir: '~/.gpu-estimator', harnessDir: path.join(REPO_ROOT, 'harness'), runner: fake, ...(featuresDir ? { featuresDir } : {}) });
  const collect: RunRecord = { version: 1, runId: '20261122-100000-collect-abc123', kind: 'collect', host: 'gpu-box', python: 'python3', remoteDir: '.gpu-estimator/runs/20261122-100000-collect-abc123', harnessArgs: [], device: 'cuda', label: 'collect.yaml', startedAt: '', state: 'finished' };
  let scratch: string;
  beforeEach(() => {
    uploaded = [];
    started = [];
    rowsPresent = true;
    scratch = mkdtempSync(path.join(tmpdir(), 'gpu-estimator-train-'));
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('reaches a collect run on the host through the runs folder, uploads no rows, and says it trains without reference data', async () => {
    const record = await runner().startTrain({ data: { collectRun: collect }, families: ['mlp'], steps: 7, utilizationSteps: 3 });
    const harnessArgs = started.slice(started.indexOf('python3') + 1);
    assert.deepEqual(harnessArgs, ['train', '--data', '../20261122-100000-collect-abc123/out/results.jsonl', '--families', 'mlp', '--out', 'models', '--work', 'work', '--steps', '7', '--utilization-steps', '3', '--no-reference-data']);
    assert.deepEqual(record.training, { data: `gpu-box:${collect.remoteDir}/out/results.jsonl`, reference: [], families: ['mlp'], steps: 7, utilizationSteps: 3 });
    assert.ok(uploaded.includes(path.join('src', 'core', 'features', 'featureDefinition.json')) && uploaded.includes(path.join('src', 'core', 'features', 'analyticalModel.json')));
    assert.ok(uploaded.includes(path.join('harness', 'training', 'cli.py')));
    assert.ok(!uploaded.some((file) => file.startsWith('data') || file.startsWith('reference')), uploaded.join(' '));
  });

  it('uploads a local results.jsonl and whichever reference CSVs exist', async () => {
    const rows = path.join(scratch, 'results.jsonl');
    writeFileSync(rows, '{}\n');
    writeFileSync(path.join(scratch, 'cnn.csv'), 'Depth\n');
    const record = await runner().startTrain({ data: { localFile: rows }, referenceDataDir: scratch });
    assert.ok(started.includes('--reference-data') && !started.includes('--no-reference-data'));
    assert.ok(uploaded.includes(path.join('data', 'results.jsonl')) && uploaded.includes(path.join('reference', 'cnn.csv')) && !uploaded.includes(path.join('reference', 'mlp.csv')));
    assert.deepEqual(record.training?.reference, [path.join(scratch, 'cnn.csv')]);
    assert.deepEqual(record.training?.families, ['mlp', 'cnn', 'transformer']);
    assert.equal(record.label, 'results.jsonl + reference data');
  });

  it('refuses, before starting anything: rows gone from the host, a run on another host or of another kind, bad options, no feature definition', async () => {
    const refused = async (promise: Promise<unknown>, message: RegExp) => {
      await assert.rejects(promise, (error: unknown) => error instanceof RemoteError && message.test(error.message));
      assert.deepEqual(started, []);
    };
    rowsPresent = false;
    await refused(runner().startTrain({ data: { collectRun: collect } }), /out\/results\.jsonl is missing or empty/);
    rowsPresent = true;
    await refused(runner().startTrain({ data: { collectRun: { ...collect, host: 'other-box' } } }), /is on other-box, not gpu-box/);
    await refused(runner().startTrain({ data: { collectRun: { ...collect, kind: 'measure' } } }), /is a measure run/);
    await refused(runner().startTrain({ data: { collectRun: collect }, families: ['mlp; rm -rf ~'] }), /families must be names/);
    await refused(runner().startTrain({ data: { collectRun: collect }, steps: 0 }), /steps must be a positive whole number/);
    await refused(runner().startTrain({ data: { localFile: path.join(scratch, 'nope.jsonl') } }), /does not exist/);
    await refused(runner(scratch).startTrain({ data: { collectRun: collect } }), /featureDefinition\.json is missing/);
  });
});

/** The single-quoted words of `sh -c 'SCRIPT' sh 'ARG1' ...` (as sshArgs writes it), unquoted. */
function quotedWords(command: string): string[] {
  return [...command.matchAll(/'((?:[^']|'\\'')*)'/g)].map((match) => match[1]!.replace(/'\\''/g, "'"));
}

function listFiles(root: string, prefix = ''): string[] {
  if (!existsSync(path.join(root, prefix))) return [];
  const files: string[] = [];
  for (const entry of readdirSync(path.join(root, prefix), { withFileTypes: true })) {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) files.push(...listFiles(root, relative));
    else files.push(relative);
  }
  return files;
}
