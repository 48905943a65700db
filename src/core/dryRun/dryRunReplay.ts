/**
 * A dry run's trace replayed through the model of PyTorch's caching allocator, and what
 * nvidia-smi would show: the allocator's peak reservation plus the CUDA context.
 */
import { CachingAllocator } from '../allocator/cachingAllocator';
import { CONTEXT_MIB } from '../estimators/analytical';
import type { ConvolutionCall, DryRunPhase, DryRunTrace } from './dryRunTrace';

/** cuDNN's workspace for a convolution, bytes: allocated through the caching allocator for the call, freed after it. */
export type WorkspaceModel = (convolution: ConvolutionCall) => number;

const MIB = 1024 * 1024;

export interface ReplayOptions {
  /**
   * The GPU's memory as nvidia-smi counts it: with it, the allocator gives its cache back before it
   * would go beyond the card, and a convolution whose workspace does not fit gets none (PyTorch
   * then tries cuDNN's next algorithm, which needs less). Unbounded when absent.
   */
  readonly gpuMemoryMiB?: number;
}

export interface DryRunFigure {
  /** What nvidia-smi would show at the peak: the peak reservation plus the context. */
  readonly predictedMiB: number;
  readonly peakReservedMiB: number;
  readonly peakAllocatedMiB: number;
  /** Where the live tensors peaked. */
  readonly peakPhase: DryRunPhase;
  readonly steps: number;
  readonly seconds: number;
  /** Convolutions whose workspace did not fit beside the live tensors on the GPU (`ReplayOptions.gpuMemoryMiB`): cuDNN ran another algorithm. */
  readonly workspaceFallbacks: number;
  /** The live tensors alone went beyond the GPU (`ReplayOptions.gpuMemoryMiB`): the run stops with an out-of-memory error. */
  readonly outOfMemory: boolean;
  readonly breakdown: {
    readonly contextMiB: number;
    /** Reserved but not handed out at the peak of the reservation: the allocator's cache and its splits. */
    readonly cachedMiB: number;
    /** Live at the peak, by the phase each tensor was born in. */
    readonly livePerPhaseMiB: Readonly<Partial<Record<DryRunPhase, number>>>;
  };
}

export function replayDryRun(trace: DryRunTrace, workspace?: WorkspaceModel, options: ReplayOptions = {}): DryRunFigure {
  const figure = replay(trace, workspace, options);
  if (!figure.outOfMemory || !workspace || options.gpuMemoryMiB === undefined) return figure;
  // The tensors fit without the workspaces but not beside what they left in the cache: the workspace
  // sizes are a rule, not cuDNN's own, and near the limit PyTorch takes algorithms that need less.
  // The run fills the card rather than stopping.
  if (replay(trace, undefined, options).outOfMemory) return figure;
  const peakReservedMiB = round(options.gpuMemoryMiB - figure.breakdown.contextMiB);
  return {
    ...figure,
    predictedMiB: options.gpuMemoryMiB,
    peakReservedMiB,
    workspaceFallbacks: Math.max(1, figure.workspaceFallbacks),
    outOfMemory: false,
    breakdown: { ...figure.breakdown, cachedMiB: Math.max(0, round(peakReservedMiB - figure.peakAllocatedMiB)) },
  };
}

