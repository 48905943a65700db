/**
 * What the estimate says beyond the script's own batch size and GPU, for the report: the memory
 * curve over batch sizes and the verdict on every GPU profile. Worked out by the pipeline on
 * request (EstimationPipeline.outlook), not on every edit: it runs the analytical model at many
 * batch sizes and searches the largest batch that fits each GPU.
 */
import { analyticalEstimate } from '../estimators/analytical';
import { batchGrid, curveReach } from '../estimators/learned';
import { rangeOnGpu, realModelPrediction } from '../estimators/realModel';
import type { TrainingJob } from '../estimators/trainingJob';
import { findGpuProfile, GPU_PROFILES, type GpuProfile } from '../gpus/gpuProfiles';
import type { FileEstimate, FineTuningOutlook, ModelEstimate, Risk } from './fileEstimate';
import { jobDriverMiB } from './longestSequence';
import { largestFittingBatch, riskOf } from './verdict';

/** One model's outlook, in the order of the estimate's models. */
export interface ModelOutlook {
  /** Null when the model has no layers to size. */
  readonly curve: MemoryCurve | null;
  /** Every GPU profile against the estimate; empty without an estimate. */
  readonly gpus: readonly GpuComparisonRow[];
}

export function outlookOf(estimate: FileEstimate, safetyMargin: number, profiles: readonly GpuProfile[] = GPU_PROFILES): ModelOutlook[] {
  return estimate.models.map((model) => ({ curve: memoryCurve(model, estimate.gpu.memoryMiB, findGpuProfile(estimate.gpu.id)), gpus: gpuComparison(model, estimate.gpu.id, safetyMargin, profiles) }));
}

/** At most this many batch sizes on the curve (evenly spaced, plus the batch sizes that matter). */
export const CURVE_POINTS = 64;

export interface EstimateAt {
  readonly estimateMiB: number;
  /** The estimate's calibrated range (its range quantiles). */
  readonly lowMiB: number;
  readonly highMiB: number;
}

export interface CurvePoint {
  readonly batchSize: number;
  /** The analytical model's peak at this batch size (MiB, one decimal). */
  readonly analyticalMiB: number;
  /** The estimate (the ensemble or the real-model estimator) at this batch size, where it was worked out there (its batch grid and the script's batch). */
  readonly estimate: EstimateAt | null;
}

export interface MemoryCurve {
  readonly points: readonly CurvePoint[];
  readonly gpuMiB: number;
  /** The script's batch size, when known. */
  readonly batchSize: number | null;
  /** Largest batch whose analytical estimate fits the GPU (0: not even one sample). */
  readonly analyticalMaxBatch: number;
  /** The largest batch the report states (the estimate's), when known. */
  readonly maxBatchSize: number | null;
  /** Who the band and the point are from (`CNN ensemble`, `real-model estimator`); null when the estimate is the analytical curve itself. */
  readonly estimator: string | null;
  /** The estimate's points carry a range (its low and high); false for the fine-tuning model, a point estimate (its low and high are the point). */
  readonly ranged: boolean;
  /** The estimate at the script's batch size, where it is not the analytical model's. */
  readonly estimatePoint: { readonly batchSize: number; readonly estimateMiB: number; readonly lowMiB: number | null; readonly highMiB: number | null } | null;
}

/** `model`'s training job at another batch size. */
export function jobAt(model: ModelEstimate, batchSize: number): TrainingJob {
  return { table: model.layerTable, batchSize, optimizer: model.optimizer, precision: model.precision, ...(model.optimizerExtraCopies ? { optimizerExtraCopies: model.optimizerExtraCopies } : {}) };
}

/** The analytical model's peak of `model`'s training job at any batch size (MiB, unrounded). */
export function analyticalCurve(model: ModelEstimate): (batchSize: number) => number {
  return (batchSize) => analyticalEstimate(jobAt(model, batchSize)).totalMiB;
}

