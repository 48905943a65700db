/**
 * The transformers catalog against the real library: expected-tables.json holds what
 * harness/layer_table.py recorded with transformers 5.18.0 (expected_tables.py says how), for small
 * configs of every covered class (every row) and for the published checkpoints (parameter counts,
 * totals, row counts).
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isCatalogMiss, type CatalogArchitecture } from '../../../../../src/core/catalog/catalog';
import {
  TRANSFORMERS_VERSION,
  resolveTransformersRequest,
  transformersArchitecture,
  type TransformersRequest,
} from '../../../../../src/core/catalog/hf/transformers';
import { findPackageRoot } from '../../../../../src/core/parsing/parserAssets';

type Row = [string, string, number[] | null, number, number, boolean];

interface ExpectedCase {
  readonly id: string;
  readonly request: TransformersRequest;
  readonly sample: number[];
  readonly full: boolean;
  readonly class: string;
  readonly modelType: string;
  readonly config: Record<string, unknown>;
  readonly params: number;
  readonly trainableParams: number;
  readonly activations: number;
  readonly rowCount: number;
  readonly rows?: Row[];
}

const FILE = path.join(findPackageRoot(__dirname), 'test', 'unit', 'core', 'catalog', 'hf', 'expected-tables.json');
const expected = JSON.parse(readFileSync(FILE, 'utf8')) as { transformers: string; torch: string; cases: ExpectedCase[] };

function architecture(request: TransformersRequest): CatalogArchitecture {
  const arch = transformersArchitecture(request);
  if (isCatalogMiss(arch)) assert.fail(`${JSON.stringify(request)}: ${arch.miss}`);
  return arch;
}

describe('transformers catalog against transformers 5.18.0', () => {
  it('was recorded with the transformers version the catalog follows', () => {
    assert.equal(expected.transformers, TRANSFORMERS_VERSION);
    assert.ok(expected.cases.filter((c) => !c.full).length >= 80, 'small-config cases');
    assert.ok(expected.cases.filter((c) => c.full).length >= 160, 'checkpoint cases');
  });

  for (const c of expected.cases) {
    it(`${c.id}: class, config, parameters${c.full ? ', totals' : ' and every row'}`, () => {
      const resolved = resolveTransformersRequest(c.request);
      if ('miss' in resolved) assert.fail(resolved.miss);
      assert.equal(resolved.className, c.class);
      assert.equal(resolved.modelType === 'roberta' ? 'roberta' : resolved.modelType, c.modelType);
      for (const [field, value] of Object.entries(c.config)) {
        if (field === '_attn_implementation') continue; // the library's choice when none is given; no row depends on it
        assert.deepEqual(resolved.config[field], value, `config.${field}`);
      }

      const arch = architecture(c.request);
      assert.equal(arch.className, c.class);
      assert.equal(arch.params, c.params, 'parameters');
      const table = arch.table(c.sample);
      const rows = table.rows;
      assert.equal(rows.reduce((s, r) => s + (r.params ?? 0), 0), c.params, 'rows hold every parameter once');
      assert.equal(rows.filter((r) => r.trainable).reduce((s, r) => s + (r.params ?? 0), 0), c.trainableParams, 'trainable parameters');
      assert.equal(rows.reduce((s, r) => s + (r.activations ?? 0), 0), c.activations, 'activations');
      assert.equal(rows.length, c.rowCount, 'rows');
      if (c.rows) {
        const actual: Row[] = rows.map((r) => [r.path, r.type, r.outputShape ? [...r.outputShape] : null, r.activations ?? -1, r.params ?? -1, r.trainable]);
        for (let i = 0; i < Math.max(actual.length, c.rows.length); i++) {
          assert.deepEqual(actual[i], c.rows[i], `row ${i}`);
        }
      }
    });
  }
});
