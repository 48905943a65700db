import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import type { OptimizerKind, Precision } from '../../../src/core/analysis/modelDescription';
import type { LayerRow, LayerTable } from '../../../src/core/layerTable/layerTable';
import type { FileEstimate, ModelEstimate } from '../../../src/core/estimate/fileEstimate';
import { REPO_ROOT, estimate } from '../fixtures';

/**
 * The training-script corpus (test/fixtures/corpus) against layer tables PyTorch measured
 * (test/vectors/layer-tables, written by scripts/generate_expected_tables.py; rules in
 * docs/layer-table.md). Each model gets five checks: exact parameter total, activations within
 * 1%, the rows' [path, type, params], the rows' output shapes, and the training set-up read
 * from the script.
 */

interface CorpusSetup {
  readonly batchSize: number;
  readonly inputShape: readonly number[];
  readonly optimizer: OptimizerKind;
  readonly precision: Precision;
  readonly gradientCheckpointing?: boolean;
  readonly compiled?: boolean;
}

interface CorpusInput {
  readonly shape: readonly number[];
  readonly dtype: 'float' | 'long';
  readonly low?: number;
  readonly high?: number;
  readonly batchDim?: number;
}

interface CorpusModel {
  /** The name the analyzer reports: the variable the model is assigned to, else the class name. */
  readonly name: string;
  /** Python expression that builds the model in the fixture's namespace (generator only). */
  readonly build: string;
  readonly inputs: readonly CorpusInput[];
  /** Overrides of the file's set-up for this model (e.g. a GAN generator's input). */
  readonly setup?: Partial<CorpusSetup>;
}

interface CorpusEntry {
  readonly file: string;
  readonly models: readonly CorpusModel[];
  readonly setup: CorpusSetup;
}

type ExpectedTable = LayerTable & { readonly generatedBy?: { readonly torch?: string; readonly script: string } };

const CORPUS_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'corpus');
const VECTORS_DIR = path.join(REPO_ROOT, 'test', 'vectors', 'layer-tables');
const ACTIVATION_TOLERANCE = 0.01;

const manifest = JSON.parse(readFileSync(path.join(CORPUS_DIR, 'manifest.json'), 'utf8')) as readonly CorpusEntry[];

function vectorPath(file: string, model: string): string {
  return path.join(VECTORS_DIR, `${path.basename(file, '.py')}.${model}.json`);
}

const expectedTables = new Map<string, ExpectedTable>();

function expectedTable(file: string, model: string): ExpectedTable {
  const where = vectorPath(file, model);
  let table = expectedTables.get(where);
  if (!table) {
    assert.ok(existsSync(where), `${path.relative(REPO_ROOT, where)} is missing: run /usr/bin/python3 scripts/generate_expected_tables.py`);
    table = JSON.parse(readFileSync(where, 'utf8')) as ExpectedTable;
    expectedTables.set(where, table);
  }
  return table;
}

/** One analysis per fixture, shared by its models' tests; an analyzer crash fails each of them. */
const estimates = new Map<string, Promise<FileEstimate>>();

function estimateFile(file: string): Promise<FileEstimate> {
  let result = estimates.get(file);
  if (!result) {
    result = estimate(readFileSync(path.join(CORPUS_DIR, file), 'utf8'));
    estimates.set(file, result);
  }
  return result;
}

async function analyzedModel(file: string, name: string): Promise<ModelEstimate> {
  const result = await estimateFile(file);
  const model = result.models.find((m) => m.name === name);
  if (!model) {
    const found = result.models.map((m) => m.name).join(', ') || 'none';
    const warnings = result.warnings.length ? `; warnings: ${result.warnings.join(' | ')}` : '';
    assert.fail(`${file}: the analyzer reports no model named "${name}" (found: ${found})${warnings}`);
  }
  return model;
}

/** One line per row, so a failing deepEqual shows a line diff. */
const rowLine = (row: LayerRow): string => `${row.path || '<root>'}  ${row.type}  params=${row.params === null ? 'null' : row.params}`;
const shapeLine = (row: LayerRow): string => JSON.stringify(row.outputShape);
const trainableLine = (row: LayerRow): string => `${row.path || '<root>'}  ${row.trainable ? 'trained' : 'frozen'}${row.noGrad ? ', without autograd' : ''}${row.checkpoint !== undefined ? `, checkpointed segment ${row.checkpoint}` : ''}`;
const attentionLine = (row: LayerRow): string => (row.eagerAttention ? `elements=${row.eagerAttention.elements} dropout=${row.eagerAttention.dropout}` : '-');

function firstDifference(actual: readonly string[], expected: readonly string[]): number {
  const length = Math.max(actual.length, expected.length);
  for (let i = 0; i < length; i++) if (actual[i] !== expected[i]) return i;
  return -1;
}

function describeDifference(actual: readonly string[], expected: readonly string[], rows: readonly LayerRow[], what: string): string {
  const at = firstDifference(actual, expected);
  const row = rows[at];
  const where = row ? ` (PyTorch's row ${at}: ${row.path || '<root>'} ${row.type})` : '';
  return `${what}: ${actual.length} rows vs PyTorch's ${expected.length}; first difference at row ${at}${where}: got ${actual[at] ?? 'nothing'}, expected ${expected[at] ?? 'nothing'}`;
}