/**
 * The model's estimate at any batch size, agreeing with the estimate at the script's batch: the
 * fine-tuning model's own figure for a fine-tune it estimates, the real-model estimator's own
 * replay where it is the estimate, else the analytical model's curve
 * scaled once to the estimate (the ensemble's correction is near constant over batch sizes).
 */
export function estimateCurve(model: ModelEstimate): (batchSize: number) => number {
  if (model.fineTuning) return fineTuningCurve(model.fineTuning);
  const at =
    model.memory.method === 'real-model'
      ? (batchSize: number) => realModelPrediction(jobAt(model, batchSize)).pointMiB
      : analyticalCurve(model);
  if (model.memory.estimateMiB === null || model.batchSize === null) return at;
  const scale = model.memory.estimateMiB / at(model.batchSize);
  return (batchSize) => at(batchSize) * scale;
}

/** A fine-tune's estimate at any batch size: the fine-tuning model on its job (MiB, the driver's figure, per GPU for a sharded job). */
function fineTuningCurve(outlook: FineTuningOutlook): (batchSize: number) => number {
  return (batchSize) => jobDriverMiB({ ...outlook.job, batch: batchSize }, outlook.sharding);
}

/**
 * The estimate by batch size, where it is not the analytical model's: the trained ensemble's grid
 * as the estimate carries it, or the real-model estimator or the fine-tuning model worked out on the same geometric grid
 * (each up to the first point at or past `limit`, so the band spans the curve), and, exactly as
 * the estimate states it, the script's batch.
 */
function estimateByBatch(model: ModelEstimate, limit: number, gpu: GpuProfile | undefined): Map<number, EstimateAt> {
  const byBatch = new Map<number, EstimateAt>();
  const { memory } = model;
  if (memory.method === 'ensemble') {
    for (const p of [...(memory.ensemble?.curve ?? [])].sort((a, b) => a.batchSize - b.batchSize)) {
      byBatch.set(p.batchSize, { estimateMiB: p.estimateMiB, lowMiB: p.lowMiB, highMiB: p.highMiB });
      if (p.batchSize >= limit) break;
    }
  } else if (memory.method === 'fineTuning' && model.fineTuning) {
    // A point estimate: no range, low and high are the point (MemoryCurve.ranged).
    const at = fineTuningCurve(model.fineTuning);
    for (const batchSize of [...batchGrid(), ...(model.batchSize === null ? [] : [model.batchSize])].sort((a, b) => a - b)) {
      const mib = batchSize === model.batchSize && memory.estimateMiB !== null ? memory.estimateMiB : Math.round(at(batchSize));
      byBatch.set(batchSize, { estimateMiB: mib, lowMiB: mib, highMiB: mib });
      if (batchSize >= limit) break;
    }
    return byBatch;
  } else if (memory.method === 'real-model') {
    for (const batchSize of batchGrid()) {
      const at = realModelPrediction(jobAt(model, batchSize));
      const range = gpu ? rangeOnGpu(at, gpu) : at;
      byBatch.set(batchSize, { estimateMiB: Math.round(at.pointMiB), lowMiB: Math.round(range.lowMiB), highMiB: Math.round(range.highMiB) });
      if (batchSize >= limit) break;
    }
  } else {
    return byBatch;
  }
  if (model.batchSize !== null && memory.estimateMiB !== null && memory.lowMiB !== null && memory.highMiB !== null) {
    byBatch.set(model.batchSize, { estimateMiB: memory.estimateMiB, lowMiB: memory.lowMiB, highMiB: memory.highMiB });
  }
  return byBatch;
}

/**
 * The analytical peak over batch sizes from 1 to about twice the largest that fits (or twice the
 * script's batch, if larger), including the script's batch and the largest that fits, with the
 * estimate and its range where the estimate is not the analytical model's; null when the model
 * has no layers to size. `gpu` is the estimate's GPU profile (the real-model range widens off the
 * measured GPU); without one the band is the measured GPU's.
 */
