import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { estimate, REPO_ROOT } from '../../fixtures';

type Schema = Record<string, unknown>;

const SCHEMA = JSON.parse(readFileSync(path.join(REPO_ROOT, 'schema', 'layer-table.schema.json'), 'utf8')) as Schema;
/** Keywords the schema may use; a new one must be taught to `violations` first. */
const UNDERSTOOD = new Set(['$schema', '$id', '$ref', '$defs', 'title', 'description', 'type', 'required', 'properties', 'additionalProperties', 'items', 'minimum', 'minLength', 'const']);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The violations of the schema's keywords (a subset of JSON Schema 2020-12: exactly what the file uses). */
function violations(value: unknown, schema: Schema, at = '$'): string[] {
  if (typeof schema.$ref === 'string') return violations(value, (SCHEMA.$defs as Record<string, Schema>)[schema.$ref.replace('#/$defs/', '')]!, at);
  const errors: string[] = [];
  const types = schema.type === undefined ? undefined : ([] as string[]).concat(schema.type as string | string[]);
  const actual = typeOf(value);
  if (types && !types.includes(actual) && !(actual === 'integer' && types.includes('number'))) return [`${at}: ${actual} is not ${types.join(' or ')}`];
  if ('const' in schema && value !== schema.const) errors.push(`${at}: ${String(value)} is not ${String(schema.const)}`);
  if (typeof schema.minimum === 'number' && typeof value === 'number' && value < schema.minimum) errors.push(`${at}: ${value} < ${schema.minimum}`);
  if (typeof schema.minLength === 'number' && typeof value === 'string' && value.length < schema.minLength) errors.push(`${at}: too short`);
  if (actual === 'array' && schema.items) (value as unknown[]).forEach((item, i) => errors.push(...violations(item, schema.items as Schema, `${at}[${i}]`)));
  if (actual === 'object') {
    const object = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    for (const key of (schema.required ?? []) as string[]) if (!(key in object)) errors.push(`${at}: missing ${key}`);
    for (const [key, item] of Object.entries(object)) {
      if (properties[key]) errors.push(...violations(item, properties[key], `${at}.${key}`));
      else if (schema.additionalProperties === false) errors.push(`${at}: unexpected ${key}`);
    }
  }
  return errors;
}

/** Every keyword used anywhere in a schema (names under `properties` and `$defs` are not keywords). */
function keywords(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return [];
  return Object.entries(schema).flatMap(([key, value]) => {
    if (key === 'properties' || key === '$defs') return [key, ...Object.values(value as object).flatMap(keywords)];
    return [key, ...(key === 'const' ? [] : keywords(value))];
  });
}

describe('the layer-table schema, on the TypeScript side', () => {
  it('uses only keywords this check understands', () => {
    const unknown = [...new Set(keywords(SCHEMA))].filter((k) => !UNDERSTOOD.has(k));
    assert.deepEqual(unknown, []);
  });

  it('rejects a table that breaks it', () => {
    const broken = { schemaVersion: 2, model: '', inputShape: [-1], rows: [{ path: 'x' }], totals: { params: 1.5 }, incomplete: 'no' };
    assert.ok(violations(broken, SCHEMA).length >= 6, violations(broken, SCHEMA).join('\n'));
  });

  it('accepts every layer table the analyzer builds for the corpus and the examples', async () => {
    const dirs = [path.join(REPO_ROOT, 'test', 'fixtures', 'corpus'), path.join(REPO_ROOT, 'examples')];
    let tables = 0;
    for (const dir of dirs) {
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.py'))) {
        for (const model of (await estimate(readFileSync(path.join(dir, file), 'utf8'))).models) {
          assert.deepEqual(violations(model.layerTable, SCHEMA), [], `${file} › ${model.name}`);
          tables += 1;
        }
      }
    }
    assert.ok(tables >= 40, `${tables} tables`);
  });
});
