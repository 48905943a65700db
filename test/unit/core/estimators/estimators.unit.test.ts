import * as assert from 'node:assert/strict';
import { allocatedBytes, analyticalBytes, analyticalEstimate, RUNTIME_OVERHEAD_MIB } from '../../../../src/core/estimators/analytical';
import { horusMiB } from '../../../../src/core/estimators/horus';
import type { TrainingJob } from '../../../../src/core/estimators/trainingJob';
import { layerSpec } from '../../../../src/core/layers/layerSpecs';
import { layerTraits } from '../../../../src/core/layers/layerTraits';
import { LAYER_TABLE_SCHEMA_VERSION, type LayerRow, type LayerTable } from '../../../../src/core/layerTable/layerTable';

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

  describe('functional rows (torch.cat, torch.stack)', () => {
    /** A stem conv and its ReLU, optionally a torch.cat of `catElements`, then `next`, a flatten and a head. */
    function table(next: 'Conv2d' | 'AvgPool2d', catElements: number | null): LayerTable {
      const row = (path: string, type: string, activations: number, params: number): LayerRow => ({ path, type, outputShape: null, activations, params, trainable: true });
      const rows = [
        row('stem', 'Conv2d', 32768, 896),
        row('act', 'ReLU', 32768, 0),
        ...(catElements === null ? [] : [row('', 'torch.cat', catElements, 0)]),
        next === 'Conv2d' ? row('next', 'Conv2d', 32768, (catElements ?? 32768) / 1024 * 288 + 32) : row('next', 'AvgPool2d', 8192, 0),
        row('flat', 'Flatten', 8192, 0),
        row('head', 'Linear', 10, 81930),
      ];
      const params = rows.reduce((s, r) => s + r.params!, 0);
      const activations = rows.filter((r) => r.type !== 'torch.cat').reduce((s, r) => s + r.activations!, 0);
      return { schemaVersion: LAYER_TABLE_SCHEMA_VERSION, model: 'cat', inputShape: [3, 32, 32], rows, totals: { params, trainableParams: params, activations }, incomplete: false };
    }
    const bytes = (t: LayerTable) => analyticalBytes({ table: t, batchSize: 64, optimizer: 'adam', precision: 'fp32' });

    it('have analytical traits that keep nothing themselves, but are no layer modules', () => {
      for (const type of ['torch.cat', 'torch.stack']) {
        assert.deepEqual(layerTraits(type), { category: 'functional', savesInput: false, savesOutput: false, extraBytesPerElement: 0 });
        assert.equal(layerSpec(type), undefined, `${type} is not in the layer specs the interpreter constructs from`);
      }
      assert.deepEqual(layerTraits('Conv2d'), { category: 'conv', savesInput: true, savesOutput: false, extraBytesPerElement: 0 });
      assert.equal(layerTraits('MyFancyLayer'), undefined);
    });

    it('counts a concatenation feeding a conv, which saves its input for backward', () => {
      // 3x3 conv on 32 channels: the stem's ReLU output is kept in both tables (the ReLU saves it).
      const withCat = bytes(table('Conv2d', 32768));
      const without = bytes(table('Conv2d', null));
      assert.equal(withCat.savedBytes - without.savedBytes, allocatedBytes(64 * 32768 * 4), 'the cat output, 8 MiB');
      assert.equal(withCat.backwardBytes, without.backwardBytes);
      assert.equal(withCat.weightBytes, without.weightBytes);
    });

    it('does not count a concatenation feeding a pool, which keeps nothing of its input', () => {
      const withCat = bytes(table('AvgPool2d', 32768));
      const without = bytes(table('AvgPool2d', null));
      assert.equal(withCat.savedBytes, without.savedBytes);
      assert.equal(withCat.backwardBytes, without.backwardBytes);
    });

    it('takes part in the largest-activation transient term', () => {
      const withCat = bytes(table('AvgPool2d', 65536));
      const without = bytes(table('AvgPool2d', null));
      assert.equal(withCat.savedBytes, without.savedBytes);
      assert.equal(withCat.backwardBytes, 2 * allocatedBytes(64 * 65536 * 4));
      assert.equal(without.backwardBytes, 2 * allocatedBytes(64 * 32768 * 4));
    });
  });

  it('rounds allocations like the CUDA caching allocator', () => {
    assert.equal(allocatedBytes(0), 0);
    assert.equal(allocatedBytes(1), 512);
    assert.equal(allocatedBytes(513), 1024);
    assert.equal(allocatedBytes(MIB + 1), 2 * MIB);
    assert.equal(allocatedBytes(3 * MIB), 4 * MIB);
  });
});
