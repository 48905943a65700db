import { isBatchDim, perSampleElements, type Dim, type LayerOutput, type TensorShape } from '../../layers/tensorShape';
import { asTensor, isList, kindOf, tuple, type BatchValue, type ParameterValue, type PyValue, type SliceValue, type TensorValue } from './pyValues';

/** Thrown when an operation's shape cannot be worked out; the caller turns it into an unknown shape and a note. */
export class ShapeError extends Error {}

export const tensor = (shape: TensorShape | null, dtype?: TensorValue['dtype']): TensorValue => ({ kind: 'tensor', shape, dtype });

/** A tensor's shape from a tensor or a parameter value; undefined for anything else. */
export function shapeOf(value: PyValue | undefined): TensorShape | null | undefined {
  const t = asTensor(value);
  if (t) return t.shape;
  if (kindOf(value) === 'parameter') return (value as ParameterValue).shape;
  return undefined;
}

export function isTensorLike(value: PyValue | undefined): boolean {
  return shapeOf(value) !== undefined;
}

/** An integer dimension from a value: a number, or a batch-size-dependent one. */
export function asDim(value: PyValue | undefined): Dim | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (kindOf(value) === 'batch') return (value as BatchValue).dim;
  return undefined;
}

export function dimValue(dim: Dim): PyValue {
  return isBatchDim(dim) ? { kind: 'batch', dim } : dim;
}

const dimEquals = (a: Dim, b: Dim) => (isBatchDim(a) ? isBatchDim(b) && a.batch === b.batch : a === b);

/** NumPy broadcasting, with the batch dimension treated as an unknown but common size. */
export function broadcast(a: TensorShape, b: TensorShape): TensorShape {
  const length = Math.max(a.length, b.length);
  const result: Dim[] = [];
  for (let i = 0; i < length; i++) {
    const x = a[a.length - length + i] ?? 1;
    const y = b[b.length - length + i] ?? 1;
    if (dimEquals(x, y) || y === 1) result.push(x);
    else if (x === 1) result.push(y);
    else throw new ShapeError(`cannot broadcast ${show(a)} with ${show(b)}`);
  }
  return result;
}

export function show(shape: TensorShape): string {
  return `(${shape.map((d) => (isBatchDim(d) ? (d.batch === 1 ? 'B' : `${d.batch}B`) : String(d))).join(', ')})`;
}

function axis(shape: TensorShape, dim: number): number {
  const index = dim < 0 ? shape.length + dim : dim;
  if (index < 0 || index >= shape.length) throw new ShapeError(`dimension ${dim} is out of range for ${show(shape)}`);
  return index;
}

/** `x.view(...)` / `x.reshape(...)`: one -1 at most; a batch dimension in the request or absorbed by -1. */
export function reshape(shape: TensorShape, request: readonly Dim[]): TensorShape {
  const total = perSampleElements(shape);
  const batchInInput = shape.some(isBatchDim);
  let known = 1;
  let batchInRequest = false;
  let unknown = -1;
  request.forEach((d, i) => {
    if (d === -1) {
      if (unknown !== -1) throw new ShapeError('view() with two -1 dimensions');
      unknown = i;
    } else if (isBatchDim(d)) {
      batchInRequest = true;
      known *= d.batch;
    } else known *= d;
  });
  if (batchInRequest && !batchInInput) throw new ShapeError('view() asks for the batch dimension of a tensor without one');
  if (unknown === -1) {
    if (known !== total || batchInRequest !== batchInInput) throw new ShapeError(`cannot view ${show(shape)} as ${request.length} dimensions`);
    return request;
  }
  const rest = total / known;
  if (!Number.isInteger(rest)) throw new ShapeError(`cannot view ${show(shape)}: ${total} elements per sample do not split by ${known}`);
  const fill: Dim = batchInInput && !batchInRequest ? { batch: rest } : rest;
  return request.map((d, i) => (i === unknown ? fill : d));
}

