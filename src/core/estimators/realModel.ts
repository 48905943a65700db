/**
 * The real-model estimator: the training step's allocations replayed through PyTorch's caching
 * allocator (the physical part: weights, gradients, optimizer state, activations kept for
 * backward, the allocator's reserve, the runtime overhead), then a learned correction: log(peak)
 * is linear in the features of realModelFeatures.ts and their pairwise products, one fit per
 * quantile, on the measured timm runs (A100 40 GB) and GPUMemNet's synthetic networks
 * (`npm run train:real-model`: scripts/realModel/dumpSamples.ts computes the features here,
 * scripts/realModel/fit.py fits them with numpy). The coefficients are generated into
 * realModelCoefficients.json; this file only evaluates them, without Python.
 */
import type { Estimator } from '../estimate/estimator';
import type { GpuProfile } from '../gpus/gpuProfiles';
import coefficients from './realModelCoefficients.json';
import type { LayerTable } from '../layerTable/layerTable';
import { hasFrozenParts } from '../layerTable/frozenLayers';
import { BYTES_PER_MIB } from '../format/units';
import { hasCheckpointedCalls } from '../layerTable/checkpointSegments';
import { realModelFeatures } from './realModelFeatures';
import type { StepReplay } from './trainingStep';
import { contextMiBOf } from './analytical';
import type { TrainingJob } from './trainingJob';

export interface RealModelCoefficients {
  readonly features: readonly string[];
  /** The model's terms: each the product of the features at these indices. */
  readonly terms: readonly (readonly number[])[];
  /** The quantile the point estimate is, and the two that bound the range. */
  readonly pointQuantile: number;
  readonly rangeQuantiles: readonly [number, number];
  /** One coefficient per feature for the point and the range's low and high ends (log MiB). */
  readonly point: readonly number[];
  /**
   * The point of a job whose saved activations come from its rows alone (a model read from
   * source), at its own quantile: the highest whose cross-validated median error is within the
   * target on such jobs. `point` is then a catalog model's (activations measured by autograd).
   */
  readonly pointQuantileRowsAlone?: number;
  readonly pointRowsAlone?: readonly number[];
  readonly low: readonly number[];
  readonly high: readonly number[];
  /**
   * The estimate never goes below this share of the replay (feature `logPhysicalMiB`): the tensors
   * the step certainly allocates. The correction is a fit in log space and, far outside its data (a
   * batch of millions), would otherwise shrink an estimate below physics. Absent: no floor.
   */
  readonly physicalFloor?: number;
  /**
   * Added to that floor for the point where the step runs convolutions (feature `largestConvShare`
   * above 0): the context cuDNN's libraries add, which the replay's feature (reserved plus the
   * context without cuDNN) leaves out. A small convolutional model (a text CNN at batch 64: 1.7 GiB
   * against a dry run of 2.0, below every convolutional run measured on the A100) otherwise falls
   * below what its step takes. Not for the range's low end: on the measured runs whose replay
   * over-counts, it would leave the measurement below the range. Absent: none.
   */
  readonly cudnnContextFloorMiB?: number;
  /** The GPU whose measurements fitted the runtime overhead and the correction. */
  readonly measuredGpu: string;
  readonly trainedOn: { readonly timmRuns: number; readonly syntheticRuns: number };
}

export const REAL_MODEL_COEFFICIENTS: RealModelCoefficients = coefficients as unknown as RealModelCoefficients;

export interface RealModelDetail {
  readonly physicalMiB: number;
  readonly replay: StepReplay;
  /** With frozen parameters: the correction's factor for the same model trained in full, applied to this step's replay. */
  readonly frozenFactor?: number;
  /** The replay and the CUDA context alone: a table of a kind the correction never saw (replayOnly). */
  readonly replayOnly?: true;
}

export interface RealModelPrediction {
  readonly lowMiB: number;
  readonly pointMiB: number;
  readonly highMiB: number;
}

