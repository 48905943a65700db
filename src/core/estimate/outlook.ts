/**
 * What the estimate says beyond the script's own batch size and GPU, for the report: the memory
 * curve over batch sizes and the verdict on every GPU profile. Worked out by the pipeline on
 * request (EstimationPipeline.outlook), not on every edit: it runs the analytical model at many
 * batch sizes and searches the largest batch that fits each GPU.
 */
import { analyticalEstimate } from '../estimators/analytical';
import { curveReach } from '../estimators/learned';
import { GPU_PROFILES, type GpuProfile } from '../gpus/gpuProfiles';
import type { FileEstimate, ModelEstimate, Risk } from './fileEstimate';
import { largestFittingBatch, riskOf } from './verdict';

/** One model's outlook, in the order of the estimate's models. */
export interface ModelOutlook {
  /** Null when the model has no layers to size. */
  readonly curve: MemoryCurve | null;
  /** Every GPU profile against the estimate; empty without an estimate. */
  readonly gpus: readonly GpuComparisonRow[];
}

export function outlookOf(estimate: FileEstimate, safetyMargin: number, profiles: readonly GpuProfile[] = GPU_PROFILES): ModelOutlook[] {
  return estimate.models.map((model) => ({ curve: memoryCurve(model, estimate.gpu.memoryMiB), gpus: gpuComparison(model, estimate.gpu.id, safetyMargin, profiles) }));
}

/** At most this many batch sizes on the curve (evenly spaced, plus the batch sizes that matter). */
export const CURVE_POINTS = 64;

export interface EnsembleAt {
  readonly estimateMiB: number;
  /** The ensemble's calibrated range (its range quantiles). */
  readonly lowMiB: number;
  readonly highMiB: number;
}

export interface CurvePoint {
  readonly batchSize: number;
  /** The analytical model's peak at this batch size (MiB, one decimal). */
  readonly analyticalMiB: number;
  /** The trained ensemble at this batch size, where it ran there (its batch grid and the script's batch). */
  readonly ensemble: EnsembleAt | null;
}

export interface MemoryCurve {
  readonly points: readonly CurvePoint[];
  readonly gpuMiB: number;
  /** The script's batch size, when known. */
  readonly batchSize: number | null;
  /** Largest batch whose analytical estimate fits the GPU (0: not even one sample). */
  readonly analyticalMaxBatch: number;
  /** The largest batch the report states (the ensemble's when it ran), when known. */
  readonly maxBatchSize: number | null;
  /** The ensemble's estimate at the script's batch size, where the ensemble ran. */
  readonly ensemblePoint: { readonly batchSize: number; readonly estimateMiB: number; readonly lowMiB: number | null; readonly highMiB: number | null } | null;
}

/** The analytical model's peak of `model`'s training job at any batch size (MiB, unrounded). */
export function analyticalCurve(model: ModelEstimate): (batchSize: number) => number {
  return (batchSize) => analyticalEstimate({ table: model.layerTable, batchSize, optimizer: model.optimizer, precision: model.precision }).totalMiB;
}

/**
 * The trained ensemble by batch size: its grid (up to the first point at or past `limit`, so its
 * band spans the curve) and, exactly as the estimate states it, the script's batch.
 */
function ensembleByBatch(model: ModelEstimate, limit: number): Map<number, EnsembleAt> {
  const byBatch = new Map<number, EnsembleAt>();
  const { memory } = model;
  if (memory.method !== 'ensemble') return byBatch;
  for (const p of [...(memory.ensemble?.curve ?? [])].sort((a, b) => a.batchSize - b.batchSize)) {
    byBatch.set(p.batchSize, { estimateMiB: p.estimateMiB, lowMiB: p.lowMiB, highMiB: p.highMiB });
    if (p.batchSize >= limit) break;
  }
  if (model.batchSize !== null && memory.estimateMiB !== null && memory.lowMiB !== null && memory.highMiB !== null) {
    byBatch.set(model.batchSize, { estimateMiB: memory.estimateMiB, lowMiB: memory.lowMiB, highMiB: memory.highMiB });
  }
  return byBatch;
}

/**
 * The analytical peak over batch sizes from 1 to about twice the largest that fits (or twice the
 * script's batch, if larger), including the script's batch and the largest that fits, with the
 * trained ensemble's estimate and range where it ran; null when the model has no layers to size.
 */
export function memoryCurve(model: ModelEstimate, gpuMiB: number): MemoryCurve | null {
  if (model.layerTable.rows.length === 0) return null;
  const at = analyticalCurve(model);
  const analyticalMaxBatch = largestFittingBatch(at, gpuMiB);
  const reach = curveReach(analyticalMaxBatch, model.maxBatchSize, model.batchSize);
  const ensemble = ensembleByBatch(model, reach);
  // The ensemble's grid is geometric: its first point past `reach` ends the curve, so the band does not stop short.
  const limit = Math.max(reach, ...ensemble.keys());
  const sizes = new Set<number>([1, limit, ...ensemble.keys()]);
  const step = (limit - 1) / (CURVE_POINTS - 1);
  for (let i = 1; i < CURVE_POINTS - 1; i++) sizes.add(Math.round(1 + i * step));
  for (const b of [model.batchSize, model.maxBatchSize, analyticalMaxBatch, analyticalMaxBatch + 1]) if (b !== null && b >= 1 && b <= limit) sizes.add(b);
  const points = [...sizes]
    .sort((a, b) => a - b)
    .map((batchSize) => ({ batchSize, analyticalMiB: Math.round(at(batchSize) * 10) / 10, ensemble: ensemble.get(batchSize) ?? null }));
  const { memory } = model;
  const ensemblePoint =
    memory.method === 'ensemble' && memory.estimateMiB !== null && model.batchSize !== null
      ? { batchSize: model.batchSize, estimateMiB: memory.estimateMiB, lowMiB: memory.lowMiB, highMiB: memory.highMiB }
      : null;
  return { points, gpuMiB, batchSize: model.batchSize, analyticalMaxBatch, maxBatchSize: model.maxBatchSize, ensemblePoint };
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
      current: gpu.id === currentGpuId,
    }));
}

