/**
 * The verdict on an estimate: whether it fits the GPU, how comfortably, and the largest batch that
 * fits. The pipeline asks it once per model, of the estimate that counts (estimators.ts); the
 * report asks the same questions of other GPUs.
 */
import type { Risk } from './fileEstimate';

/** Batch sizes beyond this are not searched; a model that fits this many samples fits any real batch. */
const MAX_BATCH_SEARCHED = 1 << 24;
/** Between two grid points that bracket the limit, at most this many batch sizes are tried at once. */
const REFINE_POINTS = 256;

export function fits(estimateMiB: number, memoryMiB: number): boolean {
  return estimateMiB <= memoryMiB;
}

export function riskOf(estimateMiB: number, memoryMiB: number, safetyMargin: number): Risk {
  if (!fits(estimateMiB, memoryMiB)) return 'oom';
  return estimateMiB > memoryMiB * (1 - safetyMargin) ? 'tight' : 'fits';
}

/** Binary search over a memory curve that grows with the batch size; 0 when even one sample fails. */
export function largestFittingBatch(memoryAt: (batchSize: number) => number, limitMiB: number): number {
  if (memoryAt(1) > limitMiB) return 0;
  let low = 1;
  let high = 2;
  while (high < MAX_BATCH_SEARCHED && memoryAt(high) <= limitMiB) {
    low = high;
    high *= 2;
  }
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (memoryAt(middle) <= limitMiB) low = middle;
    else high = middle;
  }
  return low;
}

/**
 * The largest batch whose estimate fits `limitMiB`, for an estimator that runs many batch sizes at
 * once (the ensembles): the last grid point before the first that does not fit, then the batch
 * sizes between the two (all of them, or 256 evenly spaced, and again between the two of those
 * that bracket the limit, until they are neighbours).
 */
export async function largestFittingBatchOnGrid(grid: readonly number[], memory: readonly number[], limitMiB: number, refine: (sizes: number[]) => Promise<number[]>): Promise<number> {
  const firstOver = memory.findIndex((mib) => mib > limitMiB);
  if (firstOver === 0) return 0;
  if (firstOver === -1) return grid[grid.length - 1]!;
  let low = grid[firstOver - 1]!;
  let high = grid[firstOver]!;
  while (high - low > 1) {
    const count = Math.min(REFINE_POINTS, high - low - 1);
    const step = (high - low) / (count + 1);
    const sizes = Array.from({ length: count }, (_, i) => low + Math.round((i + 1) * step));
    const refined = await refine(sizes);
    const over = refined.findIndex((mib) => mib > limitMiB);
    if (over === -1) low = sizes[sizes.length - 1]!;
    else {
      high = sizes[over]!;
      if (over > 0) low = sizes[over - 1]!;
    }
  }
  return low;
}
