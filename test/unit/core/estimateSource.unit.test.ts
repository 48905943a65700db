import * as assert from 'node:assert/strict';
import { MAX_SOURCE_CHARS, largestFittingBatch } from '../../../src/core/estimateSource';
import { findGpuProfile } from '../../../src/core/gpus/gpuProfiles';
import { estimate, fixture } from '../fixtures';

describe('estimateSource', () => {
  it('fills the report contract for a script with a model', async () => {
    const result = await estimate(fixture('cnn_cifar'));
    assert.equal(result.gpu.id, 'a100-40gb');
    const [model] = result.models;
    assert.ok(model);
    assert.equal(model.line, 11);
    assert.equal(model.family, 'cnn');
    assert.equal(model.batchSize, 64);
    assert.equal(model.optimizer, 'sgd-momentum');
    assert.ok(model.memory.estimateMiB! > 1440 && model.memory.estimateMiB! < 4000, String(model.memory.estimateMiB));
    assert.equal(model.memory.method, 'analytical');
    assert.equal(model.memory.bin, null, 'no ensemble yet: null, not a made-up bin');
    assert.deepEqual(model.utilization, { smact: null, smocc: null, drama: null });
    assert.equal(model.fits, true);
    assert.equal(model.risk, 'fits');
    assert.ok(model.horusMiB! > 800);
    assert.deepEqual(model.assumptions.map((a) => [a.name, a.line]), [['batchSize', 9], ['inputShape', 8], ['optimizer', 26], ['precision', null]]);
  });

  it('uses a batch size given by the user and finds the largest that fits', async () => {
    const base = (await estimate(fixture('cnn_cifar'))).models[0]!;
    const big = (await estimate(fixture('cnn_cifar'), { batchSize: 4096 })).models[0]!;
    assert.equal(big.batchSize, 4096);
    assert.ok(big.memory.estimateMiB! > base.memory.estimateMiB!);
    assert.equal(base.maxBatchSize, big.maxBatchSize);
    const atMax = (await estimate(fixture('cnn_cifar'), { batchSize: base.maxBatchSize! })).models[0]!;
    const pastMax = (await estimate(fixture('cnn_cifar'), { batchSize: base.maxBatchSize! + 1 })).models[0]!;
    assert.equal(atMax.fits, true);
    assert.equal(pastMax.fits, false);
    assert.equal(pastMax.risk, 'oom');
  });

  it('calls an estimate within the safety margin tight', async () => {
    const t4 = findGpuProfile('t4-16gb')!;
    const max = (await estimate(fixture('cnn_cifar'), { gpu: t4 })).models[0]!.maxBatchSize!;
    const near = (await estimate(fixture('cnn_cifar'), { gpu: t4, batchSize: max })).models[0]!;
    assert.equal(near.risk, 'tight');
  });

  it('gives no estimate, and says why, when the batch size is unknown', async () => {
    const result = await estimate('import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(8, 8))\n');
    const model = result.models[0]!;
    assert.equal(model.memory.estimateMiB, null);
    assert.equal(model.fits, null);
    assert.equal(model.horusMiB, null);
    assert.ok(model.warnings.some((w) => /Batch size not found/.test(w)));
  });

  it('returns a safe, model-less result for broken and oversized input', async () => {
    const none = await estimate(fixture('no_model'));
    assert.deepEqual(none.models, []);
    assert.ok(none.warnings.some((w) => /No PyTorch model/.test(w)));
    const huge = await estimate('#'.repeat(MAX_SOURCE_CHARS + 1));
    assert.deepEqual(huge.models, []);
    assert.match(huge.warnings[0] ?? '', /were analysed/);
    const garbage = await estimate('\u0000\u0001 def ((( class :::\n\t\t)))');
    assert.deepEqual(garbage.models, []);
  });

  it('analyses the first lines of a file over the size limit, and says so', async () => {
    const script = fixture('cnn_cifar');
    const padding = '# a long comment line that pads the file well past the analyser limit\n'.repeat(Math.ceil(MAX_SOURCE_CHARS / 60));
    const result = await estimate(script + padding);
    assert.equal(result.models.length, 1, 'the model at the top is still estimated');
    assert.equal(result.models[0]!.params, 1070858);
    assert.match(result.warnings[0] ?? '', /only its first \d+ lines/);
  });

  it('finds the largest batch by bisection', () => {
    assert.equal(largestFittingBatch((b) => 100 + b, 1000), 900);
    assert.equal(largestFittingBatch((b) => 2000 + b, 1000), 0);
  });
});
