import { formatCount, formatMiB } from '../../core/format/units';
import { describeAssumption, describeEstimate, describeLearned, describeMethod, describeProcess, describeSharding, describeVerdict } from '../../core/display/describe';
import type { FileEstimate, ModelEstimate, Risk } from '../../core/estimate/fileEstimate';
import { warningsOf } from '../../core/estimate/notes';
import { DRY_RUN_DIFFERENCE_NOTE, dryRunDifferencePercent, dryRunRangeText, signedPercent } from '../../core/display/dryRunText';
import { dryRunRangeOnGpu } from '../../core/dryRun/dryRunRange';
import { describeLongestSequence, describeRemedies, remedyTable, sentence } from '../../core/display/fineTuningText';
import { chartData, estimatorComparison, EXPORT_FORMATS, largestBatchHeading, largestBatchOf, type ExportFormat, type ModelChartData, type ReportedEstimate } from '../../core/display/reportData';
import type { MemoryCurve } from '../../core/estimate/outlook';

/** Everything the page may load, decided by the panel that hosts it. */
export interface ReportPage {
  readonly cspSource: string;
  readonly stylesheetUri: string;
  /** The bundled chart script (dist/webview/report.js) and its stylesheet (uPlot's, bundled beside it). */
  readonly scriptUri: string;
  readonly chartStylesheetUri: string;
  /** A fresh random value per render; the only script that runs is the one carrying it. */
  readonly nonce: string;
  /** Share of the GPU's memory kept free (0..1), for the GPU comparison. */
  readonly safetyMargin: number;
}

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** JSON that is safe inside a `<script type="application/json">` element (no `</script>`, no `<!--`). */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

const mibOrNa = (mib: number | null): string => (mib === null ? 'n/a' : formatMiB(mib));
const range = (low: number | null, high: number | null): string => (low !== null && high !== null ? `${formatMiB(low)} to ${formatMiB(high)}` : '');
const VERDICT: Readonly<Record<Risk, string>> = { fits: 'fits', tight: 'within the safety margin', oom: 'does not fit' };

/** A chart's container: uPlot draws its canvas inside; the label says what it shows, the table beside it every number. */
const chartDiv = (data: ModelChartData, kind: string, label: string): string =>
  `<div class="chart" id="${data.id}-${kind}" data-chart="${kind}" role="img" aria-label="${escapeHtml(label)}"></div>`;

function exportButtons(modelIndex: number, name: string): string {
  return (Object.keys(EXPORT_FORMATS) as ExportFormat[])
    .map((format) => `<button type="button" class="export" data-export="${format}" data-model="${modelIndex}" aria-label="Export ${escapeHtml(name)} as ${EXPORT_FORMATS[format].label}">Export ${EXPORT_FORMATS[format].label}</button>`)
    .join(' ');
}

