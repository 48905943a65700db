import type { SyntaxNode } from '../../parsing/syntax';
import { isBatchDim, type Dim, type TensorShape } from '../../layers/tensorShape';
import { einopsShape, type EinopsOperation } from '../../layers/einops';
import type { Evaluator, FunctionalRowType } from './evaluator';
import { isList, isUnresolvedValue, kindOf, tuple, unresolved, type PyValue, type TensorValue } from './pyValues';
import {
  ShapeError,
  asDim,
  isTensorLike,
  broadcast,
  concatenate,
  dimValue,
  flatten,
  matmul,
  permute,
  reduce,
  reshape,
  shapeOf,
  sizeArguments,
  sizeValues,
  sizeTuple,
  squeeze,
  stack,
  subscript,
  tensor,
  transpose,
  unsqueeze,
} from './tensorOps';

/** Functions and methods that keep their input's shape (activations, casts, normalisation, masking). */
const SAME_SHAPE = new Set([
  'relu', 'relu_', 'relu6', 'gelu', 'silu', 'mish', 'elu', 'selu', 'celu', 'leaky_relu', 'prelu', 'rrelu', 'hardswish', 'hardsigmoid', 'hardtanh', 'sigmoid', 'tanh',
  'softplus', 'softsign', 'tanhshrink', 'logsigmoid', 'softmax', 'log_softmax', 'softmin', 'glu_', 'dropout', 'dropout1d', 'dropout2d', 'dropout3d', 'alpha_dropout',
  'normalize', 'layer_norm', 'batch_norm', 'group_norm', 'instance_norm', 'local_response_norm', 'rms_norm', 'exp', 'log', 'sqrt', 'rsqrt', 'abs', 'neg', 'pow', 'clamp', 'clip',
  'sin', 'cos', 'tril', 'triu', 'contiguous', 'float', 'half', 'bfloat16', 'double', 'long', 'int', 'bool', 'to', 'cuda', 'cpu', 'clone', 'detach', 'masked_fill', 'masked_fill_',
  'type_as', 'requires_grad_', 'sigmoid_', 'tanh_', 'add', 'sub', 'mul', 'div', 'add_', 'mul_', 'zeros_like', 'ones_like', 'randn_like', 'rand_like', 'empty_like', 'full_like',
  'sign', 'floor', 'ceil', 'round', 'reciprocal', 'square', 'nan_to_num', 'fill_', 'zero_', 'copy_', 'pin_memory', 'square_', 'erf', 'logit', 'dropout_', 'gelu_',
]);
const REDUCTIONS = new Set(['mean', 'sum', 'amax', 'amin', 'std', 'var', 'norm', 'logsumexp', 'prod', 'any', 'all', 'argmax', 'argmin']);
const CREATION = new Set(['randn', 'rand', 'zeros', 'ones', 'empty', 'full']);
const LOSSES = /(_loss|^cross_entropy|^nll_loss|^binary_cross_entropy.*|^kl_div|^l1_loss|^mse_loss)$/;

function fail(interpreter: Evaluator, node: SyntaxNode, message: string): PyValue {
  if (interpreter.forwardMode) interpreter.note(node, message);
  return tensor(null);
}

function int(value: PyValue | undefined, fallback?: number): number | undefined {
  return typeof value === 'number' ? value : fallback;
}

function ints(value: PyValue | undefined): number[] | undefined {
  if (typeof value === 'number') return [value];
  if (isList(value) && value.every((v) => typeof v === 'number')) return value;
  return undefined;
}

function withShapes(interpreter: Evaluator, node: SyntaxNode, compute: () => TensorShape | PyValue): PyValue {
  try {
    const result = compute();
    return Array.isArray(result) && !result.tuple && (result as unknown[]).every((d) => typeof d === 'number' || isBatchDim(d as Dim)) ? tensor(result as TensorShape) : (result as PyValue);
  } catch (error) {
    if (error instanceof ShapeError) return fail(interpreter, node, `\`${node.text.split('\n')[0]}\`: ${error.message}`);
    throw error;
  }
}

