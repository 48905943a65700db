import { formatCount, formatMiB } from '../../core/format/units';
import { describeAssumption, describeBreakdown, describeEstimate, describeLearned, describeMethod, describeVerdict } from '../../core/report/describe';
import type { FileEstimate, ModelEstimate } from '../../core/report/fileEstimate';

/** Everything the page may load, decided by the panel that hosts it. */
export interface ReportPage {
  readonly cspSource: string;
  readonly stylesheetUri: string;
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function modelSection(estimate: FileEstimate, model: ModelEstimate): string {
  const layerRows = model.layerTable.rows
    .map(
      (row) =>
        `<tr><td><code>${escapeHtml(row.path)}</code></td><td>${escapeHtml(row.type)}</td><td>${row.outputShape ? `(${row.outputShape.join(', ')})` : '?'}</td>` +
        `<td class="num">${row.params === null ? '?' : formatCount(row.params)}</td><td class="num">${row.activations === null ? '?' : formatCount(row.activations)}</td></tr>`,
    )
    .join('');
  const warnings = model.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('');
  const breakdown = describeBreakdown(model);
  const analyticalMiB = model.memory.ensemble?.analyticalMiB ?? model.memory.estimateMiB;
  return `<section aria-labelledby="model-${escapeHtml(model.name)}">
  <h2 id="model-${escapeHtml(model.name)}"><code>${escapeHtml(model.name)}</code> <span class="muted">line ${model.line} · ${model.family.toUpperCase()} · ${formatCount(model.params)} parameters</span></h2>
  <p class="verdict verdict-${model.risk ?? 'unknown'}"><strong>${escapeHtml(describeEstimate(model))}</strong> peak GPU memory (${escapeHtml(describeMethod(model))}): ${escapeHtml(describeVerdict(model, estimate.gpu.name))}${model.maxBatchSize === null ? '' : `; largest batch that fits: ${model.maxBatchSize}`}</p>
  <table class="compare"><caption>Estimators</caption>
    <tr><th scope="row">Analytical model</th><td class="num">${analyticalMiB === null ? 'n/a' : formatMiB(analyticalMiB)}</td></tr>
    <tr><th scope="row">Horus formula</th><td class="num">${model.horusMiB === null ? 'n/a' : formatMiB(model.horusMiB)}</td></tr>
    <tr><th scope="row">Trained ensemble</th><td class="num">${model.memory.method === 'ensemble' ? formatMiB(model.memory.estimateMiB!) : 'n/a'}</td></tr>
    <tr><th scope="row">Range, memory bin, utilization (SMACT, SMOCC, DRAMA)</th><td>${escapeHtml(describeLearned(model))}</td></tr>
  </table>
  ${breakdown ? `<p>Breakdown: ${escapeHtml(breakdown)}</p>` : ''}
  <h3>Assumptions</h3><ul>${model.assumptions.map((a) => `<li>${escapeHtml(describeAssumption(a))}</li>`).join('')}</ul>
  ${warnings ? `<h3>Warnings</h3><ul class="warnings">${warnings}</ul>` : ''}
  <table class="layers"><caption>Layers (per sample)</caption>
    <thead><tr><th scope="col">Path</th><th scope="col">Type</th><th scope="col">Output shape</th><th scope="col">Params</th><th scope="col">Activations</th></tr></thead>
    <tbody>${layerRows}</tbody>
  </table>
</section>`;
}

/** The report page for one file: static HTML, no script, styles from the extension only. */
export function reportHtml(estimate: FileEstimate, page: ReportPage): string {
  const body = estimate.models.length ? estimate.models.map((model) => modelSection(estimate, model)).join('\n') : '<p>No PyTorch model found in this file.</p>';
  const fileWarnings = estimate.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${page.cspSource}; img-src ${page.cspSource};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(page.stylesheetUri)}">
<title>GPU estimate: ${escapeHtml(estimate.file)}</title></head>
<body>
<h1>GPU estimate: ${escapeHtml(estimate.file)}</h1>
<p class="muted">${escapeHtml(estimate.gpu.name)}, ${formatMiB(estimate.gpu.memoryMiB)}</p>
${fileWarnings ? `<ul class="warnings">${fileWarnings}</ul>` : ''}
${body}
</body></html>`;
}
