/**
 * Shape functions for the functions and methods traced graphs call between layer modules
 * (`torch.cat`, `operator.add`, `x.view(...)`, `F.adaptive_avg_pool2d`...). Pooling functionals go
 * through the matching LayerSpec, so the window arithmetic is the one the analyzer uses.
 * Every target the catalog data uses must be here: test/unit/core/catalog/traced checks it.
 */
import { broadcast, concatenate, flatten, permute, reduce, reshape, ShapeError, transpose, unsqueeze } from '../../analysis/interpreter/tensorOps';
import type { Value } from '../../analysis/layerCall';
import { LayerArgs } from '../../layers/layerArgs';
import { layerSpec } from '../../layers/layerSpecs';
import { isBatchDim, isTensorShape, type Dim, type LayerOutput, type TensorShape } from '../../layers/tensorShape';
import { asDim, describe, dimVal, formatDims, isEllipsis, isSlice, isTensor, isTuple, tensorVal, type SliceVal, type TensorVal, type Val } from './values';

/** A call's arguments, bound the way Python binds them: by keyword, else by position. */
export class OpCall {
  constructor(
    readonly target: string,
    readonly args: readonly Val[],
    readonly kwargs: Readonly<Record<string, Val>>,
  ) {}

  get(position: number, name: string): Val | undefined {
    return name in this.kwargs ? this.kwargs[name] : this.args[position];
  }

  tensor(position: number, name: string): TensorShape {
    const value = this.get(position, name);
    if (!isTensor(value)) throw new ShapeError(`${this.target}: \`${name}\` is ${describe(value)}, not a tensor`);
    return value.shape;
  }

  int(position: number, name: string, fallback?: number): number {
    const value = this.get(position, name) ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new ShapeError(`${this.target}: \`${name}\` is ${describe(value)}, not an int`);
    return value;
  }

  bool(position: number, name: string, fallback: boolean): boolean {
    const value = this.get(position, name);
    return value === undefined || value === null ? fallback : Boolean(value);
  }

  /** Sizes given as varargs (`x.view(B, -1)`) or as one tuple (`x.view((B, -1))`), from `position` on. */
  sizes(position: number, name: string): Val[] {
    const named = this.kwargs[name];
    if (named !== undefined) return isTuple(named) ? [...named] : [named];
    const rest = this.args.slice(position);
    return rest.length === 1 && isTuple(rest[0]) ? [...rest[0]] : [...rest];
  }
}

type Op = (call: OpCall) => Val;

function ints(values: readonly Val[], what: string): number[] {
  return values.map((v) => {
    if (typeof v !== 'number' || !Number.isInteger(v)) throw new ShapeError(`${what}: ${describe(v)} is not an int`);
    return v;
  });
}

function index(shape: TensorShape, dim: number, what: string): number {
  const i = dim < 0 ? dim + shape.length : dim;
  if (i < 0 || i >= shape.length) throw new ShapeError(`${what}: dimension ${dim} is out of range for ${formatDims(shape)}`);
  return i;
}

// -- arithmetic on values ------------------------------------------------------------------------

type Arithmetic = (a: number, b: number) => number;

/** `a op b` for numbers, batch-sized ints (kept where the result is still k x batch) and tensors (broadcast). */
function binary(name: string, op: Arithmetic, batchRule: (a: Dim, b: Dim) => Dim | undefined): Op {
  return (call) => {
    const a = call.args[0];
    const b = call.args[1];
    if (isTensor(a) || isTensor(b)) {
      if (isTensor(a) && isTensor(b)) return tensorVal(broadcast(a.shape, b.shape));
      return isTensor(a) ? a : (b as TensorVal);
    }
    if (typeof a === 'number' && typeof b === 'number') return op(a, b);
    const x = asDim(a);
    const y = asDim(b);
    if (x !== undefined && y !== undefined) {
      const result = batchRule(x, y);
      if (result !== undefined) return dimVal(result);
    }
    throw new ShapeError(`${name} of ${describe(a)} and ${describe(b)}`);
  };
}

