/**
 * What the report view draws and exports, from an estimate and its outlook (the memory curve over
 * batch sizes and every GPU profile's verdict, which the pipeline works out): the chart data, the
 * estimator table, and the CSV and Markdown exports. Pure (no `vscode`), so the extension, the
 * webview and the tests share it.
 */
import type { MemoryBreakdown } from '../estimators/analytical';
import { estimateJson } from '../estimate/estimateJson';
import type { FileEstimate, ModelEstimate } from '../estimate/fileEstimate';
import { warningsOf } from '../estimate/notes';
import type { GpuComparisonRow, MemoryCurve, ModelOutlook } from '../estimate/outlook';
import { formatCount, formatMiB } from '../format/units';
import { breakdownSource, describeAssumption, describeEstimate, describeMethod, describeProcess, describeSharding, describeVerdict } from './describe';
import { describeLongestSequence, remedyTable, sentence } from './fineTuningText';

/** What a report shows: the estimate of a file and, model by model, its outlook. */
export interface ReportedEstimate {
  readonly estimate: FileEstimate;
  /** One per model of the estimate, in its order. */
  readonly outlooks: readonly ModelOutlook[];
}

export interface EstimatorRow {
  /** The estimator's id (`analytical`, `horus`, `ensemble`). */
  readonly estimator: string;
  readonly label: string;
  readonly estimateMiB: number | null;
  readonly lowMiB: number | null;
  readonly highMiB: number | null;
}

/** Every registered estimator side by side, in the registry's order (null: did not run). */
export function estimatorComparison(model: ModelEstimate): EstimatorRow[] {
  return model.estimates.map(({ estimator, label, estimateMiB, lowMiB, highMiB }) => ({ estimator, label, estimateMiB, lowMiB, highMiB }));
}

export const BREAKDOWN_PARTS: readonly { readonly key: Exclude<keyof MemoryBreakdown, 'contextMiB'>; readonly label: string }[] = [
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
  /** Whose breakdown it is: `analytical model`, `fine-tuning model`. */
  readonly breakdownSource: string;
  readonly curve: MemoryCurve | null;
  readonly gpuName: string;
  /** The estimate against every GPU profile; null without an estimate. */
  readonly gpus: { readonly estimateMiB: number; readonly rows: readonly GpuComparisonRow[] } | null;
  /** Every registered estimator's figure; null when none of them has an estimate. */
  readonly estimators: readonly EstimatorRow[] | null;
}

export function chartData(estimate: FileEstimate, model: ModelEstimate, outlook: ModelOutlook, id: string): ModelChartData {
  const { breakdown, estimateMiB } = model.memory;
  const gpuRows = outlook.gpus;
  const estimators = estimatorComparison(model);
  return {
    id,
    name: model.name,
    breakdown: breakdown ? BREAKDOWN_PARTS.map((part) => ({ label: part.label, mib: breakdown[part.key] })) : null,
    breakdownSource: breakdownSource(model),
    curve: outlook.curve,
    gpuName: estimate.gpu.name,
    gpus: estimateMiB !== null && gpuRows.length ? { estimateMiB, rows: gpuRows } : null,
    estimators: estimators.some((row) => row.estimateMiB !== null) ? estimators : null,
  };
}

