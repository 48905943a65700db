/**
 * The report view's script (bundled with uPlot into dist/webview/report.js by esbuild.config.mjs).
 * Draws the charts from the JSON the page carries, in the theme's colours, redrawing when the
 * theme or the panel's size changes, and sends the export and "Change GPU" buttons' requests to
 * the extension. Every number drawn here is also in a table on the page.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ModelChartData } from '../core/display/reportData';
import type { EstimateAt } from '../core/estimate/outlook';
import type { ReportMessage } from './messages';

declare function acquireVsCodeApi(): { postMessage(message: ReportMessage): void };

const vscode = acquireVsCodeApi();
const CURVE_HEIGHT = 260;
/** Height per bar in the bar charts; their categories sit on the left, one per row, so labels never collide. */
const BAR_ROW = 28;
const BAR_AXIS = 64;

interface Theme {
  readonly foreground: string;
  readonly grid: string;
  readonly font: string;
  readonly series: readonly string[];
  readonly red: string;
  readonly green: string;
  readonly orange: string;
  readonly yellow: string;
}

function theme(): Theme {
  const style = getComputedStyle(document.body);
  const css = (name: string, fallback: string): string => style.getPropertyValue(name).trim() || fallback;
  const foreground = css('--vscode-editor-foreground', css('--vscode-foreground', '#888'));
  return {
    foreground,
    grid: css('--vscode-editorWidget-border', css('--vscode-panel-border', 'rgba(128,128,128,0.35)')),
    font: `${css('--vscode-font-size', '12px')} ${css('--vscode-font-family', 'sans-serif')}`,
    series: ['--vscode-charts-blue', '--vscode-charts-purple', '--vscode-charts-orange', '--vscode-charts-green', '--vscode-charts-yellow'].map((name) => css(name, foreground)),
    red: css('--vscode-charts-red', foreground),
    green: css('--vscode-charts-green', foreground),
    orange: css('--vscode-charts-orange', foreground),
    yellow: css('--vscode-charts-yellow', foreground),
  };
}

const scratch = document.createElement('canvas').getContext('2d');

function textWidth(text: string, font: string): number {
  if (!scratch) return text.length * 7;
  scratch.font = font;
  return scratch.measureText(text).width;
}

/** The label, cut with an ellipsis to `max` pixels: a narrow panel shortens labels rather than overlapping them. */
function fitLabel(text: string, max: number, font: string): string {
  if (textWidth(text, font) <= max) return text;
  let end = text.length;
  while (end > 1 && textWidth(`${text.slice(0, end)}…`, font) > max) end--;
  return `${text.slice(0, end).trimEnd()}…`;
}

/** A theme colour made translucent (for the ensemble's band), whatever CSS syntax the theme gives it in. */
function withAlpha(colour: string, alpha: number): string {
  if (!scratch) return colour;
  scratch.fillStyle = colour;
  const normal = String(scratch.fillStyle);
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(normal);
  if (hex) return `rgba(${parseInt(hex[1]!, 16)}, ${parseInt(hex[2]!, 16)}, ${parseInt(hex[3]!, 16)}, ${alpha})`;
  const rgb = /^rgba?\(([^,]+),([^,]+),([^,)]+)/.exec(normal);
  return rgb ? `rgba(${rgb[1]},${rgb[2]},${rgb[3]}, ${alpha})` : colour;
}

const mib = (value: number | null | undefined): string => (value === null || value === undefined ? '' : value < 1024 ? `${Math.round(value)} MiB` : `${(value / 1024).toFixed(1)} GiB`);

// Memory ticks at round MiB below 256 MiB, then at quarter, half and whole GiB multiples, so GiB labels stay short.
const MEMORY_INCRS = [1, 2, 5, 10, 20, 50, 100, 256, 512, ...[0, 1, 2, 3, 4, 5, 6].flatMap((k) => [1, 2, 5].map((m) => m * 10 ** k * 1024))];
const BATCH_INCRS = [0, 1, 2, 3, 4, 5, 6, 7, 8].flatMap((k) => [1, 2, 2.5, 5].map((m) => m * 10 ** k)).filter(Number.isInteger);
/** Batch-size ticks in one unit per axis (`2.5k 5k 7.5k`, not `2500 5000 7.5k`). */
const compactCount = (v: number, incr: number): string => (incr >= 1e5 ? `${+(v / 1e6).toFixed(2)}M` : incr >= 1e3 ? `${+(v / 1e3).toFixed(1)}k` : String(v));

