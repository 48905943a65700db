/**
 * What the report view draws and exports, computed from an estimate: the memory curve over batch
 * sizes, the comparison with every GPU profile, and the CSV and Markdown exports. Pure (no
 * `vscode`), so the extension, the webview and the tests share it.
 */
import { analyticalEstimate, type MemoryBreakdown } from '../estimators/analytical';
import { curveReach } from '../estimators/learned';
import type { TrainingJob } from '../estimators/trainingJob';
import { largestFittingBatch, riskOf } from '../estimate/verdict';
import { formatCount, formatMiB } from '../format/units';
import { GPU_PROFILES, type GpuProfile } from '../gpus/gpuProfiles';
import { describeAssumption, describeEstimate, describeMethod, describeVerdict } from './describe';
import type { FileEstimate, ModelEstimate, Risk } from '../estimate/fileEstimate';

/** At most this many batch sizes on the curve (evenly spaced, plus the batch sizes that matter). */
export const CURVE_POINTS = 64;

export interface EnsembleAt {
  readonly estimateMiB: number;
  /** The ensemble's calibrated range (its range quantiles). */
  readonly lowMiB: number;
  readonly highMiB: number;
}

export interface CurvePoint {
  readonly batchSize: number;
  /** The analytical model's peak at this batch size (MiB, one decimal). */
  readonly analyticalMiB: number;
  /** The trained ensemble at this batch size, where it ran there (its batch grid and the script's batch). */
  readonly ensemble: EnsembleAt | null;
}

export interface MemoryCurve {
  readonly points: readonly CurvePoint[];
  readonly gpuMiB: number;
  /** The script's batch size, when known. */
  readonly batchSize: number | null;
  /** Largest batch whose analytical estimate fits the GPU (0: not even one sample). */
  readonly analyticalMaxBatch: number;
  /** The largest batch the report states (the ensemble's when it ran), when known. */
  readonly maxBatchSize: number | null;
  /** The ensemble's estimate at the script's batch size, where the ensemble ran. */
  readonly ensemblePoint: { readonly batchSize: number; readonly estimateMiB: number; readonly lowMiB: number | null; readonly highMiB: number | null } | null;
}

function jobOf(model: ModelEstimate, batchSize: number): TrainingJob {
  return { table: model.layerTable, batchSize, optimizer: model.optimizer, precision: model.precision };
}

/**
 * The trained ensemble by batch size: its grid (up to the first point at or past `limit`, so its
 * band spans the curve) and, exactly as the estimate states it, the script's batch.
 */
function ensembleByBatch(model: ModelEstimate, limit: number): Map<number, EnsembleAt> {
  const byBatch = new Map<number, EnsembleAt>();
  const { memory } = model;
  if (memory.method !== 'ensemble') return byBatch;
  for (const p of [...(memory.ensemble?.curve ?? [])].sort((a, b) => a.batchSize - b.batchSize)) {
    byBatch.set(p.batchSize, { estimateMiB: p.estimateMiB, lowMiB: p.lowMiB, highMiB: p.highMiB });
    if (p.batchSize >= limit) break;
  }
  if (model.batchSize !== null && memory.estimateMiB !== null && memory.lowMiB !== null && memory.highMiB !== null) {
    byBatch.set(model.batchSize, { estimateMiB: memory.estimateMiB, lowMiB: memory.lowMiB, highMiB: memory.highMiB });
  }
  return byBatch;
}

/**
 * The analytical peak over batch sizes from 1 to about twice the largest that fits (or twice the
 * script's batch, if larger), including the script's batch and the largest that fits, with the
 * trained ensemble's estimate and range where it ran; null when the model has no layers to size.
 */
export function memoryCurve(model: ModelEstimate, gpuMiB: number): MemoryCurve | null {
  if (model.layerTable.rows.length === 0) return null;
  const at = (b: number): number => analyticalEstimate(jobOf(model, b)).totalMiB;
  const analyticalMaxBatch = largestFittingBatch(at, gpuMiB);
  const reach = curveReach(analyticalMaxBatch, model.maxBatchSize, model.batchSize);
  const ensemble = ensembleByBatch(model, reach);
  // The ensemble's grid is geometric: its first point past `reach` ends the curve, so the band does not stop short.
  const limit = Math.max(reach, ...ensemble.keys());
  const sizes = new Set<number>([1, limit, ...ensemble.keys()]);
  const step = (limit - 1) / (CURVE_POINTS - 1);
  for (let i = 1; i < CURVE_POINTS - 1; i++) sizes.add(Math.round(1 + i * step));
  for (const b of [model.batchSize, model.maxBatchSize, analyticalMaxBatch, analyticalMaxBatch + 1]) if (b !== null && b >= 1 && b <= limit) sizes.add(b);
  const points = [...sizes]
    .sort((a, b) => a - b)
    .map((batchSize) => ({ batchSize, analyticalMiB: Math.round(at(batchSize) * 10) / 10, ensemble: ensemble.get(batchSize) ?? null }));
  const { memory } = model;
  const ensemblePoint =
    memory.method === 'ensemble' && memory.estimateMiB !== null && model.batchSize !== null
      ? { batchSize: model.batchSize, estimateMiB: memory.estimateMiB, lowMiB: memory.lowMiB, highMiB: memory.highMiB }
      : null;
  return { points, gpuMiB, batchSize: model.batchSize, analyticalMaxBatch, maxBatchSize: model.maxBatchSize, ensemblePoint };
}

