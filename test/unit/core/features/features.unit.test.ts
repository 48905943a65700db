import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { OptimizerKind, Precision } from '../../../../src/core/analysis/modelDescription';
import { analyticalEstimate } from '../../../../src/core/estimators/analytical';
import { analyticalModelJson } from '../../../../src/core/features/analyticalModelData';
import definition from '../../../../src/core/features/featureDefinition.json';
import { FEATURE_NAMES, featureRecord, featureVector, hiddenActivation } from '../../../../src/core/features/features';
import { knownLayerTypes, layerSpec } from '../../../../src/core/layers/layerSpecs';
import { isFunctionalRow, type LayerTable } from '../../../../src/core/layerTable/layerTable';
import { denseConcatActivations, referenceRun } from '../../../../scripts/evaluation/referenceData';
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

  it('computes every feature but the analytical three and the two functional ones from the table without its functional rows', () => {
    const analytical = new Set(['analytical_mib', 'analytical_state_mib', 'analytical_activations_mib', 'functional_calls', 'functional_activations_x_batch']);
    const withFunctional = vectors.filter(({ vector }) => vector.layerTable.rows.some(isFunctionalRow));
    assert.ok(withFunctional.some(({ file }) => file === 'synthetic.functional-cat.json'));
    assert.ok(withFunctional.some(({ file }) => file.startsWith('gpumemnet.cnn.')), 'a dense GPUMemNet record');
    for (const { file, vector } of withFunctional) {
      const stripped = { ...vector.layerTable, rows: vector.layerTable.rows.filter((row) => !isFunctionalRow(row)) };
      const full = featureRecord(job(vector));
      const modules = featureRecord({ ...job(vector), table: stripped });
      for (const name of FEATURE_NAMES) if (!analytical.has(name)) assert.equal(full[name], modules[name], `${file}: ${name}`);
    }
    // The synthetic block's cat feeding a conv is kept (8 MiB at batch 64) and its cat feeding the
    // pool is the largest activation (the transient term grows from 2 x 8 to 2 x 16 MiB).
    const { vector } = vectors.find(({ file }) => file === 'synthetic.functional-cat.json')!;
    const stripped = { ...vector.layerTable, rows: vector.layerTable.rows.filter((row) => !isFunctionalRow(row)) };
    const full = featureRecord(job(vector));
    const modules = featureRecord({ ...job(vector), table: stripped });
    assert.equal(full.analytical_activations_mib! - modules.analytical_activations_mib!, 8 + 16);
    assert.equal(full.analytical_state_mib, modules.analytical_state_mib);
    assert.equal(full.layer_calls, 7);
    assert.equal(full.largest_activations_x_batch, 32768 * 64);
    // The functional features count the two cats and their elements x B; without them both are 0.
    const cats = vector.layerTable.rows.filter(isFunctionalRow);
    assert.equal(full.functional_calls, 2);
    assert.equal(full.functional_activations_x_batch, cats.reduce((sum, row) => sum + row.activations!, 0) * 64);
    assert.equal(modules.functional_calls, 0);
    assert.equal(modules.functional_activations_x_batch, 0);
  });

  describe('GPUMemNet dense records gain the torch.cat rows the generator runs before every conv', () => {
    const name = (arch: string) => `input_channels:3_num_classes:10_depth:2_arch:${arch}_base_filters:32_batch:8_input_size:16_act:relu_dropout:0.1_dropout:False_batchnorm:False.out`;
    // 16 x 16 = 256 positions: growth convs 3 -> 32 and 35 -> 32, the transition 131 -> 65, then
    // two convs of neither kind (params fit no rule; a transition's activations not divisible).
    const layers = "[('conv2d', 8192, 896), ('ReLU', 8192, 0), ('conv2d', 8192, 10112), ('ReLU', 8192, 0), ('conv2d', 16640, 8580), ('ReLU', 16640, 0), ('conv2d', 100, 1000), ('conv2d', 100, 8580), ('adaptive_avg_pool2d', 65, 0), ('linear', 10, 660), ('softmax', 10, 0)]";
    const record = (arch: string) => ({ Filename: name(arch), Depth: '2', 'Activations-Params': layers, 'Batch Size': '8', 'Max GPU Memory (MiB)': '1500', Status: 'SUCCESSFUL' });

    it('works out the concatenation from the conv it feeds', () => {
      assert.equal(denseConcatActivations(896, 8192), 3 * 256);
      assert.equal(denseConcatActivations(10112, 8192), 35 * 256);
      assert.equal(denseConcatActivations(8580, 16640), 131 * 256);
      assert.equal(denseConcatActivations(1000, 100), null);
      assert.equal(denseConcatActivations(8580, 100), null);
    });

    it('inserts them, renumbers the rows and keeps the totals', () => {
      const { table } = referenceRun('cnn', record('dense'))!;
      const plain = referenceRun('cnn', record('uniform'))!.table;
      assert.deepEqual(
        table.rows.map((row) => [row.path, row.type, row.activations, row.params]),
        [
          ['0', 'torch.cat', 768, 0],
          ['1', 'Conv2d', 8192, 896],
          ['2', 'ReLU', 8192, 0],
          ['3', 'torch.cat', 8960, 0],
          ['4', 'Conv2d', 8192, 10112],
          ['5', 'ReLU', 8192, 0],
          ['6', 'torch.cat', 33536, 0],
          ['7', 'Conv2d', 16640, 8580],
          ['8', 'ReLU', 16640, 0],
          ['9', 'Conv2d', 100, 1000],
          ['10', 'Conv2d', 100, 8580],
          ['11', 'AdaptiveAvgPool2d', 65, 0],
          ['12', 'Linear', 10, 660],
          ['13', 'Softmax', 10, 0],
        ],
      );
      assert.ok(table.rows.filter(isFunctionalRow).every((row) => row.outputShape === null && row.trainable));
      assert.deepEqual(table.totals, plain.totals);
      assert.equal(table.totals.activations, 8192 * 4 + 16640 * 2 + 200 + 65 + 20);
    });

    it('leaves other architectures as published', () => {
      const plain = referenceRun('cnn', record('uniform'))!.table;
      assert.equal(plain.rows.some(isFunctionalRow), false);
      assert.deepEqual(plain.rows.map((row) => row.path), plain.rows.map((_, i) => String(i)));
      assert.equal(plain.rows.length, 11);
    });
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

  it('encodes every hidden activation of the layer specs on the circle, and none of the softmax family', () => {
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