const scale = (a: Dim, b: Dim): Dim | undefined => {
  if (isBatchDim(a) && !isBatchDim(b)) return { batch: a.batch * b };
  if (isBatchDim(b) && !isBatchDim(a)) return { batch: b.batch * a };
  return undefined;
};

const divide = (a: Dim, b: Dim): Dim | undefined => (isBatchDim(a) && !isBatchDim(b) && b > 0 && a.batch % b === 0 ? { batch: a.batch / b } : undefined);

function comparison(name: string, test: (a: number, b: number) => boolean): Op {
  return (call) => {
    const a = call.args[0];
    const b = call.args[1];
    if (typeof a === 'number' && typeof b === 'number') return test(a, b);
    if (isTensor(a) || isTensor(b)) throw new ShapeError(`${name} of tensors is not followed`);
    // A batch-sized int equals no constant: the batch size is free.
    const x = asDim(a);
    const y = asDim(b);
    if (x !== undefined && y !== undefined && isBatchDim(x) && isBatchDim(y)) return name === 'operator.eq' ? x.batch === y.batch : name === 'operator.ne' ? x.batch !== y.batch : test(x.batch, y.batch);
    throw new ShapeError(`${name} of ${describe(a)} and ${describe(b)} depends on the batch size`);
  };
}

// -- indexing ------------------------------------------------------------------------------------

function sliceBound(value: Val, size: number, fallback: number): number {
  if (value === null || value === undefined) return fallback;
  if (typeof value !== 'number') throw new ShapeError(`a slice bound of ${describe(value)}`);
  const i = value < 0 ? size + value : value;
  return Math.min(Math.max(i, 0), size);
}

/** Python's slice length over a dimension of `size`. */
function sliceLength(size: Dim, slice: SliceVal): Dim {
  const step = slice.step === null ? 1 : slice.step;
  if (typeof step !== 'number' || step === 0) throw new ShapeError(`a slice step of ${describe(step)}`);
  if (isBatchDim(size)) {
    if (slice.start === null && slice.stop === null && step === 1) return size;
    throw new ShapeError('slicing the batch dimension');
  }
  const start = step > 0 ? sliceBound(slice.start, size, 0) : sliceBound(slice.start, size, size - 1);
  const stop = step > 0 ? sliceBound(slice.stop, size, size) : slice.stop === null ? -1 : sliceBound(slice.stop, size, -1);
  return Math.max(0, Math.ceil((stop - start) / step));
}

function tensorIndex(shape: TensorShape, key: Val): TensorShape {
  const items: readonly Val[] = isTuple(key) ? key : [key];
  const consumed = items.filter((i) => i !== null && !isEllipsis(i)).length;
  if (consumed > shape.length) throw new ShapeError(`too many indices for a tensor ${formatDims(shape)}`);
  const result: Dim[] = [];
  let position = 0;
  for (const item of items) {
    if (isEllipsis(item)) {
      const skip = shape.length - consumed;
      result.push(...shape.slice(position, position + skip));
      position += skip;
    } else if (item === null) {
      result.push(1);
    } else if (typeof item === 'number') {
      const size = shape[position]!;
      if (isBatchDim(size)) throw new ShapeError('indexing into the batch dimension');
      if (item >= size || item < -size) throw new ShapeError(`index ${item} is out of range for a dimension of ${size}`);
      position += 1;
    } else if (isSlice(item)) {
      result.push(sliceLength(shape[position]!, item));
      position += 1;
    } else {
      throw new ShapeError(`indexing with ${describe(item)} is not followed`);
    }
  }
  return [...result, ...shape.slice(position)];
}

const getitem: Op = (call) => {
  const target = call.args[0];
  const key = call.args[1];
  if (isTensor(target)) return tensorVal(tensorIndex(target.shape, key ?? null));
  if (isTuple(target)) {
    if (typeof key === 'number') {
      const item = target[key < 0 ? target.length + key : key];
      if (item === undefined) throw new ShapeError(`index ${key} of a ${target.length}-tuple`);
      return item;
    }
    if (isSlice(key)) {
      const length = target.length;
      const step = typeof key.step === 'number' ? key.step : 1;
      const start = step > 0 ? sliceBound(key.start, length, 0) : sliceBound(key.start, length, length - 1);
      const stop = step > 0 ? sliceBound(key.stop, length, length) : key.stop === null ? -1 : sliceBound(key.stop, length, -1);
      const result: Val[] = [];
      for (let i = start; step > 0 ? i < stop : i > stop; i += step) result.push(target[i]!);
      return result;
    }
  }
  throw new ShapeError(`${describe(target)}[${describe(key)}] is not followed`);
};