function windowSize(size: Dim, kernel: number, stride: number, padding: number, dilation = 1, ceil = false): number {
  if (isBatchDim(size)) throw new ShapeError('pooling over the batch dimension');
  const exact = (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1;
  return ceil ? Math.ceil(exact) : Math.floor(exact);
}

function pool(shape: TensorShape, dims: number, args: PyValue[], kwargs: Map<string, PyValue>): TensorShape {
  const kernel = ints(kwargs.get('kernel_size') ?? args[1]);
  if (!kernel) throw new ShapeError('pooling needs a constant kernel_size');
  const strideArg = kwargs.get('stride') ?? args[2];
  const stride = strideArg === undefined || strideArg === null ? kernel : ints(strideArg);
  const padding = ints(kwargs.get('padding') ?? args[3]) ?? [0];
  if (!stride) throw new ShapeError('pooling needs a constant stride');
  const start = shape.length - dims;
  return shape.map((d, i) => (i < start ? d : windowSize(d, kernel[(i - start) % kernel.length]!, stride[(i - start) % stride.length]!, padding[(i - start) % padding.length]!)));
}

function adaptivePool(shape: TensorShape, dims: number, size: PyValue | undefined): TensorShape {
  const sizes = typeof size === 'number' ? Array.from({ length: dims }, () => size) : isList(size) ? size : undefined;
  if (sizes?.some((v) => typeof v === 'number' && (!Number.isInteger(v) || v < 0))) throw new ShapeError('adaptive pooling needs whole output sizes');
  if (!sizes || sizes.length !== dims) throw new ShapeError('adaptive pooling needs a constant output_size');
  const start = shape.length - dims;
  return shape.map((d, i) => (i < start ? d : typeof sizes[i - start] === 'number' ? (sizes[i - start] as number) : d));
}

function interpolate(shape: TensorShape, kwargs: Map<string, PyValue>, args: PyValue[]): TensorShape {
  const spatial = shape.length - 2;
  const size = kwargs.get('size') ?? args[1];
  const scale = kwargs.get('scale_factor') ?? args[2];
  if (size !== undefined && size !== null) {
    const sizes = ints(size);
    if (!sizes) throw new ShapeError('interpolate needs a constant size');
    return [...shape.slice(0, 2), ...Array.from({ length: spatial }, (_, i) => sizes[i % sizes.length]!)];
  }
  const factors = typeof scale === 'number' ? [scale] : isList(scale) ? (scale as number[]) : undefined;
  if (!factors) throw new ShapeError('interpolate needs size or scale_factor');
  return shape.map((d, i) => (i < 2 ? d : Math.floor((d as number) * factors[(i - 2) % factors.length]!)));
}

function pad(shape: TensorShape, amounts: number[] | undefined): TensorShape {
  if (!amounts || amounts.length % 2) throw new ShapeError('F.pad needs constant pad pairs');
  const result = [...shape];
  for (let i = 0; i < amounts.length / 2; i++) {
    const index = result.length - 1 - i;
    const size = result[index];
    if (size === undefined || isBatchDim(size)) throw new ShapeError('padding the batch dimension');
    result[index] = size + amounts[2 * i]! + amounts[2 * i + 1]!;
  }
  return result;
}

function dims(args: PyValue[], kwargs: Map<string, PyValue>, position = 0): number[] | undefined {
  const value = kwargs.get('dim') ?? args[position];
  if (value === undefined || value === null) return undefined;
  return ints(value);
}

const CONCATENATIONS = new Set(['cat', 'concat', 'concatenate', 'stack']);

/**
 * `torch.cat` (`concat`, `concatenate`) and `torch.stack`. In forward mode a result of known
 * shape is reported to the interpreter's hooks: it is a row of the layer table (rule 2).
 */
function concatenation(interpreter: Evaluator, name: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  const tensors = kwargs.get('tensors') ?? args[0];
  const shapes = (isList(tensors) ? tensors : []).map(shapeOf);
  const result = withShapes(interpreter, node, () => {
    if (!shapes.length || shapes.some((s) => !s)) throw new ShapeError(`torch.${name} of unknown tensors`);
    const dim = int(kwargs.get('dim') ?? kwargs.get('axis') ?? args[1], 0)!;
    return name === 'stack' ? stack(shapes as TensorShape[], dim) : concatenate(shapes as TensorShape[], dim);
  });
  if (shapeOf(result)) interpreter.functionalCall(name === 'stack' ? 'torch.stack' : 'torch.cat', result, node);
  return result;
}

/** `real.size(0)`, `x.shape[0]`, `x.size()[0]`: the first dimension of a tensor the analysis could not follow (a batch of an `ImageFolder` loader). */
const BATCH_QUERY = /(\.size\(\s*0\s*\)|\.shape\[\s*0\s*\]|\.size\(\s*\)\[\s*0\s*\])$/;

/**
 * `torch.randn(real.size(0), NZ, 1, 1)`: a tensor sized first by another one's batch, where that
 * batch could not be followed (the loader's dataset is not a TensorDataset), has the batch as its
 * first dimension; the rest must be known.
 */
function batchSizedArguments(args: readonly PyValue[]): Dim[] | undefined {
  const [first, ...rest] = sizeValues(args);
  if (!isUnresolvedValue(first) || !BATCH_QUERY.test(first.unresolved)) return undefined;
  const dims = rest.map((value) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined));
  return dims.every((d): d is number => d !== undefined) ? [{ batch: 1 }, ...dims] : undefined;
}

