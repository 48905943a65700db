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

/**
 * The largest batch size whose memory fits, over a curve that grows with the batch size; 0 when
 * even one sample fails. Memory grows close to linearly with the batch, so each probe aims where
 * the line through the nearest known points crosses the limit (interpolation search: a handful of
 * probes where a binary search takes about 2 log2(n)), and halves the bracket instead whenever
 * an aim did not, so a curve with steps still takes O(log n) probes. The estimators behind
 * `memoryAt` may replay a whole training step per call.
 */
export function largestFittingBatch(memoryAt: (batchSize: number) => number, limitMiB: number): number {
  if (memoryAt(1) > limitMiB) return 0;
  // The caching allocator's rounding and block reuse make a replayed peak dip here and there as the
  // batch grows: an answer inside a dip would be a batch whose smaller neighbours do not fit. Look
  // a little below it, and search again below any batch found over the limit there.
  let cap = MAX_BATCH_SEARCHED;
  let found = 1;
  for (let round = 0; round < DIP_ROUNDS; round++) {
    found = searchBelow(memoryAt, limitMiB, cap);
    const dip = DIP_CHECKS.map((share) => Math.floor(found * share)).find((batch) => batch > 1 && batch < found && memoryAt(batch) > limitMiB);
    if (dip === undefined) return found;
    cap = dip;
  }
  return found;
}

/** Below `found`, the shares of it checked for a batch over the limit, and how many times the search starts again under one. */
const DIP_CHECKS = [0.99, 0.97, 0.94, 0.9];
const DIP_ROUNDS = 4;

/** The interpolation search under `cap` (a batch taken to be over the limit without probing it); memoryAt(1) fits. */
function searchBelow(memoryAt: (batchSize: number) => number, limitMiB: number, cap: number): number {
  const first = memoryAt(1);
  // Invariants: memoryAt(low) <= limit < memoryAt(high); `high` starts past the search, not probed.
  let low = 1;
  let lowMiB = first;
  let high = cap;
  let highMiB = Number.POSITIVE_INFINITY;
  let previous = { batch: 1, mib: first };
  let probe = 2;
  let bisect = false;
  let undershoots = 0;
  while (high - low > 1) {
    const mib = memoryAt(probe);
    const width = high - low;
    const bounded = Number.isFinite(highMiB);
    if (mib <= limitMiB) {
      previous = { batch: low, mib: lowMiB };
      low = probe;
      lowMiB = mib;
    } else {
      high = probe;
      highMiB = mib;
    }
    if (high - low <= 1) break;
    if (!Number.isFinite(highMiB)) {
      // Nothing over the limit yet: extrapolate, but double once two aims in a row fell short (a curve that bends down).
      undershoots++;
      probe = undershoots > 2 ? 2 * low : aim(low, lowMiB, high, highMiB, previous, limitMiB);
    } else {
      // An aim that left more than half the bracket: halve it next, so the search stays logarithmic.
      bisect = bounded && !bisect && 2 * (high - low) > width;
      probe = bisect ? low + Math.floor((high - low) / 2) : aim(low, lowMiB, high, highMiB, previous, limitMiB);
    }
    probe = Math.min(high - 1, Math.max(low + 1, probe));
  }
  return low;
}

/** Where the line through the bracket's ends (or, with no end over the limit yet, the last two that fit) crosses the limit. */
function aim(low: number, lowMiB: number, high: number, highMiB: number, previous: { batch: number; mib: number }, limitMiB: number): number {
  if (Number.isFinite(highMiB)) return low + Math.floor(((limitMiB - lowMiB) / (highMiB - lowMiB)) * (high - low));
  const slope = (lowMiB - previous.mib) / Math.max(1, low - previous.batch);
  // A flat stretch says nothing about where the limit is: double.
  return slope > 0 ? low + Math.floor((limitMiB - lowMiB) / slope) : 2 * low;
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
