import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { describeProcess } from '../../../../src/core/display/describe';
import { riskProblems, statusTooltipMarkdown } from '../../../../src/core/display/editorText';
import { hoverText } from '../../../../src/core/display/hoverText';
import { markdownSummary } from '../../../../src/core/display/reportData';
import { estimateJson } from '../../../../src/core/estimate/estimateJson';
import type { FileEstimate } from '../../../../src/core/estimate/fileEstimate';
import { estimateCurve, outlookOf } from '../../../../src/core/estimate/outlook';
import { EstimationPipeline } from '../../../../src/core/estimate/pipeline';
import { scriptProcessOf } from '../../../../src/core/estimate/scriptProcess';
import { CONTEXT_MIB, RUNTIME_OVERHEAD_MIB } from '../../../../src/core/estimators/analytical';
import { findGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { fixture, realParser, REPO_ROOT } from '../../fixtures';

const A100 = findGpuProfile('a100-40gb')!;
const T4 = findGpuProfile('t4-16gb')!;

// A GAN as people write it: both networks trained in one loop, on one batch.
const GAN = (batch: number, width = 4096) => `import torch
import torch.nn as nn
g = nn.Sequential(nn.Linear(100, ${width}), nn.ReLU(), nn.Linear(${width}, 784), nn.Tanh()).cuda()
d = nn.Sequential(nn.Linear(784, ${width}), nn.LeakyReLU(0.2), nn.Linear(${width}, 1)).cuda()
og = torch.optim.Adam(g.parameters())
od = torch.optim.Adam(d.parameters())
bce = nn.BCEWithLogitsLoss()
batch = ${batch}
for step in range(1000):
    real = torch.randn(batch, 784, device="cuda")
    fake = g(torch.randn(batch, 100, device="cuda"))
    ld = bce(d(real), torch.ones(batch, 1, device="cuda")) + bce(d(fake.detach()), torch.zeros(batch, 1, device="cuda"))
    od.zero_grad(); ld.backward(); od.step()
    lg = bce(d(fake), torch.ones(batch, 1, device="cuda"))
    og.zero_grad(); lg.backward(); og.step()
`;

describe('the script as one process (several models)', () => {
  let pipeline: EstimationPipeline;
  before(async () => {
    pipeline = new EstimationPipeline(await realParser(), { modelsDir: path.join(REPO_ROOT, 'models'), executionProvider: 'cpu' });
  });
  after(() => pipeline.dispose());
  const estimate = (source: string, gpu = A100): Promise<FileEstimate> => pipeline.estimate({ file: 'train.py', source, options: { gpu, safetyMargin: 0.1 } });

  it('adds two trained models with one CUDA context, and finds the largest batch they share', async () => {
    const gan = await estimate(GAN(512));
    const [g, d] = gan.models;
    const process = gan.process!;
    assert.deepEqual(process.models, ['g', 'd']);
    assert.deepEqual(process.inferenceOnly, []);
    assert.equal(process.estimateMiB, g!.memory.estimateMiB! + d!.memory.estimateMiB! - RUNTIME_OVERHEAD_MIB);
    assert.equal(process.batchSize, 512);
    assert.equal(process.risk, 'fits');
    // Together the batch is smaller than either allows alone, and it is the last that fits.
    const together = (b: number) => estimateCurve(g!)(b) + estimateCurve(d!)(b) - RUNTIME_OVERHEAD_MIB;
    const max = process.maxBatchSize!;
    assert.ok(max < Math.min(g!.maxBatchSize!, d!.maxBatchSize!), `${max} vs ${g!.maxBatchSize} and ${d!.maxBatchSize}`);
    assert.ok(together(max) <= A100.memoryMiB && together(max + 1) > A100.memoryMiB, `${together(max)} ${together(max + 1)}`);
  });

  it("counts cuDNN's larger context once for two convolutional networks (a DCGAN's generator and discriminator)", async () => {
    const gan = await estimate(fixture('../frameworks/gan_separate_optimizers'));
    const [d, g] = gan.models;
    assert.ok(gan.models.every((model) => model.layerTable.rows.some((row) => /^Conv/.test(row.type))));
    assert.equal(gan.process!.estimateMiB, d!.memory.estimateMiB! + g!.memory.estimateMiB! - CONTEXT_MIB.withCudnn);
  });

  it('adds an inference-only teacher by its weights, and never less than its own peak', async () => {
    const distillation = await estimate(fixture('../transfer/resnet_distillation'));
    const teacher = distillation.models.find((m) => m.name === 'teacher')!;
    const student = distillation.models.find((m) => m.name === 'student')!;
    assert.equal(teacher.inferenceOnly, true);
    const process = distillation.process!;
    assert.deepEqual(process.inferenceOnly, ['teacher']);
    assert.equal(process.estimateMiB, Math.max(student.memory.estimateMiB! + teacher.memory.breakdown!.weightsMiB, teacher.memory.estimateMiB!));
    assert.equal(describeProcess(process, A100.name), `teacher + student (teacher inference only) in one process: ~${(process.estimateMiB / 1024).toFixed(1)} GiB; fits A100 40GB; largest batch that fits them together: ${process.maxBatchSize}`);
  });

  it('has no process for one model, and no shared batch for models that take different batches', async () => {
    assert.equal((await estimate(fixture('module_mlp'))).process, undefined);
    const gan = await estimate(GAN(512));
    const [g, d] = gan.models;
    const apart = scriptProcessOf({ models: [g!, { ...d!, batchSize: 256 }] }, A100, 0.1)!;
    assert.equal(apart.estimateMiB, gan.process!.estimateMiB);
    assert.equal(apart.batchSize, null);
    assert.equal(apart.maxBatchSize, null);
    assert.match(describeProcess(apart, A100.name), /; they take different batch sizes$/);
  });

  it('calls out a script whose models fit the GPU one by one but not together, in the problems, the status tooltip, the hover and the JSON', async () => {
    // Each network about 9 GiB at this batch on a T4 (15 GiB): alone each fits, together they do not.
    const gan = await estimate(GAN(450_000, 1024), T4);
    assert.ok(gan.models.every((m) => m.risk === 'fits' || m.risk === 'tight'), gan.models.map((m) => `${m.name} ${m.memory.estimateMiB} ${m.risk}`).join(', '));
    const process = gan.process!;
    assert.equal(process.risk, 'oom');
    assert.equal(process.fits, false);
    const problems = riskProblems(gan);
    const together = problems.filter((p) => p.message.startsWith("The script's models together"));
    assert.equal(together.length, 1);
    assert.equal(together[0]!.severity, 'error');
    // On the line the larger model's batch size is read from, as its own problem would be.
    const larger = [...gan.models].sort((a, b) => b.memory.estimateMiB! - a.memory.estimateMiB!)[0]!;
    assert.equal(together[0]!.line, larger.assumptions.find((a) => a.name === 'batchSize')!.line);
    assert.match(together[0]!.message, /g \+ d in one process: ~[\d.]+ GiB; does not fit T4 16GB \(out of memory\); largest batch that fits them together: \d+$/);
    assert.match(statusTooltipMarkdown(gan, gan.models[0]!), /- Whole script \(the figure shown\): g \+ d in one process/);
    assert.match(hoverText(gan, gan.models[1]!), /\$\(error\) Whole script: g \+ d in one process/);
    assert.match(markdownSummary(gan, gan.models[0]!, outlookOf(gan, 0.1)[0]!), /\n- Whole script: g \+ d in one process: ~[\d.]+ GiB; does not fit T4 16GB/);
    const json = JSON.parse(JSON.stringify(estimateJson(gan))) as { process: Record<string, unknown> };
    assert.deepEqual(json.process, { models: ['g', 'd'], inferenceOnly: [], estimateMiB: Math.round(process.estimateMiB), fits: false, risk: 'oom', batchSize: 450_000, maxBatchSize: process.maxBatchSize });
    // No second problem where a model alone already says it.
    const bigger = await estimate(GAN(900_000, 1024), T4);
    assert.ok(bigger.models.some((m) => m.risk === 'oom'));
    assert.equal(riskProblems(bigger).filter((p) => p.message.startsWith("The script's models together")).length, 0);
  });

  it("keeps a document's process across edits, and gives after an edit what a fresh estimate gives", async () => {
    const request = (source: string, gpu = A100) => ({ file: 'train.py', source, document: 'doc', options: { gpu, safetyMargin: 0.1 } });
    try {
      const first = await pipeline.estimate(request(GAN(512)));
      assert.deepEqual((await pipeline.estimate(request(`${GAN(512)}# an edit elsewhere\n`))).process, first.process);
      for (const [source, gpu] of [[GAN(2048), A100], [GAN(2048), T4], [GAN(2048, 2048), T4]] as const) {
        assert.deepEqual((await pipeline.estimate(request(source, gpu))).process, (await estimate(source, gpu)).process, `${gpu.id}`);
      }
    } finally {
      pipeline.forget('doc');
    }
  });

  it('has none where fewer than two models have an estimate', () => {
    assert.equal(scriptProcessOf({ models: [] }, A100, 0.1), null);
  });
});