/** `torch.*` and `torch.nn.functional.*` calls: tensor creation and shape arithmetic. */
export function callTensorFunction(interpreter: Evaluator, qualified: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  const name = qualified.slice(qualified.lastIndexOf('.') + 1);
  const isTorch = qualified.startsWith('torch.');
  if (!isTorch) return unresolved(node.text, `${qualified}() is not followed`);
  const first = shapeOf(args[0]);
  if (CREATION.has(name)) {
    const sizeArgs = name === 'full' ? args.slice(0, 1) : args;
    const sizes = sizeArguments(sizeArgs) ?? batchSizedArguments(sizeArgs);
    return sizes ? tensor(sizes) : unresolved(node.text, 'tensor of unknown size');
  }
  if (name === 'randint') {
    const sizes = sizeArguments([kwargs.get('size') ?? args[args.length - 1]!]);
    const high = int(kwargs.get('high') ?? (args.length >= 3 ? args[1] : args[0]));
    return sizes ? { kind: 'tensor', shape: sizes, dtype: 'long', ...(high === undefined ? {} : {}) } : unresolved(node.text, 'tensor of unknown size');
  }
  if (name === 'arange') {
    const values = args.filter((a) => typeof a === 'number');
    const [start, stop, step] = values.length === 1 ? [0, values[0]!, 1] : [values[0] ?? 0, values[1] ?? 0, values[2] ?? 1];
    return values.length ? tensor([Math.max(0, Math.ceil((stop - start) / step))], 'long') : unresolved(node.text, 'arange of unknown length');
  }
  if (name === 'tensor' || name === 'as_tensor') return tensor(null);
  if (CONCATENATIONS.has(name)) return concatenation(interpreter, name, args, kwargs, node);
  if (first === undefined && !['where', 'matmul', 'bmm', 'einsum', 'scaled_dot_product_attention'].includes(name)) {
    return unresolved(node.text, `${qualified}() is not followed`);
  }
  if (first === null) return tensor(null);
  const result = tensorFunctionResult(interpreter, name, first as TensorShape, args, kwargs, node);
  reportLayerFunction(interpreter, name, result, node);
  return result;
}

/** A LAYER_FUNCTIONS call's row; a product or softmax only of the batch's activations (a product of weights, `B @ A`, is no activation). */
function reportLayerFunction(interpreter: Evaluator, name: string, result: PyValue, node: SyntaxNode): void {
  const row = LAYER_FUNCTIONS.get(name);
  const shape = shapeOf(result);
  if (!row || !shape) return;
  if (BATCH_ONLY_FUNCTIONS.has(row) && !shape.some(isBatchDim)) return;
  interpreter.functionalCall(row, result, node);
}

