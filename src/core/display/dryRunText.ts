import type { DryRunResult } from '../dryRun/dryRunProcess';
import { dryRunRangeOnGpu, type DryRunRange } from '../dryRun/dryRunRange';
import type { EstimatorReading, FileEstimate } from '../estimate/fileEstimate';
import { formatMiB } from '../format/units';

/** How far the dry run's figure is from the static estimate, percent; null without an estimate. */
export function dryRunDifferencePercent(dryRunMiB: number, staticMiB: number | null): number | null {
  return staticMiB === null || staticMiB <= 0 ? null : ((dryRunMiB - staticMiB) / staticMiB) * 100;
}

/** `+25%`, `-3.2%`: a difference with its sign. */
export function signedPercent(percent: number, digits: number): string {
  return `${percent >= 0 ? '+' : ''}${percent.toFixed(digits)}%`;
}

/**
 * The dry run beside the static estimate, in one line of Markdown-safe text:
 * `Dry run on CPU: 2.3 GiB (peak in backward, 3 steps); static estimate 3.7 GiB, dry run -38%`,
 * with the figure's range on the estimate's GPU when that is not the one the context was measured on.
 */
export function dryRunSummary(result: DryRunResult, staticMiB: number | null, gpu?: { readonly id: string; readonly name: string }): string {
  if (!result.ok) return `Dry run on CPU: not done: ${result.error}`;
  const { figure } = result;
  const range = gpu ? dryRunRangeOnGpu(figure.predictedMiB, gpu) : null;
  const base = `Dry run on CPU: ${formatMiB(figure.predictedMiB)} (peak reserved ${formatMiB(figure.peakReservedMiB)} + CUDA context ${formatMiB(figure.breakdown.contextMiB)}; live tensors peak in ${figure.peakPhase}; ${figure.steps} step${figure.steps === 1 ? '' : 's'})${range && gpu ? `; ${dryRunRangeText(range, gpu.name)}` : ''}`;
  const caveats = (result.caveats ?? []).map((caveat) => ` ${caveat}`).join('');
  const difference = dryRunDifferencePercent(figure.predictedMiB, staticMiB);
  const summary = difference === null ? base : `${base}; static estimate ${formatMiB(staticMiB!)}, dry run ${signedPercent(difference, 0)}`;
  return caveats ? `${summary}.${caveats}` : summary;
}

/** `on the H100 80GB 9.1 GiB to 10.5 GiB: its CUDA context was measured on ...`. */
export function dryRunRangeText(range: DryRunRange, gpuName: string): string {
  return `on the ${gpuName} ${formatMiB(range.lowMiB)} to ${formatMiB(range.highMiB)}: ${range.reason}`;
}

/** Why the two figures differ, in the words a user reads under them. */
export const DRY_RUN_DIFFERENCE_NOTE =
  'The dry run ran the script\'s own code (on PyTorch\'s meta device, with fake batches), so it sees layers and functional code the static reading may miss; cuDNN\'s convolution workspaces are a rule fitted on A100 runs, and what cudnn.benchmark may try is not counted.';

/**
 * The estimate as the report shows it after a dry run: each model's readings gain the dry run's
 * figure beside the estimators' (a comparison, never the estimate), so its table, chart and
 * exports carry it.
 */
export function withDryRunReading(estimate: FileEstimate, result: DryRunResult, stale: boolean): FileEstimate {
  if (!result.ok) return estimate;
  const range = dryRunRangeOnGpu(result.figure.predictedMiB, estimate.gpu);
  const reading: EstimatorReading = {
    estimator: 'dry-run',
    label: `Dry run on CPU${stale ? ' (before later edits)' : ''}`,
    short: 'dry run',
    attribution: 'CPU dry run',
    role: 'comparison',
    estimateMiB: Math.round(result.figure.predictedMiB),
    lowMiB: range ? Math.round(range.lowMiB) : null,
    highMiB: range ? Math.round(range.highMiB) : null,
    ...(result.caveats?.length ? { caveats: result.caveats } : {}),
  };
  return { ...estimate, models: estimate.models.map((model) => ({ ...model, estimates: [...model.estimates.filter((r) => r.estimator !== 'dry-run'), reading] })) };
}
