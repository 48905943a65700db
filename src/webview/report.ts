/**
 * The report view's script (bundled with uPlot into dist/webview/report.js by esbuild.config.mjs).
 * Draws the charts from the JSON the page carries, in the theme's colours, redrawing when the
 * theme or the panel's size changes, and sends the export and "Change GPU" buttons' requests to
 * the extension. Every number drawn here is also in a table on the page.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ModelChartData } from '../core/report/reportData';
import type { ReportMessage } from './messages';

declare function acquireVsCodeApi(): { postMessage(message: ReportMessage): void };

const vscode = acquireVsCodeApi();
const CHART_HEIGHT = 240;

interface Theme {
  readonly foreground: string;
  readonly grid: string;
  readonly font: string;
  readonly series: readonly string[];
  readonly red: string;
  readonly green: string;
  readonly orange: string;
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
  };
}

function axis(t: Theme, label: string, extra: Partial<uPlot.Axis> = {}): uPlot.Axis {
  return { label, stroke: t.foreground, font: t.font, labelFont: t.font, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid, width: 1 }, ...extra };
}

const mib = (value: number | null | undefined): string => (value === null || value === undefined ? '' : value < 1024 ? `${Math.round(value)} MiB` : `${(value / 1024).toFixed(1)} GiB`);

function breakdownChart(container: HTMLElement, data: ModelChartData, t: Theme): uPlot | undefined {
  const parts = data.breakdown;
  if (!parts) return undefined;
  const xs = parts.map((_, i) => i);
  const bars = uPlot.paths.bars!({ size: [0.6, 80] });
  const series: uPlot.Series[] = [{ label: 'Part', value: (_u, i) => (i === null ? '' : (parts[i]?.label ?? '')) }];
  const columns: (number | null)[][] = [];
  parts.forEach((part, index) => {
    const colour = t.series[index % t.series.length]!;
    series.push({ label: part.label, stroke: colour, fill: colour, paths: bars, points: { show: false }, value: (_u, v) => mib(v) });
    columns.push(xs.map((x) => (x === index ? part.mib : null)));
  });
  const options: uPlot.Options = {
    width: container.clientWidth || 600,
    height: CHART_HEIGHT,
    scales: { x: { time: false, range: [-0.5, parts.length - 0.5] }, y: { range: (_u, _min, max) => [0, max * 1.1 || 1] } },
    axes: [
      axis(t, '', { splits: () => xs, values: (_u, splits) => splits.map((i) => parts[i]?.label ?? '') }),
      axis(t, 'Memory', { values: (_u, splits) => splits.map((v) => mib(v)), size: 70 }),
    ],
    series,
    legend: { show: true },
    cursor: { drag: { x: false, y: false } },
  };
  return new uPlot(options, [xs, ...columns] as uPlot.AlignedData, container);
}

function curveChart(container: HTMLElement, data: ModelChartData, t: Theme): uPlot | undefined {
  const curve = data.curve;
  if (!curve) return undefined;
  const xs = curve.points.map((p) => p.batchSize);
  const fit = curve.maxBatchSize ?? curve.analyticalMaxBatch;
  const only = (batch: number | null, value: (b: number) => number | null): (number | null)[] => xs.map((b) => (b === batch ? value(b) : null));
  const at = (b: number): number | null => curve.points.find((p) => p.batchSize === b)?.analyticalMiB ?? null;
  const noLine = (): null => null;
  const series: uPlot.Series[] = [
    { label: 'Batch size' },
    { label: 'Analytical model', stroke: t.series[0], width: 2, points: { show: false }, value: (_u, v) => mib(v) },
    { label: `${data.gpuName} memory`, stroke: t.red, width: 1.5, dash: [6, 4], points: { show: false }, value: (_u, v) => mib(v) },
    { label: 'Largest batch that fits', stroke: t.green, fill: t.green, paths: noLine, points: { show: true, size: 10, stroke: t.green, fill: t.green }, value: (_u, v) => mib(v) },
  ];
  // The marker sits on the analytical curve, or on the limit where the ensemble's largest batch differs.
  const marker = (b: number): number | null => Math.min(at(b) ?? curve.gpuMiB, curve.gpuMiB);
  const columns: (number | null)[][] = [curve.points.map((p) => p.analyticalMiB), xs.map(() => curve.gpuMiB), only(fit, marker)];
  if (curve.ensemblePoint) {
    const point = curve.ensemblePoint;
    series.push({ label: 'Trained ensemble', stroke: t.orange, fill: t.orange, paths: noLine, points: { show: true, size: 10, stroke: t.orange, fill: t.orange }, value: (_u, v) => mib(v) });
    columns.push(only(point.batchSize, () => point.estimateMiB));
  }
  const options: uPlot.Options = {
    width: container.clientWidth || 600,
    height: CHART_HEIGHT,
    scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(max, curve.gpuMiB) * 1.1] } },
    axes: [axis(t, 'Batch size'), axis(t, 'Peak memory', { values: (_u, splits) => splits.map((v) => mib(v)), size: 70 })],
    series,
    legend: { show: true },
  };
  return new uPlot(options, [xs, ...columns] as uPlot.AlignedData, container);
}

let charts: uPlot[] = [];

function draw(models: readonly ModelChartData[]): void {
  for (const chart of charts) chart.destroy();
  charts = [];
  const t = theme();
  for (const data of models) {
    for (const [kind, make] of [['breakdown', breakdownChart], ['curve', curveChart]] as const) {
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
    if (width && Math.abs(width - chart.width) > 1) chart.setSize({ width, height: CHART_HEIGHT });
  }
}).observe(document.body);

document.addEventListener('click', (event) => {
  const button = (event.target as HTMLElement | null)?.closest('button');
  if (!button) return;
  if (button.id === 'change-gpu') vscode.postMessage({ type: 'changeGpu' });
  else if (button.dataset.export) vscode.postMessage({ type: 'export', format: button.dataset.export, model: Number(button.dataset.model) });
});