/**
 * Functions that do a layer's work (nanoGPT's `LayerNorm` calling `F.layer_norm`, attention through
 * `F.scaled_dot_product_attention` or written out with products and a softmax): each call in forward
 * mode is a functional row (rule 2 of docs/layer-table.md), as their output is new memory that they
 * or the next layer keep for backward.
 */
const LAYER_FUNCTIONS: ReadonlyMap<string, FunctionalRowType> = new Map([
  ['layer_norm', 'torch.layer_norm'],
  ['group_norm', 'torch.group_norm'],
  ['batch_norm', 'torch.batch_norm'],
  ['rms_norm', 'torch.rms_norm'],
  ['scaled_dot_product_attention', 'torch.scaled_dot_product_attention'],
  // Attention written out (minGPT, vit-pytorch): `q @ k.transpose(-2, -1)`, `F.softmax(att, dim=-1)`, `att @ v`.
  ['matmul', 'torch.matmul'],
  ['bmm', 'torch.matmul'],
  ['softmax', 'torch.softmax'],
]);
const BATCH_ONLY_FUNCTIONS: ReadonlySet<FunctionalRowType> = new Set(['torch.matmul', 'torch.softmax']);

function tensorFunctionResult(interpreter: Evaluator, name: string, shape: TensorShape, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  return withShapes(interpreter, node, () => {
    if (SAME_SHAPE.has(name)) return shape;
    if (LOSSES.test(name)) return [];
    switch (name) {
      case 'flatten':
        return flatten(shape, int(kwargs.get('start_dim') ?? args[1], 0), int(kwargs.get('end_dim') ?? args[2], -1));
      case 'reshape':
        return reshape(shape, requestedShape(args.slice(1)));
      case 'transpose':
      case 'swapaxes':
        return transpose(shape, int(args[1], 0)!, int(args[2], 1)!);
      case 'permute':
        return permute(shape, ints(args[1]) ?? []);
      case 'unsqueeze':
        return unsqueeze(shape, int(kwargs.get('dim') ?? args[1], 0)!);
      case 'squeeze':
        return squeeze(shape, int(kwargs.get('dim') ?? args[1]));
      case 'matmul':
      case 'bmm':
      case 'mm': {
        const other = shapeOf(args[1]);
        if (!other) throw new ShapeError('matmul with an unknown tensor');
        return matmul(shape, other);
      }
      case 'where': {
        const [a, b] = [shapeOf(args[1]), shapeOf(args[2])];
        return a && b ? broadcast(shape, broadcast(a, b)) : shape;
      }
      case 'max_pool1d':
      case 'avg_pool1d':
        return pool(shape, 1, args, kwargs);
      case 'max_pool2d':
      case 'avg_pool2d':
        return pool(shape, 2, args, kwargs);
      case 'max_pool3d':
      case 'avg_pool3d':
        return pool(shape, 3, args, kwargs);
      case 'adaptive_avg_pool1d':
      case 'adaptive_max_pool1d':
        return adaptivePool(shape, 1, kwargs.get('output_size') ?? args[1]);
      case 'adaptive_avg_pool2d':
      case 'adaptive_max_pool2d':
        return adaptivePool(shape, 2, kwargs.get('output_size') ?? args[1]);
      case 'adaptive_avg_pool3d':
      case 'adaptive_max_pool3d':
        return adaptivePool(shape, 3, kwargs.get('output_size') ?? args[1]);
      case 'interpolate':
      case 'upsample':
        return interpolate(shape, kwargs, args);
      case 'pad':
        return pad(shape, ints(kwargs.get('pad') ?? args[1]));
      case 'scaled_dot_product_attention': {
        const value = shapeOf(args[2]);
        return value ? [...shape.slice(0, -1), value[value.length - 1]!] : shape;
      }
      case 'one_hot': {
        const classes = int(kwargs.get('num_classes') ?? args[1]);
        if (classes === undefined || classes < 0) throw new ShapeError('one_hot needs num_classes');
        return [...shape, classes];
      }
      case 'linear': {
        const weight = shapeOf(args[1]);
        if (!weight) throw new ShapeError('F.linear with an unknown weight');
        return [...shape.slice(0, -1), weight[0]!];
      }
      case 'embedding': {
        const weight = shapeOf(args[1]);
        if (!weight) throw new ShapeError('F.embedding with an unknown weight');
        return [...shape, weight[1]!];
      }
      // Rotary embeddings as LLaMA writes them: pairs of reals as complex numbers and back, and their tables.
      case 'view_as_complex':
        if (shape[shape.length - 1] !== 2) throw new ShapeError('view_as_complex needs a last dimension of 2');
        return shape.slice(0, -1);
      case 'view_as_real':
        return [...shape, 2];
      case 'polar':
      case 'complex': {
        const other = shapeOf(args[1]);
        return other ? broadcast(shape, other) : shape;
      }
      case 'outer':
      case 'ger': {
        const other = shapeOf(args[1]);
        if (!other || shape.length !== 1 || other.length !== 1) throw new ShapeError('outer of vectors of unknown length');
        return [shape[0]!, other[0]!];
      }
      case 'glu': {
        const dim = int(kwargs.get('dim') ?? args[1], -1)!;
        return shape.map((d, i) => (i === (dim < 0 ? shape.length + dim : dim) ? (d as number) / 2 : d));
      }
      default:
        if (REDUCTIONS.has(name)) return reduce(shape, dims(args, kwargs, 1), kwargs.get('keepdim') === true || args[2] === true);
        if (name === 'max' || name === 'min') {
          const dim = dims(args, kwargs, 1);
          if (!dim) return [];
          const reduced = reduce(shape, dim, kwargs.get('keepdim') === true);
          return tuple([tensor(reduced), tensor(reduced, 'long')]);
        }
        throw new ShapeError(`torch.${name} is not followed`);
    }
  });
}