function breakdownSection(data: ModelChartData): string {
  if (!data.breakdown) return '';
  const total = data.breakdown.reduce((sum, part) => sum + part.mib, 0);
  const label = `Memory breakdown: ${data.breakdown.map((part) => `${part.label} ${formatMiB(part.mib)}`).join(', ')}`;
  const rows = data.breakdown.map((part) => `<tr><th scope="row">${escapeHtml(part.label)}</th><td class="num">${formatMiB(part.mib)}</td><td class="num">${total > 0 ? ((100 * part.mib) / total).toFixed(1) : '0.0'}%</td></tr>`).join('');
  return `<h3>Memory breakdown (${escapeHtml(data.breakdownSource)})</h3>
  ${chartDiv(data, 'breakdown', label)}
  <table class="breakdown"><caption>Memory breakdown</caption><thead><tr><th scope="col">Part</th><th scope="col">Memory</th><th scope="col">Share</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A fine-tuning job on several GPUs: the strategy and count the per-GPU estimate is for, and the per-GPU table. */
function shardingSection(model: ModelEstimate): string {
  const sharding = model.memory.sharding;
  if (!sharding) return '';
  const rows = sharding.perGpu.map((row) => `<tr><td class="num">${row.gpus}</td><td class="num">${formatMiB(row.driverMiB)}</td></tr>`).join('');
  return `<h3>Several GPUs</h3>
  <p class="muted">${escapeHtml(describeSharding(model) ?? '')}</p>
  <table class="sharding"><caption>Memory per GPU (${escapeHtml(sharding.strategy)})</caption><thead><tr><th scope="col">GPUs</th><th scope="col">Per GPU</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function curveSection(data: ModelChartData, curve: MemoryCurve | null): string {
  if (!curve) return '';
  const fit = curve.maxBatchSize ?? curve.analyticalMaxBatch;
  const band = curve.points.some((p) => p.estimate);
  const shaded = band && curve.ranged;
  const label = `Peak memory versus batch size, from batch ${curve.points[0]!.batchSize} to ${curve.points[curve.points.length - 1]!.batchSize}, by the analytical model${band ? ` and the ${curve.estimator ?? 'estimate'}${shaded ? ', its range shaded' : ''}` : ''}; ${data.gpuName} has ${formatMiB(curve.gpuMiB)}; the largest batch that fits is ${fit}.`;
  const marks = (b: number): string => [b === curve.batchSize ? 'script' : '', b === curve.analyticalMaxBatch ? 'largest that fits (analytical)' : '', b === curve.maxBatchSize && b !== curve.analyticalMaxBatch ? 'largest that fits' : ''].filter(Boolean).join(', ');
  const estimateCells = (p: MemoryCurve['points'][number]): string => (band ? `<td class="num">${p.estimate ? formatMiB(p.estimate.estimateMiB) : ''}</td>${shaded ? `<td class="num">${p.estimate ? range(p.estimate.lowMiB, p.estimate.highMiB) : ''}</td>` : ''}` : '');
  const rows = curve.points.map((p) => `<tr><td class="num">${p.batchSize}</td><td class="num">${formatMiB(p.analyticalMiB)}</td>${estimateCells(p)}<td>${p.analyticalMiB > curve.gpuMiB ? 'over' : 'fits'}</td><td>${marks(p.batchSize)}</td></tr>`).join('');
  const who = escapeHtml(curve.estimator ?? 'estimate');
  const point = curve.estimatePoint ? `; ${who} at batch ${curve.estimatePoint.batchSize}: ${formatMiB(curve.estimatePoint.estimateMiB)}` : '';
  const estimateHeads = band ? `<th scope="col">${capitalized(who)}</th>${shaded ? `<th scope="col">${capitalized(who)} range</th>` : ''}` : '';
  return `<h3>Memory vs batch size</h3>
  <p class="muted">Analytical model${band ? `, and the ${who}${shaded ? ' with its range shaded' : ''}` : ''}; ${escapeHtml(data.gpuName)} limit ${formatMiB(curve.gpuMiB)}; largest batch that fits: ${fit}${curve.maxBatchSize !== null && curve.maxBatchSize !== curve.analyticalMaxBatch ? ` (analytical model: ${curve.analyticalMaxBatch})` : ''}${point}.</p>
  ${chartDiv(data, 'curve', label)}
  <details><summary>Curve data (${curve.points.length} batch sizes)</summary>
  <table class="curve"><caption>Peak memory by batch size (analytical model${band ? ` and ${who}` : ''})</caption><thead><tr><th scope="col">Batch size</th><th scope="col">Peak memory</th>${estimateHeads}<th scope="col">${escapeHtml(data.gpuName)} (analytical)</th><th scope="col">Note</th></tr></thead><tbody>${rows}</tbody></table></details>`;
}

function gpuSection(data: ModelChartData, model: ModelEstimate, safetyMargin: number): string {
  if (!data.gpus) return '';
  const { rows, estimateMiB } = data.gpus;
  const groups = (Object.keys(VERDICT) as Risk[])
    .map((risk) => ({ risk, names: rows.filter((row) => row.risk === risk).map((row) => `${row.name} (${formatMiB(row.memoryMiB)})`) }))
    .filter((group) => group.names.length)
    .map((group) => `${VERDICT[group.risk]} on ${group.names.join(', ')}`);
  const label = `GPU memory of ${rows.length} GPUs against the estimate of ${formatMiB(estimateMiB)}: ${groups.join('; ')}.`;
  const body = rows
    .map(
      (row) =>
        `<tr class="risk-${row.risk}${row.current ? ' current' : ''}"><th scope="row">${escapeHtml(row.name)}${row.current ? ' <span class="muted">(selected)</span>' : ''}</th><td class="num">${formatMiB(row.memoryMiB)}</td>` +
        `<td class="num">${row.headroomMiB >= 0 ? formatMiB(row.headroomMiB) : `−${formatMiB(-row.headroomMiB)}`}</td><td><span class="badge badge-${row.risk}">${row.risk}</span></td><td class="num">${largestBatchOf(row)}</td></tr>`,
    )
    .join('');
  return `<h3>GPU comparison</h3>
  ${chartDiv(data, 'gpus', label)}
  <table class="gpus"><caption>GPU comparison (estimate ${escapeHtml(describeEstimate(model))}, safety margin ${Math.round(safetyMargin * 100)}%)</caption>
  <thead><tr><th scope="col">GPU</th><th scope="col">Memory</th><th scope="col">Headroom</th><th scope="col">Verdict</th><th scope="col">${largestBatchHeading(rows)}</th></tr></thead><tbody>${body}</tbody></table>`;
}

/** For a fine-tune: the longest sequence that fits, and every change tried with its estimate (fineTuningRemedies.ts). */
function whatFitsSection(estimate: FileEstimate, model: ModelEstimate): string {
  const outlook = model.fineTuning;
  if (!outlook) return '';
  const remedies = describeRemedies(outlook, model.risk);
  const rows = remedyTable(outlook)
    .map((row) => `<tr class="risk-${row.risk}"><th scope="row">${escapeHtml(row.change)}</th><td class="num">${row.estimate}</td><td><span class="badge badge-${row.risk}">${escapeHtml(row.verdict)}</span></td><td>${row.sameTraining}</td></tr>`)
    .join('');
  const table = rows
    ? `<table class="remedies"><caption>Changes tried, smallest estimate first</caption>
  <thead><tr><th scope="col">Change</th><th scope="col">Estimate</th><th scope="col">On ${escapeHtml(estimate.gpu.name)}</th><th scope="col">Same training</th></tr></thead><tbody>${rows}</tbody></table>`
    : '';
  return `<h3>What fits</h3>
  <p>${escapeHtml(sentence(describeLongestSequence(outlook)))}.${remedies ? ` ${escapeHtml(sentence(remedies))}.` : ''}</p>
  ${table}`;
}

function estimatorSection(data: ModelChartData, model: ModelEstimate, gpu: FileEstimate['gpu']): string {
  const estimators = data.estimators ?? estimatorComparison(model);
  const rows = estimators.map((row) => `<tr><th scope="row">${row.label}</th><td class="num">${mibOrNa(row.estimateMiB)}</td><td class="num">${range(row.lowMiB, row.highMiB)}</td></tr>`).join('');
  const label = `Estimators compared: ${estimators.map((row) => `${row.label} ${mibOrNa(row.estimateMiB)}${range(row.lowMiB, row.highMiB) && ` (range ${range(row.lowMiB, row.highMiB)})`}`).join(', ')}.`;
  return `${data.estimators ? `<h3>Estimators compared</h3>
  ${chartDiv(data, 'estimators', label)}` : ''}
  <table class="compare"><caption>Estimators</caption>
    <thead><tr><th scope="col">Estimator</th><th scope="col">Estimate</th><th scope="col">Range</th></tr></thead><tbody>${rows}</tbody></table>
  <p class="muted">${escapeHtml(describeLearned(model))}</p>${dryRunParagraph(model, gpu)}`;
}

/** Under the estimators: how the dry run's figure compares with the estimate, why they differ, and why it is a range off the measured GPU. */
function dryRunParagraph(model: ModelEstimate, gpu: FileEstimate['gpu']): string {
  const reading = model.estimates.find((r) => r.estimator === 'dry-run');
  const dryRun = reading?.estimateMiB;
  const estimate = model.memory.estimateMiB;
  if (dryRun === undefined || dryRun === null) return '';
  const percent = dryRunDifferencePercent(dryRun, estimate);
  const difference = percent === null ? '' : ` The dry run is ${signedPercent(percent, 0)} against the estimate (${mibOrNa(estimate)}).`;
  const range = dryRunRangeOnGpu(dryRun, gpu);
  const why = range ? ` Its range: ${dryRunRangeText(range, gpu.name)}.` : '';
  const caveats = (reading?.caveats ?? []).map((caveat) => ` ${caveat}`).join('');
  return `\n  <p class="muted">${escapeHtml(`${difference.trim()}${why}${caveats} ${DRY_RUN_DIFFERENCE_NOTE}`.trim())}</p>`;
}

function modelSection(estimate: FileEstimate, model: ModelEstimate, index: number, safetyMargin: number, data: ModelChartData): string {
  const layerRows = model.layerTable.rows
    .map(
      (row) =>
        `<tr><td><code>${escapeHtml(row.path)}</code></td><td>${escapeHtml(row.type)}</td><td>${row.outputShape ? `(${row.outputShape.join(', ')})` : '?'}</td>` +
        `<td class="num">${row.params === null ? '?' : formatCount(row.params)}</td><td class="num">${row.activations === null ? '?' : formatCount(row.activations)}</td></tr>`,
    )
    .join('');
  const warnings = warningsOf(model).map((w) => `<li>${escapeHtml(w)}</li>`).join('');
  const headingId = `${data.id}-title`;
  return `<section aria-labelledby="${headingId}">
  <h2 id="${headingId}"><code>${escapeHtml(model.name)}</code> <span class="muted">line ${model.line} · ${model.family.toUpperCase()} · ${formatCount(model.params)} parameters</span></h2>
  <p class="verdict verdict-${model.risk ?? 'unknown'}"><strong>${escapeHtml(describeEstimate(model))}</strong> peak GPU memory (${escapeHtml(describeMethod(model))}): ${escapeHtml(describeVerdict(model, estimate.gpu.name))}${model.maxBatchSize === null ? '' : `; largest batch that fits: ${model.maxBatchSize}`}</p>
  ${estimate.process?.models.includes(model.name) ? `<p class="verdict verdict-${estimate.process.risk}">Whole script: ${escapeHtml(describeProcess(estimate.process, estimate.gpu.name))}</p>` : ''}
  <div class="actions">${exportButtons(index, model.name)}</div>
  ${estimatorSection(data, model, estimate.gpu)}
  ${whatFitsSection(estimate, model)}
  ${breakdownSection(data)}
  ${shardingSection(model)}
  ${curveSection(data, data.curve)}
  ${gpuSection(data, model, safetyMargin)}
  <h3>Assumptions</h3><ul>${model.assumptions.map((a) => `<li>${escapeHtml(describeAssumption(a))}</li>`).join('')}</ul>
  ${warnings ? `<h3>Warnings</h3><ul class="warnings">${warnings}</ul>` : ''}
  <table class="layers"><caption>Layers (per sample)</caption>
    <thead><tr><th scope="col">Path</th><th scope="col">Type</th><th scope="col">Output shape</th><th scope="col">Params</th><th scope="col">Activations</th></tr></thead>
    <tbody>${layerRows}</tbody>
  </table>
</section>`;
}

/**
 * The report page for one file. The only script is the bundled chart script, allowed by a nonce;
 * every number it draws is also in a table, so the page reads the same without it.
 */
export function reportHtml({ estimate, outlooks }: ReportedEstimate, page: ReportPage): string {
  const charts = estimate.models.map((model, index) => chartData(estimate, model, outlooks[index] ?? { curve: null, gpus: [] }, `model-${index}`));
  const body = estimate.models.length
    ? estimate.models.map((model, index) => modelSection(estimate, model, index, page.safetyMargin, charts[index]!)).join('\n')
    : '<p>No PyTorch model found; the notes below say where the analysis looked.</p>';
  const fileWarnings = estimate.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('');
  const nonce = escapeHtml(page.nonce);
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'nonce-${nonce}'; style-src ${page.cspSource}; img-src ${page.cspSource} data:; font-src ${page.cspSource};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(page.chartStylesheetUri)}">
<link rel="stylesheet" href="${escapeHtml(page.stylesheetUri)}">
<title>GPU estimate: ${escapeHtml(estimate.file)}</title></head>
<body>
<h1>GPU estimate: ${escapeHtml(estimate.file)}</h1>
<p class="muted">${escapeHtml(estimate.gpu.name)}, ${formatMiB(estimate.gpu.memoryMiB)} <button type="button" id="change-gpu" aria-label="Change the GPU (now ${escapeHtml(estimate.gpu.name)})">Change GPU…</button></p>
${fileWarnings ? `<ul class="warnings">${fileWarnings}</ul>` : ''}
${body}
<script type="application/json" id="report-data">${jsonForScript(charts)}</script>
<script nonce="${nonce}" src="${escapeHtml(page.scriptUri)}"></script>
</body></html>`;
}
