/**
 * Tensor shapes as the analyzer tracks them: full shapes, like PyTorch's, with the batch
 * dimension marked instead of numbered, so one analysis serves every batch size.
 */

/** A dimension of `batch` x the batch size: 1 for an ordinary batch axis, 35 after `x.view(-1, C)` on (B, 35, C). */
export interface BatchDim {
  readonly batch: number;
}

export type Dim = number | BatchDim;
export type TensorShape = readonly Dim[];

/** The batch dimension itself. */
export const BATCH: BatchDim = { batch: 1 };

export function isBatchDim(dim: Dim | undefined): dim is BatchDim {
  return typeof dim === 'object' && dim !== null && !Array.isArray(dim);
}

/** What a layer returns: one tensor, a (possibly nested) tuple, or None. */
export type LayerOutput = TensorShape | readonly LayerOutput[] | null;

export function isTensorShape(output: LayerOutput): output is TensorShape {
  return Array.isArray(output) && output.every((d) => typeof d === 'number' || isBatchDim(d as Dim));
}

/** Every tensor in an output, in PyTorch's return order. */
export function outputTensors(output: LayerOutput): TensorShape[] {
  if (output === null) return [];
  if (isTensorShape(output)) return [output];
  return output.flatMap(outputTensors);
}

/** The shape of one sample: batch dimensions removed (a batch factor other than 1 stays as a dimension). */
export function perSampleShape(shape: TensorShape): number[] {
  return shape.flatMap((d) => (isBatchDim(d) ? (d.batch === 1 ? [] : [d.batch]) : [d]));
}

/** Elements per sample: numel / batch size. */
export function perSampleElements(shape: TensorShape): number {
  return shape.reduce<number>((n, d) => n * (isBatchDim(d) ? d.batch : d), 1);
}

/** A full shape from a sample shape: (B, ...sample). */
export function batched(sample: readonly number[]): TensorShape {
  return [BATCH, ...sample];
}

export function formatShape(shape: TensorShape): string {
  return `(${shape.map((d) => (isBatchDim(d) ? (d.batch === 1 ? 'B' : `${d.batch}B`) : String(d))).join(', ')})`;
}
