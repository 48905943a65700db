/**
 * "Which change makes it fit": for a fine-tuning job that does not fit its GPU, or fits only within
 * the safety margin, the changes people make to a Hugging Face fine-tune, each estimated by the same
 * physical model (estimateFineTuning; per GPU for a sharded job) on the job with that one change. A change whose size is
 * theirs to pick (the micro-batch under accumulation, the sequence length) is searched: the largest
 * that fits. When no single change fits comfortably, pairs of changes are tried too.
 *
 * Changes are told apart by whether the training stays mathematically the same: checkpointing
 * recomputes what it drops, SDPA computes the same attention, use_cache=False only stops the keys and
 * values being returned, accumulation sums the same gradients, DPO's reference log-probabilities
 * computed before training are the ones the step would compute;
 * LoRA, 4-bit weights, an 8-bit optimizer, GaLore's projected optimizer state and shorter sequences
 * train something else.
 */
import { keyValueCacheCounted, type FineTuningAdapter, type FineTuningJob } from '../estimators/fineTuning';
import { GALORE_DEFAULT_RANK } from '../estimators/galore';
import type { ShardingSpec } from '../estimators/shardedFineTuning';
import type { FineTuningOutlook, Remedy, RemedyKind } from './fileEstimate';
import { jobDriverMiB, longestFittingLength, longestSequence, SEQUENCE_STEP } from './longestSequence';
import { fits, riskOf } from './verdict';

/** One change to a job: undefined where it does not apply (checkpointing already on, a batch of 1). */
interface Candidate {
  readonly kind: RemedyKind;
  readonly sameTraining: boolean;
  /** The changed job and its words; `limits` (MiB, tightest first) are for the changes whose size is searched: the largest size under the first that any fits. */
  apply(job: FineTuningJob, limits: readonly number[], sharding: ShardingSpec | undefined): { job: FineTuningJob; change: string } | undefined;
}

/** PEFT's LoRA defaults: rank 8 on the architecture's default targets (the attention's query and value). */
const DEFAULT_LORA: FineTuningAdapter = { method: 'lora', rank: 8 };