// -- tensor functions ----------------------------------------------------------------------------

/** Functions that return a tensor of their first argument's shape. */
const sameShape: Op = (call) => tensorVal(call.tensor(0, 'input'));

function sizeOf(shape: TensorShape, call: OpCall, position: number): Val {
  const d = call.get(position, 'dim');
  if (d === undefined || d === null) return shape.map(dimVal);
  return dimVal(shape[index(shape, Number(d), call.target)]!);
}

function chunk(call: OpCall, shape: TensorShape): Val {
  const chunks = call.int(1, 'chunks');
  const dim = index(shape, call.int(2, 'dim', 0), call.target);
  const size = shape[dim]!;
  if (isBatchDim(size)) throw new ShapeError(`${call.target} along the batch dimension`);
  const each = Math.ceil(size / chunks);
  const result: Val[] = [];
  for (let start = 0; start < size; start += each) result.push(tensorVal(shape.map((d, i) => (i === dim ? Math.min(each, size - start) : d))));
  return result;
}

function expand(shape: TensorShape, sizes: readonly Val[], what: string): TensorShape {
  const requested = sizes.map((v) => (v === -1 ? -1 : asDim(v)));
  if (requested.some((v) => v === undefined) || requested.length < shape.length) throw new ShapeError(`${what}: sizes ${sizes.map(describe).join(', ')} for ${formatDims(shape)}`);
  const offset = requested.length - shape.length;
  return requested.map((v, i) => {
    const existing = i >= offset ? shape[i - offset] : undefined;
    if (v === -1) {
      if (existing === undefined) throw new ShapeError(`${what}: -1 for a new dimension`);
      return existing;
    }
    if (existing !== undefined && existing !== 1 && !(isBatchDim(existing) && isBatchDim(v) && existing.batch === v.batch) && existing !== v) {
      throw new ShapeError(`${what}: cannot expand ${formatDims(shape)} to ${formatDims(requested as Dim[])}`);
    }
    return v as Dim;
  });
}

function reshapeTo(shape: TensorShape, sizes: readonly Val[], what: string): TensorShape {
  const request = sizes.map((v) => (v === -1 ? -1 : asDim(v)));
  if (request.some((v) => v === undefined)) throw new ShapeError(`${what}: sizes ${sizes.map(describe).join(', ')}`);
  return reshape(shape, request as Dim[]);
}

function reduceDims(call: OpCall, shape: TensorShape): Val {
  const value = call.get(1, 'dim');
  const dimsList = value === undefined || value === null ? undefined : ints(isTuple(value) ? value : [value], call.target);
  return tensorVal(reduce(shape, dimsList, call.bool(2, 'keepdim', false)));
}

/** A pooling functional through the LayerSpec of its module (same parameter names). */
function pooling(type: string, names: readonly string[]): Op {
  return (call) => {
    const input = call.tensor(0, 'input');
    const kwargs: Record<string, Value> = {};
    names.forEach((name, i) => {
      const value = call.get(i + 1, name);
      if (value !== undefined) kwargs[name] = toValue(value, call.target);
    });
    const spec = layerSpec(type)!;
    return fromOutput(spec.forward([input], new LayerArgs({ type: `${call.target}`, args: [], kwargs }), { kwargs: {} }));
  };
}

