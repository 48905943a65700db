import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runDryRun, type DryRunRequest } from '../../../../src/core/dryRun/dryRunProcess';
import { dryRunSpecFor, modelFedByLoader } from '../../../../src/core/dryRun/dryRunSpec';
import type { FileEstimate } from '../../../../src/core/estimate/fileEstimate';
import type { ProcessRunner } from '../../../../src/core/remote/processRunner';
import { estimate as estimateSource, fixture } from '../../fixtures';

const estimateFixture = (name: string) => estimateSource(fixture(name));

const REPO = path.resolve(__dirname, '..', '..', '..', '..', '..');
const base: DryRunRequest = { script: '/project/train.py', harnessParent: REPO, python: 'python3', spec: { tensors: [], argv: [] } };

function runner(result: { code?: number; stdout?: string; stderr?: string } | Error): { run: ProcessRunner; calls: { command: string; args: readonly string[]; env?: Readonly<Record<string, string>> }[] } {
  const calls: { command: string; args: readonly string[]; env?: Readonly<Record<string, string>> }[] = [];
  const run: ProcessRunner = (command, args, options) => {
    calls.push({ command, args, ...(options?.env ? { env: options.env } : {}) });
    if (result instanceof Error) return Promise.reject(result);
    return Promise.resolve({ code: result.code ?? 0, signal: null, stdout: result.stdout ?? '', stderr: result.stderr ?? '' });
  };
  return { run, calls };
}