function requestedShape(args: PyValue[]): Dim[] {
  const values = args.length === 1 && isList(args[0]) ? (args[0] as PyValue[]) : args;
  return values.map((v) => {
    const dim = asDim(v);
    if (dim === undefined) throw new ShapeError('view() with a size that is not known statically');
    return dim;
  });
}

/** Tensor methods: `x.view(...)`, `x.size(0)`, `x.mean(dim=1)`, `x[:, -1]`. */
export function callTensorMethod(interpreter: Evaluator, self: PyValue, method: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  const shape = shapeOf(self);
  if (!shape) {
    if (method === 'size' || method === 'dim') return unresolved(node.text, 'size of a tensor of unknown shape');
    return tensor(null);
  }
  const result = tensorMethodResult(interpreter, shape, method, args, kwargs, node);
  reportLayerFunction(interpreter, method, result, node);
  return result;
}

function tensorMethodResult(interpreter: Evaluator, shape: TensorShape, method: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  return withShapes(interpreter, node, () => {
    if (SAME_SHAPE.has(method)) return shape;
    switch (method) {
      case '__getitem__':
        return subscript(shape, args);
      case 'size': {
        if (args.length === 0 && !kwargs.has('dim')) return sizeTuple(shape);
        const dim = int(kwargs.get('dim') ?? args[0], 0)!;
        const index = dim < 0 ? shape.length + dim : dim;
        const d = shape[index];
        if (d === undefined) throw new ShapeError(`size(${dim}) of ${shape.length}-D tensor`);
        return dimValue(d);
      }
      case 'dim':
      case 'ndimension':
        return shape.length;
      case 'numel':
        return shape.some(isBatchDim) ? unresolved(node.text, 'depends on the batch size') : shape.reduce<number>((a, b) => a * (b as number), 1);
      case 'view':
      case 'reshape':
        return reshape(shape, requestedShape(args));
      case 'view_as':
      case 'reshape_as':
      case 'expand_as': {
        const other = shapeOf(args[0]);
        if (!other) throw new ShapeError('unknown target shape');
        return other;
      }
      case 'flatten':
        return flatten(shape, int(kwargs.get('start_dim') ?? args[0], 0), int(kwargs.get('end_dim') ?? args[1], -1));
      case 'permute':
        return permute(shape, args.length === 1 && isList(args[0]) ? (args[0] as number[]) : (args as number[]));
      case 'transpose':
      case 'swapaxes':
        return transpose(shape, int(args[0], 0)!, int(args[1], 1)!);
      case 't':
        return shape.length < 2 ? shape : transpose(shape, 0, 1);
      case 'unsqueeze':
        return unsqueeze(shape, int(kwargs.get('dim') ?? args[0], 0)!);
      case 'squeeze':
        return squeeze(shape, int(kwargs.get('dim') ?? args[0]));
      case 'expand': {
        const request = args.length === 1 && isList(args[0]) ? (args[0] as PyValue[]) : args;
        const offset = request.length - shape.length;
        return request.map((v, i) => (v === -1 ? shape[i - offset]! : (asDim(v) ?? (() => { throw new ShapeError('expand with an unknown size'); })())));
      }
      case 'repeat': {
        const factors = args.length === 1 && isList(args[0]) ? (args[0] as number[]) : (args as number[]);
        if (factors.length < shape.length || factors.length > 64 || !factors.every((f) => Number.isInteger(f) && f >= 0)) throw new ShapeError('repeat needs a constant factor per dimension');
        const padded = [...Array.from({ length: factors.length - shape.length }, () => 1), ...shape];
        return padded.map((d, i) => (isBatchDim(d) ? (factors[i] === 1 ? d : { batch: d.batch * factors[i]! }) : d * factors[i]!));
      }
      case 'chunk': {
        const chunks = int(args[0]);
        const dim = int(kwargs.get('dim') ?? args[1], 0)!;
        const index = dim < 0 ? shape.length + dim : dim;
        const size = shape[index];
        if (chunks === undefined || chunks < 1 || chunks > 4096 || size === undefined || isBatchDim(size) || size < 1) throw new ShapeError('chunk of unknown size');
        const piece = Math.ceil(size / chunks);
        return tuple(Array.from({ length: Math.ceil(size / piece) }, (_, i) => tensor(shape.map((d, j) => (j === index ? Math.min(piece, size - i * piece) : d)))));
      }
      case 'split': {
        const dim = int(kwargs.get('dim') ?? args[1], 0)!;
        const index = dim < 0 ? shape.length + dim : dim;
        const size = shape[index];
        if (size === undefined || isBatchDim(size) || (typeof args[0] === 'number' && (args[0] < 1 || size / args[0] > 4096))) throw new ShapeError('split of unknown size');
        const sizes = isList(args[0]) ? (args[0] as number[]) : typeof args[0] === 'number' ? Array.from({ length: Math.ceil(size / args[0]) }, (_, i) => Math.min(args[0] as number, size - i * (args[0] as number))) : undefined;
        if (!sizes) throw new ShapeError('split with unknown sizes');
        return tuple(sizes.map((s) => tensor(shape.map((d, j) => (j === index ? s : d)))));
      }
      case 'max':
      case 'min': {
        const dim = dims(args, kwargs);
        if (!dim) return [];
        const reduced = reduce(shape, dim, kwargs.get('keepdim') === true || args[1] === true);
        return tuple([tensor(reduced), tensor(reduced, 'long')]);
      }
      case 'new_zeros':
      case 'new_ones':
      case 'new_empty':
      case 'new_full': {
        const sizes = sizeArguments(method === 'new_full' ? args.slice(0, 1) : args);
        if (!sizes) throw new ShapeError('new tensor of unknown size');
        return sizes;
      }
      case 'matmul':
      case 'bmm': {
        const other = shapeOf(args[0]);
        if (!other) throw new ShapeError('matmul with an unknown tensor');
        return matmul(shape, other);
      }
      case 'item':
        return unresolved(node.text, 'a value computed at run time');
      case 'softmax':
      case 'log_softmax':
        return shape;
      default:
        if (REDUCTIONS.has(method)) return reduce(shape, dims(args, kwargs), kwargs.get('keepdim') === true || args[1] === true);
        throw new ShapeError(`.${method}() is not followed`);
    }
  });
}

