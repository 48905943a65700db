import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import type { LayerTable } from '../../../src/core/layerTable/layerTable';
import { REPO_ROOT, estimate } from '../fixtures';

/**
 * The models `python3 -m harness collect` samples, one per variant (test/vectors/harness-models,
 * written by scripts/generate_harness_model_vectors.py): the analyzer reads each configuration's
 * training script and must find the layer table PyTorch measured, and the set-up it was trained with.
 */

interface Vector {
  readonly config: { readonly variant: string; readonly setup: { readonly batchSize: number; readonly optimizer: string; readonly precision: string; readonly family: string } };
  readonly layerTable: LayerTable;
}

const DIR = path.join(REPO_ROOT, 'test', 'vectors', 'harness-models');
const variants = readdirSync(DIR).filter((name) => name.endsWith('.json')).map((name) => path.basename(name, '.json')).sort();

describe('sampled harness models: the analyzer reads what the harness measured', () => {
  it('covers every variant the sampler has', () => {
    assert.deepEqual(variants, ['cnn1d', 'cnn1d-residual', 'cnn2d', 'cnn2d-residual', 'encoder', 'gpt', 'mlp', 'mlp-residual']);
  });

  for (const variant of variants) {
    it(variant, async () => {
      const vector = JSON.parse(readFileSync(path.join(DIR, `${variant}.json`), 'utf8')) as Vector;
      const result = await estimate(readFileSync(path.join(DIR, `${variant}.py`), 'utf8'));
      const model = result.models.find((m) => m.name === 'model');
      assert.ok(model, `no model named "model"; warnings: ${result.warnings.join(' | ')}`);
      const rows = (table: LayerTable) => table.rows.map((row) => [row.path, row.type, row.params, row.outputShape, row.activations, row.trainable, row.eagerAttention ?? null]);
      assert.deepEqual(rows(model.layerTable), rows(vector.layerTable));
      assert.deepEqual(model.layerTable.totals, vector.layerTable.totals);
      assert.deepEqual(model.layerTable.inputShape, vector.layerTable.inputShape);
      const { batchSize, optimizer, precision, family } = vector.config.setup;
      assert.deepEqual([model.batchSize, model.optimizer, model.precision, model.family], [batchSize, optimizer, precision, family]);
    });
  }
});