export function flatten(shape: TensorShape, start = 0, end = -1): TensorShape {
  if (shape.length === 0) return [1];
  const from = axis(shape, start);
  const to = axis(shape, end);
  if (from > to) return shape;
  const merged = shape.slice(from, to + 1).reduce<Dim>((acc, d) => multiply(acc, d), 1);
  return [...shape.slice(0, from), merged, ...shape.slice(to + 1)];
}

export function multiply(a: Dim, b: Dim): Dim {
  if (isBatchDim(a) && isBatchDim(b)) throw new ShapeError('batch x batch');
  if (isBatchDim(a)) return { batch: a.batch * (b as number) };
  if (isBatchDim(b)) return { batch: b.batch * a };
  return a * b;
}

export function permute(shape: TensorShape, order: readonly number[]): TensorShape {
  if (order.length !== shape.length) throw new ShapeError(`permute of ${show(shape)} needs ${shape.length} dimensions`);
  return order.map((d) => shape[axis(shape, d)]!);
}

export function transpose(shape: TensorShape, a: number, b: number): TensorShape {
  const result = [...shape];
  const i = axis(shape, a);
  const j = axis(shape, b);
  [result[i], result[j]] = [result[j]!, result[i]!];
  return result;
}

export function unsqueeze(shape: TensorShape, dim: number): TensorShape {
  const index = dim < 0 ? shape.length + 1 + dim : dim;
  return [...shape.slice(0, index), 1, ...shape.slice(index)];
}

export function squeeze(shape: TensorShape, dim?: number): TensorShape {
  if (dim === undefined) return shape.filter((d) => d !== 1);
  const index = axis(shape, dim);
  return shape[index] === 1 ? [...shape.slice(0, index), ...shape.slice(index + 1)] : shape;
}

export function reduce(shape: TensorShape, dims: readonly number[] | undefined, keepdim: boolean): TensorShape {
  if (dims === undefined) return keepdim ? shape.map(() => 1) : [];
  const indices = new Set(dims.map((d) => axis(shape, d)));
  return keepdim ? shape.map((d, i) => (indices.has(i) ? 1 : d)) : shape.filter((_, i) => !indices.has(i));
}

export function concatenate(shapes: readonly TensorShape[], dim: number): TensorShape {
  const [first, ...rest] = shapes;
  if (!first) throw new ShapeError('torch.cat of nothing');
  const index = axis(first, dim);
  let size: Dim = first[index]!;
  for (const shape of rest) {
    if (shape.length !== first.length) throw new ShapeError(`torch.cat of ${show(first)} and ${show(shape)}`);
    const d = shape[index]!;
    // Batches joined along the batch dimension make a batch of their summed factors (`torch.cat([x, x])` is 2B).
    if (isBatchDim(size) && isBatchDim(d)) size = { batch: size.batch + d.batch };
    else if (isBatchDim(size) || isBatchDim(d)) throw new ShapeError('torch.cat of a batch and a tensor without one along the batch dimension');
    else size += d;
  }
  return first.map((d, i) => (i === index ? size : d));
}

export function stack(shapes: readonly TensorShape[], dim: number): TensorShape {
  const first = shapes[0];
  if (!first) throw new ShapeError('torch.stack of nothing');
  return [...unsqueeze(first, dim)].map((d, i) => (i === (dim < 0 ? first.length + 1 + dim : dim) ? shapes.length : d));
}

/** `a @ b` with PyTorch's matmul rules (batched, broadcast over leading dimensions). */
export function matmul(a: TensorShape, b: TensorShape): TensorShape {
  if (a.length === 0 || b.length === 0) throw new ShapeError('matmul of a scalar');
  if (b.length === 1) {
    if (!dimEquals(a[a.length - 1]!, b[0]!)) throw new ShapeError(`matmul ${show(a)} @ ${show(b)}`);
    return a.slice(0, -1);
  }
  if (a.length === 1) return [...b.slice(0, -2), b[b.length - 1]!];
  if (!dimEquals(a[a.length - 1]!, b[b.length - 2]!)) throw new ShapeError(`matmul ${show(a)} @ ${show(b)}: inner dimensions differ`);
  const batch = broadcast(a.slice(0, -2), b.slice(0, -2));
  return [...batch, a[a.length - 2]!, b[b.length - 1]!];
}

