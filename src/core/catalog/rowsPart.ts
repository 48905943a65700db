/**
 * A part of an architecture whose data records its layers' sizes but no graph of its forward
 * (timm, transformers): the part's rows are the whole model's rows under it, at the model input
 * that gives the part the input the script gives it. That input is found where the part starts
 * the model (its input is the model's) or right after another layer (its input is that layer's
 * output, and a model input scaled alike gives it); the part's output is its last layer's.
 */
import { CatalogPartError, type CatalogArchitecture, type CatalogTable } from './catalog';
import type { LayerRow } from '../layerTable/layerTable';

const sameShape = (a: readonly number[] | null | undefined, b: readonly number[]) => !!a && a.length === b.length && a.every((d, i) => d === b[i]);

export function rowsPartTable(architecture: CatalogArchitecture, path: string, sample: readonly number[]): CatalogTable {
  const inPart = (row: LayerRow) => row.path === path || row.path.startsWith(`${path}.`);
  const called = (rows: readonly LayerRow[]) => rows.map((row, i) => [row, i] as const).filter(([row]) => row.type !== 'Parameter' && row.outputShape !== null);
  const base = architecture.table(architecture.input.defaultShape);
  const calls = called(base.rows);
  const first = calls.findIndex(([row]) => inPart(row));
  if (first < 0) throw new CatalogPartError(`forward of ${architecture.name} calls no layer of \`${path}\` at its usual input`);
  const before = first > 0 ? calls[first - 1]![0].outputShape! : undefined;
  const input = before ? modelInputFor(architecture, before, sample, path) : sample;
  const table = architecture.table(input);
  const previous = before ? called(table.rows)[first - 1]?.[0].outputShape : table.inputShape;
  if (!sameShape(previous, sample)) throw new CatalogPartError(`no input of ${architecture.name} gives \`${path}\` a ${sample.join('x')} input, so it is not sized`);
  const rows = table.rows.filter(inPart).map((row) => ({ ...row, path: row.path === path ? '' : row.path.slice(path.length + 1) }));
  const last = called(rows).at(-1)?.[0].outputShape;
  return {
    inputShape: [...sample],
    rows,
    ...(last ? { output: last } : {}),
    notes: [`the ${architecture.library} data has no graph of ${architecture.name}'s forward: \`${path}\` is sized from the whole model's rows, and its output is taken as its last layer's`],
  };
}

/** The model input that gives the layer before the part (whose output is `before` at the usual input) an output of `sample`'s shape. */
function modelInputFor(architecture: CatalogArchitecture, before: readonly number[], sample: readonly number[], path: string): readonly number[] {
  const usual = architecture.input.defaultShape;
  if (architecture.input.kind === 'tokens') return [sample[0]!];
  if (before.length !== 3 || sample.length !== 3 || usual.length !== 3) throw new CatalogPartError(`\`${path}\` of ${architecture.name} takes a ${before.join('x')} input there, not ${sample.join('x')}`);
  return [usual[0]!, Math.round((sample[1]! * usual[1]!) / before[1]!), Math.round((sample[2]! * usual[2]!) / before[2]!)];
}