function replay(trace: DryRunTrace, workspace: WorkspaceModel | undefined, options: ReplayOptions): DryRunFigure {
  const contextMiB = trace.cudnn ? CONTEXT_MIB.withCudnn : CONTEXT_MIB.withoutCudnn;
  const allocator = new CachingAllocator(options.gpuMemoryMiB === undefined ? {} : { capacityBytes: Math.max(0, options.gpuMemoryMiB - contextMiB) * MIB });
  let workspaceFallbacks = 0;
  // Live tensors by the phase they were born in, kept as running sums: a new peak of allocated
  // bytes (every allocation of a growing forward) copies four numbers, not every live tensor.
  const born = new Map<number, { bytes: number; phase: DryRunPhase }>();
  const livePerPhase = new Map<DryRunPhase, { bytes: number; tensors: number }>();
  const birth = (id: number, bytes: number, phase: DryRunPhase): void => {
    born.set(id, { bytes, phase });
    const sum = livePerPhase.get(phase) ?? { bytes: 0, tensors: 0 };
    livePerPhase.set(phase, { bytes: sum.bytes + bytes, tensors: sum.tensors + 1 });
  };
  const death = (id: number): void => {
    const tensor = born.get(id);
    if (!tensor) return;
    born.delete(id);
    const sum = livePerPhase.get(tensor.phase)!;
    if (sum.tensors === 1) livePerPhase.delete(tensor.phase);
    else livePerPhase.set(tensor.phase, { bytes: sum.bytes - tensor.bytes, tensors: sum.tensors - 1 });
  };
  let peakAllocated = -1;
  let peakPhase: DryRunPhase = 'forward';
  let livePerPhaseAtPeak: Partial<Record<DryRunPhase, number>> = {};
  let allocatedAtPeakReserved = 0;
  let peakReserved = 0;
  // Workspaces get ids below the trace's (which are positive), and live from before the call's
  // first output is allocated until just after it. PyTorch makes the output first, then cuDNN asks
  // for its workspace; that order, tried on 2026-11-27, let the workspace's segment serve later
  // tensors and took VGG-19 at batch 64 from 18% to 35% under its measured peak (docs/dry-run.md).
  const convolutionsAt = new Map<number, ConvolutionCall[]>();
  if (workspace) for (const call of trace.convolutions) convolutionsAt.set(call.at, [...(convolutionsAt.get(call.at) ?? []), call]);
  let nextWorkspaceId = -1;
  const observe = (phase: DryRunPhase): void => {
    const stats = allocator.stats();
    if (stats.reservedBytes > peakReserved) {
      peakReserved = stats.reservedBytes;
      allocatedAtPeakReserved = stats.allocatedBytes;
    }
    if (stats.allocatedBytes > peakAllocated) {
      peakAllocated = stats.allocatedBytes;
      peakPhase = phase;
      livePerPhaseAtPeak = {};
      for (const [bornIn, sum] of livePerPhase) livePerPhaseAtPeak[bornIn] = sum.bytes;
    }
  };
  trace.events.forEach((event, index) => {
    const workspaces: number[] = [];
    for (const call of convolutionsAt.get(index) ?? []) {
      const bytes = Math.round(workspace!(call));
      if (bytes <= 0) continue;
      const id = nextWorkspaceId--;
      if (!allocator.tryMalloc(id, bytes)) {
        workspaceFallbacks++;
        continue;
      }
      birth(id, bytes, call.phase);
      observe(call.phase);
      workspaces.push(id);
    }
    const release = (): void => {
      for (const id of workspaces.splice(0)) {
        allocator.free(id);
        death(id);
      }
    };
    if (event.kind === 'free') {
      allocator.free(event.id);
      death(event.id);
    } else {
      // The output comes first on the GPU: where it and the workspace do not both fit, cuDNN runs
      // without the workspace (another algorithm) and the output is allocated as it would be.
      if (workspaces.length > 0 && !allocator.tryMalloc(event.id, event.bytes)) {
        workspaceFallbacks += workspaces.length;
        release();
        allocator.malloc(event.id, event.bytes);
      } else if (workspaces.length === 0) allocator.malloc(event.id, event.bytes);
      birth(event.id, event.bytes, event.phase);
      observe(event.phase);
    }
    release();
  });
  const livePerPhaseMiB: Partial<Record<DryRunPhase, number>> = {};
  for (const [phase, bytes] of Object.entries(livePerPhaseAtPeak) as [DryRunPhase, number][]) livePerPhaseMiB[phase] = round(bytes / MIB);
  return {
    predictedMiB: round(peakReserved / MIB + contextMiB),
    peakReservedMiB: round(peakReserved / MIB),
    peakAllocatedMiB: round(Math.max(0, peakAllocated) / MIB),
    peakPhase,
    steps: trace.steps,
    seconds: trace.seconds,
    workspaceFallbacks,
    outOfMemory: allocator.stats().outOfMemory,
    breakdown: { contextMiB, cachedMiB: round((peakReserved - allocatedAtPeakReserved) / MIB), livePerPhaseMiB },
  };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