describe('dry run process', () => {
  it('runs the harness module with the spec, the steps and the harness importable, and replays what it prints', async () => {
    const { run, calls } = runner({ stdout: `${JSON.stringify({ ok: true, steps: 3, cudnn: false, seconds: 0.5, torch: '2.4.1', events: [[1, 3 * 1024 * 1024, 1]] })}\n` });
    const result = await runDryRun({ ...base, runner: run, steps: 3 });
    assert.ok(result.ok);
    assert.equal(result.torchVersion, '2.4.1');
    assert.equal(result.figure.peakReservedMiB, 20);
    assert.equal(calls[0]!.command, 'python3');
    assert.deepEqual(calls[0]!.args.slice(0, 3), ['-m', 'harness.dry_run', '/project/train.py']);
    assert.equal(calls[0]!.args[calls[0]!.args.indexOf('--steps') + 1], '3');
    assert.ok(calls[0]!.env?.PYTHONPATH?.split(path.delimiter).includes(REPO));
  });

  it('puts the configs of the hub checkpoints the script names into the spec the harness reads', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'dry-run-hub-'));
    try {
      const script = path.join(folder, 'train.py');
      writeFileSync(script, 'model = AutoModelForCausalLM.from_pretrained("gpt2")\n');
      let spec: { hubConfigs?: Record<string, { model_type?: string }> } = {};
      const run: ProcessRunner = (_command, args) => {
        spec = JSON.parse(readFileSync(args[args.indexOf('--spec') + 1]!, 'utf8')) as typeof spec;
        return Promise.resolve({ code: 0, signal: null, stdout: `${JSON.stringify({ ok: true, steps: 1, cudnn: false, seconds: 0.1, events: [] })}\n`, stderr: '' });
      };
      await runDryRun({ ...base, script, runner: run });
      assert.equal(spec.hubConfigs?.gpt2?.model_type, 'gpt2');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('says what went wrong, never throws: no Python, no torch, the script failed, garbled output, timeout', async () => {
    const enoent = Object.assign(new Error('spawn nope ENOENT'), { code: 'ENOENT' });
    const cases: Array<[Parameters<typeof runner>[0], RegExp]> = [
      [enoent, /no Python at python3/],
      [{ code: 1, stderr: "ModuleNotFoundError: No module named 'torch'" }, /PyTorch is not installed for python3/],
      [{ code: 3, stdout: JSON.stringify({ ok: false, error: 'ValueError: half-typed (train.py line 4)' }) }, /^ValueError: half-typed \(train\.py line 4\)$/],
      [{ code: 1, stdout: 'hello\n', stderr: 'Traceback ...\nMemoryError' }, /printed no result \(MemoryError\)/],
      [{ code: null as unknown as number, stderr: '\n(timed out after 120000 ms)' }, /took longer than 120 s/],
    ];
    for (const [outcome, message] of cases) {
      const result = await runDryRun({ ...base, runner: runner(outcome).run });
      assert.equal(result.ok, false);
      assert.match(result.ok ? '' : result.error, message);
    }
  });

  it('stops a real run when cancelled', async function () {
    this.timeout(60000);
    const folder = mkdtempSync(path.join(tmpdir(), 'dry-run-cancel-'));
    try {
      const script = path.join(folder, 'slow.py');
      writeFileSync(script, 'import time\ntime.sleep(60)\n');
      const abort = new AbortController();
      const started = Date.now();
      setTimeout(() => abort.abort(), 1500);
      const result = await runDryRun({ ...base, script, python: '/usr/bin/python3', signal: abort.signal });
      assert.deepEqual(result, { ok: false, error: 'the dry run was cancelled' });
      assert.ok(Date.now() - started < 20000, `stopped after ${Date.now() - started} ms`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('dry run spec', () => {
  it('gives an image model float batches of its input shape with class labels, a token model ids and next-token labels', () => {
    const model = (type: string, inputShape: number[] | null) => ({ inputShape, layerTable: { rows: [{ type }] }, assumptions: [] }) as unknown as Parameters<typeof dryRunSpecFor>[0];
    assert.deepEqual(dryRunSpecFor(model('Conv2d', [3, 32, 32])).tensors, [{ shape: [3, 32, 32], dtype: 'float32' }, { shape: [], dtype: 'int64' }]);
    assert.deepEqual(dryRunSpecFor(model('Embedding', [256])).tensors, [{ shape: [256], dtype: 'int64' }, { shape: [256], dtype: 'int64' }]);
    assert.equal(dryRunSpecFor(model('Linear', [784]), { batchSize: 512 }).batchSize, 512);
    assert.equal(dryRunSpecFor(undefined).tensors.length, 2);
  });

  it('gives a text classifier one label per sample, a catalog language model (parameters listed first) token ids and next tokens', () => {
    type Row = { type: string; outputShape?: number[]; params?: number };
    const model = (rows: Row[], inputShape: number[] | null) => ({ inputShape, layerTable: { rows }, assumptions: [] }) as unknown as Parameters<typeof dryRunSpecFor>[0];
    const classifier = model([{ type: 'Embedding', outputShape: [64, 300], params: 20_000 * 300 }, { type: 'LSTM', outputShape: [64, 512] }, { type: 'Linear', outputShape: [2] }], [64]);
    assert.deepEqual(dryRunSpecFor(classifier).tensors, [{ shape: [64], dtype: 'int64' }, { shape: [], dtype: 'int64' }]);
    const gpt2 = model([{ type: 'Parameter' }, { type: 'Embedding', outputShape: [1024, 512], params: 50_257 * 512 }, { type: 'Linear', outputShape: [1024, 50_257] }, { type: 'Dropout' }], [1024]);
    assert.deepEqual(dryRunSpecFor(gpt2).tensors, [{ shape: [1024], dtype: 'int64' }, { shape: [1024], dtype: 'int64' }]);
    // A tagger whose input shape the analysis did not find: its head's shape is not per sample, so one tag per token.
    const tagger = model([{ type: 'Embedding', params: 20_000 * 256 }, { type: 'LSTM' }, { type: 'Linear', outputShape: [17] }], null);
    assert.deepEqual(dryRunSpecFor(tagger).tensors[1], { shape: [128], dtype: 'int64' });
    // A segmentation network (scores per pixel of its input): a mask per sample, class ids per pixel
    // for several classes (cross-entropy's targets), one channel for a binary mask.
    const unet = model([{ type: 'Conv2d', outputShape: [32, 256, 256] }, { type: 'Conv2d', outputShape: [21, 256, 256] }], [3, 256, 256]);
    assert.deepEqual(dryRunSpecFor(unet).tensors[1], { shape: [256, 256], dtype: 'int64' });
    const binary = model([{ type: 'Conv2d', outputShape: [32, 256, 256] }, { type: 'Conv2d', outputShape: [1, 256, 256] }], [3, 256, 256]);
    assert.deepEqual(dryRunSpecFor(binary).tensors[1], { shape: [1, 256, 256], dtype: 'int64' });
    // A conditional GAN's class embedding beside an image input: images in.
    const conditional = model([{ type: 'Conv2d', outputShape: [64, 16, 16] }, { type: 'Embedding', outputShape: [64], params: 640 }], [3, 32, 32]);
    assert.deepEqual(dryRunSpecFor(conditional).tensors[0], { shape: [3, 32, 32], dtype: 'float32' });
  });

  it('passes the assumed values, and a --batch-size under the name the script keeps its batch size in, which wins over a --set of it', () => {
    const model = (key?: string) => ({ inputShape: [784], layerTable: { rows: [{ type: 'Linear' }] }, assumptions: [{ name: 'batchSize', value: '64', origin: 'given by the user', line: null, ...(key ? { key } : {}) }] }) as unknown as Parameters<typeof dryRunSpecFor>[0];
    assert.equal(dryRunSpecFor(model('BATCH_SIZE')).assume, undefined);
    assert.deepEqual(dryRunSpecFor(model('BATCH_SIZE'), { assume: { lr: 0.1 } }).assume, { lr: 0.1 });
    assert.deepEqual(dryRunSpecFor(model('BATCH_SIZE'), { batchSize: 64, assume: { BATCH_SIZE: 8 } }).assume, { BATCH_SIZE: 64 });
    // A DataLoader's batch size is replaced in the loader (spec.batchSize), not by a name.
    assert.equal(dryRunSpecFor(model(), { batchSize: 64 }).assume, undefined);
  });

  it("shapes the fake batches like the input of the model the loader feeds: a GAN's discriminator, not its generator fed noise", () => {
    const model = (name: string, origin: string, trained = true) => ({ name, trainingLoops: trained ? [{ startLine: 1, endLine: 2 }] : [], assumptions: [{ name: 'inputShape', value: '', origin, line: 1 }] });
    const file = (...models: ReturnType<typeof model>[]) => ({ models }) as unknown as FileEstimate;
    assert.equal(modelFedByLoader(file(model('netG', 'randn(...)'), model('netD', 'ImageFolder images after CenterCrop(64)')))?.name, 'netD');
    assert.equal(modelFedByLoader(file(model('generator', 'the tensors passed in generator(z)'), model('critic', 'CIFAR10 samples')))?.name, 'critic');
    assert.equal(modelFedByLoader(file(model('teacher', 'CIFAR10 samples', false), model('student', 'randn(...)')))?.name, 'student', 'a trained model before an untrained one');
    assert.equal(modelFedByLoader(file())?.name, undefined);
  });

  it("gives a script whose model the analysis does not know (diffusers' UNet2DModel) batches shaped like its data", async () => {
    const estimate = await estimateFixture('ddpm_unconditional');
    assert.equal(estimate.models.length, 0);
    // ImageFolder's RGB images after CenterCrop(resolution), resolution = 64.
    assert.deepEqual(estimate.dataShape, [3, 64, 64]);
    assert.deepEqual(dryRunSpecFor(modelFedByLoader(estimate), { dataShape: estimate.dataShape }).tensors[0], { shape: [3, 64, 64], dtype: 'float32' });
    // A model's own input shape wins over the data's (its input is what the loader feeds it).
    const model = { inputShape: [3, 32, 32], layerTable: { rows: [{ type: 'Conv2d' }] }, assumptions: [] } as unknown as Parameters<typeof dryRunSpecFor>[0];
    assert.deepEqual(dryRunSpecFor(model, { dataShape: [3, 64, 64] }).tensors[0]?.shape, [3, 32, 32]);
  });

  it("gives a Stable Diffusion script's hub dataset the size of the images its transforms make", async () => {
    const estimate = await estimateFixture('sd_text_to_image_lora');
    assert.equal(estimate.models.length, 0);
    // `Resize(args.resolution)`, then `CenterCrop(...) if ... else RandomCrop(args.resolution)`: --resolution 512.
    assert.deepEqual(estimate.dataShape, [3, 512, 512]);
    assert.ok(estimate.warnings.some((w) => /'runwayml\/stable-diffusion-v1-5' is a Stable Diffusion pipeline/.test(w)), estimate.warnings.join('\n'));
  });
});