const MODEL_OUTPUT_MAIN = new Set(['logits', 'pooler_output', 'image_embeds', 'text_embeds']);

export function tensorAttribute(self: PyValue, name: string, node: SyntaxNode): PyValue {
  const shape = shapeOf(self);
  if (name === 'shape') return shape ? sizeTuple(shape) : unresolved(node.text, 'shape unknown');
  if (name === 'T' || name === 'mT') return shape ? tensor(shape.length < 2 ? shape : transpose(shape, -2, -1)) : tensor(null);
  if (name === 'data' || name === 'real') return kindOf(self) === 'parameter' ? tensor(shape ?? null) : self;
  if (name === 'device' || name === 'dtype' || name === 'requires_grad' || name === 'is_cuda') return unresolved(node.text, name);
  // A transformers model returns a ModelOutput, and a catalog call its last row's output: its logits, or
  // the pooled output of a base model (pooler_output, CLIP's image_embeds and text_embeds). A tensor has no such attribute.
  const output = kindOf(self) === 'tensor' ? (self as TensorValue) : undefined;
  if (name === 'pooler_output' && output?.pooledOutput) return tensor([...output.pooledOutput]);
  if (MODEL_OUTPUT_MAIN.has(name)) return self;
  // A base model's sequence or feature map before pooling (`outputs.last_hidden_state[:, 0]`).
  if (name === 'last_hidden_state' && output?.lastHiddenState) return tensor([...output.lastHiddenState]);
  return { kind: 'external', name: `tensor.${name}`, self };
}

