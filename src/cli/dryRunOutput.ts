import type { DryRunResult } from '../core/dryRun/dryRunProcess';
import type { FileEstimate } from '../core/estimate/fileEstimate';
import { formatMiB } from '../core/format/units';
import { DRY_RUN_DIFFERENCE_NOTE, dryRunDifferencePercent, dryRunRangeText, signedPercent } from '../core/display/dryRunText';
import { dryRunRangeOnGpu } from '../core/dryRun/dryRunRange';

/**
 * The dry run as the JSON gives it per model: the figure, or why there is none. `rangeMiB` is
 * null on the GPU the CUDA context was measured on, else the figure's range on `gpu` and why.
 */
export function dryRunJson(result: DryRunResult, staticMiB: number | null, gpu: { readonly id: string; readonly name: string }): Record<string, unknown> {
  if (!result.ok) return { error: result.error };
  const { figure } = result;
  const range = dryRunRangeOnGpu(figure.predictedMiB, gpu);
  const difference = dryRunDifferencePercent(figure.predictedMiB, staticMiB);
  return {
    scope: 'script',
    predictedMiB: figure.predictedMiB,
    rangeMiB: range ? { low: range.lowMiB, high: range.highMiB, reason: range.reason } : null,
    peakReservedMiB: figure.peakReservedMiB,
    peakAllocatedMiB: figure.peakAllocatedMiB,
    peakPhase: figure.peakPhase,
    steps: figure.steps,
    seconds: figure.seconds,
    torch: result.torchVersion ?? null,
    outOfMemory: figure.outOfMemory,
    workspaceFallbacks: figure.workspaceFallbacks,
    breakdown: figure.breakdown,
    notes: result.notes ?? [],
    caveats: result.caveats ?? [],
    differencePercent: difference === null ? null : Math.round(difference * 10) / 10,
  };
}

/** Lines under the report: the dry-run figure beside the static estimate, and what the difference means. */
export function dryRunLines(result: DryRunResult, estimate: FileEstimate): string[] {
  if (!result.ok) return ['', `dry run: not done: ${result.error}`];
  const { figure } = result;
  const lines = [
    '',
    `dry run (CPU, PyTorch ${result.torchVersion ?? '?'} on the meta device, ${figure.steps} step${figure.steps === 1 ? '' : 's'}, ${figure.seconds.toFixed(1)} s): ${formatMiB(figure.predictedMiB)} for the whole script`,
    `  peak reserved ${formatMiB(figure.peakReservedMiB)}, peak allocated ${formatMiB(figure.peakAllocatedMiB)} (in ${figure.peakPhase}), CUDA context ${formatMiB(figure.breakdown.contextMiB)}`,
  ];
  const range = dryRunRangeOnGpu(figure.predictedMiB, estimate.gpu);
  if (range) lines.push(`  ${dryRunRangeText(range, estimate.gpu.name)}`);
  for (const note of result.notes ?? []) lines.push(`  ${note}`);
  for (const caveat of result.caveats ?? []) lines.push(`  ${caveat}`);
  for (const model of estimate.models) {
    const staticMiB = model.memory.estimateMiB;
    const difference = dryRunDifferencePercent(figure.predictedMiB, staticMiB);
    if (difference === null) continue;
    lines.push(`  ${model.name}: static estimate ${formatMiB(staticMiB!)}, dry run ${signedPercent(difference, 1)}`);
  }
  lines.push(`  ${DRY_RUN_DIFFERENCE_NOTE}`);
  return lines;
}
