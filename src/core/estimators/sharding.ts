/**
 * What one GPU holds when a fine-tuning job (fineTuning.ts) runs data-parallel on N GPUs: DDP,
 * DeepSpeed ZeRO 1/2/3 and torch FSDP (docs/fine-tuning.md, "Several GPUs"). The single-GPU model
 * gives the parts; this module says which of them each strategy divides by N, which it moves to
 * host memory, and what it adds: DDP's gradient buckets, ZeRO's reduce and prefetch buffers, the
 * full parameters of the layers FSDP and ZeRO-3 gather for compute. Each GPU still runs its own
 * micro-batch, so activations and logits are not divided. Nothing here is fitted.
 */
import { BYTES_PER_MIB } from '../format/units';
import { estimateFineTuning, parameterTensors, RESERVE_SHARE, FITTED_MARGIN, type FineTuningEstimate, type FineTuningJob } from './fineTuning';

export type ShardingKind = 'ddp' | 'fsdp' | 'zero';

export interface ShardingPlan {
  readonly kind: ShardingKind;
  /**
   * What is partitioned across the GPUs, as ZeRO counts it: 0 nothing (DDP, FSDP NO_SHARD), 1 the
   * optimizer state, 2 also the gradients (FSDP SHARD_GRAD_OP), 3 also the parameters (FSDP
   * FULL_SHARD and HYBRID_SHARD).
   */
  readonly stage: 0 | 1 | 2 | 3;
  /** FSDP HYBRID_SHARD: sharded within a node of `gpusPerNode` GPUs, replicated across nodes. */
  readonly hybrid?: boolean;
  /** DeepSpeed offload_optimizer, FSDP CPUOffload: the optimizer state (and ZeRO's fp32 gradients) live in host memory and the step runs there. */
  readonly offloadOptimizer?: boolean;
  /** DeepSpeed offload_param (stage 3), FSDP CPUOffload(offload_params=True): the parameter shards live in host memory. */
  readonly offloadParams?: boolean;
  /** DDP(gradient_as_bucket_view=True): the gradients are views of the buckets, not a second copy. */
  readonly bucketView?: boolean;
  /** DeepSpeed reduce_bucket_size, elements. */
  readonly reduceBucket?: number;
  /** DeepSpeed stage3_prefetch_bucket_size, elements. */
  readonly prefetchBucket?: number;
  /** DeepSpeed overlap_comm: two reduce buffers instead of one. */
  readonly overlapComm?: boolean;
  readonly gpusPerNode?: number;
}

/** DeepSpeed's defaults (deepspeed/runtime/zero/config.py): reduce_bucket_size 5e8, stage3_prefetch_bucket_size 5e7 elements. */
export const DEEPSPEED_REDUCE_BUCKET = 5e8;
export const DEEPSPEED_PREFETCH_BUCKET = 5e7;
/** DeepSpeed's stage3_max_live_parameters default: gathered parameters it may keep resident before releasing them. */
export const DEEPSPEED_MAX_LIVE = 1e9;
/** DDP's default bucket_cap_mb: gradients are all-reduced in buckets of this size (the buckets together hold every gradient). */
export const DDP_BUCKET_BYTES = 25 * BYTES_PER_MIB;
const GPUS_PER_NODE = 8;

export interface ShardedEstimate extends FineTuningEstimate {
  readonly gpus: number;
  /** GPUs each shard is divided among (N, or the node's GPUs for HYBRID_SHARD). */
  readonly shardGroup: number;
  /** Full (unsharded) parameters alive during compute: FSDP's units, ZeRO-3's gathered modules and prefetch. */
  readonly gathered: number;
  /** Communication buffers: DDP's buckets, ZeRO's reduce buffers. */
  readonly buffers: number;
  /** Bytes moved to host memory by offloading (per GPU's process). */
  readonly hostBytes: number;
}

/** A short name for the plan, as the hover and the report show it. */
export function describePlan(plan: ShardingPlan): string {
  const offload = [plan.offloadParams ? 'parameters' : '', plan.offloadOptimizer ? 'optimizer state' : ''].filter(Boolean).join(' and ');
  const name =
    plan.kind === 'ddp'
      ? 'DDP'
      : plan.kind === 'zero'
        ? `DeepSpeed ZeRO-${plan.stage}`
        : `FSDP ${plan.hybrid ? 'HYBRID_SHARD' : plan.stage === 3 ? 'FULL_SHARD' : plan.stage === 2 ? 'SHARD_GRAD_OP' : 'NO_SHARD'}`;
  return offload ? `${name}, ${offload} offloaded to the CPU` : name;
}

/** The parameters of the largest decoder layer and of the largest single module (a linear or the embedding), and those outside the layers (embeddings, head, final norm). */
function unitSizes(job: FineTuningJob): { layer: number; module: number; outside: number } {
  const tensors = parameterTensors(job.shape);
  // A mixture of experts' layer holds every expert (expert parallelism is not modelled: the experts shard as any other parameters).
  const perLayer = tensors.filter((t) => t.perLayer).reduce((sum, t) => sum + t.rows * t.cols * (t.experts ?? 1), 0);
  const outside = tensors.filter((t) => !t.perLayer).reduce((sum, t) => sum + t.rows * t.cols, 0);
  const module = Math.max(...tensors.map((t) => t.rows * t.cols));
  return { layer: perLayer, module, outside };
}