function axis(t: Theme, label: string | undefined, extra: Partial<uPlot.Axis> = {}): uPlot.Axis {
  return { ...(label ? { label, labelFont: t.font } : {}), stroke: t.foreground, font: t.font, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid, width: 1 }, ...extra };
}

/** A memory axis; along the bottom its ticks are spaced by the widest label, so they do not overlap. */
function memoryAxis(t: Theme, label: string, side: 2 | 3): uPlot.Axis {
  return axis(t, label, {
    side,
    incrs: MEMORY_INCRS,
    values: (_u, splits, _axis, _space, incr) => splits.map((v) => (incr >= 256 ? `${+(v / 1024).toFixed(2)} GiB` : `${v} MiB`)),
    ...(side === 2 ? { space: () => textWidth('000.25 GiB', t.font) + 16 } : { size: () => textWidth('000.25 GiB', t.font) + 14 }),
  });
}

/** The categories of a horizontal bar chart, on the left, at most 40% of the width. */
function categoryAxis(t: Theme, labels: readonly string[]): uPlot.Axis {
  const max = (u: uPlot): number => Math.max(60, u.width * 0.4);
  return axis(t, undefined, {
    side: 3,
    grid: { show: false },
    ticks: { show: false },
    splits: () => labels.map((_, i) => i),
    values: (u, splits) => splits.map((i) => fitLabel(labels[i] ?? '', max(u), t.font)),
    size: (_u, values) => Math.ceil(Math.max(0, ...(values ?? []).map((v) => textWidth(v, t.font)))) + 14,
  });
}

/** Horizontal bars, one row per category, the first at the top. */
function barChart(container: HTMLElement, t: Theme, category: string, labels: readonly string[], series: uPlot.Series[], columns: (number | null)[][], valueLabel: string, extra: Partial<uPlot.Options> = {}): uPlot {
  const xs = labels.map((_, i) => i);
  const options: uPlot.Options = {
    width: container.clientWidth || 600,
    height: labels.length * BAR_ROW + BAR_AXIS,
    scales: { x: { time: false, ori: 1, dir: -1, range: [-0.5, labels.length - 0.5] }, y: { ori: 0, dir: 1, range: (_u, _min, max) => [0, max * 1.08 || 1] } },
    axes: [categoryAxis(t, labels), memoryAxis(t, valueLabel, 2)],
    series: [{ label: category, value: (_u, i) => (i === null ? '' : (labels[i] ?? '')) }, ...series],
    legend: { show: true },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    ...extra,
  };
  return new uPlot(options, [xs, ...columns] as uPlot.AlignedData, container);
}

const bars = (): uPlot.Series.PathBuilder => uPlot.paths.bars!({ size: [0.7, 40] });
const noLine = (): null => null;
const barSeries = (label: string, colour: string): uPlot.Series => ({ label, stroke: colour, fill: colour, paths: bars(), points: { show: false }, value: (_u, v) => mib(v) });

function breakdownChart(container: HTMLElement, data: ModelChartData, t: Theme): uPlot | undefined {
  const parts = data.breakdown;
  if (!parts) return undefined;
  // One series per part (null elsewhere), so each has its colour and its legend entry.
  const series = parts.map((part, index) => barSeries(part.label, t.series[index % t.series.length]!));
  const columns = parts.map((part, index) => parts.map((_, i) => (i === index ? part.mib : null)));
  return barChart(container, t, 'Part', parts.map((p) => p.label), series, columns, 'Memory');
}

