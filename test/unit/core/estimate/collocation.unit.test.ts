import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { collocationOf, MEMORY_CAP_NOTE, memoryCaps } from '../../../../src/core/estimate/collocation';
import { estimateCurve } from '../../../../src/core/estimate/outlook';
import type { FileEstimate } from '../../../../src/core/estimate/fileEstimate';
import { withLearnedEstimates } from '../../../../src/core/estimate/learnedPass';
import { RUNTIME_OVERHEAD_MIB } from '../../../../src/core/estimators/analytical';
import { OnnxRunner } from '../../../../src/core/estimators/onnx/onnxRunner';
import { findGpuProfile, migMemoryMiB } from '../../../../src/core/gpus/gpuProfiles';
import { estimate, REPO_ROOT } from '../../fixtures';

const A100 = findGpuProfile('a100-40gb')!;
const T4 = findGpuProfile('t4-16gb')!;
const H100 = findGpuProfile('h100-80gb')!;
const example = (name: string) => readFileSync(path.join(REPO_ROOT, 'examples', name), 'utf8');
const MLP = (batch: number, width = 4096) => `import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(1024, ${width}), nn.ReLU(), nn.Linear(${width}, 10))
optimizer = torch.optim.Adam(model.parameters())
x = torch.randn(${batch}, 1024)
loss = model(x).sum()
`;