export interface GpuComparisonRow {
  readonly id: string;
  readonly name: string;
  readonly memoryMiB: number;
  /** The GPU's memory minus the model's estimate (as the report states it); negative: over. */
  readonly headroomMiB: number;
  readonly risk: Risk;
  /** Largest batch whose analytical estimate fits this GPU. */
  readonly analyticalMaxBatch: number;
  /** The GPU the estimate was made for. */
  readonly current: boolean;
}

/** The model's estimate against every GPU profile, smallest memory first; empty without an estimate. */
export function gpuComparison(model: ModelEstimate, currentGpuId: string, safetyMargin: number, profiles: readonly GpuProfile[] = GPU_PROFILES): GpuComparisonRow[] {
  const estimateMiB = model.memory.estimateMiB;
  if (estimateMiB === null) return [];
  const at = (b: number): number => analyticalEstimate(jobOf(model, b)).totalMiB;
  return [...profiles]
    .sort((a, b) => a.memoryMiB - b.memoryMiB || a.name.localeCompare(b.name))
    .map((gpu) => ({
      id: gpu.id,
      name: gpu.name,
      memoryMiB: gpu.memoryMiB,
      headroomMiB: gpu.memoryMiB - estimateMiB,
      risk: riskOf(estimateMiB, gpu.memoryMiB, safetyMargin),
      analyticalMaxBatch: model.layerTable.rows.length ? largestFittingBatch(at, gpu.memoryMiB) : 0,
      current: gpu.id === currentGpuId,
    }));
}

export interface EstimatorRow {
  readonly estimator: 'analytical' | 'horus' | 'ensemble';
  readonly label: string;
  readonly estimateMiB: number | null;
  readonly lowMiB: number | null;
  readonly highMiB: number | null;
}

/** Our analytical model, the Horus formula and the trained ensemble side by side (null: did not run). */
export function estimatorComparison(model: ModelEstimate): EstimatorRow[] {
  const { memory } = model;
  const ensemble = memory.method === 'ensemble' ? memory.estimateMiB : null;
  const analytical = memory.ensemble?.analyticalMiB ?? (memory.method === 'analytical' ? memory.estimateMiB : null);
  return [
    { estimator: 'analytical', label: 'Analytical model', estimateMiB: analytical, lowMiB: null, highMiB: null },
    { estimator: 'horus', label: 'Horus formula', estimateMiB: model.horusMiB, lowMiB: null, highMiB: null },
    { estimator: 'ensemble', label: 'Trained ensemble', estimateMiB: ensemble, lowMiB: ensemble === null ? null : memory.lowMiB, highMiB: ensemble === null ? null : memory.highMiB },
  ];
}

export const BREAKDOWN_PARTS: readonly { readonly key: keyof MemoryBreakdown; readonly label: string }[] = [
  { key: 'weightsMiB', label: 'Weights' },
  { key: 'gradientsMiB', label: 'Gradients' },
  { key: 'optimizerMiB', label: 'Optimizer state' },
  { key: 'activationsMiB', label: 'Activations' },
  { key: 'overheadMiB', label: 'CUDA context and allocator' },
];

/** What the webview script needs to draw one model's charts (and the page's tables show, the same rows). */
export interface ModelChartData {
  readonly id: string;
  readonly name: string;
  readonly breakdown: readonly { readonly label: string; readonly mib: number }[] | null;
  readonly curve: MemoryCurve | null;
  readonly gpuName: string;
  /** The estimate against every GPU profile; null without an estimate. */
  readonly gpus: { readonly estimateMiB: number; readonly rows: readonly GpuComparisonRow[] } | null;
  /** Analytical model, Horus and ensemble; null when none of them has an estimate. */
  readonly estimators: readonly EstimatorRow[] | null;
}

export function chartData(estimate: FileEstimate, model: ModelEstimate, id: string, safetyMargin: number): ModelChartData {
  const { breakdown, estimateMiB } = model.memory;
  const gpuRows = gpuComparison(model, estimate.gpu.id, safetyMargin);
  const estimators = estimatorComparison(model);
  return {
    id,
    name: model.name,
    breakdown: breakdown ? BREAKDOWN_PARTS.map((part) => ({ label: part.label, mib: breakdown[part.key] })) : null,
    curve: memoryCurve(model, estimate.gpu.memoryMiB),
    gpuName: estimate.gpu.name,
    gpus: estimateMiB !== null && gpuRows.length ? { estimateMiB, rows: gpuRows } : null,
    estimators: estimators.some((row) => row.estimateMiB !== null) ? estimators : null,
  };
}

