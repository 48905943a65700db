/**
 * The dry run's figure on a GPU other than the one its CUDA context was measured on. The trace
 * and the allocator replay do not depend on the card; the context does (driver, CUDA version,
 * the kernels of another architecture), so off the measured A100 the figure becomes a range,
 * as wide as the real-model estimator widens its own (one spread, `CONTEXT_SPREAD_MIB`).
 */
import { findGpuProfile, type GpuProfile } from '../gpus/gpuProfiles';
import { CONTEXT_SPREAD_MIB, REAL_MODEL_COEFFICIENTS, pointRangeOnGpu } from '../estimators/realModel';
import { formatMiB } from '../format/units';

export interface DryRunRange {
  readonly lowMiB: number;
  readonly highMiB: number;
  /** Why there is a range, in a clause a user reads after the figure. */
  readonly reason: string;
}

/**
 * The range of `predictedMiB` on the estimate's GPU (`{ id, name }` as the estimate carries it),
 * or null on the GPU the context was measured on. A GPU the profiles do not know is taken as
 * another architecture: the wider spread.
 */
export function dryRunRangeOnGpu(predictedMiB: number, gpu: { readonly id: string; readonly name: string }): DryRunRange | null {
  const profile: GpuProfile = findGpuProfile(gpu.id) ?? { id: gpu.id, name: gpu.name, fullName: gpu.name, architecture: 'unknown', memoryMiB: 0 };
  const range = pointRangeOnGpu(predictedMiB, profile);
  if (!range) return null;
  const spread = range.highMiB - predictedMiB;
  const measured = findGpuProfile(REAL_MODEL_COEFFICIENTS.measuredGpu)?.name ?? REAL_MODEL_COEFFICIENTS.measuredGpu;
  const why = spread === CONTEXT_SPREAD_MIB.sameArchitecture ? 'another driver and CUDA version' : 'another architecture\'s kernels, driver and CUDA version';
  return {
    lowMiB: round(range.lowMiB),
    highMiB: round(range.highMiB),
    reason: `its CUDA context was measured on the ${measured}; on the ${profile.name} (${profile.architecture}) ${why} can move it by up to ${formatMiB(spread)}`,
  };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