describe('collocation of training jobs on one GPU', () => {
  let runner: OnnxRunner;
  before(() => {
    runner = new OnnxRunner({ modelsDir: path.join(REPO_ROOT, 'models'), executionProvider: 'cpu' });
  });
  after(() => runner.dispose());
  const learned = async (file: string, source: string, gpu = A100): Promise<FileEstimate> => ({
    ...(await withLearnedEstimates(await estimate(source, { gpu }), runner, { safetyMargin: 0.1 })),
    file,
  });

  it('adds the jobs’ peaks (each its own process and CUDA context) and takes the verdict of the sum', async () => {
    const a = await learned('a.py', example('cnn_cifar10.py'));
    const b = await learned('b.py', example('mlp_mnist.py'));
    const together = collocationOf([a, b], A100, 0.1);
    const [ja, jb] = together.jobs;
    assert.equal(ja!.memoryMiB, a.models[0]!.memory.estimateMiB);
    assert.equal(jb!.memoryMiB, b.models[0]!.memory.estimateMiB);
    assert.equal(together.totalMiB, ja!.memoryMiB! + jb!.memoryMiB!);
    assert.equal(together.fits, true);
    assert.equal(together.risk, 'fits');
    assert.deepEqual(ja!.models, ['model']);
    assert.equal(ja!.batchSize, 256);
  });

  it('warns the other jobs of one that turns on cudnn.benchmark, and says nothing of it for one job alone', async () => {
    const benchmark = example('cnn_cifar10.py').replace(/^import torch$/m, 'import torch\ntorch.backends.cudnn.benchmark = True');
    assert.notEqual(benchmark, example('cnn_cifar10.py'));
    const a = await learned('a.py', benchmark);
    const b = await learned('b.py', example('mlp_mnist.py'));
    const note = collocationOf([a, b], A100, 0.1).notes.find((n) => n.includes('cudnn.benchmark'));
    assert.match(note ?? '', /^a\.py turns on cudnn\.benchmark: .*can leave the other jobs too little/);
    assert.ok(!collocationOf([a], A100, 0.1).notes.some((n) => n.includes('cudnn.benchmark')));
    assert.ok(!collocationOf([{ ...b, file: 'c.py' }, b], A100, 0.1).notes.some((n) => n.includes('cudnn.benchmark')));
  });

  it('finds each job’s largest batch with the others at theirs: it fits, one more does not, and it is below the batch alone', async () => {
    const a = await learned('a.py', MLP(512));
    const b = await learned('b.py', MLP(4096, 8192));
    const together = collocationOf([a, b], A100, 0.1);
    const job = together.jobs[0]!;
    const model = a.models[0]!;
    const at = estimateCurve(model);
    const room = A100.memoryMiB - together.jobs[1]!.memoryMiB!;
    assert.ok(job.maxBatchSizeTogether! > 512);
    assert.ok(at(job.maxBatchSizeTogether!) <= room);
    assert.ok(at(job.maxBatchSizeTogether! + 1) > room);
    assert.ok(job.maxBatchSizeTogether! < model.maxBatchSize!, `${job.maxBatchSizeTogether} vs alone ${model.maxBatchSize}`);
  });

  it('says out of memory when the sum is over the GPU, though each job fits alone; tight within the margin', async () => {
    const probe = (await learned('probe.py', MLP(256), T4)).models[0]!;
    const batch = Math.floor(probe.maxBatchSize! * 0.6);
    const big = await learned('big.py', MLP(batch), T4);
    assert.equal(big.models[0]!.fits, true, `alone: ${big.models[0]!.memory.estimateMiB} MiB`);
    const twice = collocationOf([big, { ...big, file: 'again.py' }], T4, 0.1);
    assert.equal(twice.fits, false);
    assert.equal(twice.risk, 'oom');
    assert.ok(twice.jobs[0]!.maxBatchSizeTogether! < batch);
    const total = twice.totalMiB!;
    assert.equal(collocationOf([big, { ...big, file: 'again.py' }], { ...T4, memoryMiB: Math.ceil(total / 0.95) }, 0.1).risk, 'tight');
  });

  it('counts the models of one script as one process: estimates added, one CUDA context', async () => {
    const source = MLP(256) + 'critic = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 1))\ny = critic(x)\n';
    const file = await learned('gan.py', source);
    assert.equal(file.models.length, 2);
    const job = collocationOf([file, await learned('b.py', MLP(64))], A100, 0.1).jobs[0]!;
    const sum = file.models.reduce((total, model) => total + model.memory.estimateMiB!, 0);
    assert.equal(job.memoryMiB, sum - RUNTIME_OVERHEAD_MIB);
    assert.ok(job.notes.some((note) => /2 models counted as trained in one process/.test(note)), job.notes.join(' | '));
  });

  it('adds only the weights of a model the script runs for inference (a teacher under torch.no_grad()) to the trained model\'s peak', async () => {
    const source = MLP(256) + 'teacher = nn.Sequential(nn.Linear(1024, 8192), nn.ReLU(), nn.Linear(8192, 10))\nwith torch.no_grad():\n    soft = teacher(x)\n';
    const file = await learned('distill.py', source);
    const [student, teacher] = [file.models.find((m) => m.name === 'model')!, file.models.find((m) => m.name === 'teacher')!];
    assert.equal(teacher.inferenceOnly, true);
    assert.equal(student.inferenceOnly, undefined);
    const job = collocationOf([file, await learned('b.py', MLP(64))], A100, 0.1).jobs[0]!;
    assert.equal(job.memoryMiB, student.memory.estimateMiB! + teacher.memory.breakdown!.weightsMiB);
    assert.ok(job.notes.some((note) => /teacher runs inference only.*its weights are added to the trained model's peak/.test(note)), job.notes.join(' | '));
  });

  it('names the smallest MIG profile each job fits alone; none past the largest slice; nothing for a GPU without MIG', async () => {
    const small = await learned('small.py', MLP(64));
    const mid = await learned('mid.py', MLP(20000));
    const together = collocationOf([small, mid], A100, 0.1);
    assert.deepEqual(together.jobs[0]!.migProfile, { name: '1g.5gb', memoryMiB: 5120 });
    const midJob = together.jobs[1]!;
    assert.ok(midJob.migProfile !== null && midJob.migProfile !== 'none');
    const profiles = A100.mig!;
    const chosen = profiles.findIndex((p) => p.name === (midJob.migProfile as { name: string }).name);
    assert.ok(midJob.memoryMiB! <= migMemoryMiB(A100, profiles[chosen]!));
    if (chosen > 0) assert.ok(midJob.memoryMiB! > migMemoryMiB(A100, profiles[chosen - 1]!));
    const huge = { ...mid, models: mid.models.map((m) => ({ ...m, memory: { ...m.memory, estimateMiB: A100.memoryMiB + 1 } })) };
    assert.equal(collocationOf([small, huge], A100, 0.1).jobs[1]!.migProfile, 'none');
    assert.equal(collocationOf([small, mid], T4, 0.1).jobs[0]!.migProfile, null);
  });

  it('rates interference by a stated rule over the SMACT classes, unknown where a job has none', async () => {
    const base = await learned('x.py', MLP(64));
    const job = (file: string, smact: 'low' | 'medium' | 'high' | null): FileEstimate => ({ ...base, file, models: base.models.map((m) => ({ ...m, utilization: { ...m.utilization, smact } })) });
    const level = (...classes: ('low' | 'medium' | 'high' | null)[]) => collocationOf(classes.map((c, i) => job(`j${i}.py`, c)), A100, 0.1).interference;
    assert.equal(level('high', 'high').level, 'high');
    assert.equal(level('high', 'medium', 'medium').level, 'high');
    assert.equal(level('high', 'low').level, 'medium');
    assert.equal(level('medium', 'low').level, 'low');
    assert.equal(level('medium', null).level, 'unknown');
    assert.equal(level('high', 'high', null).level, 'high');
    assert.match(level('high', 'low').rule, /^a rule, not a measurement/);
    assert.match(level('high', 'low').reason, /j0\.py high, j1\.py low: score 2/);
  });

  it('gives no verdict, and says why, when a job has no estimate', async () => {
    const ok = await learned('ok.py', MLP(64));
    const none = await learned('none.py', 'import torch.nn as nn\nmodel = nn.Linear(2, 2)\n');
    const together = collocationOf([ok, none], A100, 0.1);
    assert.equal(together.totalMiB, null);
    assert.equal(together.fits, null);
    assert.equal(together.risk, null);
    assert.equal(together.jobs[0]!.maxBatchSizeTogether, null);
    assert.match(together.notes.join(' '), /none\.py has no estimate/);
    assert.match(together.jobs[1]!.notes.join(' '), /model: no estimate/);
  });

  describe('memory caps for set_per_process_memory_fraction', () => {
    it('gives each job its reservation (its estimate less the CUDA context) and a share of the spare memory by its size, never more than the GPU', () => {
      const gpu = 40_960;
      const caps = memoryCaps([{ memoryMiB: 10_000, contextMiB: RUNTIME_OVERHEAD_MIB }, { memoryMiB: 5_000, contextMiB: RUNTIME_OVERHEAD_MIB }], gpu)!;
      const spare = gpu - 15_000;
      assert.deepEqual(
        caps.map((cap) => cap.fraction),
        [Math.floor((1000 * (10_000 - RUNTIME_OVERHEAD_MIB + (spare * 2) / 3)) / gpu) / 1000, Math.floor((1000 * (5_000 - RUNTIME_OVERHEAD_MIB + spare / 3)) / gpu) / 1000],
      );
      assert.ok(caps[0]!.fraction > caps[1]!.fraction);
      assert.ok(caps.every((cap) => /^0\.\d{1,3}$/.test(String(cap.fraction))));
      assert.ok(caps.reduce((sum, cap) => sum + cap.mib, 0) + 2 * RUNTIME_OVERHEAD_MIB <= gpu);
      assert.ok(caps[0]!.mib >= 10_000 - RUNTIME_OVERHEAD_MIB && caps[1]!.mib >= 5_000 - RUNTIME_OVERHEAD_MIB);
    });

    it('leaves a job no more than its reservation when the jobs fill the GPU, and gives none when they do not fit', () => {
      const job = (memoryMiB: number, contextMiB = RUNTIME_OVERHEAD_MIB) => ({ memoryMiB, contextMiB });
      const caps = memoryCaps([job(20_480), job(20_480)], 40_960)!;
      assert.ok(caps.every((cap) => cap.mib <= 20_480 - RUNTIME_OVERHEAD_MIB && cap.mib >= 20_480 - RUNTIME_OVERHEAD_MIB - 41));
      assert.equal(memoryCaps([job(20_480), job(20_481)], 40_960), null);
      assert.equal(memoryCaps([], 40_960), null);
      // A job whose context is smaller (the fine-tuning model's) keeps the rest of its estimate under its cap.
      const [small, other] = memoryCaps([job(20_480, 819), job(20_480)], 40_960)!;
      assert.ok(small!.mib >= 20_480 - 819 - 41 && small!.mib <= 20_480 - 819, `${small!.mib}`);
      assert.ok(other!.mib <= 20_480 - RUNTIME_OVERHEAD_MIB);
    });

    it('takes a fine-tuning job’s own CUDA context out of its cap, not the analytical model’s', async () => {
      const qlora = await learned('qlora.py', readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'qlora_trainer.py'), 'utf8'), H100);
      const cnn = await learned('cnn.py', example('cnn_cifar10.py'), H100);
      const model = qlora.models[0]!;
      assert.equal(model.memory.method, 'fineTuning');
      const context = model.memory.breakdown!.contextMiB!;
      assert.ok(context > 0 && context < RUNTIME_OVERHEAD_MIB, `context ${context}`);
      const together = collocationOf([qlora, cnn], H100, 0.1);
      assert.equal(together.fits, true);
      assert.deepEqual(
        together.jobs.map((job) => job.memoryCap),
        memoryCaps([{ memoryMiB: together.jobs[0]!.memoryMiB!, contextMiB: context }, { memoryMiB: together.jobs[1]!.memoryMiB!, contextMiB: RUNTIME_OVERHEAD_MIB }], H100.memoryMiB),
      );
      assert.ok(together.jobs[0]!.memoryCap!.mib >= together.jobs[0]!.memoryMiB! - context);
    });

    it('caps each of several jobs that fit together and says why; one job alone, or jobs that do not fit, get none', async () => {
      const a = await learned('a.py', example('cnn_cifar10.py'));
      const b = await learned('b.py', example('mlp_mnist.py'));
      const together = collocationOf([a, b], A100, 0.1);
      assert.deepEqual(
        together.jobs.map((job) => job.memoryCap),
        memoryCaps(together.jobs.map((job) => ({ memoryMiB: job.memoryMiB!, contextMiB: RUNTIME_OVERHEAD_MIB })), A100.memoryMiB),
      );
      assert.ok(together.jobs.every((job) => job.memoryCap!.fraction > 0 && job.memoryCap!.mib >= job.memoryMiB! - RUNTIME_OVERHEAD_MIB));
      assert.ok(together.notes.includes(MEMORY_CAP_NOTE));
      assert.match(MEMORY_CAP_NOTE, /torch\.cuda\.set_per_process_memory_fraction\(F\)/);
      const alone = collocationOf([a], A100, 0.1);
      assert.equal(alone.jobs[0]!.memoryCap, null);
      assert.ok(!alone.notes.includes(MEMORY_CAP_NOTE));

      const probe = (await learned('probe.py', MLP(256), T4)).models[0]!;
      const big = await learned('big.py', MLP(Math.floor(probe.maxBatchSize! * 0.6)), T4);
      const over = collocationOf([big, { ...big, file: 'again.py' }], T4, 0.1);
      assert.equal(over.fits, false);
      assert.ok(over.jobs.every((job) => job.memoryCap === null));
      assert.ok(!over.notes.includes(MEMORY_CAP_NOTE));
    });
  });
});
