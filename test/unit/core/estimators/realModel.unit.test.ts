import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { estimate, REPO_ROOT } from '../../fixtures';
import { CONTEXT_SPREAD_MIB, expandTerms, predictFromFeatures, rangeOnGpu, REAL_MODEL_COEFFICIENTS, realModelEstimator, type RealModelCoefficients } from '../../../../src/core/estimators/realModel';
import { REAL_MODEL_FEATURES, realModelFeatures } from '../../../../src/core/estimators/realModelFeatures';
import { findGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { CONTEXT_MIB } from '../../../../src/core/estimators/analytical';
import { LAYER_TABLE_SCHEMA_VERSION, type LayerTable } from '../../../../src/core/layerTable/layerTable';

const cnn: LayerTable = {
  schemaVersion: LAYER_TABLE_SCHEMA_VERSION,
  model: 'cnn',
  inputShape: [3, 224, 224],
  rows: [
    { path: 'conv', type: 'Conv2d', outputShape: [64, 112, 112], activations: 64 * 112 * 112, params: 9408, trainable: true },
    { path: 'bn', type: 'BatchNorm2d', outputShape: [64, 112, 112], activations: 64 * 112 * 112, params: 128, trainable: true },
    { path: 'act', type: 'ReLU', outputShape: [64, 112, 112], activations: 64 * 112 * 112, params: 0, trainable: true },
    { path: 'pool', type: 'AdaptiveAvgPool2d', outputShape: [64, 1, 1], activations: 64, params: 0, trainable: true },
    { path: 'fc', type: 'Linear', outputShape: [1000], activations: 1000, params: 65000, trainable: true },
  ],
  totals: { params: 74536, trainableParams: 74536, activations: 3 * 64 * 112 * 112 + 1064 },
  incomplete: false,
};

describe('real-model estimator', () => {
  it("gives a transformers model's table the replay and the context alone: the correction never saw such a table", () => {
    const measured = (library: 'timm' | 'transformers'): LayerTable => ({ ...cnn, measuredActivations: [{ path: '', savedBytesPerSample: 20 * 2 ** 20, source: 'test', library }] });
    const job = { batchSize: 32, optimizer: 'adam' as const, precision: 'fp32' as const };
    const run = (table: LayerTable, gpu: string) => {
      const result = realModelEstimator.pass === 'analysis' ? realModelEstimator.estimate({ job: { ...job, table }, family: 'cnn', gpu: findGpuProfile(gpu)! }) : null;
      assert.ok(result);
      return result;
    };
    const replayed = realModelFeatures({ ...job, table: measured('transformers') }).replay.stats.peakReservedBytes / 2 ** 20;
    const hf = run(measured('transformers'), 'a100-40gb');
    // A Conv2d row: cuDNN's libraries are loaded, as the dry run counts them.
    assert.equal(hf.pointMiB, replayed + CONTEXT_MIB.withCudnn);
    assert.equal(hf.range, null);
    assert.match(hf.warnings.join(' '), /^A transformers model: the correction was fitted on timm's layer tables/);
    const timm = run(measured('timm'), 'a100-40gb');
    assert.notEqual(timm.pointMiB, hf.pointMiB);
    assert.deepEqual(timm.range?.quantiles, REAL_MODEL_COEFFICIENTS.rangeQuantiles);
    // Off the measured GPU the context's spread makes a range, as for the dry run.
    const t4 = run(measured('transformers'), 't4-16gb');
    assert.deepEqual(t4.range, { lowMiB: hf.pointMiB - CONTEXT_SPREAD_MIB.otherArchitecture, highMiB: hf.pointMiB + CONTEXT_SPREAD_MIB.otherArchitecture });
  });

  it("estimates the transformers guide's ViT fine-tune from its replay: measured activations, the dry run's context", async () => {
    const source = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'frameworks', 'hf_vit_image_classification.py'), 'utf8');
    const model = (await estimate(source)).models[0]!;
    assert.equal(model.memory.method, 'real-model');
    assert.equal(model.layerTable?.measuredActivations?.[0]?.library, 'transformers');
    assert.ok(model.notes.some((note) => /A transformers model: the correction was fitted on timm's layer tables/.test(note.message)));
    // Batch 32 under fp16 autocast: the CPU dry run (PyTorch 2.4.1) gives 5,674 MiB; the rows alone had given 4,223.
    assert.ok(model.memory.estimateMiB! > 5400 && model.memory.estimateMiB! < 6000, String(model.memory.estimateMiB));
  });

  it('estimates hub ConvNeXt, ResNet and DINOv2 fine-tunes from their replay, near the PyTorch 2.4.1 dry run', async () => {
    // The dry run of each fixture as it stands (2026-11-28): 5,600 / 7,044 / 4,218 MiB (a frozen DINOv2-B's probe: 3,466
    // before its forward held its measured peak).
    const cases: Array<[string, number, number]> = [
      ['hf_convnext_accelerate.py', 5100, 6100],
      ['hf_resnet_autocast.py', 6400, 7700],
      ['hf_dinov2_linear_probe.py', 3800, 4600],
    ];
    for (const [file, low, high] of cases) {
      const model = (await estimate(readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'frameworks', file), 'utf8'))).models[0]!;
      assert.equal(model.layerTable?.measuredActivations?.[0]?.library, 'transformers', file);
      assert.ok(model.memory.estimateMiB! > low && model.memory.estimateMiB! < high, `${file}: ${model.memory.estimateMiB}`);
    }
  });

  describe("a frozen part's forward at its fullest (measured forwardPeakBytesPerSample)", () => {
    // The convolution, its norm and activation frozen, the head trained: the forward of the frozen part is the step's peak.
    const frozenStem: LayerTable = { ...cnn, rows: cnn.rows.map((row) => (row.path === 'fc' ? row : { ...row, trainable: false })) };
    const measured = (peak?: number): LayerTable => ({
      ...frozenStem,
      measuredActivations: [{ path: '', savedBytesPerSample: 3 * 64 * 112 * 112 * 4, ...(peak === undefined ? {} : { forwardPeakBytesPerSample: peak }), source: 'test', library: 'torchvision' }],
    });
    const job = { batchSize: 64, optimizer: 'adam' as const, precision: 'fp32' as const };
    const point = (table: LayerTable) => {
      const result = realModelEstimator.pass === 'analysis' ? realModelEstimator.estimate({ job: { ...job, table }, family: 'cnn', gpu: findGpuProfile('a100-40gb')! }) : null;
      assert.ok(result);
      return result.pointMiB;
    };

    it('is at least the replay of that forward and the CUDA context, where the factor learnt on training gives less', () => {
      // Five of the stem's feature maps alive at once, where the rows hold two.
      const peaked = measured(5 * 64 * 112 * 112 * 4);
      const replayed = realModelFeatures({ ...job, table: peaked }).replay.stats.peakReservedBytes / 2 ** 20;
      assert.equal(point(peaked), replayed + CONTEXT_MIB.withCudnn);
      assert.ok(point(peaked) > point(measured()), `${point(peaked)} vs ${point(measured())}`);
    });

    it('keeps the scaled figure where that forward is not the peak', () => {
      // A peak the rows already hold adds nothing; the factor's figure stands.
      assert.equal(point(measured(64 * 112 * 112 * 4)), point(measured()));
    });

    it('brings the torchvision ViT-B/16 linear probe near the PyTorch 2.4.1 dry run', async () => {
      // Dry run (2026-11-28): 2,932 MiB; 2,412 before the frozen forward held its measured peak (-18%).
      const model = (await estimate(readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'transfer', 'vit_b_16_linear_probe.py'), 'utf8'))).models[0]!;
      assert.ok(model.layerTable?.measuredActivations?.[0]?.forwardPeakBytesPerSample);
      assert.ok(model.memory.estimateMiB! > 2700 && model.memory.estimateMiB! < 3200, String(model.memory.estimateMiB));
    });
  });

  it('has coefficients for the features it computes', () => {
    assert.deepEqual(REAL_MODEL_COEFFICIENTS.features, [...REAL_MODEL_FEATURES]);
    for (const side of [REAL_MODEL_COEFFICIENTS.point, REAL_MODEL_COEFFICIENTS.low, REAL_MODEL_COEFFICIENTS.high]) assert.equal(side.length, REAL_MODEL_COEFFICIENTS.terms.length);
    assert.ok(REAL_MODEL_COEFFICIENTS.terms.every((t) => t.every((i) => i >= 0 && i < REAL_MODEL_FEATURES.length)));
    assert.equal(realModelFeatures({ table: cnn, batchSize: 8, optimizer: 'adam', precision: 'fp32' }).vector.length, REAL_MODEL_FEATURES.length);
  });

  it('evaluates exp(coefficients . terms) for the point and both ends', () => {
    assert.deepEqual(expandTerms([1, 2, 3], [[0], [1], [1, 2], [2, 2]]), [1, 2, 6, 9]);
    const model: RealModelCoefficients = { ...REAL_MODEL_COEFFICIENTS, terms: [[0], [1]], point: [1, 0.5], pointRowsAlone: [1, 0.5], low: [1, 0.25], high: [1, 1] };
    const prediction = predictFromFeatures([Math.log(1000), 2], model);
    assert.ok(Math.abs(prediction.pointMiB - 1000 * Math.exp(1)) < 1e-6);
    assert.ok(Math.abs(prediction.lowMiB - 1000 * Math.exp(0.5)) < 1e-6);
    assert.ok(Math.abs(prediction.highMiB - 1000 * Math.exp(2)) < 1e-6);
  });

  it('takes the catalog point where autograd measured the activations, the rows-alone point elsewhere', () => {
    const model: RealModelCoefficients = { ...REAL_MODEL_COEFFICIENTS, features: ['bias', 'measuredShare'], terms: [[0]], point: [2], pointRowsAlone: [1], low: [0], high: [3], physicalFloor: undefined };
    assert.ok(Math.abs(predictFromFeatures([1, 1], model).pointMiB - Math.exp(2)) < 1e-9);
    assert.ok(Math.abs(predictFromFeatures([1, 0.6], model).pointMiB - Math.exp(2)) < 1e-9);
    assert.ok(Math.abs(predictFromFeatures([1, 0.2], model).pointMiB - Math.exp(1)) < 1e-9);
    assert.ok(Math.abs(predictFromFeatures([1, 0], model).pointMiB - Math.exp(1)) < 1e-9);
    // fit.py's choice: a catalog model's replay holds what autograd saves, so a higher quantile stays within the median target.
    const rowsAlone = REAL_MODEL_COEFFICIENTS.pointQuantileRowsAlone;
    assert.ok(rowsAlone !== undefined && REAL_MODEL_COEFFICIENTS.pointQuantile > rowsAlone, `${REAL_MODEL_COEFFICIENTS.pointQuantile} vs ${rowsAlone}`);
  });

  it('never goes below its floor share of the replay, however far the correction extrapolates', () => {
    // features: [bias, logPhysicalMiB]; the fit says e^1 MiB, the replay 1000 MiB.
    const model: RealModelCoefficients = { ...REAL_MODEL_COEFFICIENTS, features: ['bias', 'logPhysicalMiB'], terms: [[0]], point: [1], pointRowsAlone: [1], low: [0.5], high: [2], physicalFloor: 0.9 };
    const prediction = predictFromFeatures([1, Math.log(1000)], model);
    assert.deepEqual([prediction.lowMiB, prediction.pointMiB, prediction.highMiB].map((v) => Math.round(v * 1e6) / 1e6), [900, 900, 900]);
    assert.ok(predictFromFeatures([1, Math.log(1000)], { ...model, physicalFloor: undefined }).pointMiB < 3);
  });

  it("adds cuDNN's context to the point's floor for a step with convolutions, not to the range's low end", () => {
    // features: [bias, logPhysicalMiB, largestConvShare]; the fit says e^1 MiB, the replay (with the context without cuDNN) 1000 MiB.
    const model: RealModelCoefficients = { ...REAL_MODEL_COEFFICIENTS, features: ['bias', 'logPhysicalMiB', 'largestConvShare'], terms: [[0]], point: [1], pointRowsAlone: [1], low: [0.5], high: [2], physicalFloor: 0.9, cudnnContextFloorMiB: 400 };
    const round = (p: { lowMiB: number; pointMiB: number; highMiB: number }) => [p.lowMiB, p.pointMiB, p.highMiB].map((v) => Math.round(v * 1e6) / 1e6);
    assert.deepEqual(round(predictFromFeatures([1, Math.log(1000), 0.2], model)), [900, 1300, 1300]);
    assert.deepEqual(round(predictFromFeatures([1, Math.log(1000), 0], model)), [900, 900, 900]);
    assert.equal(REAL_MODEL_COEFFICIENTS.cudnnContextFloorMiB, CONTEXT_MIB.withCudnn - CONTEXT_MIB.withoutCudnn);
  });

  it("reads an image's side only where layers work on it, and a convolution's output in the precision it runs in", async () => {
    const feature = (vector: readonly number[], name: (typeof REAL_MODEL_FEATURES)[number]) => vector[REAL_MODEL_FEATURES.indexOf(name)]!;
    // A VAE's MLP on MNIST flattens the 28 x 28 image first: among the fit's MLPs, at the reference side.
    const mlp = (await estimate('import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Flatten(), nn.Linear(784, 400), nn.ReLU(), nn.Linear(400, 10))\nx = torch.randn(128, 1, 28, 28)\nloss = model(x).sum()\n')).models[0]!;
    assert.deepEqual(mlp.layerTable.inputShape, [1, 28, 28]);
    assert.equal(feature(realModelFeatures({ table: mlp.layerTable, batchSize: 128, optimizer: 'adam', precision: 'fp32' }).vector, 'logResolution'), 0);
    const cnn = (await estimate('import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Flatten(), nn.Linear(32 * 26 * 26, 10))\nx = torch.randn(128, 1, 28, 28)\nloss = model(x).sum()\n')).models[0]!;
    const job = { table: cnn.layerTable, batchSize: 128, optimizer: 'adam', precision: 'fp32' } as const;
    const fp32 = realModelFeatures(job);
    assert.ok(Math.abs(feature(fp32.vector, 'logResolution') - Math.log(28 / 224)) < 1e-9);
    // The first convolution's 32 x 26 x 26 outputs per sample: 4 bytes each in fp32, 2 in half precision.
    for (const [precision, bytes] of [['fp32', 4], ['fp16', 2], ['bf16-mixed', 2]] as const) {
      const { vector, replay } = realModelFeatures({ ...job, precision });
      const reservedMiB = replay.stats.peakReservedBytes / 2 ** 20;
      assert.ok(Math.abs(feature(vector, 'largestConvShare') - (32 * 26 * 26 * 128 * bytes) / 2 ** 20 / reservedMiB) < 1e-9, precision);
    }
  });

  it('keeps a plain MLP at a batch of millions (the data stops at 1,023) above the activations it must hold', async () => {
    const source = 'import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(3000000, 256)\nloss = model(x).sum()\n';
    const model = (await estimate(source)).models[0]!;
    const result = realModelEstimator.pass === 'analysis' ? realModelEstimator.estimate({ job: { table: model.layerTable, batchSize: 3_000_000, optimizer: 'sgd', precision: 'fp32' }, family: 'mlp', gpu: findGpuProfile('a100-40gb')! }) : null;
    assert.ok(result);
    assert.ok(result.pointMiB >= 0.9 * result.detail.physicalMiB - 1e-6, `${result.pointMiB} vs replay ${result.detail.physicalMiB}`);
    // Input, two Linear outputs and the ReLU's: (256 + 512 + 512 + 10) x 4 bytes x 3e6 = 14.4 GiB at the least.
    assert.ok(result.pointMiB > 14.4 * 1024, String(result.pointMiB));
  });

  it('gives what fit.py computes from the same coefficients (shared vectors)', () => {
    const file = path.join(REPO_ROOT, 'test', 'vectors', 'real-model', 'predictions.json');
    const { cases } = JSON.parse(readFileSync(file, 'utf8')) as { cases: { features: number[]; low: number; point: number; high: number }[] };
    assert.ok(cases.length >= 10);
    for (const c of cases) {
      const p = predictFromFeatures(c.features);
      for (const [ours, theirs] of [[p.pointMiB, c.point], [p.lowMiB, Math.min(c.low, c.point)], [p.highMiB, Math.max(c.high, c.point)]] as const) {
        assert.ok(Math.abs(ours - theirs) <= 1e-9 * theirs, `${ours} vs ${theirs}`);
      }
    }
  });

  it('gives a range around its point that grows with the batch', () => {
    const result = realModelEstimator.pass === 'analysis' ? realModelEstimator.estimate({ job: { table: cnn, batchSize: 32, optimizer: 'adam', precision: 'fp32' }, family: 'cnn', gpu: findGpuProfile('a100-40gb')! }) : null;
    assert.ok(result && result.range);
    assert.ok(result.range.lowMiB <= result.pointMiB && result.pointMiB <= result.range.highMiB);
    assert.ok(result.memoryAt!(128) > result.memoryAt!(32));
    // Above the physical part alone: the runtime overhead and what the table cannot see.
    assert.ok(result.pointMiB > result.detail.replay.stats.peakReservedBytes / 2 ** 20);
  });

  it('keeps the measured GPU’s range and widens the others by the context’s spread', () => {
    const range = { lowMiB: 5000, highMiB: 7000 };
    assert.deepEqual(rangeOnGpu(range, findGpuProfile('a100-40gb')!), range);
    assert.deepEqual(rangeOnGpu(range, findGpuProfile('a100-80gb')!), { lowMiB: 5000 - CONTEXT_SPREAD_MIB.sameArchitecture, highMiB: 7000 + CONTEXT_SPREAD_MIB.sameArchitecture });
    assert.deepEqual(rangeOnGpu(range, findGpuProfile('h100-80gb')!), { lowMiB: 5000 - CONTEXT_SPREAD_MIB.otherArchitecture, highMiB: 7000 + CONTEXT_SPREAD_MIB.otherArchitecture });
  });

  it('the estimate for a GPU other than the measured one carries the widened range', async () => {
    const source = 'import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 30 * 30, 10))\nx = torch.randn(32, 3, 32, 32)\nloss = model(x).sum()\n';
    const reading = async (gpu: string) => (await estimate(source, { gpu: findGpuProfile(gpu)! })).models[0]!.estimates.find((r) => r.estimator === 'real-model')!;
    const [a100, t4] = [await reading('a100-40gb'), await reading('t4-16gb')];
    assert.equal(t4.estimateMiB, a100.estimateMiB);
    assert.equal(t4.lowMiB, Math.round(Math.max(0, a100.lowMiB! - CONTEXT_SPREAD_MIB.otherArchitecture)));
    assert.equal(t4.highMiB! - a100.highMiB!, CONTEXT_SPREAD_MIB.otherArchitecture);
  });
});

