import type { OptimizerKind, Precision } from '../analysis/modelDescription';
import { BYTES_PER_MIB } from '../format/units';
import { layerTraits, rowExtraBytesPerElement } from '../layers/layerTraits';
import type { LayerRow } from '../layerTable/layerTable';
import { optimizesParameters, recordedCalls, trainsParameters } from '../layerTable/frozenLayers';
import { checkpointSegments, type CheckpointSegment } from '../layerTable/checkpointSegments';
import type { TrainingJob } from './trainingJob';

/**
 * Memory the CUDA context, the kernels PyTorch loads and the caching allocator's first segments
 * take before any tensor of the model exists, as nvidia-smi sees it. Calibrated on the reference
 * A100 measurements (PyTorch 2.4.1, CUDA 12.2) by `npm run evaluate` (scripts/evaluate.ts): the
 * median of measured minus modelled tensors. Other GPUs are assumed alike until measured.
 */
export const RUNTIME_OVERHEAD_MIB = 1440;

/**
 * The CUDA context, the kernels PyTorch loads and cuBLAS's workspace, MiB, as nvidia-smi counts
 * them beside the allocator's reservation. Without cuDNN, the figure above (fitted on GPUMemNet's
 * MLP runs on the A100); cuDNN's libraries add about 400 MiB more, as the CPU-trace prototype of
 * issue 19 found on 15 CNN runs of the same A100 (1.84 GB against 1.43 GB).
 */
export const CONTEXT_MIB = { withoutCudnn: RUNTIME_OVERHEAD_MIB, withCudnn: RUNTIME_OVERHEAD_MIB + 400 } as const;

/** The CUDA context of a training step over these rows: with cuDNN's libraries loaded where there are convolutions. */
export function contextMiBOf(rows: readonly { readonly type: string }[]): number {
  return rows.some((row) => /^Conv/.test(row.type)) ? CONTEXT_MIB.withCudnn : CONTEXT_MIB.withoutCudnn;
}

export interface MemoryBreakdown {
  readonly weightsMiB: number;
  readonly gradientsMiB: number;
  readonly optimizerMiB: number;
  readonly activationsMiB: number;
  readonly overheadMiB: number;
  /** The CUDA context alone, where overheadMiB holds more (the fine-tuning model's fitted margin) or a context other than RUNTIME_OVERHEAD_MIB. */
  readonly contextMiB?: number;
}

export interface AnalyticalEstimate {
  readonly totalMiB: number;
  readonly breakdown: MemoryBreakdown;
}

/** Bytes per element of weights, gradients and saved activations under each precision. */
export const PRECISION_BYTES: Readonly<Record<Precision, { weights: number; activations: number }>> = {
  fp32: { weights: 4, activations: 4 },
  // Autocast keeps fp32 master weights and gradients; most saved activations are half precision.
  'fp16-mixed': { weights: 4, activations: 2 },
  'bf16-mixed': { weights: 4, activations: 2 },
  fp16: { weights: 2, activations: 2 },
  bf16: { weights: 2, activations: 2 },
};

/**
 * Optimizer state in copies of the weights. Adam's two moments plus the temporary that the
 * multi-tensor (foreach) step allocates; SGD with momentum keeps one buffer.
 */
export const OPTIMIZER_COPIES: Readonly<Record<OptimizerKind, number>> = {
  sgd: 0,
  'sgd-momentum': 1,
  adam: 3,
  adamw: 3,
  rmsprop: 1,
  adagrad: 1,
  other: 3,
};

/** The caching allocator hands out 512-byte blocks, and 2 MiB ones for anything above 1 MiB. */
export function allocatedBytes(bytes: number): number {
  if (bytes <= 0) return 0;
  const granularity = bytes > BYTES_PER_MIB ? 2 * BYTES_PER_MIB : 512;
  return Math.ceil(bytes / granularity) * granularity;
}

/** The analytical model's parts in bytes, before rounding to MiB (the learned estimators' anchor features use them). */
export interface AnalyticalBytes {
  /** Weights, rounded per layer as the allocator hands them out. */
  readonly weightBytes: number;
  /** The trainable weights' gradients (frozenLayers.ts: frozen ones get none). */
  readonly gradientBytes: number;
  readonly optimizerBytes: number;
  /** The input batch and the activations autograd keeps for backward. */
  readonly savedBytes: number;
  /** The gradient flowing in and the one flowing out of the largest activation during backward. */
  readonly backwardBytes: number;
}