/** The model's terms for a feature vector: products of features (fit.py's `terms`). */
export function expandTerms(vector: readonly number[], terms: RealModelCoefficients['terms']): number[] {
  return terms.map((indices) => indices.reduce((product, index) => product * vector[index]!, 1));
}

function dot(weights: readonly number[], vector: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += weights[i]! * vector[i]!;
  return sum;
}

/** A job at least half of whose saved activations autograd measured (a catalog model): fit.py's MEASURED. */
const MEASURED_SHARE = 0.5;

function isMeasured(vector: readonly number[], model: RealModelCoefficients): boolean {
  const index = model.features.indexOf('measuredShare');
  return index >= 0 && (vector[index] ?? 0) >= MEASURED_SHARE;
}

/** The corrected estimate for a feature vector (REAL_MODEL_FEATURES order). */
export function predictFromFeatures(vector: readonly number[], model: RealModelCoefficients = REAL_MODEL_COEFFICIENTS): RealModelPrediction {
  const terms = expandTerms(vector, model.terms);
  const physical = model.physicalFloor === undefined ? 0 : model.physicalFloor * Math.exp(vector[model.features.indexOf('logPhysicalMiB')] ?? Number.NEGATIVE_INFINITY);
  const convolutions = model.physicalFloor !== undefined && (vector[model.features.indexOf('largestConvShare')] ?? 0) > 0;
  const pointCoefficients = model.pointRowsAlone && !isMeasured(vector, model) ? model.pointRowsAlone : model.point;
  const point = Math.max(physical + (convolutions ? (model.cudnnContextFloorMiB ?? 0) : 0), Math.exp(dot(pointCoefficients, terms)));
  const low = Math.max(physical, Math.exp(dot(model.low, terms)));
  const high = Math.max(physical, Math.exp(dot(model.high, terms)));
  return { lowMiB: Math.min(low, point), pointMiB: point, highMiB: Math.max(high, point) };
}

/**
 * Whether the table is a kind the correction never saw: a transformers model's, whose module tree
 * holds the library's own classes where timm's tables (the fit's) hold torch.nn layers, so its row
 * shares fall where no run was. Its saved activations are measured, and the replay alone agrees
 * with the CPU dry run (ViT-B at batch 8-64: within 1-5%), where the correction moved it by -18%
 * to +24% (docs/real-model-estimator.md, "Tables the correction never saw").
 */
function replayOnly(table: LayerTable): boolean {
  return (table.measuredActivations ?? []).some((part) => part.library === 'transformers');
}

export function realModelPrediction(job: TrainingJob): RealModelPrediction & RealModelDetail {
  const { vector, replay, physicalMiB } = realModelFeatures(job);
  if (replayOnly(job.table)) {
    const pointMiB = replay.stats.peakReservedBytes / BYTES_PER_MIB + contextMiBOf(job.table.rows);
    return { lowMiB: pointMiB, pointMiB, highMiB: pointMiB, physicalMiB, replay, replayOnly: true };
  }
  if (!hasFrozenParts(job.table) && !hasCheckpointedCalls(job.table)) return { ...predictFromFeatures(vector), physicalMiB, replay };
  // The correction was learnt on models trained in full without checkpointing; on a frozen or
  // checkpointed step's replay its features fall where it never saw a run (few saved activations,
  // much state). The factor it gives the same model trained in full is applied instead
  // (docs/real-model-estimator.md, "Frozen parameters").
  // The factor is over the replay and the eager attention matrices it does not allocate, which checkpointing
  // keeps one segment's of: for a hand-written GPT's eager attention they are most of the step.
  // The loss's tensors are the same in both steps and learnt on no run with a large output: they are added, not scaled.
  // It is learnt on training (backward's workspaces among it), so it scales the step without a frozen part's forward
  // at its fullest; where a frozen part's forward holds more than its rows (its measured peak), the replay and the
  // CUDA context give the step a figure of its own, as for a table the correction never saw.
  const frozenForward = replay.frozenForwardBytes > 0;
  const trained = frozenForward ? realModelFeatures({ ...job, table: withoutForwardPeaks(job.table) }) : { replay, physicalMiB };
  const scaledStep = scaledFromFullTraining(job, trained.replay, trained.physicalMiB);
  const frozenForwardMiB = frozenForward ? replay.stats.peakReservedBytes / BYTES_PER_MIB + contextMiBOf(job.table.rows) : 0;
  const atLeast = (figure: number) => Math.max(figure, frozenForwardMiB);
  return {
    lowMiB: Math.min(physicalMiB, atLeast(scaledStep.lowMiB)),
    pointMiB: atLeast(scaledStep.pointMiB),
    highMiB: atLeast(scaledStep.highMiB),
    physicalMiB,
    replay,
    frozenFactor: scaledStep.factor,
  };
}