/** Changes of a fixed size first, searched ones last: in a pair the second is searched with the first applied. */
const CANDIDATES: readonly Candidate[] = [
  {
    kind: 'checkpointing',
    sameTraining: true,
    apply: (job) => (job.checkpointing ? undefined : { job: { ...job, checkpointing: true }, change: 'gradient checkpointing' }),
  },
  {
    kind: 'sdpa',
    sameTraining: true,
    apply: (job) => (job.eagerAttention ? { job: { ...job, eagerAttention: false }, change: 'SDPA attention' } : undefined),
  },
  {
    // A loop that keeps `outputs` keeps transformers' keys and values with them; the model's config or from_pretrained(use_cache=False) returns none.
    kind: 'noKeyValueCache',
    sameTraining: true,
    apply: (job) => (keyValueCacheCounted(job) ? { job: { ...job, keyValueCacheHeld: false }, change: 'use_cache=False (no keys and values returned with the outputs)' } : undefined),
  },
  {
    // DPOConfig(precompute_ref_log_probs=True): the reference runs once over the data before training, and neither its copy nor its forward is in the step.
    kind: 'precomputedReference',
    sameTraining: true,
    apply: (job) =>
      (job.preference?.trainer === 'dpo' || job.preference?.trainer === 'kto') && job.preference.reference !== 'none'
        ? { job: { ...job, preference: { ...job.preference, reference: 'none' } }, change: `precompute_ref_log_probs=True (${job.preference.trainer.toUpperCase()}'s reference log-probabilities computed once before training)` }
        : undefined,
  },
  {
    kind: 'lora',
    sameTraining: false,
    apply: (job) => (job.adapter ? undefined : { job: { ...job, adapter: DEFAULT_LORA }, change: 'LoRA r=8 instead of full fine-tuning' }),
  },
  {
    kind: 'fourBit',
    sameTraining: false,
    // QLoRA: the frozen base in NF4 with double quantization, computing in bf16, prepared as PEFT prepares k-bit models (the unquantized parameters in fp32).
    apply: (job) =>
      job.weightBits === 4
        ? undefined
        : {
            job: { ...job, adapter: job.adapter ?? DEFAULT_LORA, weightBits: 4, doubleQuant: true, computeBytes: 2, autocast: false, kbitPrepared: true },
            change: job.adapter ? '4-bit NF4 loading' : 'QLoRA (4-bit NF4 and LoRA r=8)',
          },
  },
  {
    // GaLore keeps full fine-tuning (every parameter trained) but keeps the optimizer's state over rank-128 projections of the layers' gradients.
    kind: 'galore',
    sameTraining: false,
    apply: (job) =>
      !job.adapter && !job.frozen && !job.galore && (job.optimizer === 'adamw' || job.optimizer === 'adamw-8bit')
        ? { job: { ...job, galore: { rank: GALORE_DEFAULT_RANK, targets: 'all-linear' } }, change: `GaLore (optim="galore_adamw${job.optimizer === 'adamw-8bit' ? '_8bit' : ''}", rank ${GALORE_DEFAULT_RANK} on every linear layer: still a full fine-tune)` }
        : undefined,
  },
  {
    kind: 'optimizer8bit',
    sameTraining: false,
    apply: (job) => (job.optimizer === 'adamw' ? { job: { ...job, optimizer: 'adamw-8bit', paged: false }, change: '8-bit AdamW' } : undefined),
  },
  {
    // GRPOConfig(beta=0.0): no KL term, so no frozen copy of the model (without an adapter the reference is one): another objective.
    kind: 'noKlTerm',
    sameTraining: false,
    apply: (job) =>
      job.preference?.trainer === 'grpo' && job.preference.reference !== 'none' && !job.adapter
        ? { job: { ...job, preference: { ...job.preference, reference: 'none' } }, change: "beta=0.0 (GRPO without the KL term: no reference copy)" }
        : undefined,
  },
  {
    kind: 'accumulation',
    sameTraining: true,
    apply: (job, limits, sharding) => smallerBatchWithAccumulation(job, limits, sharding),
  },
  {
    kind: 'shorterSequence',
    sameTraining: false,
    apply: (job, limits, sharding) => {
      if (job.seq <= SEQUENCE_STEP) return undefined;
      const shorter = (limitMiB: number) => longestFittingLength(job, limitMiB, job.seq - 1, false, sharding).tokens;
      // Nothing shorter fits: the shortest step, to show how far it stays over.
      const tokens = limits.map(shorter).find((t) => t > 0) ?? SEQUENCE_STEP;
      return { job: { ...job, seq: tokens }, change: `sequences of ${tokens} tokens` };
    },
  },
];

/**
 * The largest micro-batch below the job's that divides it and fits (under the first of `limits` one
 * does), with the accumulation that
 * keeps the batch per optimizer step (batch 8 x 1 -> 4 x 2 -> 2 x 4 -> 1 x 8); the micro-batch of
 * 1 when none fits, to show how far it stays over.
 */
function smallerBatchWithAccumulation(job: FineTuningJob, limits: readonly number[], sharding: ShardingSpec | undefined): { job: FineTuningJob; change: string } | undefined {
  const accumulation = Math.max(1, Math.round(job.accumulation ?? 1));
  const batch = Math.max(1, Math.round(job.batch));
  const divisors = smallerDivisors(batch);
  if (divisors.length === 0) return undefined;
  const at = (micro: number): FineTuningJob => ({ ...job, batch: micro, accumulation: (accumulation * batch) / micro });
  const fitting = (limitMiB: number) => divisors.find((d) => jobDriverMiB(at(d), sharding) <= limitMiB);
  const micro = limits.map(fitting).find((d) => d !== undefined) ?? 1;
  return { job: at(micro), change: `batch ${micro} x ${(accumulation * batch) / micro} accumulation` };
}

/** The same job reached by two routes (LoRA then 4-bit, or 4-bit alone) has the same key. */
const jobKey = (job: FineTuningJob): string => JSON.stringify(Object.entries(job).sort(([a], [b]) => a.localeCompare(b)));

/** Batches beyond this are not split into micro-batches (a batch that large is a typo or a what-if, and its divisors take long to list). */
const MAX_SPLIT_BATCH = 1 << 24;

/** The divisors of `batch` below it, largest first (pairs up to its square root). */
function smallerDivisors(batch: number): number[] {
  if (!Number.isSafeInteger(batch) || batch > MAX_SPLIT_BATCH) return [];
  const divisors = new Set<number>();
  for (let d = 1; d * d <= batch; d++) {
    if (batch % d === 0) divisors.add(d).add(batch / d);
  }
  divisors.delete(batch);
  return [...divisors].sort((a, b) => b - a);
}