function gpuChart(container: HTMLElement, data: ModelChartData, t: Theme): uPlot | undefined {
  const gpus = data.gpus;
  if (!gpus) return undefined;
  const verdicts = [
    { risk: 'fits', label: 'Fits', colour: t.green },
    { risk: 'tight', label: 'Within the safety margin', colour: t.yellow },
    { risk: 'oom', label: 'Does not fit', colour: t.red },
  ].filter((v) => gpus.rows.some((row) => row.risk === v.risk));
  const series = [
    ...verdicts.map((v) => barSeries(`${v.label} (GPU memory)`, v.colour)),
    { label: 'Estimate', stroke: t.foreground, width: 2, dash: [6, 4], points: { show: false }, value: (_u: uPlot, v: number | null) => mib(v) },
  ];
  const columns = [...verdicts.map((v) => gpus.rows.map((row) => (row.risk === v.risk ? row.memoryMiB : null))), gpus.rows.map(() => gpus.estimateMiB)];
  return barChart(container, t, 'GPU', gpus.rows.map((row) => `${row.name}${row.current ? ' (selected)' : ''}`), series, columns, 'GPU memory');
}

function estimatorChart(container: HTMLElement, data: ModelChartData, t: Theme): uPlot | undefined {
  const rows = data.estimators;
  if (!rows) return undefined;
  const ranged = rows.findIndex((row) => row.lowMiB !== null && row.highMiB !== null);
  const series = rows.map((row, index) => barSeries(row.label, t.series[index % t.series.length]!));
  const columns = rows.map((row, index) => rows.map((_, i) => (i === index ? row.estimateMiB : null)));
  const hooks: uPlot.Hooks.Arrays = {};
  if (ranged >= 0) {
    const { lowMiB, highMiB } = rows[ranged]!;
    // The range as an error bar; its series carries the high end so the scale includes it, and the legend shows it.
    series.push({ label: `${rows[ranged]!.label} range`, stroke: t.foreground, paths: noLine, points: { show: false }, value: (_u, _v, _s, i) => (i === ranged ? `${mib(lowMiB)} to ${mib(highMiB)}` : '') });
    columns.push(rows.map((_, i) => (i === ranged ? highMiB : null)));
    hooks.draw = [
      (u) => {
        const ratio = window.devicePixelRatio || 1;
        const y = u.valToPos(ranged, 'x', true);
        const [x0, x1] = [u.valToPos(lowMiB!, 'y', true), u.valToPos(highMiB!, 'y', true)];
        const cap = 6 * ratio;
        const ctx = u.ctx;
        ctx.save();
        ctx.strokeStyle = t.foreground;
        ctx.lineWidth = 1.5 * ratio;
        ctx.beginPath();
        ctx.moveTo(x0, y);
        ctx.lineTo(x1, y);
        for (const x of [x0, x1]) {
          ctx.moveTo(x, y - cap);
          ctx.lineTo(x, y + cap);
        }
        ctx.stroke();
        ctx.restore();
      },
    ];
  }
  return barChart(container, t, 'Estimator', rows.map((row) => `${row.label}${row.estimateMiB === null ? ' (n/a)' : ''}`), series, columns, 'Peak memory', { hooks });
}