/** The step's replay scaled by the factor the correction gives the same model trained in full (realModelPrediction). */
function scaledFromFullTraining(job: TrainingJob, replay: StepReplay, physicalMiB: number): { lowMiB: number; pointMiB: number; highMiB: number; factor: number } {
  const full = realModelFeatures({ ...job, table: trainedInFull(job.table) });
  const fullPrediction = predictFromFeatures(full.vector);
  const lossMiB = Math.min(replay.lossBytes, full.replay.lossBytes) / BYTES_PER_MIB;
  const base = Math.max(1, full.physicalMiB + eagerAttentionMiB(full.replay, job.batchSize) - lossMiB);
  const own = physicalMiB + eagerAttentionMiB(replay, job.batchSize) - lossMiB;
  const scaled = (figure: number) => (own * Math.max(0, figure - lossMiB)) / base + lossMiB;
  const factor = Math.max(0, fullPrediction.pointMiB - lossMiB) / base;
  return { lowMiB: scaled(fullPrediction.lowMiB), pointMiB: scaled(fullPrediction.pointMiB), highMiB: scaled(fullPrediction.highMiB), factor };
}

/**
 * The eager attention matrices the step holds and the replay does not allocate, MiB: memory in both
 * steps. Those fused kernels never materialise (replayAttentionMiB's other part) are a feature of the
 * correction's, not memory: counted in the frozen step's share they would make a probe on a frozen
 * ViT hold the whole model's attention.
 */
function eagerAttentionMiB(replay: StepReplay, batchSize: number): number {
  return (replay.eagerAttentionBytes * batchSize) / BYTES_PER_MIB;
}

const withoutPeaks = new WeakMap<LayerTable, LayerTable>();

/** The table without its measured forward peaks, cached as trainedInFull's are. */
function withoutForwardPeaks(table: LayerTable): LayerTable {
  const known = withoutPeaks.get(table);
  if (known) return known;
  const stripped = { ...table, measuredActivations: table.measuredActivations!.map(({ forwardPeakBytesPerSample: _peak, ...part }) => part) };
  withoutPeaks.set(table, stripped);
  return stripped;
}

/** The tables trainedInFull made, by the table: the largest-batch search predicts the same job at many batch sizes. */
const fullTables = new WeakMap<LayerTable, LayerTable>();

/** The table with every parameter trainable and every call recorded, without checkpoints: the job the correction was learnt on. */
function trainedInFull(table: LayerTable): LayerTable {
  const known = fullTables.get(table);
  if (known) return known;
  const rows = table.rows.map((row) => {
    if (row.trainable && !row.noGrad && row.checkpoint === undefined) return row;
    const { noGrad: _noGrad, checkpoint: _checkpoint, ...recorded } = row;
    return { ...recorded, trainable: true };
  });
  const full = { ...table, rows, totals: { ...table.totals, trainableParams: table.totals.params } };
  fullTables.set(table, full);
  return full;
}

/**
 * How much the CUDA context and the libraries' workspaces may differ, MiB, on a GPU that was not
 * measured (docs/real-model-estimator.md, "Other GPUs"): a newer driver and CUDA's lazy module
 * loading make the context smaller, older ones and other architectures' kernels larger. Same
 * architecture as the measured A100: the driver and CUDA version alone; another: the kernels too.
 */