const remedyOf = (job: FineTuningJob, changes: readonly Candidate[], words: readonly string[], gpuMiB: number, safetyMargin: number, sharding: ShardingSpec | undefined): Remedy => {
  const driverMiB = jobDriverMiB(job, sharding);
  return {
    changes: changes.map((c) => c.kind),
    change: words.join(' + '),
    driverMiB,
    fits: fits(driverMiB, gpuMiB),
    risk: riskOf(driverMiB, gpuMiB, safetyMargin),
    sameTraining: changes.every((c) => c.sameTraining),
  };
};

/**
 * The changes that would make `job` fit a GPU of `gpuMiB` (see FineTuningOutlook.remedies); empty
 * when it already fits outside the safety margin.
 */
export function fineTuningRemedies(job: FineTuningJob, gpuMiB: number, safetyMargin: number, sharding?: ShardingSpec): Remedy[] {
  if (riskOf(jobDriverMiB(job, sharding), gpuMiB, safetyMargin) === 'fits') return [];
  // A searched size fits outside the safety margin where one does, else just within the GPU.
  const limits = [gpuMiB * (1 - safetyMargin), gpuMiB];
  const singles: { candidate: Candidate; job: FineTuningJob; change: string }[] = [];
  for (const candidate of CANDIDATES) {
    const applied = candidate.apply(job, limits, sharding);
    if (applied) singles.push({ candidate, ...applied });
  }
  const remedies = singles.map((s) => remedyOf(s.job, [s.candidate], [s.change], gpuMiB, safetyMargin, sharding));
  if (!remedies.some((r) => r.risk === 'fits')) {
    // The second change is applied to the first's job, so a searched size (micro-batch, length) is the largest that fits with the first change.
    const seen = new Set(singles.map((s) => jobKey(s.job)));
    for (const first of singles) {
      for (const second of CANDIDATES.slice(CANDIDATES.indexOf(first.candidate) + 1)) {
        const applied = second.apply(first.job, limits, sharding);
        if (!applied) continue;
        const key = jobKey(applied.job);
        if (seen.has(key)) continue;
        seen.add(key);
        const pair = remedyOf(applied.job, [first.candidate, second], [first.change, applied.change], gpuMiB, safetyMargin, sharding);
        if (pair.fits) remedies.push(pair);
      }
    }
  }
  return remedies.sort((a, b) => a.driverMiB - b.driverMiB);
}

/**
 * The fine-tuning outlook of a job at the script's batch on the chosen GPU: its longest sequence
 * (up to the model's maximum position, `modelMaximum`) and the changes that make it fit; for a
 * sharded job (`sharding`) all per GPU, as its estimate is.
 */
export function fineTuningOutlook(job: FineTuningJob, gpuMiB: number, safetyMargin: number, modelMaximum: number | null, sharding?: ShardingSpec): FineTuningOutlook {
  // Worked out on every estimate of the document (every edit): an edit elsewhere in the script leaves the job as it was.
  const key = JSON.stringify([jobKey(job), gpuMiB, safetyMargin, modelMaximum, sharding ?? null]);
  const known = outlooks.get(key);
  if (known) return known;
  const outlook = workOut(job, gpuMiB, safetyMargin, modelMaximum, sharding);
  if (outlooks.size >= OUTLOOKS_KEPT) outlooks.delete(outlooks.keys().next().value!);
  outlooks.set(key, outlook);
  return outlook;
}

/** The last outlooks worked out, by job, GPU and margin; the oldest is dropped first. */
const outlooks = new Map<string, FineTuningOutlook>();
const OUTLOOKS_KEPT = 32;

function workOut(job: FineTuningJob, gpuMiB: number, safetyMargin: number, modelMaximum: number | null, sharding: ShardingSpec | undefined): FineTuningOutlook {
  return {
    job,
    ...(sharding ? { sharding } : {}),
    driverMiB: jobDriverMiB(job, sharding),
    gpuMiB,
    batch: job.batch,
    seq: job.seq,
    longestSequence: longestSequence(job, gpuMiB, modelMaximum, sharding),
    remedies: fineTuningRemedies(job, gpuMiB, safetyMargin, sharding),
  };
}
