import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { EstimationPipeline } from '../../../src/core/estimate/pipeline';
import { WARM_UP_SCRIPT, warmUpEstimation } from '../../../src/core/warmUp';
import { estimate, realParser, REPO_ROOT } from '../fixtures';

describe('warm-up estimate', () => {
  // The warm-up only helps if its script runs the paths a real estimate runs: both families'
  // ensembles, the analyzer through classes, helpers and the training loop, the set-up readers.
  it('the built-in script is understood completely: a CNN and an MLP, with their set-up', async () => {
    const result = await estimate(WARM_UP_SCRIPT);
    assert.deepEqual(result.warnings, []);
    assert.deepEqual(
      result.models.map((m) => [m.name, m.family, m.batchSize, m.optimizer, m.precision, m.layerTable.incomplete]),
      [
        ['model', 'cnn', 64, 'adamw', 'fp16-mixed', false],
        ['head', 'mlp', 64, 'adamw', 'fp16-mixed', false],
      ],
    );
    assert.deepEqual(result.models[0]!.inputShape, [3, 32, 32]);
    assert.deepEqual(result.models[1]!.inputShape, [784]);
  });

  it('opens both ensembles and estimates the script with them', async () => {
    const pipeline = new EstimationPipeline(await realParser(), { modelsDir: path.join(REPO_ROOT, 'models'), executionProvider: 'cpu' });
    const runner = pipeline.onnx;
    try {
      assert.equal(await warmUpEstimation(pipeline), 2);
      for (const family of ['mlp', 'cnn'] as const) assert.ok(await runner.model(family), `${family} session open`);
    } finally {
      await pipeline.dispose();
    }
  });
});