function curveChart(container: HTMLElement, data: ModelChartData, t: Theme): uPlot | undefined {
  const curve = data.curve;
  if (!curve) return undefined;
  const xs = curve.points.map((p) => p.batchSize);
  const fit = curve.maxBatchSize ?? curve.analyticalMaxBatch;
  const only = (batch: number | null, value: (b: number) => number | null): (number | null)[] => xs.map((b) => (b === batch ? value(b) : null));
  const at = (b: number): number | null => curve.points.find((p) => p.batchSize === b)?.analyticalMiB ?? null;
  const series: uPlot.Series[] = [{ label: 'Batch size' }, { label: 'Analytical model', stroke: t.series[0], width: 2, points: { show: false }, value: (_u, v) => mib(v) }];
  const columns: (number | null)[][] = [curve.points.map((p) => p.analyticalMiB)];
  const bands: uPlot.Band[] = [];
  if (curve.points.some((p) => p.estimate)) {
    // The estimate was worked out on its own batch grid: its lines span the batch sizes in between.
    const who = curve.estimator ?? 'estimate';
    const name = who.charAt(0).toUpperCase() + who.slice(1);
    const line = (label: string, width: number, value: (e: EstimateAt) => number): void => {
      series.push({ label, stroke: width ? t.orange : withAlpha(t.orange, 0.5), width: width || 1, spanGaps: true, points: { show: false }, value: (_u, v) => mib(v) });
      columns.push(curve.points.map((p) => (p.estimate ? value(p.estimate) : null)));
    };
    line(name, 2, (e) => e.estimateMiB);
    // A point estimate (the fine-tuning model) has no range to shade.
    if (curve.ranged !== false) {
      line(`${name} range, high`, 0, (e) => e.highMiB);
      line(`${name} range, low`, 0, (e) => e.lowMiB);
      bands.push({ series: [series.length - 2, series.length - 1], fill: withAlpha(t.orange, 0.22) });
    }
  }
  series.push(
    { label: `${data.gpuName} memory`, stroke: t.red, width: 1.5, dash: [6, 4], points: { show: false }, value: (_u, v) => mib(v) },
    { label: 'Largest batch that fits', stroke: t.green, fill: t.green, paths: noLine, points: { show: true, size: 10, stroke: t.green, fill: t.green }, value: (_u, v) => mib(v) },
  );
  // The marker sits on the analytical curve, or, for the estimate's largest batch, on the limit its curve crosses there.
  const marker = (b: number): number => (b === curve.analyticalMaxBatch ? at(b) : null) ?? curve.gpuMiB;
  columns.push(xs.map(() => curve.gpuMiB), only(fit, marker));
  if (curve.estimatePoint) {
    const point = curve.estimatePoint;
    series.push({ label: `${curve.estimator ?? 'The estimate'} at the script's batch`, stroke: t.orange, fill: t.orange, paths: noLine, points: { show: true, size: 10, stroke: t.orange, fill: t.orange }, value: (_u, v) => mib(v) });
    columns.push(only(point.batchSize, () => point.estimateMiB));
  }
  const options: uPlot.Options = {
    width: container.clientWidth || 600,
    height: CURVE_HEIGHT,
    scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(max, curve.gpuMiB) * 1.1] } },
    axes: [
      // Batch sizes reach millions: short labels, ticks spaced by the widest one.
      axis(t, 'Batch size', { incrs: BATCH_INCRS, values: (_u, splits, _axis, _space, incr) => splits.map((v) => compactCount(v, incr)), space: () => textWidth('000.25M', t.font) + 16 }),
      memoryAxis(t, 'Peak memory', 3),
    ],
    series,
    bands,
    legend: { show: true },
  };
  return new uPlot(options, [xs, ...columns] as uPlot.AlignedData, container);
}

const CHARTS = [
  ['estimators', estimatorChart],
  ['breakdown', breakdownChart],
  ['curve', curveChart],
  ['gpus', gpuChart],
] as const;

let charts: uPlot[] = [];

function draw(models: readonly ModelChartData[]): void {
  for (const chart of charts) chart.destroy();
  charts = [];
  const t = theme();
  for (const data of models) {
    for (const [kind, make] of CHARTS) {
      const container = document.getElementById(`${data.id}-${kind}`);
      if (!container) continue;
      const chart = make(container, data, t);
      if (chart) charts.push(chart);
    }
  }
}

function readData(): ModelChartData[] {
  const element = document.getElementById('report-data');
  try {
    return element?.textContent ? (JSON.parse(element.textContent) as ModelChartData[]) : [];
  } catch {
    return [];
  }
}

const models = readData();
draw(models);

// VS Code changes the body's class (vscode-light, vscode-dark, vscode-high-contrast) with the theme.
new MutationObserver(() => draw(models)).observe(document.body, { attributes: true, attributeFilter: ['class'] });
new ResizeObserver(() => {
  for (const chart of charts) {
    const width = chart.root.parentElement?.clientWidth;
    if (width && Math.abs(width - chart.width) > 1) chart.setSize({ width, height: chart.height });
  }
}).observe(document.body);

document.addEventListener('click', (event) => {
  const button = (event.target as HTMLElement | null)?.closest('button');
  if (!button) return;
  if (button.id === 'change-gpu') vscode.postMessage({ type: 'changeGpu' });
  else if (button.dataset.export) vscode.postMessage({ type: 'export', format: button.dataset.export, model: Number(button.dataset.model) });
});