export function memoryCurve(model: ModelEstimate, gpuMiB: number, gpu?: GpuProfile): MemoryCurve | null {
  if (model.layerTable.rows.length === 0) return null;
  const at = analyticalCurve(model);
  const analyticalMaxBatch = largestFittingBatch(at, gpuMiB);
  const reach = curveReach(analyticalMaxBatch, model.maxBatchSize, model.batchSize);
  const band = estimateByBatch(model, reach, gpu);
  // The estimate's grid is geometric: its first point past `reach` ends the curve, so the band does not stop short.
  const limit = Math.max(reach, ...band.keys());
  const sizes = new Set<number>([1, limit, ...band.keys()]);
  const step = (limit - 1) / (CURVE_POINTS - 1);
  for (let i = 1; i < CURVE_POINTS - 1; i++) sizes.add(Math.round(1 + i * step));
  for (const b of [model.batchSize, model.maxBatchSize, analyticalMaxBatch, analyticalMaxBatch + 1]) if (b !== null && b >= 1 && b <= limit) sizes.add(b);
  const points = [...sizes]
    .sort((a, b) => a - b)
    .map((batchSize) => ({ batchSize, analyticalMiB: Math.round(at(batchSize) * 10) / 10, estimate: band.get(batchSize) ?? null }));
  const { memory } = model;
  const banded = band.size > 0;
  const estimatePoint =
    banded && memory.estimateMiB !== null && model.batchSize !== null
      ? { batchSize: model.batchSize, estimateMiB: memory.estimateMiB, lowMiB: memory.lowMiB, highMiB: memory.highMiB }
      : null;
  const estimator = banded ? (model.estimates.find((reading) => reading.role === 'estimate')?.attribution ?? null) : null;
  return { points, gpuMiB, batchSize: model.batchSize, analyticalMaxBatch, maxBatchSize: model.maxBatchSize, estimator, ranged: banded && memory.method !== 'fineTuning', estimatePoint };
}

export interface GpuComparisonRow {
  readonly id: string;
  readonly name: string;
  readonly memoryMiB: number;
  /** The GPU's memory minus the model's estimate (as the report states it); negative: over. */
  readonly headroomMiB: number;
  readonly risk: Risk;
  /** Largest batch whose analytical estimate fits this GPU. */
  readonly analyticalMaxBatch: number;
  /** For a fine-tune the fine-tuning model estimates: the largest batch whose estimate fits this GPU (the analytical model counts every parameter as trained). */
  readonly fineTuningMaxBatch?: number;
  /** The GPU the estimate was made for. */
  readonly current: boolean;
}

/** The model's estimate against every GPU profile, smallest memory first; empty without an estimate. */
export function gpuComparison(model: ModelEstimate, currentGpuId: string, safetyMargin: number, profiles: readonly GpuProfile[] = GPU_PROFILES): GpuComparisonRow[] {
  const estimateMiB = model.memory.estimateMiB;
  if (estimateMiB === null) return [];
  const at = analyticalCurve(model);
  return [...profiles]
    .sort((a, b) => a.memoryMiB - b.memoryMiB || a.name.localeCompare(b.name))
    .map((gpu) => ({
      id: gpu.id,
      name: gpu.name,
      memoryMiB: gpu.memoryMiB,
      headroomMiB: gpu.memoryMiB - estimateMiB,
      risk: riskOf(estimateMiB, gpu.memoryMiB, safetyMargin),
      analyticalMaxBatch: model.layerTable.rows.length ? largestFittingBatch(at, gpu.memoryMiB) : 0,
      ...(model.fineTuning ? { fineTuningMaxBatch: largestFittingBatch(fineTuningCurve(model.fineTuning), gpu.memoryMiB) } : {}),
      current: gpu.id === currentGpuId,
    }));
}

