import * as assert from 'node:assert/strict';
import { allocatedBytes, analyticalEstimate, RUNTIME_OVERHEAD_MIB } from '../../../../src/core/estimators/analytical';
import { horusMiB } from '../../../../src/core/estimators/horus';
import type { TrainingJob } from '../../../../src/core/estimators/trainingJob';
import { LAYER_TABLE_SCHEMA_VERSION, type LayerTable } from '../../../../src/core/layerTable/layerTable';

const MIB = 1024 * 1024;

function mlpTable(): LayerTable {
  const rows = [
    { path: '0', type: 'Linear', outputShape: [4096], activations: 4096, params: 1024 * 4096 + 4096, trainable: true },
    { path: '1', type: 'ReLU', outputShape: [4096], activations: 4096, params: 0, trainable: true },
    { path: '2', type: 'Linear', outputShape: [10], activations: 10, params: 4096 * 10 + 10, trainable: true },
  ];
  const params = rows.reduce((s, r) => s + r.params, 0);
  return { schemaVersion: LAYER_TABLE_SCHEMA_VERSION, model: 'm', inputShape: [1024], rows, totals: { params, trainableParams: params, activations: 8202 }, incomplete: false };
}

const job = (overrides: Partial<TrainingJob> = {}): TrainingJob => ({ table: mlpTable(), batchSize: 256, optimizer: 'adam', precision: 'fp32', ...overrides });

describe('Horus formula', () => {
  it('is 4 bytes x (B x A + P + B x P) + 800 MiB, as published', () => {
    const { params: p, activations: a } = mlpTable().totals;
    assert.equal(horusMiB(job()), (4 * (256 * a + p + 256 * p)) / MIB + 800);
  });
});

describe('analytical model', () => {
  it('adds weights, gradients, optimizer state, activations and the runtime overhead', () => {
    const { totalMiB, breakdown } = analyticalEstimate(job());
    assert.equal(breakdown.overheadMiB, RUNTIME_OVERHEAD_MIB);
    assert.equal(breakdown.gradientsMiB, breakdown.weightsMiB);
    assert.ok(Math.abs(breakdown.optimizerMiB - breakdown.weightsMiB * 3) <= 0.2, 'Adam: two moments and the foreach step temporary');
    const sum = breakdown.weightsMiB + breakdown.gradientsMiB + breakdown.optimizerMiB + breakdown.activationsMiB + breakdown.overheadMiB;
    assert.ok(Math.abs(totalMiB - sum) < 0.5, `${totalMiB} ~ ${sum}`);
    // 4.2M fp32 parameters are 16.2 MiB; the first layer's 16.02 MiB rounds up to 18 MiB in 2 MiB blocks.
    assert.ok(breakdown.weightsMiB >= 18 && breakdown.weightsMiB < 18.5, String(breakdown.weightsMiB));
  });

  it('orders optimizers by the state they keep', () => {
    const total = (optimizer: TrainingJob['optimizer']) => analyticalEstimate(job({ optimizer })).totalMiB;
    assert.ok(total('sgd') < total('sgd-momentum'));
    assert.ok(total('sgd-momentum') < total('adam'));
    assert.equal(total('adam'), total('adamw'));
  });

  it('grows with the batch size and shrinks in half precision', () => {
    const at = (batchSize: number) => analyticalEstimate(job({ batchSize })).breakdown.activationsMiB;
    assert.ok(at(512) > at(256) && at(256) > at(1));
    assert.ok(analyticalEstimate(job({ precision: 'fp16-mixed' })).breakdown.activationsMiB < at(256));
    assert.ok(analyticalEstimate(job({ precision: 'fp16' })).breakdown.weightsMiB < analyticalEstimate(job()).breakdown.weightsMiB);
  });

  it('rounds allocations like the CUDA caching allocator', () => {
    assert.equal(allocatedBytes(0), 0);
    assert.equal(allocatedBytes(1), 512);
    assert.equal(allocatedBytes(513), 1024);
    assert.equal(allocatedBytes(MIB + 1), 2 * MIB);
    assert.equal(allocatedBytes(3 * MIB), 4 * MIB);
  });
});
