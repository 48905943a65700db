import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { largestFittingBatchOnGrid as largestFittingBatch } from '../../../../src/core/estimate/verdict';
import { withLearnedEstimates } from '../../../../src/core/estimate/learnedPass';
import { batchGrid } from '../../../../src/core/estimators/learned';
import { OnnxRunner } from '../../../../src/core/estimators/onnx/onnxRunner';
import { featureVector } from '../../../../src/core/features/features';
import type { ModelEstimate } from '../../../../src/core/estimate/fileEstimate';
import { ensembleCnnSource, horusMiB, estimate, REPO_ROOT } from '../../fixtures';
import { warningsOf } from '../../../../src/core/estimate/notes';

const MODELS = path.join(REPO_ROOT, 'models');
const example = (name: string) => readFileSync(path.join(REPO_ROOT, 'examples', name), 'utf8');
const TRANSFORMER = `
import torch
import torch.nn as nn
model = nn.Sequential(nn.Embedding(1000, 64), nn.TransformerEncoderLayer(d_model=64, nhead=4, batch_first=True), nn.Linear(64, 1000))
x = torch.randint(0, 1000, (16, 32))
optimizer = torch.optim.Adam(model.parameters())
loss = model(x).sum()
`;

describe('learned estimates', () => {
  let runner: OnnxRunner;
  before(() => {
    runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'cpu' });
  });
  after(() => runner.dispose());

  async function learned(source: string, options = {}): Promise<{ before: ModelEstimate; after: ModelEstimate }> {
    const first = await estimate(source, options);
    const second = await withLearnedEstimates(first, runner, { safetyMargin: 0.1 });
    return { before: first.models[0]!, after: second.models[0]! };
  }

  for (const [file, family, source] of [['examples/mlp_mnist.py', 'mlp', () => example('mlp_mnist.py')], ['a plain CNN', 'cnn', ensembleCnnSource]] as const) {
    it(`fills the point estimate, its range, the bin and the utilization classes of a network like its training data: ${file}`, async () => {
      const { before, after } = await learned(source());
      assert.equal(before.memory.method, 'real-model');
      assert.equal(after.family, family);
      assert.equal(after.memory.method, 'ensemble');
      const { estimateMiB, lowMiB, highMiB, bin } = after.memory;
      assert.ok(lowMiB! <= estimateMiB! && estimateMiB! <= highMiB!, `${lowMiB} <= ${estimateMiB} <= ${highMiB}`);
      assert.ok(bin && bin.probability > 0 && bin.probability <= 1 && bin.highMiB - bin.lowMiB === (family === 'mlp' ? 1024 : 8192));
      assert.ok(after.utilization.smact !== null && after.utilization.smocc !== null && after.utilization.drama === null);
      assert.deepEqual(after.memory.ensemble?.executionProvider, 'cpu');
      assert.equal(after.memory.ensemble?.model, `models/${family}.onnx`);
      assert.deepEqual(after.memory.breakdown, before.memory.breakdown, 'the breakdown stays the analytical model');
      assert.equal(horusMiB(after), horusMiB(before));
      assert.equal(after.fits, estimateMiB! <= 40960);
    });
  }

  it('finds the largest batch whose learned estimate fits, checked one sample above and at it', async () => {
    const { after } = await learned(ensembleCnnSource(), { gpu: { id: 't4-16gb', name: 'T4 16GB', memoryMiB: 15360 } as never });
    const max = after.maxBatchSize!;
    assert.ok(max > 1, String(max));
    const job = (b: number) => ({ table: after.layerTable, batchSize: b, optimizer: after.optimizer, precision: after.precision });
    const result = (await runner.run('cnn', [featureVector(job(max)), featureVector(job(max + 1))]))!;
    const memory = result.outputs.memory_mib!;
    assert.ok(memory[1]! <= 15360 && memory[4]! > 15360, `${memory[1]} at ${max}, ${memory[4]} at ${max + 1}`);
  });

  it('is passed over where the features leave its training data: the real-model estimate stays, the ensemble is listed for comparison', async () => {
    // GPUMemNet's CNNs were trained with batches of 2 to 62.
    const { before, after } = await learned(ensembleCnnSource(), { batchSize: 4096 });
    assert.equal(after.memory.method, 'real-model');
    assert.deepEqual(after.memory, before.memory);
    assert.equal(after.maxBatchSize, before.maxBatchSize);
    const ensemble = after.estimates.find((reading) => reading.estimator === 'ensemble')!;
    assert.equal(ensemble.role, 'comparison');
    assert.ok(ensemble.estimateMiB! > 0);
    assert.deepEqual(after.estimates.filter((reading) => reading.role === 'estimate').map((reading) => reading.estimator), ['real-model']);
    assert.ok(after.utilization.smact !== null, 'its utilization classes are kept');
    assert.match(warningsOf(after).join('\n'), /Utilization classes from the CNN ensemble, outside the CNN ensemble's training data, GPUMemNet's generated networks \(batch_size 4096 > \d+/);
  });

  it('is passed over for layer types its training data never had (a real network), however ordinary its features', async () => {
    const { after } = await learned(example('cnn_cifar10.py'), { batchSize: 32 });
    assert.equal(after.memory.method, 'real-model');
    assert.equal(after.estimates.find((reading) => reading.estimator === 'ensemble')!.role, 'comparison');
    assert.match(warningsOf(after).join('\n'), /layer types it never saw: MaxPool2d[;)]/);
  });

  it('leaves Transformers to the real-model estimator: no ensemble runs for them', async () => {
    const { before, after } = await learned(TRANSFORMER);
    assert.equal(after.family, 'transformer');
    assert.equal(after.memory.method, 'real-model');
    assert.deepEqual(after, before);
  });

  it('leaves a model without a batch size alone', async () => {
    const { before, after } = await learned('import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(10, 10))\n');
    assert.equal(before.batchSize, null);
    assert.deepEqual(after, before);
  });
});

describe('largest fitting batch over a grid', () => {
  it('is geometric with every small batch size', () => {
    const grid = batchGrid();
    assert.deepEqual(grid.slice(0, 10), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal(grid[grid.length - 1], 1 << 24);
    for (let i = 1; i < grid.length; i++) assert.ok(grid[i]! > grid[i - 1]! && grid[i]! <= Math.ceil(grid[i - 1]! * 1.1) + 1);
  });

  it('refines between the last grid point that fits and the first that does not', async () => {
    const grid = batchGrid();
    const memory = (b: number) => 1000 + 3 * b;
    let asked: number[] = [];
    const best = await largestFittingBatch(grid, grid.map(memory), 40000, async (sizes) => {
      asked = sizes;
      return sizes.map(memory);
    });
    assert.equal(best, 13000);
    assert.ok(asked.length > 0 && asked.length <= 256);
    assert.equal(await largestFittingBatch(grid, grid.map(() => 99), 10, async () => []), 0);
    assert.equal(await largestFittingBatch(grid, grid.map(() => 1), 10, async () => []), 1 << 24);
  });
});