describe('corpus: layer tables against PyTorch', () => {
  it('has at least 32 fixtures, each in the manifest with an expected table per model', () => {
    // A directory listing, not the manifest, so a fixture missing from the manifest is noticed.
    const onDisk = new Set(readdirSync(CORPUS_DIR).filter((f) => f.endsWith('.py')));
    const listed = new Set(manifest.map((e) => e.file));
    assert.ok(onDisk.size >= 32, `${onDisk.size} fixtures`);
    assert.deepEqual([...onDisk].filter((f) => !listed.has(f)), [], 'fixtures missing from manifest.json');
    assert.deepEqual([...listed].filter((f) => !onDisk.has(f)), [], 'manifest entries without a fixture');
    const missing = manifest.flatMap((e) => e.models.map((m) => vectorPath(e.file, m.name))).filter((p) => !existsSync(p));
    assert.deepEqual(missing.map((p) => path.relative(REPO_ROOT, p)), [], 'run /usr/bin/python3 scripts/generate_expected_tables.py');
  });

  for (const entry of manifest) {
    for (const spec of entry.models) {
      const label = `${entry.file} › ${spec.name}`;
      const setup: CorpusSetup = { ...entry.setup, ...spec.setup };

      describe(label, () => {
        it(`${label}: totals.params equal PyTorch's exactly`, async () => {
          const expected = expectedTable(entry.file, spec.name);
          const { layerTable } = await analyzedModel(entry.file, spec.name);
          assert.equal(layerTable.totals.params, expected.totals.params, `${label}: ${layerTable.totals.params} parameters, PyTorch counts ${expected.totals.params}`);
        });

        it(`${label}: totals.activations within 1% of PyTorch's`, async () => {
          const expected = expectedTable(entry.file, spec.name);
          const { layerTable } = await analyzedModel(entry.file, spec.name);
          const want = expected.totals.activations;
          const got = layerTable.totals.activations;
          const off = want === 0 ? (got === 0 ? 0 : Infinity) : Math.abs(got - want) / want;
          if (off > ACTIVATION_TOLERANCE) {
            const incomplete = layerTable.incomplete ? '; the table is incomplete' : '';
            assert.fail(`${label}: ${got} activations per sample, PyTorch measures ${want} (${(off * 100).toFixed(2)}% off, ${ACTIVATION_TOLERANCE * 100}% allowed)${incomplete}`);
          }
        });

        it(`${label}: rows [path, type, params] match PyTorch's`, async () => {
          const expected = expectedTable(entry.file, spec.name);
          const { layerTable } = await analyzedModel(entry.file, spec.name);
          const got = layerTable.rows.map(rowLine);
          const want = expected.rows.map(rowLine);
          assert.deepEqual(got, want, describeDifference(got, want, expected.rows, `${label} rows`));
        });

        it(`${label}: rows' outputShape match PyTorch's`, async () => {
          const expected = expectedTable(entry.file, spec.name);
          const { layerTable } = await analyzedModel(entry.file, spec.name);
          const got = layerTable.rows.map(shapeLine);
          const want = expected.rows.map(shapeLine);
          assert.deepEqual(got, want, describeDifference(got, want, expected.rows, `${label} output shapes`));
        });

        it(`${label}: rows' trainable (requires_grad after the script froze what it freezes), calls without autograd and checkpointed segments match PyTorch's`, async () => {
          const expected = expectedTable(entry.file, spec.name);
          const { layerTable } = await analyzedModel(entry.file, spec.name);
          const got = layerTable.rows.map(trainableLine);
          const want = expected.rows.map(trainableLine);
          assert.deepEqual(got, want, describeDifference(got, want, expected.rows, `${label} trainable`));
          assert.equal(layerTable.totals.trainableParams, expected.totals.trainableParams);
        });

        it(`${label}: rows' eager attention matrices match PyTorch's`, async () => {
          const expected = expectedTable(entry.file, spec.name);
          const { layerTable } = await analyzedModel(entry.file, spec.name);
          const got = layerTable.rows.map(attentionLine);
          const want = expected.rows.map(attentionLine);
          assert.deepEqual(got, want, describeDifference(got, want, expected.rows, `${label} eager attention`));
        });

        it(`${label}: batch size, input shape, optimizer, precision, checkpointing and torch.compile read from the script`, async () => {
          const model = await analyzedModel(entry.file, spec.name);
          assert.deepEqual(
            { batchSize: model.batchSize, inputShape: model.inputShape, optimizer: model.optimizer, precision: model.precision, gradientCheckpointing: model.gradientCheckpointing, compiled: model.compiled },
            { batchSize: setup.batchSize, inputShape: setup.inputShape, optimizer: setup.optimizer, precision: setup.precision, gradientCheckpointing: setup.gradientCheckpointing ?? false, compiled: setup.compiled ?? false },
            `${label}: set-up; assumptions: ${model.assumptions.map((a) => `${a.name}=${a.value} (${a.origin})`).join(', ')}`,
          );
        });
      });
    }
  }
});
