/**
 * The several-GPU side of a fine-tuning job: the strategy the script set up (shardingSetup.ts) as
 * a plan for sharding.ts, the GPU count it is estimated for, and the per-GPU figures every surface
 * shows (the estimate at that count and a table at 1, 2, 4 and 8 GPUs).
 */
import type { DistributedSetup, Sourced, TrainingSetup } from '../analysis/modelDescription';
import { BYTES_PER_MIB } from '../format/units';
import type { FineTuningJob, TransformerShape } from './fineTuning';
import { describePlan, estimateSharded, perGpuTable, type ShardedEstimate, type ShardingPlan } from './sharding';

/** The strategy and GPU count a fine-tuning job is estimated with, and where each came from. */
export interface ShardingSpec {
  readonly plan: ShardingPlan;
  readonly gpus: number;
  /** `DeepSpeed ZeRO-3`, `FSDP FULL_SHARD, parameters and optimizer state offloaded to the CPU`. */
  readonly strategy: string;
  readonly origin: string;
  /** 1-based line the strategy was read from in the script; null when it came from a file beside it or the user. */
  readonly line: number | null;
  readonly gpusOrigin: string;
}

/** The per-GPU figures of a sharded estimate, as the CLI's --json, the hover and the report show them. */
export interface ShardingSummary {
  readonly strategy: string;
  readonly origin: string;
  readonly line: number | null;
  /** The GPU count the estimate is for, and where it came from. */
  readonly gpus: number;
  readonly gpusOrigin: string;
  /** The driver's figure per GPU at 1, 2, 4 and 8 GPUs. */
  readonly perGpu: readonly { readonly gpus: number; readonly driverMiB: number }[];
  /** What offloading keeps in host memory, per process. */
  readonly hostMiB: number;
}

/** DeepSpeed's "auto" buckets as transformers' integration fills them: reduce_bucket_size = hidden², stage3_prefetch_bucket_size = 0.9 hidden². */
function bucketOf(value: DistributedSetup['reduceBucket'], hidden: number, share: number): number | undefined {
  return value === 'auto' ? Math.round(share * hidden * hidden) : value;
}

function planOf(setup: DistributedSetup, shape: TransformerShape): ShardingPlan {
  const reduceBucket = bucketOf(setup.reduceBucket, shape.hidden, 1);
  const prefetchBucket = bucketOf(setup.prefetchBucket, shape.hidden, 0.9);
  return {
    kind: setup.kind,
    stage: setup.stage,
    ...(setup.hybrid ? { hybrid: true } : {}),
    ...(setup.offloadOptimizer ? { offloadOptimizer: true } : {}),
    ...(setup.offloadParams ? { offloadParams: true } : {}),
    ...(setup.bucketView ? { bucketView: true } : {}),
    ...(reduceBucket === undefined ? {} : { reduceBucket }),
    ...(prefetchBucket === undefined ? {} : { prefetchBucket }),
    ...(setup.overlapComm ? { overlapComm: true } : {}),
    ...(setup.gpusPerNode ? { gpusPerNode: setup.gpusPerNode } : {}),
  };
}

const lineOf = (found: Sourced<unknown>): number | null => (found.range.file === undefined ? found.range.startLine + 1 : null);

/**
 * The job's strategy and GPU count: the user's count (`--gpus`, `gpuEstimator.gpuCount`) over the
 * one read, else 1 with a note. A count above 1 with no strategy read is DDP (what the Trainer,
 * accelerate and Lightning do with several processes). Undefined for a single-GPU job.
 */
export function shardingSpec(setup: TrainingSetup, shape: TransformerShape, givenGpus: number | undefined, notes: string[]): ShardingSpec | undefined {
  const given = givenGpus !== undefined && Number.isInteger(givenGpus) && givenGpus > 0 ? givenGpus : undefined;
  const distributed = setup.distributed;
  if (!distributed && (given ?? 1) <= 1) return undefined;
  const read = setup.gpuCount;
  const gpus = given ?? read?.value ?? 1;
  const gpusOrigin = given !== undefined ? 'given by the user' : read ? read.origin : 'not found: 1 assumed';
  if (!distributed) notes.push(`${given} GPUs given and no strategy found in the script or its configs: DDP is assumed (one full replica per GPU).`);
  else if (given === undefined && !read) notes.push(`${distributed.origin} runs on several GPUs but their number is not found (launch command, accelerate config, devices=); the estimate is for 1 GPU. Give the count (CLI --gpus N, setting gpuEstimator.gpuCount).`);
  const value = distributed?.value ?? { kind: 'ddp' as const, stage: 0 as const };
  const plan = planOf(value, shape);
  return { plan, gpus, strategy: describePlan(plan), origin: distributed?.origin ?? 'assumed (several GPUs given)', line: distributed && !distributed.value.file ? lineOf(distributed) : null, gpusOrigin };
}

export function estimateShardedAt(job: Omit<FineTuningJob, 'batch'>, sharding: ShardingSpec, batch: number): ShardedEstimate {
  return estimateSharded({ ...job, batch }, sharding.plan, sharding.gpus);
}

export function shardingSummary(job: Omit<FineTuningJob, 'batch'>, sharding: ShardingSpec, batch: number): ShardingSummary {
  const estimate = estimateShardedAt(job, sharding, batch);
  return {
    strategy: sharding.strategy,
    origin: sharding.origin,
    line: sharding.line,
    gpus: sharding.gpus,
    gpusOrigin: sharding.gpusOrigin,
    perGpu: perGpuTable({ ...job, batch }, sharding.plan),
    hostMiB: Math.round(estimate.hostBytes / BYTES_PER_MIB),
  };
}