/** `a + b`, `x * 0.5`, `q @ k.transpose(-2, -1)`. */
export function tensorBinary(interpreter: Evaluator, operator: string, a: PyValue, b: PyValue, node: SyntaxNode): PyValue {
  const sa = shapeOf(a);
  const sb = shapeOf(b);
  if (sa === null || sb === null) return tensor(null);
  if (isUnresolvedValue(a) || isUnresolvedValue(b)) return fail(interpreter, node, `\`${node.text.split('\n')[0]}\`: an operand is unknown`);
  const result = withShapes(interpreter, node, () => {
    if (operator === '@') {
      if (!sa || !sb) throw new ShapeError('matmul with a number');
      return matmul(sa, sb);
    }
    if (sa && sb) return broadcast(sa, sb);
    return (sa ?? sb) as TensorShape;
  });
  if (operator === '@') reportLayerFunction(interpreter, 'matmul', result, node);
  return result;
}

/** `einops.rearrange(t, pattern, **sizes)`, `einops.repeat(...)`, `einops.reduce(t, pattern, reduction, **sizes)`. */
export const EINOPS_FUNCTION = /^einops\.(rearrange|repeat|reduce)$/;

export function callEinops(interpreter: Evaluator, qualified: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  const operation = EINOPS_FUNCTION.exec(qualified)![1] as EinopsOperation;
  const pattern = args[1] ?? kwargs.get('pattern');
  // rearrange also takes a list of tensors, stacked along a new first axis.
  const input = isList(args[0]) && args[0].length > 0 && args[0].every(isTensorLike) ? shapeOf(args[0][0]) && [args[0].length, ...shapeOf(args[0][0])!] : shapeOf(args[0]);
  if (typeof pattern !== 'string' || input === undefined) return unresolved(node.text, `${qualified}() is not followed`);
  if (input === null) return tensor(null);
  // Sizes given by keyword: numbers, or the batch's (`repeat(cls, '1 1 d -> b 1 d', b=b)` with b from x.shape).
  const sizes = Object.fromEntries([...kwargs].map(([name, value]) => [name, asDim(value)] as const).filter(([, dim]) => dim !== undefined));
  return withShapes(interpreter, node, () => {
    try {
      return einopsShape(operation, pattern, input, sizes);
    } catch (error) {
      throw new ShapeError(error instanceof Error ? error.message : String(error));
    }
  });
}
