/**
 * The longest sequence a fine-tuning job fits at its own batch: the question people ask right after
 * "does it fit?" when the tokens per sample are theirs to choose (the tokenizer's max_length, TRL's
 * max_seq_length). Lengths are tried in steps of 64 (every power of two from 64 up is one), as
 * people set them, up to the model's maximum position, which is tried too when it is not such a step.
 */
import { estimateFineTuning, type FineTuningJob } from '../estimators/fineTuning';
import { estimateShardedAt, type ShardingSpec } from '../estimators/shardedFineTuning';
import { BYTES_PER_MIB } from '../format/units';
import type { LongestSequence } from './fileEstimate';

/** Sequence lengths are searched in multiples of this. */
export const SEQUENCE_STEP = 64;
/** Without a maximum position in the model's config (rotary models without one), lengths beyond this are not searched. */
export const UNBOUNDED_SEQUENCE_LIMIT = 1 << 20;

/** The driver's figure of a job, in MiB, as the fine-tuning estimator states it: on one GPU, or on each GPU of a sharded job. */
export function jobDriverMiB(job: FineTuningJob, sharding?: ShardingSpec): number {
  return (sharding ? estimateShardedAt(job, sharding, job.batch) : estimateFineTuning(job)).driver / BYTES_PER_MIB;
}

/** The maximum position a transformers config allows (the name differs by family); null when it gives none. */
export function modelMaximumPosition(config: Readonly<Record<string, unknown>> | undefined): number | null {
  for (const key of ['max_position_embeddings', 'n_positions', 'max_sequence_length', 'seq_length']) {
    const value = config?.[key];
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return null;
}

/**
 * The lengths tried, shortest first: every multiple of SEQUENCE_STEP up to `limit`, and, with
 * `withLimit`, `limit` itself when it is not one (a model's maximum of 1000).
 */
function candidateLengths(limit: number, withLimit: boolean): number[] {
  const lengths: number[] = [];
  for (let tokens = SEQUENCE_STEP; tokens <= limit; tokens += SEQUENCE_STEP) lengths.push(tokens);
  if (withLimit && limit > 0 && limit % SEQUENCE_STEP !== 0) lengths.push(limit);
  return lengths;
}

/**
 * The longest of the lengths up to `limit` (see candidateLengths) at which `job` (its batch as given) fits `limitMiB`, by
 * a binary search (the estimate grows with the length: activations linearly, eager attention's
 * probabilities quadratically); 0 when the shortest does not fit.
 */
export function longestFittingLength(job: FineTuningJob, limitMiB: number, limit: number, withLimit = true, sharding?: ShardingSpec): { tokens: number; driverMiB: number | null } {
  const lengths = candidateLengths(Math.min(limit, UNBOUNDED_SEQUENCE_LIMIT), withLimit);
  let low = -1;
  let lowMiB: number | null = null;
  let high = lengths.length;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    const mib = jobDriverMiB({ ...job, seq: lengths[middle]! }, sharding);
    if (mib <= limitMiB) {
      low = middle;
      lowMiB = mib;
    } else high = middle;
  }
  return low < 0 ? { tokens: 0, driverMiB: null } : { tokens: lengths[low]!, driverMiB: lowMiB };
}

/** The longest sequence the job fits on a GPU of `gpuMiB` at its own batch, up to the model's maximum. */
export function longestSequence(job: FineTuningJob, gpuMiB: number, modelMaximum: number | null, sharding?: ShardingSpec): LongestSequence {
  const found = longestFittingLength(job, gpuMiB, modelMaximum ?? UNBOUNDED_SEQUENCE_LIMIT, true, sharding);
  return { tokens: found.tokens, modelMaximum, modelMaximumFits: modelMaximum !== null && found.tokens === modelMaximum, driverMiB: found.driverMiB };
}
