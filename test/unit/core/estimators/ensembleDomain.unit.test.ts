import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { ENSEMBLE_LAYER_TYPES, outsideEnsembleData } from '../../../../src/core/estimators/learned';
import { loadReferenceRuns, referenceDataDir } from '../../../../scripts/evaluation/referenceData';
import { REPO_ROOT } from '../../fixtures';
import type { LayerTable } from '../../../../src/core/layerTable/layerTable';

/** GPUMemNet's runs, read in place (../shared/data/gpumemnet-a100; CI has them beside the clone). */
const DATA = referenceDataDir(REPO_ROOT);

const table = (types: string[]): LayerTable => ({
  schemaVersion: 1,
  model: 'm',
  inputShape: [8],
  rows: types.map((type, i) => ({ path: String(i), type, outputShape: [8], activations: 8, params: 0, trainable: true })),
  totals: { params: 0, trainableParams: 0, activations: 8 * types.length },
  incomplete: false,
});

describe('the trained ensembles’ domain', () => {
  for (const family of ['mlp', 'cnn'] as const) {
    it(`lists exactly the layer types of GPUMemNet's ${family.toUpperCase()} runs`, function () {
      if (!existsSync(DATA)) this.skip();
      const seen = new Set(loadReferenceRuns(DATA, family).flatMap((run) => run.table.rows.map((row) => row.type)));
      assert.deepEqual([...seen].sort(), [...ENSEMBLE_LAYER_TYPES[family]].sort());
    });
  }

  it('takes a network of those types with features inside the data, and names what puts another outside', () => {
    assert.equal(outsideEnsembleData(table(['Conv2d', 'BatchNorm2d', 'ReLU', 'AdaptiveAvgPool2d', 'Flatten', 'Linear']), 'cnn', []), undefined);
    assert.match(outsideEnsembleData(table(['Conv2d', 'MaxPool2d', 'Linear']), 'cnn', [])!, /layer types it never saw: MaxPool2d\)$/);
    assert.match(outsideEnsembleData(table(['Linear', 'ReLU']), 'mlp', ['batch_size 4096 > 1023'])!, /\(batch_size 4096 > 1023\)$/);
    assert.match(outsideEnsembleData(table(['Linear', 'LayerNorm', 'Parameter', 'Embedding', 'GELU']), 'mlp', ['a', 'b', 'c', 'd'])!, /layer types it never saw: LayerNorm, Parameter, Embedding; a, b, c and 1 more\)$/);
    assert.match(outsideEnsembleData(table(['Linear']), 'transformer', [])!, /TRANSFORMER ensemble/);
  });
});