function sliceLength(size: Dim, slice: SliceValue): Dim {
  const full = slice.start === null && slice.stop === null && (slice.step === null || slice.step === 1);
  if (full) return size;
  if (isBatchDim(size)) {
    const stop = asDim(slice.stop);
    if (slice.start === null && stop !== undefined && isBatchDim(stop) && stop.batch === size.batch) return size;
    throw new ShapeError('slicing the batch dimension');
  }
  const step = typeof slice.step === 'number' ? slice.step : 1;
  const clamp = (v: PyValue, fallback: number) => {
    if (v === null) return fallback;
    if (typeof v !== 'number') throw new ShapeError('slice bound is not a constant');
    const i = v < 0 ? size + v : v;
    return Math.min(Math.max(i, 0), size);
  };
  const start = clamp(slice.start, step > 0 ? 0 : size - 1);
  const stop = clamp(slice.stop, step > 0 ? size : -1);
  return Math.max(0, Math.ceil((stop - start) / step));
}

/** `x[:, -1, :]`, `x[..., None]`, `pos[:, :T]`: integers drop a dimension, slices shorten it, None adds one. */
export function subscript(shape: TensorShape, indices: readonly PyValue[]): TensorShape {
  const result: Dim[] = [];
  const ellipsis = indices.findIndex((i) => kindOf(i) === 'external' && (i as { name: string }).name === '...');
  const consumed = indices.filter((i) => i !== null && !(kindOf(i) === 'external')).length;
  let position = 0;
  indices.forEach((index, n) => {
    if (n === ellipsis) {
      const skip = shape.length - consumed;
      result.push(...shape.slice(position, position + skip));
      position += skip;
    } else if (index === null) result.push(1);
    else if (typeof index === 'number' || kindOf(index) === 'batch') position += 1;
    else if (isList(index) && index.every((i) => typeof i === 'number')) {
      // `x[:, [-1], :]` keeps the dimension with the listed positions.
      result.push(index.length);
      position += 1;
    }
    else if (kindOf(index) === 'slice') {
      const size = shape[position];
      if (size === undefined) throw new ShapeError(`too many indices for ${show(shape)}`);
      result.push(sliceLength(size, index as SliceValue));
      position += 1;
    } else throw new ShapeError('indexing with a tensor or an unknown value');
  });
  return [...result, ...shape.slice(position)];
}

/** The sizes of `torch.randn(8, 3, 32, 32)` or `torch.zeros((B, T))`, as values. */
export function sizeValues(args: readonly PyValue[]): readonly PyValue[] {
  return args.length === 1 && isList(args[0]) ? args[0] : args;
}

/** `torch.randn(8, 3, 32, 32)` or `torch.zeros((B, T))`: the sizes as dimensions. */
export function sizeArguments(args: readonly PyValue[]): Dim[] | undefined {
  const dims = sizeValues(args).map(asDim);
  return dims.every((d): d is Dim => d !== undefined) ? dims : undefined;
}

/** `x.size()` / `x.shape` as Python sees them. */
export function sizeTuple(shape: TensorShape): PyValue {
  return tuple(shape.map(dimValue));
}

/** `tensor.size(0)` of a full batch: the batch size. */
export function isBatchSize(value: PyValue): boolean {
  return kindOf(value) === 'batch' && (value as BatchValue).dim.batch === 1;
}

/** A layer rule's output (a shape, or nested tuples of them) as the interpreter's value. */
export function layerOutputValue(output: LayerOutput): PyValue {
  if (output === null) return null;
  if (output.length === 0 || typeof output[0] === 'number' || (typeof output[0] === 'object' && output[0] !== null && !Array.isArray(output[0]) && 'batch' in output[0])) {
    return tensor(output as TensorShape);
  }
  return tuple((output as readonly LayerOutput[]).map(layerOutputValue));
}

/** The tensors in a value: itself, or those of a tuple or list, depth first. */
export function tensorsIn(value: PyValue): PyValue[] {
  if (kindOf(value) === 'tensor') return [value];
  if (Array.isArray(value)) return value.flatMap(tensorsIn);
  return [];
}