/**
 * DeepSpeed's engine with bf16/fp16 enabled casts the model to 16 bits and keeps an fp32 master
 * copy of the trainable parameters inside the optimizer (with fp32 Adam states), instead of
 * autocast over fp32 weights: the single-GPU job as DeepSpeed runs it.
 */
function asDeepSpeedRuns(job: FineTuningJob, plan: ShardingPlan): FineTuningJob {
  if (plan.kind !== 'zero' || job.computeBytes !== 2 || job.weightBits !== 32) return job;
  return { ...job, weightBits: 16, autocast: false };
}

/**
 * FSDP under mixed precision (accelerate's and the Trainer's `bf16=True` set FSDP's
 * MixedPrecision(param_dtype=bfloat16)) gathers each unit's fp32 shards as 16-bit parameters, so the
 * layers compute and keep their activations as a 16-bit model does, while the shards stay fp32: the
 * step's working set is the 16-bit job's.
 */
function asFsdpComputes(job: FineTuningJob, plan: ShardingPlan): FineTuningJob {
  if (plan.kind !== 'fsdp' || !job.autocast || job.computeBytes !== 2 || job.weightBits !== 32) return job;
  return { ...job, weightBits: 16 };
}

/** Per-GPU memory of the job on `gpus` GPUs under the plan. */
export function estimateSharded(job: FineTuningJob, plan: ShardingPlan, gpus: number): ShardedEstimate {
  const n = Math.max(1, Math.round(gpus));
  const stored = estimateFineTuning(asDeepSpeedRuns(job, plan));
  const computed = asFsdpComputes(job, plan);
  const single = computed === job ? stored : { ...estimateFineTuning(computed), baseWeights: stored.baseWeights, trainableWeights: stored.trainableWeights, gradients: stored.gradients, optimizerState: stored.optimizerState, pagedOptimizerState: stored.pagedOptimizerState, stepTemporary: stored.stepTemporary };
  const group = plan.hybrid ? Math.min(n, plan.gpusPerNode ?? GPUS_PER_NODE) : n;
  const shard = (bytes: number, from: number) => (plan.stage >= from ? bytes / group : bytes);

  // DeepSpeed's 16-bit engine: the trainable parameters' fp32 master copy and fp32 Adam states (4 + 8 B) instead of states in the parameters' 16 bits.
  let optimizerState = single.optimizerState;
  const deepSpeedMixed = plan.kind === 'zero' && job.computeBytes === 2;
  if (deepSpeedMixed && single.trainableParams > 0) {
    const paramBytes = single.trainableWeights / single.trainableParams;
    optimizerState = (single.optimizerState * 4) / paramBytes + 4 * single.trainableParams;
  }
  const trainableWeights = deepSpeedMixed ? single.trainableParams * 2 : single.trainableWeights;
  const gradients = deepSpeedMixed ? single.trainableParams * 2 : single.gradients;
  const paged = single.pagedOptimizerState > 0 ? optimizerState : 0;

  // Parameters: sharded at stage 3 (frozen ones too: ZeRO-3 and FSDP partition every parameter), on the host with parameter offload.
  const paramsHere = shard(single.baseWeights + trainableWeights, 3);
  const params = plan.offloadParams ? 0 : paramsHere;
  // Gradients: reduce-scattered to their shard at stage 2; moved to the host with the optimizer (ZeRO offload keeps its fp32 gradient partition there, FSDP's CPU offload its sharded gradients).
  const gradsHere = shard(gradients, 2);
  const grads = plan.offloadOptimizer || plan.offloadParams ? 0 : gradsHere;
  // Optimizer state: sharded from stage 1; on the host when offloaded (FSDP's CPU offload steps on the CPU too).
  const stateHere = shard(optimizerState, 1);
  const offloadedState = plan.offloadOptimizer || (plan.kind === 'fsdp' && plan.offloadParams);
  const state = offloadedState ? 0 : stateHere;
  const pagedHere = offloadedState ? 0 : shard(paged, 1);
  const hostBytes = (plan.offloadParams ? paramsHere : 0) + (plan.offloadOptimizer || plan.offloadParams ? gradsHere : 0) + (offloadedState ? stateHere : 0);

  // Gathered parameters, in the dtype the layer computes in (4-bit weights stay 4-bit until each linear dequantizes them).
  const units = unitSizes(job);
  const baseBytesPerParam = single.totalParams > 0 ? (single.baseWeights + trainableWeights) / single.totalParams : 0;
  const computeParamBytes = job.weightBits < 16 ? baseBytesPerParam : job.computeBytes;
  let gathered = 0;
  // On one GPU a full shard is the whole model and nothing is gathered, unless the shard is in host memory.
  const gathers = group > 1 || plan.offloadParams === true;
  if (plan.stage === 3 && gathers) {
    if (plan.kind === 'fsdp') {
      // FSDP wraps each decoder layer as a unit: the running unit and the one prefetched (BACKWARD_PRE) are whole, and the root unit (embeddings, head, final norm) is not resharded after the forward.
      gathered = (2 * units.layer + units.outside) * computeParamBytes;
    } else {
      // ZeRO-3 gathers module by module: at least the largest module and the prefetch bucket, and it keeps gathered parameters it will use again (the checkpointed recompute) up to stage3_max_live_parameters. DeepSpeed's own estimate counts only the largest layer, at 4 B (its 16-bit parameters and gradients).
      const least = units.module + Math.min(plan.prefetchBucket ?? DEEPSPEED_PREFETCH_BUCKET, units.layer);
      gathered = Math.max(least, Math.min(DEEPSPEED_MAX_LIVE, single.totalParams)) * computeParamBytes;
    }
  } else if (plan.kind === 'fsdp' && plan.stage === 2 && group > 1) {
    // SHARD_GRAD_OP keeps the parameters it gathered for the forward until the backward is done: the whole model.
    gathered = single.totalParams * computeParamBytes;
  }
  // The unsharded gradients of the unit the backward is in, before they are reduce-scattered to their shard.
  const unitGradients = plan.stage >= 2 && group > 1 && single.totalParams > 0 ? (gradients * units.layer) / single.totalParams : 0;

  // Communication buffers.
  let buffers = 0;
  if (plan.kind === 'ddp' && !plan.bucketView) {
    // DDP's Reducer copies every gradient into its 25 MiB buckets for the all-reduce: a second copy of the gradients, allocated once.
    buffers = gradients;
  } else if (plan.kind === 'zero' && gradients > 0) {
    // ZeRO's backward allocates its reduce buffer of reduce_bucket_size 16-bit elements (two with overlap_comm) whatever the model's size; stage 3 fills a bucket no larger than the gradients.
    const bucket = (plan.reduceBucket ?? DEEPSPEED_REDUCE_BUCKET) * job.computeBytes;
    buffers = (plan.overlapComm ? 2 : 1) * (plan.stage === 3 ? Math.min(bucket, gradients) : bucket);
  }

  // Autocast's weight copies: over the gathered parameters when they are sharded (freed with them), whole otherwise.
  const autocastCopies = plan.stage === 3 && gathers ? 0 : single.autocastCopies;
  // DeepSpeed's 16-bit step makes an fp32 copy of each gradient partition for its fused Adam and frees the 16-bit one as it goes: 2 B net per trainable parameter of the shard.
  const stepTemporary = offloadedState ? 0 : deepSpeedMixed ? shard(2 * single.trainableParams, 1) : shard(single.stepTemporary, 1);
  const persistent = params + state - pagedHere + buffers;
  const heldGradients = job.optimizerInBackward ? 0 : grads;
  const forwardGradients = (job.accumulation ?? 1) > 1 ? heldGradients : 0;
  const working = single.stepWorking + gathered + unitGradients + autocastCopies;
  const forwardPeak = persistent + forwardGradients + working;
  const stepPeak = persistent + heldGradients + stepTemporary;
  const allocated = Math.max(forwardPeak, stepPeak);
  // Gathering and freeing layers every step fragments like the activations do: they share the reserve.
  const reserved = allocated + RESERVE_SHARE * working;
  const driver = reserved + pagedHere + single.context;
  return {
    ...single,
    trainableWeights: plan.offloadParams ? 0 : shard(trainableWeights, 3),
    gradients: grads,
    heldGradients,
    optimizerState: state,
    pagedOptimizerState: pagedHere,
    baseWeights: plan.offloadParams ? 0 : shard(single.baseWeights, 3),
    transient: autocastCopies + gathered + unitGradients + Math.max(single.stepWorking - single.activations - single.logits, stepTemporary),
    autocastCopies,
    stepTemporary,
    allocated,
    reserved,
    driver,
    // The fitted margin on this GPU's own figure, not the single GPU's it was built from.
    fittedMargin: FITTED_MARGIN * driver,
    gpus: n,
    shardGroup: group,
    gathered,
    buffers,
    hostBytes,
  };
}

/** The GPU counts the per-GPU table shows. */
export const PER_GPU_COUNTS = [1, 2, 4, 8] as const;

/** Per-GPU driver's figure with the fitted margin (as the estimate states it) at 1, 2, 4 and 8 GPUs, MiB. */
export function perGpuTable(job: FineTuningJob, plan: ShardingPlan): { gpus: number; driverMiB: number }[] {
  return PER_GPU_COUNTS.map((gpus) => {
    const estimate = estimateSharded(job, plan, gpus);
    return { gpus, driverMiB: Math.round((estimate.driver + estimate.fittedMargin) / BYTES_PER_MIB) };
  });
}
