/**
 * What the real-model estimator's learned correction sees of a training job: the caching-allocator
 * replay of its training step (trainingStep.ts) and a few shape-free traits of its layer table
 * that say how much of the model the table cannot see. Everything is a ratio or a logarithm, so a
 * model of an architecture the correction never saw lands among the ones it did.
 */
import { PRECISION_BYTES, RUNTIME_OVERHEAD_MIB } from './analytical';
import { modelFamily } from './family';
import { replayTrainingStep, type StepReplay } from './trainingStep';
import type { TrainingJob } from './trainingJob';
import { BYTES_PER_MIB } from '../format/units';

export const REAL_MODEL_FEATURES = [
  'bias',
  // log(replayed reserved memory + the runtime overhead), MiB: the physical estimate.
  'logPhysicalMiB',
  // Shares of the replayed peak: activations kept for backward, weights + gradients + optimizer state.
  'savedShare',
  'stateShare',
  'logBatch',
  'transformer',
  // The attention matrices the fused kernels skip (bytes at fp32), plus what eager attention keeps
  // for them (scores, dropout's output and mask: eagerAttention.ts), relative to the replayed peak.
  'attentionShare',
  // log(input side / 224).
  'logResolution',
  // Parameters registered outside torch.nn layers (timm's own conv and norm classes): their
  // computation, and the activations it keeps, are invisible to the table.
  'unseenParamShare',
  'parameterRowShare',
  'identityRowShare',
  'activationRowShare',
  'normRowShare',
  'logRows',
  // The invisible part grows with the batch: the shares above, times log(batch).
  'unseenParamShareByBatch',
  'identityRowShareByBatch',
  // The share of the replay's saved activations whose size autograd measured (a catalog model's:
  // measuredActivations), rather than the rows' account: 1 for a timm model, 0 for a model read
  // from source. With its products, the correction learns each case's own terms.
  'measuredShare',
  // The largest convolution output of the batch relative to the replayed peak: cuDNN's
  // algorithms take workspaces of about that size, which the allocator then keeps reserved.
  'largestConvShare',
] as const;

export type RealModelFeatureName = (typeof REAL_MODEL_FEATURES)[number];

const ACTIVATION_TYPES = /^(ReLU|ReLU6|GELU|SiLU|Hardswish|Hardsigmoid|Sigmoid|Tanh|Mish|LeakyReLU|ELU|PReLU|Softplus)$/;
const FP32_BYTES = 4;
const REFERENCE_SIDE = 224;

export interface RealModelFeatures {
  readonly vector: readonly number[];
  readonly replay: StepReplay;
  readonly physicalMiB: number;
}

/** The table's part of the features, the same at every batch size. */
interface TableTraits {
  readonly transformer: number;
  readonly logResolution: number;
  readonly unseenParamShare: number;
  readonly parameterRowShare: number;
  readonly identityRowShare: number;
  readonly activationRowShare: number;
  readonly normRowShare: number;
  readonly logRows: number;
  /** Output elements per sample of the largest convolution call. */
  readonly largestConv: number;
}

const traitsCache = new WeakMap<object, TableTraits>();

function tableTraits(job: TrainingJob): TableTraits {
  const cached = traitsCache.get(job.table);
  if (cached) return cached;
  const rows = job.table.rows;
  const n = Math.max(1, rows.length);
  const count = (test: (type: string) => boolean) => rows.filter((row) => test(row.type)).length;
  const unseenParams = rows.filter((row) => row.type === 'Parameter').reduce((sum, row) => sum + (row.params ?? 0), 0);
  const shape = job.table.inputShape;
  // The image's side matters where layers work on it (a convolution, or any row whose output keeps
  // two spatial dimensions: nf_resnet's convolutions are functional calls); an MLP flattens MNIST's
  // 28 x 28 first, and its side would put it among the small-image synthetic CNNs (a VAE on MNIST:
  // +35% over its dry run), where the fit's MLPs all stand at the reference.
  const spatial = rows.some((row) => /Conv/.test(row.type) || (row.outputShape?.length ?? 0) >= 3);
  const side = spatial && shape && shape.length >= 2 ? shape[shape.length - 1]! : REFERENCE_SIDE;
  const traits: TableTraits = {
    transformer: modelFamily(job.table) === 'transformer' ? 1 : 0,
    logResolution: Math.log(side / REFERENCE_SIDE),
    unseenParamShare: unseenParams / Math.max(1, job.table.totals.params),
    parameterRowShare: count((type) => type === 'Parameter') / n,
    identityRowShare: count((type) => type === 'Identity') / n,
    activationRowShare: count((type) => ACTIVATION_TYPES.test(type)) / n,
    normRowShare: count((type) => /Norm/.test(type)) / n,
    logRows: Math.log(n),
    largestConv: rows.reduce((largest, row) => (/^Conv/.test(row.type) ? Math.max(largest, row.activations ?? 0) : largest), 0),
  };
  traitsCache.set(job.table, traits);
  return traits;
}

/** The attention matrices the replay does not allocate (StepReplay.attentionElements, eagerAttentionBytes), MiB for the batch. */
export function replayAttentionMiB(replay: StepReplay, batchSize: number): number {
  return (replay.attentionElements * batchSize * FP32_BYTES + replay.eagerAttentionBytes * batchSize) / BYTES_PER_MIB;
}

export function realModelFeatures(job: TrainingJob): RealModelFeatures {
  const replay = replayTrainingStep(job);
  const reservedMiB = Math.max(1, replay.stats.peakReservedBytes / BYTES_PER_MIB);
  const traits = tableTraits(job);
  const attentionMiB = replayAttentionMiB(replay, job.batchSize);
  const values: Record<RealModelFeatureName, number> = {
    bias: 1,
    logPhysicalMiB: Math.log(reservedMiB + RUNTIME_OVERHEAD_MIB),
    savedShare: replay.savedBytes / BYTES_PER_MIB / reservedMiB,
    stateShare: replay.stateBytes / BYTES_PER_MIB / reservedMiB,
    logBatch: Math.log(job.batchSize),
    attentionShare: attentionMiB / reservedMiB,
    ...traits,
    unseenParamShareByBatch: traits.unseenParamShare * Math.log(job.batchSize),
    identityRowShareByBatch: traits.identityRowShare * Math.log(job.batchSize),
    measuredShare: replay.savedBytes > 0 ? replay.measuredSavedBytes / replay.savedBytes : 0,
    // In the precision the convolution runs in (half under autocast or .half()), as its workspace follows its tensors.
    largestConvShare: (traits.largestConv * job.batchSize * PRECISION_BYTES[job.precision].activations) / BYTES_PER_MIB / reservedMiB,
  };
  return { vector: REAL_MODEL_FEATURES.map((name) => values[name]), replay, physicalMiB: reservedMiB + RUNTIME_OVERHEAD_MIB };
}
