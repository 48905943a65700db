/**
 * Shape arithmetic shared by the layer families: dimensions that may be the batch dimension,
 * ranks, and the window formulas of convolution and pooling. Errors are LayerArgumentErrors with
 * a message a user can act on.
 */
import type { Value } from '../analysis/layerCall';
import { LayerArgs, LayerArgumentError } from './layerArgs';
import type { ForwardCall, LayerSpec } from './layerSpec';
import { formatShape, isBatchDim, type Dim, type TensorShape } from './tensorShape';

/** The specs of one kind of layer (linear, convolution...), by torch.nn class name. */
export type LayerSpecGroup = Readonly<Record<string, LayerSpec>>;

export function fail(message: string): never {
  throw new LayerArgumentError(message);
}

export const product = (dims: readonly number[]): number => dims.reduce((a, b) => a * b, 1);

export function formatDim(dim: Dim): string {
  return isBatchDim(dim) ? (dim.batch === 1 ? 'B' : `${dim.batch}B`) : String(dim);
}

/** The input at `index`, or an error saying how many inputs the layer takes. */
export function inputAt(inputs: readonly TensorShape[], index: number, layer: string, count = index + 1): TensorShape {
  const input = inputs[index];
  if (input === undefined) fail(`${layer} expects ${count} input${count === 1 ? '' : 's'} but receives ${inputs.length}`);
  return input;
}

/** A dimension that must have a fixed size (channels, features, spatial sizes). */
export function sizeOf(dim: Dim | undefined, layer: string, what: string, input: TensorShape): number {
  if (dim === undefined) fail(`${layer}: the input ${formatShape(input)} has no ${what}`);
  if (isBatchDim(dim)) fail(`${layer}: the ${what} of the input ${formatShape(input)} is the batch dimension, whose size is not fixed`);
  return dim;
}

export function sameDim(a: Dim | undefined, b: Dim | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  if (isBatchDim(a) || isBatchDim(b)) return isBatchDim(a) && isBatchDim(b) && a.batch === b.batch;
  return a === b;
}

/** The product of dimensions, where at most one may depend on the batch size. */
export function dimProduct(dims: readonly Dim[], layer: string): Dim {
  let factor = 1;
  let batched = false;
  for (const dim of dims) {
    if (isBatchDim(dim)) {
      if (batched) fail(`${layer} would multiply two batch-sized dimensions together`);
      batched = true;
      factor *= dim.batch;
    } else {
      factor *= dim;
    }
  }
  return batched ? { batch: factor } : factor;
}

/** `dim` divided by a whole number, keeping the batch mark; an error where it does not divide. */
export function divideDim(dim: Dim, divisor: number, layer: string, what: string): Dim {
  const size = isBatchDim(dim) ? dim.batch : dim;
  if (divisor <= 0 || size % divisor !== 0) fail(`${layer}: ${what} (${formatDim(dim)}) is not divisible by ${divisor}`);
  return isBatchDim(dim) ? { batch: size / divisor } : size / divisor;
}

/** A Python dimension index (negative counts from the end), checked against the rank. */
export function normalizeDim(dim: number, rank: number, layer: string): number {
  const low = -Math.max(rank, 1);
  const high = Math.max(rank, 1) - 1;
  if (dim < low || dim > high) fail(`${layer}: dimension ${dim} is out of range for a ${rank}-D input (expected ${low} to ${high})`);
  return dim < 0 ? dim + Math.max(rank, 1) : dim;
}

/** Checks the input's rank against those the layer accepts. */
export function expectRank(input: TensorShape, ranks: readonly number[], layer: string, description: string): void {
  if (!ranks.includes(input.length)) fail(`${layer} expects ${description} input, got ${formatShape(input)}`);
}

/** `a-D or b-D` for error messages. */
export function ranksText(ranks: readonly number[]): string {
  return ranks.map((r) => `${r}-D`).join(' or ');
}

export function replaceDim(shape: TensorShape, index: number, dim: Dim): TensorShape {
  return shape.map((d, i) => (i === index ? dim : d));
}

export function withLast(shape: TensorShape, dim: Dim): TensorShape {
  return [...shape.slice(0, -1), dim];
}

/**
 * One spatial output size of a convolution (PyTorch's formula); with `ceil`, pooling's ceil_mode,
 * where the last window must start inside the input or its left padding.
 */
export function windowOutput(size: number, kernel: number, stride: number, padding: number, dilation: number, ceil = false): number {
  const span = size + 2 * padding - dilation * (kernel - 1) - 1;
  if (!ceil) return Math.floor(span / stride) + 1;
  let out = Math.floor((span + stride - 1) / stride) + 1;
  if ((out - 1) * stride >= size + padding) out -= 1;
  return out;
}

/** The spatial sizes (the last `dims` dimensions) of an input, all fixed. */
export function spatialSizes(input: TensorShape, dims: number, layer: string): number[] {
  return input.slice(input.length - dims).map((d) => sizeOf(d, layer, 'spatial size', input));
}

/** Keyword arguments of a forward call, read with LayerArgs' conversions (no positions). */
export function callArgs(layer: string, call: ForwardCall): LayerArgs {
  return new LayerArgs({ type: layer, args: [], kwargs: call.kwargs });
}

/**
 * A boolean keyword of the forward call (`need_weights=False`); the default where absent, None or
 * unresolved (an unresolved flag must not cost the layer its shape).
 */
export function callFlag(call: ForwardCall, name: string, fallback: boolean): boolean {
  const value: Value | undefined = call.kwargs[name];
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  return fallback;
}

/** A shape-preserving spec (activations, dropout, identity-like layers). */
export function passThrough(spec: Omit<LayerSpec, 'forward' | 'params'> & Partial<Pick<LayerSpec, 'params'>>): LayerSpec {
  return {
    params: () => 0,
    forward: (inputs, args) => inputAt(inputs, 0, args.type),
    ...spec,
  };
}
