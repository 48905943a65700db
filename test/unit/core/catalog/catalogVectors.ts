import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CatalogInputError, isCatalogMiss, type CatalogArchitecture, type CatalogMiss, type CatalogOptions } from '../../../../src/core/catalog/catalog';
import { isFunctionalRow, type LayerRow } from '../../../../src/core/layerTable/layerTable';
import { findPackageRoot } from '../../../../src/core/parsing/parserAssets';

/**
 * The vectors scripts/catalog/generate_catalog.py writes to test/vectors/catalog/<library>/<model>.json:
 * per model, the exact parameter counts PyTorch gives for some option sets, the smallest square
 * image the harness takes, and cases (options and input) with the layer table harness/layer_table.py
 * measured: its totals, a SHA-256 of its rows and, for the first case, the rows themselves. A
 * case with `error` is an input PyTorch refuses.
 */
export type VectorRow = [string, string, number[] | null, number, number, boolean];

export interface VectorCase {
  readonly options: CatalogOptions;
  readonly input: number[];
  readonly error?: string;
  readonly totals?: { readonly params: number; readonly trainableParams: number; readonly activations: number };
  readonly rowCount?: number;
  readonly rowsSha256?: string;
  readonly rows?: VectorRow[];
}

export interface CatalogVectors {
  readonly name: string;
  readonly library: string;
  readonly params: readonly { readonly options: CatalogOptions; readonly params: number }[];
  readonly smallestSquare: number | null;
  readonly cases: readonly VectorCase[];
}

export const VECTORS_ROOT = path.join(findPackageRoot(__dirname), 'test', 'vectors', 'catalog');

export function vectorNames(library: string): string[] {
  const dir = path.join(VECTORS_ROOT, library);
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort() : [];
}

export function loadVectors(library: string, name: string): CatalogVectors {
  return JSON.parse(readFileSync(path.join(VECTORS_ROOT, library, `${name}.json`), 'utf8')) as CatalogVectors;
}

export function vectorRows(rows: readonly LayerRow[]): VectorRow[] {
  return rows.map((r) => [r.path, r.type, r.outputShape ? [...r.outputShape] : null, r.activations ?? -1, r.params ?? -1, r.trainable]);
}

/** The same hash as the generator: SHA-256 of the rows as compact JSON. */
export function rowsHash(rows: readonly VectorRow[]): string {
  return createHash('sha256').update(JSON.stringify(rows)).digest('hex');
}

export function expectArchitecture(result: CatalogArchitecture | CatalogMiss, what: string): CatalogArchitecture {
  if (isCatalogMiss(result)) assert.fail(`${what}: ${result.miss}`);
  return result;
}

export function expectMiss(result: CatalogArchitecture | CatalogMiss, what: string): string {
  if (!isCatalogMiss(result)) assert.fail(`${what}: expected a CatalogMiss, got ${result.name}`);
  return result.miss;
}

type Lookup = (name: string, options: CatalogOptions) => CatalogArchitecture | CatalogMiss;

/** Checks one model's catalog answers against its vectors: parameters, each case's rows, the smallest image. */
export function checkAgainstVectors(lookup: Lookup, vectors: CatalogVectors): void {
  for (const { options, params } of vectors.params) {
    const architecture = expectArchitecture(lookup(vectors.name, options), `${vectors.name} ${JSON.stringify(options)}`);
    assert.equal(architecture.params, params, `${vectors.name} ${JSON.stringify(options)}: params`);
  }
  for (const c of vectors.cases) {
    const what = `${vectors.name} ${JSON.stringify(c.options)} on ${c.input.join('x')}`;
    const architecture = expectArchitecture(lookup(vectors.name, c.options), what);
    if (c.error) {
      assert.throws(() => architecture.table(c.input), CatalogInputError, `${what}: PyTorch refuses this input (${c.error})`);
      continue;
    }
    const table = architecture.table(c.input);
    const rows = vectorRows(table.rows);
    if (c.rows) assert.deepEqual(rows, c.rows, `${what}: rows`);
    assert.equal(rows.length, c.rowCount, `${what}: row count`);
    assert.equal(rowsHash(rows), c.rowsSha256, `${what}: rows differ from PyTorch's (run the generator with --dump ${vectors.name} to see them)`);
    const params = table.rows.reduce((n, r) => n + (r.params ?? 0), 0);
    // totals.activations leaves out the functional rows (torch.cat), as docs/layer-table.md defines it.
    const activations = table.rows.reduce((n, r) => n + (isFunctionalRow(r) ? 0 : (r.activations ?? 0)), 0);
    assert.deepEqual({ params, activations }, { params: c.totals!.params, activations: c.totals!.activations }, `${what}: totals`);
    assert.equal(architecture.params, c.totals!.params, `${what}: architecture.params equals the table's total`);
    assert.deepEqual(table.inputShape, c.input);
  }
  const smallest = vectors.smallestSquare;
  if (smallest !== null) {
    const architecture = expectArchitecture(lookup(vectors.name, {}), vectors.name);
    assert.doesNotThrow(() => architecture.table([3, smallest, smallest]), `${vectors.name} takes ${smallest}x${smallest}`);
    if (smallest > 1) assert.throws(() => architecture.table([3, smallest - 1, smallest - 1]), CatalogInputError, `${vectors.name} refuses ${smallest - 1}x${smallest - 1}`);
  }
}