export function analyticalBytes(job: TrainingJob): AnalyticalBytes {
  const { table, batchSize, optimizer, precision } = job;
  const bytes = PRECISION_BYTES[precision];
  const weightsOf = (rows: readonly LayerRow[]) => rows.reduce((sum, row) => sum + ((row.params ?? 0) > 0 ? allocatedBytes((row.params ?? 0) * bytes.weights) : 0), 0);
  const weightBytes = weightsOf(table.rows);
  const gradientBytes = weightsOf(table.rows.filter(trainsParameters));
  const optimizerBytes = weightsOf(table.rows.filter((row) => optimizesParameters(row, job.optimizedPaths))) * (OPTIMIZER_COPIES[optimizer] + (job.optimizerExtraCopies ?? 0));

  const rows = table.rows;
  // Layers before the first one that trains, and calls under no_grad, keep nothing for backward (frozenLayers.ts).
  const recorded = recordedCalls(table, rows);
  let savedBytes = table.inputShape && recorded[0] !== false ? allocatedBytes(batchSize * product(table.inputShape) * bytes.activations) : 0;
  let largest = 0;
  // Checkpointed segments (checkpointSegments.ts) keep their input; one segment's saved tensors are held at a time, in backward.
  const segments = checkpointSegments(rows);
  const segmentBytes = new Map<CheckpointSegment, number>();
  rows.forEach((row, index) => {
    if (row.activations === null) return;
    const elements = batchSize * row.activations;
    largest = Math.max(largest, elements);
    if (!recorded[index]) return;
    const spec = layerTraits(row.type);
    const next = rows[index + 1];
    const nextSpec = next && layerTraits(next.type);
    const isLast = index === rows.length - 1;
    const kept = isLast || spec?.savesOutput === true || nextSpec?.savesInput === true;
    const output = allocatedBytes(elements * bytes.activations);
    const keeps = (kept ? output : 0) + allocatedBytes(elements * rowExtraBytesPerElement(row));
    const segment = segments[index];
    // Its output is the input of the segment after it, which keeps it.
    const segmentInput = segments[index + 1] !== undefined && segments[index + 1] !== segment;
    if (segment === undefined) savedBytes += keeps + (segmentInput && !kept ? output : 0);
    else {
      segmentBytes.set(segment, (segmentBytes.get(segment) ?? 0) + keeps);
      if (index === segment.end && (kept || segmentInput)) savedBytes += output;
    }
  });
  savedBytes += Math.max(0, ...segmentBytes.values());
  // During backward the gradient flowing in and the one flowing out coexist (in a frozen prefix, a layer's input and output).
  const backwardBytes = 2 * allocatedBytes(largest * bytes.activations);
  return { weightBytes, gradientBytes, optimizerBytes, savedBytes, backwardBytes };
}

/**
 * Our analytical model of a training step's peak: weights, gradients and optimizer state by
 * optimizer and precision, the activations autograd keeps for backward (by row type, over all
 * rows: functional rows such as a `torch.cat` feeding a conv count like modules, with the traits
 * of src/core/layers/layerTraits.ts), the
 * transient gradients of the largest activation during backward, and the runtime overhead.
 */
export function analyticalEstimate(job: TrainingJob): AnalyticalEstimate {
  const { weightBytes, gradientBytes, optimizerBytes, savedBytes, backwardBytes } = analyticalBytes(job);
  const toMiB = (b: number): number => Math.round((b / BYTES_PER_MIB) * 10) / 10;
  const breakdown: MemoryBreakdown = {
    weightsMiB: toMiB(weightBytes),
    gradientsMiB: toMiB(gradientBytes),
    optimizerMiB: toMiB(optimizerBytes),
    activationsMiB: toMiB(savedBytes + backwardBytes),
    overheadMiB: RUNTIME_OVERHEAD_MIB,
  };
  const totalMiB = (weightBytes + gradientBytes + optimizerBytes + savedBytes + backwardBytes) / BYTES_PER_MIB + RUNTIME_OVERHEAD_MIB;
  return { totalMiB, breakdown };
}

function product(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}