function toValue(value: Val, what: string): Value {
  if (value === null || typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (isTuple(value)) return value.map((v) => toValue(v, what));
  throw new ShapeError(`${what}: an argument of ${describe(value)}`);
}

/** A layer's output as a value: a tensor, a tuple, or None. */
export function fromOutput(output: LayerOutput): Val {
  if (output === null) return null;
  if (isTensorShape(output)) return tensorVal(output);
  return output.map(fromOutput);
}

// swin_transformer._patch_merging_pad: pads H and W to even and stacks the 2x2 neighbours: (..., H/2, W/2, 4C).
const patchMergingPad: Op = (call) => {
  const shape = call.tensor(0, 'x');
  if (shape.length < 3) throw new ShapeError(`${call.target} needs (..., H, W, C), got ${formatDims(shape)}`);
  const [h, w, c] = shape.slice(-3);
  if (isBatchDim(h) || isBatchDim(w) || isBatchDim(c)) throw new ShapeError(`${call.target}: ${formatDims(shape)}`);
  return tensorVal([...shape.slice(0, -3), Math.ceil(h! / 2), Math.ceil(w! / 2), 4 * c!]);
};

// swin_transformer._get_relative_position_bias(table, index, window_size): (1, heads, N, N), N = window area.
const relativePositionBias: Op = (call) => {
  const table = call.tensor(0, 'relative_position_bias_table');
  const window = ints(call.sizes(2, 'window_size'), call.target);
  const n = window.reduce((a, b) => a * b, 1);
  return tensorVal([1, table[table.length - 1]!, n, n]);
};

const FUNCTIONS: Readonly<Record<string, Op>> = {
  'operator.add': binary('operator.add', (a, b) => a + b, () => undefined),
  'operator.iadd': binary('operator.iadd', (a, b) => a + b, () => undefined),
  'operator.sub': binary('operator.sub', (a, b) => a - b, () => undefined),
  'operator.mul': binary('operator.mul', (a, b) => a * b, scale),
  'operator.imul': binary('operator.imul', (a, b) => a * b, scale),
  'operator.truediv': binary('operator.truediv', (a, b) => a / b, () => undefined),
  'operator.floordiv': binary('operator.floordiv', (a, b) => Math.floor(a / b), divide),
  'operator.mod': binary('operator.mod', (a, b) => ((a % b) + b) % b, () => undefined),
  'operator.eq': comparison('operator.eq', (a, b) => a === b),
  'operator.ne': comparison('operator.ne', (a, b) => a !== b),
  'operator.lt': comparison('operator.lt', (a, b) => a < b),
  'operator.le': comparison('operator.le', (a, b) => a <= b),
  'operator.gt': comparison('operator.gt', (a, b) => a > b),
  'operator.ge': comparison('operator.ge', (a, b) => a >= b),
  'operator.getitem': getitem,
  getattr: (call) => {
    const target = call.args[0];
    const name = call.args[1];
    if (isTensor(target) && name === 'shape') return target.shape.map(dimVal);
    if (isTensor(target) && name === 'ndim') return target.shape.length;
    throw new ShapeError(`getattr(${describe(target)}, ${describe(name)}) is not followed`);
  },
  'torch._assert': (call) => {
    if (call.args[0] !== true) throw new AssertionFailed(call.args[0]);
    return null;
  },
  'torch.cat': (call) => {
    const tensors = call.get(0, 'tensors');
    if (!isTuple(tensors) || !tensors.every(isTensor)) throw new ShapeError('torch.cat of something other than tensors');
    return tensorVal(concatenate(tensors.map((t) => t.shape), call.int(1, 'dim', 0)));
  },
  'torch.flatten': (call) => tensorVal(flatten(call.tensor(0, 'input'), call.int(1, 'start_dim', 0), call.int(2, 'end_dim', -1))),
  'torch.permute': (call) => tensorVal(permute(call.tensor(0, 'input'), ints(call.sizes(1, 'dims'), call.target))),
  'torch.transpose': (call) => tensorVal(transpose(call.tensor(0, 'input'), call.int(1, 'dim0'), call.int(2, 'dim1'))),
  'torch.swapaxes': (call) => tensorVal(transpose(call.tensor(0, 'input'), call.int(1, 'axis0'), call.int(2, 'axis1'))),
  'torch.chunk': (call) => chunk(call, call.tensor(0, 'input')),
  'torch.sigmoid': sameShape,
  'torch.relu': sameShape,
  'torch.tanh': sameShape,
  'torch.nn.functional.relu': sameShape,
  'torch.nn.functional.relu6': sameShape,
  'torch.nn.functional.gelu': sameShape,
  'torch.nn.functional.silu': sameShape,
  'torch.nn.functional.hardswish': sameShape,
  'torch.nn.functional.hardsigmoid': sameShape,
  'torch.nn.functional.dropout': sameShape,
  'torch.nn.functional.layer_norm': sameShape,
  'torch.nn.functional.softmax': sameShape,
  'torch.nn.functional.normalize': sameShape,
  'torch.nn.functional.adaptive_avg_pool2d': pooling('AdaptiveAvgPool2d', ['output_size']),
  'torch.nn.functional.max_pool2d': pooling('MaxPool2d', ['kernel_size', 'stride', 'padding', 'dilation', 'ceil_mode', 'return_indices']),
  'torch.nn.functional.avg_pool2d': pooling('AvgPool2d', ['kernel_size', 'stride', 'padding', 'ceil_mode', 'count_include_pad', 'divisor_override']),
  'torchvision.ops.stochastic_depth.stochastic_depth': sameShape,
  'torchvision.models.swin_transformer._patch_merging_pad': patchMergingPad,
  'torchvision.models.swin_transformer._get_relative_position_bias': relativePositionBias,
  // (input, qkv_weight, proj_weight, bias, window_size, ...): windows are padded and cropped back.
  'torchvision.models.swin_transformer.shifted_window_attention': sameShape,
  // The train-mode outputs (logits, aux...): a namedtuple of its arguments.
  'torchvision.models.googlenet.GoogLeNetOutputs': (call) => [...call.args],
  'torchvision.models.inception.InceptionOutputs': (call) => [...call.args],
};

/** Methods, called with the tensor as the first argument (positions below count from the next one). */
const METHODS: Readonly<Record<string, Op>> = {
  size: (call) => sizeOf(call.tensor(0, 'self'), call, 1),
  dim: (call) => call.tensor(0, 'self').length,
  contiguous: sameShape,
  view: (call) => tensorVal(reshapeTo(call.tensor(0, 'self'), call.sizes(1, 'size'), 'view')),
  reshape: (call) => tensorVal(reshapeTo(call.tensor(0, 'self'), call.sizes(1, 'shape'), 'reshape')),
  permute: (call) => tensorVal(permute(call.tensor(0, 'self'), ints(call.sizes(1, 'dims'), 'permute'))),
  transpose: (call) => tensorVal(transpose(call.tensor(0, 'self'), call.int(1, 'dim0'), call.int(2, 'dim1'))),
  flatten: (call) => tensorVal(flatten(call.tensor(0, 'self'), call.int(1, 'start_dim', 0), call.int(2, 'end_dim', -1))),
  unsqueeze: (call) => tensorVal(unsqueeze(call.tensor(0, 'self'), call.int(1, 'dim'))),
  expand: (call) => tensorVal(expand(call.tensor(0, 'self'), call.sizes(1, 'size'), 'expand')),
  mean: (call) => reduceDims(call, call.tensor(0, 'self')),
  chunk: (call) => chunk(call, call.tensor(0, 'self')),
};

/** A failed `torch._assert`: the model refuses the input. */
export class AssertionFailed extends Error {
  constructor(readonly condition: Val | undefined) {
    super('a check in forward fails');
  }
}

/** A target the catalog data uses that this table has no shape function for: a bug, not a user error. */
export class UnknownOp extends Error {}

export function callFunction(target: string, args: readonly Val[], kwargs: Readonly<Record<string, Val>>): Val {
  const op = FUNCTIONS[target];
  if (!op) throw new UnknownOp(`no shape function for ${target}`);
  return op(new OpCall(target, args, kwargs));
}

export function callMethod(target: string, args: readonly Val[], kwargs: Readonly<Record<string, Val>>): Val {
  const op = METHODS[target];
  if (!op) throw new UnknownOp(`no shape function for the method ${target}`);
  return op(new OpCall(`.${target}()`, args, kwargs));
}

export function knownFunctions(): string[] {
  return Object.keys(FUNCTIONS).sort();
}

export function knownMethods(): string[] {
  return Object.keys(METHODS).sort();
}
