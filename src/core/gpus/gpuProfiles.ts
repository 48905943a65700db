import data from './gpuProfiles.json';

/** A MIG GPU-instance profile: `3g.20gb`, with the share of the card's memory it gets. */
export interface MigProfile {
  readonly name: string;
  /** Its share of the memory in eighths, as NVIDIA's MIG User Guide gives it (`1g.5gb`: 1/8 of an A100 40GB). */
  readonly memoryEighths: number;
}

export interface GpuProfile {
  readonly id: string;
  /** Short name for status bars and tables: "A100 40GB". */
  readonly name: string;
  /** The name nvidia-smi prints. */
  readonly fullName: string;
  readonly architecture: string;
  readonly memoryMiB: number;
  /** The MIG profiles, smallest first; absent for a GPU without MIG. */
  readonly mig?: readonly MigProfile[];
}

/** A MIG profile's nominal memory: its share of the card's. The driver carves out a little less, so an estimate near it is tight. */
export function migMemoryMiB(gpu: GpuProfile, profile: MigProfile): number {
  return Math.floor((gpu.memoryMiB * profile.memoryEighths) / 8);
}

/**
 * The GPUs, in the order settings and tables list them. To add one, add it to gpuProfiles.json and
 * run `npm run gpus:sync`, which writes package.json's choices for `gpuEstimator.gpu` and the
 * README's row from it (scripts/gpus/gpuSettings.ts; the build fails while they disagree).
 */
export const GPU_PROFILES: readonly GpuProfile[] = data.profiles;

/** The GPU of the reference measurements, and so the one estimates are calibrated on. */
export const DEFAULT_GPU_ID = 'a100-40gb';

export function findGpuProfile(id: string): GpuProfile | undefined {
  const wanted = id.trim().toLowerCase();
  return GPU_PROFILES.find((profile) => profile.id === wanted);
}

export function defaultGpuProfile(): GpuProfile {
  return findGpuProfile(DEFAULT_GPU_ID)!;
}