export const CONTEXT_SPREAD_MIB = { sameArchitecture: 300, otherArchitecture: 700 } as const;
const MEASURED_ARCHITECTURE = 'Ampere';

/** The range on `gpu`: the measured one's as calibrated, any other's widened by the context's spread. */
export function rangeOnGpu(range: { lowMiB: number; highMiB: number }, gpu: GpuProfile): { lowMiB: number; highMiB: number } {
  if (gpu.id === REAL_MODEL_COEFFICIENTS.measuredGpu) return range;
  const spread = gpu.architecture === MEASURED_ARCHITECTURE ? CONTEXT_SPREAD_MIB.sameArchitecture : CONTEXT_SPREAD_MIB.otherArchitecture;
  return { lowMiB: Math.max(0, range.lowMiB - spread), highMiB: range.highMiB + spread };
}

/**
 * The range of a figure with no spread of its own (a replay plus the CUDA context: the replay-only
 * estimate, the dry run's): none on the GPU the context was measured on, the context's spread on another.
 */
export function pointRangeOnGpu(pointMiB: number, gpu: GpuProfile): { lowMiB: number; highMiB: number } | null {
  const range = rangeOnGpu({ lowMiB: pointMiB, highMiB: pointMiB }, gpu);
  return range.highMiB > range.lowMiB ? range : null;
}

export const realModelEstimator: Estimator<RealModelDetail> = {
  id: 'real-model',
  label: 'Real-model estimator',
  short: 'real-model',
  attribution: () => 'real-model estimator',
  footnote: `real-model: the training step replayed through the caching allocator, corrected by quantile regression on ${REAL_MODEL_COEFFICIENTS.trainedOn.timmRuns.toLocaleString('en-US')} timm runs on an A100 40GB (docs/real-model-estimator.md).`,
  jsonKey: 'realModelMiB',
  pass: 'analysis',
  estimate({ job, gpu }) {
    const prediction = realModelPrediction(job);
    const warnings: string[] = [];
    if (prediction.frozenFactor !== undefined) {
      const checkpointed = hasCheckpointedCalls(job.table);
      warnings.push(`${checkpointed ? 'Gradient checkpointing' : 'Frozen parameters or calls without autograd'}: the correction learnt on models trained in full${checkpointed ? ' without checkpointing' : ''} is applied as the factor it gives this model ${checkpointed ? 'so trained' : 'trained in full'} (x${prediction.frozenFactor.toFixed(2)}) to this step's replay (docs/real-model-estimator.md, "Frozen parameters"); \`--dry-run\` gives a second figure.`);
    }
    if (prediction.replayOnly) {
      warnings.push(
        "A transformers model: the correction was fitted on timm's layer tables and not on this library's, so the estimate is the step's replay " +
          '(with the activations autograd saves, measured with transformers) plus the CUDA context, as the dry run computes it (docs/real-model-estimator.md).',
      );
    } else if (job.table.rows.some((row) => row.type === 'Embedding')) {
      warnings.push('Measured on vision models only: for a language model the correction learned on vision Transformers is applied to its embeddings, logits and attention (docs/real-model-estimator.md).');
    }
    return {
      method: 'real-model',
      pointMiB: prediction.pointMiB,
      range: prediction.replayOnly ? pointRangeOnGpu(prediction.pointMiB, gpu) : { ...rangeOnGpu({ lowMiB: prediction.lowMiB, highMiB: prediction.highMiB }, gpu), quantiles: REAL_MODEL_COEFFICIENTS.rangeQuantiles },
      warnings,
      memoryAt: (batchSize) => realModelPrediction({ ...job, batchSize }).pointMiB,
      detail: {
        physicalMiB: prediction.physicalMiB,
        replay: prediction.replay,
        ...(prediction.frozenFactor === undefined ? {} : { frozenFactor: prediction.frozenFactor }),
        ...(prediction.replayOnly ? { replayOnly: true as const } : {}),
      },
    };
  },
};
