import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { LAYER_TABLE_SCHEMA_VERSION, type LayerRow, type LayerTable } from '../../src/core/layerTable/layerTable';

/** One successful run of the published GPUMemNet measurements (A100 40 GB, PyTorch 2.4.1). */
export interface ReferenceRun {
  readonly file: string;
  readonly family: 'mlp' | 'cnn';
  readonly table: LayerTable;
  readonly batchSize: number;
  readonly measuredMiB: number;
  /** DCGM averages (0..1); null where the data has none (-1). */
  readonly smact: number | null;
  readonly smocc: number | null;
}

/** The generator's layer names in the `Activations-Params` column, as torch.nn class names. */
const LAYER_TYPES: Readonly<Record<string, string>> = {
  linear: 'Linear',
  batch_normalization: 'BatchNorm1d',
  batchnorm2d: 'BatchNorm2d',
  dropout: 'Dropout',
  conv2d: 'Conv2d',
  adaptive_avg_pool2d: 'AdaptiveAvgPool2d',
  softmax: 'Softmax',
  gelu: 'GELU',
};

/** Where the reference CSVs are: GPUMEMNET_DATA, else ../shared/data/gpumemnet-a100 beside the repo. */
export function referenceDataDir(repoRoot: string): string {
  return process.env.GPUMEMNET_DATA ?? path.resolve(repoRoot, '..', 'shared', 'data', 'gpumemnet-a100');
}

/** RFC 4180 rows: quoted fields may hold commas and doubled quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      if (row.some((f) => f !== '')) rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) rows.push([...row, field]);
  return rows;
}

/**
 * Per-sample elements of the `torch.cat` that feeds a dense-architecture Conv2d, from that conv's
 * parameters and activations; null where the conv is neither kind the generator builds:
 * - a 3x3 growth conv with 32 outputs: params = 288 C_in + 32, activations = 32 HW;
 * - the 1x1 transition conv halving c channels: params = c (c // 2) + c // 2, activations = (c // 2) HW.
 * As harness/training/data.py `dense_concat_activations`.
 */
export function denseConcatActivations(params: number, activations: number): number | null {
  if ((params - 32) % 288 === 0 && activations % 32 === 0) return ((params - 32) / 288) * (activations / 32);
  const half = (c: number) => Math.floor(c / 2);
  // Increasing in c: at most one c fits.
  for (let c = 2; c * half(c) + half(c) <= params; c++) {
    if (c * half(c) + half(c) === params) return activations % half(c) === 0 ? c * (activations / half(c)) : null;
  }
  return null;
}

/**
 * The layer table of a GPUMemNet record, exactly as harness/training/data.py
 * `reference_layer_table` builds it. Dense records (`arch:dense` in the file name) gain
 * functional rows: the generator's DenseBlock runs every convolution on a `torch.cat` of the
 * block's features so far, which the published layer lists leave out, so a `torch.cat` row (its
 * elements from `denseConcatActivations`) goes immediately before every Conv2d row, as our
 * analyzer and harness record a script's concatenations (what it measured:
 * harness/training/README.md, Data). The totals leave functional rows out, as layer tables do
 * (totals.activations is the modules' outputs), so they are those of the published list.
 */
function layerTable(file: string, layers: string, inputShape: number[]): LayerTable {
  const dense = file.includes('arch:dense');
  const listed: { type: string; activations: number; params: number }[] = [];
  for (const match of layers.matchAll(/\('([^']+)',\s*(\d+),\s*(\d+)\)/g)) {
    const [, name = '', activations = '0', params = '0'] = match;
    listed.push({ type: LAYER_TYPES[name] ?? name, activations: Number(activations), params: Number(params) });
  }
  const rows: LayerRow[] = [];
  for (const { type, activations, params } of listed) {
    const concat = dense && type === 'Conv2d' ? denseConcatActivations(params, activations) : null;
    if (concat !== null) rows.push({ path: String(rows.length), type: 'torch.cat', outputShape: null, activations: concat, params: 0, trainable: true });
    rows.push({ path: String(rows.length), type, outputShape: null, activations, params, trainable: true });
  }
  const sum = (key: 'params' | 'activations') => listed.reduce((s, r) => s + r[key], 0);
  return { schemaVersion: LAYER_TABLE_SCHEMA_VERSION, model: file, inputShape, rows, totals: { params: sum('params'), trainableParams: sum('params'), activations: sum('activations') }, incomplete: false };
}

/** The sample shape the generator used, read from the settings encoded in the file name. */
function inputShape(family: 'mlp' | 'cnn', file: string): number[] {
  const setting = (name: string) => Number(new RegExp(`(?:^|_)${name}:(\\d+)`).exec(file)?.[1]);
  if (family === 'mlp') return [setting('input')];
  const size = setting('input_size');
  return [setting('input_channels'), size, size];
}

/** One CSV record (column name to text) as a run; null for a row without a usable layer list or an OOM crash. */
export function referenceRun(family: 'mlp' | 'cnn', record: Readonly<Record<string, string>>): ReferenceRun | null {
  const status = record['Status'];
  if (!(Number(record['Depth']) > 0) || (status !== undefined && status !== 'SUCCESSFUL')) return null;
  const file = record['Filename']!;
  const utilization = (column: string) => {
    const value = record[column];
    return value === undefined || value === '' || Number(value) < 0 ? null : Number(value);
  };
  return {
    file,
    family,
    table: layerTable(file, record['Activations-Params']!, inputShape(family, file)),
    batchSize: Number(record['Batch Size']),
    measuredMiB: Number(record['Max GPU Memory (MiB)']),
    smact: utilization('Avg SMACT'),
    smocc: utilization('Avg SMOCC'),
  };
}

/** Successful runs with a usable layer list (OOM rows are lower bounds; Depth 0 rows failed to parse). */
export function loadReferenceRuns(dir: string, family: 'mlp' | 'cnn'): ReferenceRun[] {
  const [header, ...records] = parseCsv(readFileSync(path.join(dir, `${family}.csv`), 'utf8'));
  return records
    .map((r) => referenceRun(family, Object.fromEntries(header!.map((name, i) => [name, r[i] ?? '']))))
    .filter((run): run is ReferenceRun => run !== null && run.measuredMiB > 0);
}