/** One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. */
function csvField(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  // A leading =, +, - or @ would be a formula to a spreadsheet; a quote before it keeps it text.
  const safe = /^[=+\-@]/.test(text) && typeof value === 'string' ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The model's layer table as CSV: path, type, output shape, params, activations per sample; empty fields where unknown. */
export function layerTableCsv(model: ModelEstimate): string {
  const header = ['path', 'type', 'output_shape', 'params', 'activations_per_sample', 'trainable'];
  const rows = model.layerTable.rows.map((row) => [row.path, row.type, row.outputShape ? row.outputShape.join('x') : null, row.params, row.activations, row.trainable ? 'true' : 'false']);
  return [header, ...rows].map((fields) => fields.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/** Escapes text for a Markdown table cell or line. */
function md(text: string): string {
  return text.replace(/[\\`*_[\]<>|]/g, (c) => `\\${c}`).replace(/\r?\n/g, ' ');
}

const mibOrNa = (mib: number | null): string => (mib === null ? 'n/a' : formatMiB(mib));

/** A Markdown summary of one model's estimate: verdict, estimators, breakdown, GPU comparison, assumptions, warnings. */
export function markdownSummary(estimate: FileEstimate, model: ModelEstimate, safetyMargin: number): string {
  const lines: string[] = [];
  lines.push(`# GPU estimate: ${md(model.name)} in ${md(estimate.file)}`, '');
  lines.push(`- Model: \`${model.name.replace(/`/g, "'")}\` (line ${model.line}, ${model.family.toUpperCase()}, ${formatCount(model.params)} parameters)`);
  lines.push(`- Estimate: **${md(describeEstimate(model))}** peak GPU memory (${md(describeMethod(model))})`);
  lines.push(`- On ${md(estimate.gpu.name)} (${formatMiB(estimate.gpu.memoryMiB)}): ${md(describeVerdict(model, estimate.gpu.name))}`);
  if (model.maxBatchSize !== null) lines.push(`- Largest batch that fits: ${model.maxBatchSize}`);
  lines.push('', '## Estimators', '', '| Estimator | Estimate | Range |', '| --- | ---: | ---: |');
  for (const row of estimatorComparison(model)) {
    const range = row.lowMiB !== null && row.highMiB !== null ? `${formatMiB(row.lowMiB)} to ${formatMiB(row.highMiB)}` : '';
    lines.push(`| ${row.label} | ${mibOrNa(row.estimateMiB)} | ${range} |`);
  }
  const { breakdown } = model.memory;
  if (breakdown) {
    lines.push('', '## Memory breakdown (analytical model)', '', '| Part | Memory |', '| --- | ---: |');
    for (const part of BREAKDOWN_PARTS) lines.push(`| ${part.label} | ${formatMiB(breakdown[part.key])} |`);
  }
  const gpus = gpuComparison(model, estimate.gpu.id, safetyMargin);
  if (gpus.length) {
    lines.push('', '## GPUs', '', '| GPU | Memory | Verdict | Largest batch (analytical) |', '| --- | ---: | --- | ---: |');
    for (const row of gpus) lines.push(`| ${md(row.name)}${row.current ? ' (selected)' : ''} | ${formatMiB(row.memoryMiB)} | ${row.risk} | ${row.analyticalMaxBatch} |`);
  }
  lines.push('', '## Assumptions', '', ...model.assumptions.map((a) => `- ${md(describeAssumption(a))}`));
  if (model.warnings.length) lines.push('', '## Warnings', '', ...model.warnings.map((w) => `- ${md(w)}`));
  return lines.join('\n') + '\n';
}

export type ExportFormat = 'json' | 'csv' | 'markdown';

export const EXPORT_FORMATS: Readonly<Record<ExportFormat, { readonly extension: string; readonly label: string }>> = {
  json: { extension: 'json', label: 'JSON' },
  csv: { extension: 'csv', label: 'CSV' },
  markdown: { extension: 'md', label: 'Markdown' },
};

export function isExportFormat(value: unknown): value is ExportFormat {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(EXPORT_FORMATS, value);
}

/**
 * The exported file's text: JSON is the estimate as `gpu-estimate --json` prints it, limited to
 * this model; CSV the layer table; Markdown the summary.
 */
export function exportText(estimate: FileEstimate, model: ModelEstimate, format: ExportFormat, safetyMargin: number): string {
  switch (format) {
    case 'json':
      return JSON.stringify({ ...estimate, models: [model] }, null, 2) + '\n';
    case 'csv':
      return layerTableCsv(model);
    case 'markdown':
      return markdownSummary(estimate, model, safetyMargin);
  }
}

/** A file name for the export: `train-model.gpu-estimate.csv` for model `model` of `train.py`. */
export function exportFileName(file: string, model: string, format: ExportFormat): string {
  const base = (file.split(/[\\/]/).pop() ?? 'estimate').replace(/\.py$/, '');
  const safe = `${base}-${model}`.replace(/[^A-Za-z0-9._-]+/g, '_');
  return `${safe}.gpu-estimate.${EXPORT_FORMATS[format].extension}`;
}