/** The GPU table's largest batch: the fine-tuning model's for a fine-tune it estimates, else the analytical model's. */
export const largestBatchOf = (row: GpuComparisonRow): number => row.fineTuningMaxBatch ?? row.analyticalMaxBatch;
export const largestBatchHeading = (rows: readonly GpuComparisonRow[]): string => `Largest batch (${rows.some((row) => row.fineTuningMaxBatch !== undefined) ? 'fine-tuning model' : 'analytical'})`;

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
export function markdownSummary(estimate: FileEstimate, model: ModelEstimate, outlook: ModelOutlook): string {
  const lines: string[] = [];
  lines.push(`# GPU estimate: ${md(model.name)} in ${md(estimate.file)}`, '');
  lines.push(`- Model: \`${model.name.replace(/`/g, "'")}\` (line ${model.line}, ${model.family.toUpperCase()}, ${formatCount(model.params)} parameters)`);
  lines.push(`- Estimate: **${md(describeEstimate(model))}** peak GPU memory (${md(describeMethod(model))})`);
  lines.push(`- On ${md(estimate.gpu.name)} (${formatMiB(estimate.gpu.memoryMiB)}): ${md(describeVerdict(model, estimate.gpu.name))}`);
  if (model.maxBatchSize !== null) lines.push(`- Largest batch that fits: ${model.maxBatchSize}`);
  if (estimate.process?.models.includes(model.name)) lines.push(`- Whole script: ${md(describeProcess(estimate.process, estimate.gpu.name))}`);
  lines.push('', '## Estimators', '', '| Estimator | Estimate | Range |', '| --- | ---: | ---: |');
  for (const row of estimatorComparison(model)) {
    const range = row.lowMiB !== null && row.highMiB !== null ? `${formatMiB(row.lowMiB)} to ${formatMiB(row.highMiB)}` : '';
    lines.push(`| ${row.label} | ${mibOrNa(row.estimateMiB)} | ${range} |`);
  }
  const { breakdown } = model.memory;
  if (breakdown) {
    lines.push('', `## Memory breakdown (${breakdownSource(model)})`, '', '| Part | Memory |', '| --- | ---: |');
    for (const part of BREAKDOWN_PARTS) lines.push(`| ${part.label} | ${formatMiB(breakdown[part.key])} |`);
  }
  const { sharding } = model.memory;
  if (sharding) {
    lines.push('', '## Several GPUs', '', md(describeSharding(model) ?? ''), '', '| GPUs | Per GPU |', '| ---: | ---: |');
    for (const row of sharding.perGpu) lines.push(`| ${row.gpus} | ${formatMiB(row.driverMiB)} |`);
  }
  const { gpus } = outlook;
  if (gpus.length) {
    lines.push('', '## GPUs', '', `| GPU | Memory | Verdict | ${largestBatchHeading(gpus)} |`, '| --- | ---: | --- | ---: |');
    for (const row of gpus) lines.push(`| ${md(row.name)}${row.current ? ' (selected)' : ''} | ${formatMiB(row.memoryMiB)} | ${row.risk} | ${largestBatchOf(row)} |`);
  }
  if (model.fineTuning) {
    lines.push('', '## What fits', '', `- ${md(sentence(describeLongestSequence(model.fineTuning)))}`);
    const rows = remedyTable(model.fineTuning);
    if (rows.length) {
      lines.push('', `| Change | Estimate | On ${md(estimate.gpu.name)} | Same training |`, '| --- | ---: | --- | --- |');
      for (const row of rows) lines.push(`| ${md(row.change)} | ${row.estimate} | ${row.verdict} | ${row.sameTraining} |`);
    }
  }
  lines.push('', '## Assumptions', '', ...model.assumptions.map((a) => `- ${md(describeAssumption(a))}`));
  const warnings = warningsOf(model);
  if (warnings.length) lines.push('', '## Warnings', '', ...warnings.map((w) => `- ${md(w)}`));
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
export function exportText(estimate: FileEstimate, model: ModelEstimate, outlook: ModelOutlook, format: ExportFormat): string {
  switch (format) {
    case 'json':
      return JSON.stringify(estimateJson({ ...estimate, models: [model] }), null, 2) + '\n';
    case 'csv':
      return layerTableCsv(model);
    case 'markdown':
      return markdownSummary(estimate, model, outlook);
  }
}

/** A file name for the export: `train-model.gpu-estimate.csv` for model `model` of `train.py`. */
export function exportFileName(file: string, model: string, format: ExportFormat): string {
  const base = (file.split(/[\\/]/).pop() ?? 'estimate').replace(/\.py$/, '');
  const safe = `${base}-${model}`.replace(/[^A-Za-z0-9._-]+/g, '_');
  return `${safe}.gpu-estimate.${EXPORT_FORMATS[format].extension}`;
}
