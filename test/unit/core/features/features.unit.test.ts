import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { OptimizerKind, Precision } from '../../../../src/core/analysis/modelDescription';
import { analyticalEstimate } from '../../../../src/core/estimators/analytical';
import { analyticalModelJson } from '../../../../src/core/features/analyticalModelData';
import definition from '../../../../src/core/features/featureDefinition.json';
import { FEATURE_NAMES, featureRecord, featureVector, hiddenActivation } from '../../../../src/core/features/features';
import { knownLayerTypes, layerSpec } from '../../../../src/core/layers/layerCatalog';
import type { LayerTable } from '../../../../src/core/layerTable/layerTable';
import { referenceRun } from '../../../../scripts/evaluation/referenceData';
import { REPO_ROOT } from '../../fixtures';

interface Vector {
  readonly description: string;
  readonly layerTable: LayerTable;
  readonly setup: { batchSize: number; optimizer: OptimizerKind; precision: Precision };
  readonly features: Record<string, number>;
  readonly gpumemnet?: { family: 'mlp' | 'cnn'; record: Record<string, string> };
}

const VECTORS = path.join(REPO_ROOT, 'test', 'vectors', 'features');
const vectors = readdirSync(VECTORS)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, vector: JSON.parse(readFileSync(path.join(VECTORS, file), 'utf8')) as Vector }));
const job = (v: Vector) => ({ table: v.layerTable, ...v.setup });

describe('learned-estimator features', () => {
  it('has shared vectors of every kind: corpus tables, edge cases and GPUMemNet rows', () => {
    const kinds = new Set(vectors.map(({ file }) => file.split('.')[0]));
    assert.deepEqual([...kinds].sort(), ['corpus', 'gpumemnet', 'synthetic']);
    assert.ok(vectors.length >= 12, String(vectors.length));
  });

  for (const { file, vector } of vectors) {
    it(`computes exactly the vector's features: ${file}`, () => {
      assert.deepEqual(Object.keys(vector.features), [...FEATURE_NAMES], 'the vector lists the features in definition order');
      assert.deepEqual(featureRecord(job(vector)), vector.features);
      assert.deepEqual(featureVector(job(vector)), FEATURE_NAMES.map((name) => vector.features[name]));
    });
  }

  it('reads a GPUMemNet record into the same layer table as the training pipeline', () => {
    const rows = vectors.filter(({ vector }) => vector.gpumemnet);
    assert.ok(rows.length >= 2);
    for (const { vector } of rows) {
      const run = referenceRun(vector.gpumemnet!.family, vector.gpumemnet!.record);
      assert.deepEqual(run?.table, vector.layerTable);
      assert.equal(run?.batchSize, vector.setup.batchSize);
    }
  });

  it('anchors on the analytical estimate the report shows', () => {
    for (const { vector } of vectors) assert.equal(featureRecord(job(vector)).analytical_mib, analyticalEstimate(job(vector)).totalMiB);
  });

  it('counts the research features by hand on an MLP row', () => {
    const { vector } = vectors.find(({ file }) => file === 'gpumemnet.mlp.0.json')!;
    const f = featureRecord(job(vector));
    // [('linear', 1173, 2753031), ('batch_normalization', 1173, 2346), ('ReLU', 1173, 0), ('dropout', 1173, 0), ...] at batch 996
    assert.equal(f.batch_size, 996);
    assert.equal(f.params, 3560152);
    assert.equal(f.activations, 7430);
    assert.equal(f.activations_x_batch, 7430 * 996);
    assert.equal(f.depth, 3);
    assert.equal(f.count_linear, 3);
    assert.equal(f.count_norm, 2);
    assert.equal(f.count_dropout, 2);
    assert.equal(f.count_activation, 3, 'two ReLUs and the output Softmax');
    assert.equal(f.largest_params, 2753031);
    assert.equal(f.largest_activations_x_batch, 1173 * 996);
    assert.equal(f.input_elements, 2346);
    assert.equal(f.input_spatial, 0);
    assert.deepEqual([f.activation_sin, f.activation_cos], [definition.activationAngles.ReLU.sin, definition.activationAngles.ReLU.cos]);
  });

  it('encodes every hidden activation of the layer catalog on the circle, and none of the softmax family', () => {
    const angles = definition.activationAngles as Record<string, unknown>;
    const activations = knownLayerTypes().filter((type) => layerSpec(type)?.category === 'activation');
    for (const type of activations) assert.equal(type in angles, !definition.hiddenActivationExcluded.includes(type), type);
    assert.equal(hiddenActivation(['Linear', 'Softmax']), null);
    assert.equal(hiddenActivation(['ReLU', 'GELU', 'GELU']), 'GELU');
  });

  it('ships the analytical model as data exactly as the TypeScript defines it (npm run features:sync)', () => {
    const stored = readFileSync(path.join(REPO_ROOT, 'src', 'core', 'features', 'analyticalModel.json'), 'utf8');
    assert.ok(stored === analyticalModelJson(), 'src/core/features/analyticalModel.json is stale: run npm run features:sync, then /usr/bin/python3 -m harness.training vectors');
  });
});
