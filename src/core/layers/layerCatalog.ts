import { LayerArgs, LayerArgumentError } from './layerArgs';

/** The shape of one sample, without the batch dimension. */
export type Shape = readonly number[];

export type LayerCategory =
  | 'linear'
  | 'conv'
  | 'norm'
  | 'activation'
  | 'dropout'
  | 'pool'
  | 'reshape'
  | 'embedding'
  | 'identity';

/**
 * What the estimators need to know about one `torch.nn` layer type: its parameter count, the
 * shape it produces, and which tensors autograd keeps for the backward pass.
 */
export interface LayerSpec {
  readonly category: LayerCategory;
  params(args: LayerArgs, input: Shape | undefined): number;
  output(input: Shape, args: LayerArgs): Shape;
  /** Backward needs this layer's input (Linear, Conv, norms, GELU...). */
  readonly savesInput: boolean;
  /** Backward needs this layer's output (ReLU, Sigmoid, Tanh, Softmax). */
  readonly savesOutput: boolean;
  /** Extra bytes kept per output element, such as Dropout's boolean mask. */
  readonly extraBytesPerElement?: number;
}

const product = (dims: readonly number[]): number => dims.reduce((a, b) => a * b, 1);

function lastDim(input: Shape, layer: string): number {
  const last = input[input.length - 1];
  if (last === undefined) throw new LayerArgumentError(`${layer} needs an input with at least one dimension`);
  return last;
}

function withLast(input: Shape, value: number): Shape {
  return [...input.slice(0, -1), value];
}

const elementwise = (savesInput: boolean, savesOutput: boolean, params: (args: LayerArgs) => number = () => 0): LayerSpec => ({
  category: 'activation',
  params,
  output: (input) => input,
  savesInput,
  savesOutput,
});

function linear(): LayerSpec {
  return {
    category: 'linear',
    params(args) {
      const inFeatures = args.int(0, 'in_features');
      const outFeatures = args.int(1, 'out_features');
      return inFeatures * outFeatures + (args.bool(2, 'bias', true) ? outFeatures : 0);
    },
    output(input, args) {
      const inFeatures = args.int(0, 'in_features');
      if (lastDim(input, 'Linear') !== inFeatures) {
        throw new LayerArgumentError(`Linear expects ${inFeatures} input features but receives ${lastDim(input, 'Linear')}`);
      }
      return withLast(input, args.int(1, 'out_features'));
    },
    savesInput: true,
    savesOutput: false,
  };
}

/** One spatial output size of a convolution or pooling window (PyTorch's formula). */
function windowOutput(size: number, kernel: number, stride: number, padding: number, dilation: number, ceil = false): number {
  const exact = (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1;
  return ceil ? Math.ceil(exact) : Math.floor(exact);
}

function convolution(dims: number): LayerSpec {
  const name = `Conv${dims}d`;
  return {
    category: 'conv',
    params(args) {
      const inChannels = args.int(0, 'in_channels');
      const outChannels = args.int(1, 'out_channels');
      const kernel = args.ints(2, 'kernel_size', dims);
      const groups = args.int(6, 'groups', 1);
      const bias = args.bool(7, 'bias', true);
      return (inChannels / groups) * outChannels * product(kernel) + (bias ? outChannels : 0);
    },
    output(input, args) {
      if (input.length !== dims + 1) {
        throw new LayerArgumentError(`${name} expects a (channels, ${dims === 1 ? 'length' : 'spatial dims'}) input, got (${input.join(', ')})`);
      }
      const kernel = args.ints(2, 'kernel_size', dims);
      const stride = args.ints(3, 'stride', dims, 1);
      const dilation = args.ints(5, 'dilation', dims, 1);
      const paddingValue = args.value(4, 'padding');
      const spatial = input.slice(1).map((size, i) => {
        if (paddingValue === 'same') return size;
        const padding = paddingValue === 'valid' ? 0 : args.ints(4, 'padding', dims, 0)[i] ?? 0;
        return windowOutput(size, kernel[i] ?? 1, stride[i] ?? 1, padding, dilation[i] ?? 1);
      });
      return [args.int(1, 'out_channels'), ...spatial];
    },
    savesInput: true,
    savesOutput: false,
  };
}

function batchNorm(): LayerSpec {
  return {
    category: 'norm',
    params: (args) => (args.bool(2, 'affine', true) ? 2 * args.int(0, 'num_features') : 0),
    output: (input) => input,
    savesInput: true,
    savesOutput: false,
  };
}

function pooling(dims: number, kind: 'max' | 'avg'): LayerSpec {
  return {
    category: 'pool',
    params: () => 0,
    output(input, args) {
      const kernel = args.ints(0, 'kernel_size', dims);
      const strideValue = args.value(1, 'stride');
      const stride = strideValue === undefined || strideValue === null ? kernel : args.ints(1, 'stride', dims);
      const padding = args.ints(2, 'padding', dims, 0);
      const dilation = kind === 'max' ? args.ints(3, 'dilation', dims, 1) : Array.from({ length: dims }, () => 1);
      const ceil = args.bool(kind === 'max' ? 5 : 3, 'ceil_mode', false);
      const spatialStart = input.length - dims;
      return input.map((size, i) =>
        i < spatialStart ? size : windowOutput(size, kernel[i - spatialStart] ?? 1, stride[i - spatialStart] ?? 1, padding[i - spatialStart] ?? 0, dilation[i - spatialStart] ?? 1, ceil),
      );
    },
    // Max pooling keeps the argmax indices (int64); average pooling keeps nothing.
    savesInput: false,
    savesOutput: false,
    extraBytesPerElement: kind === 'max' ? 8 : 0,
  };
}

function adaptivePooling(dims: number, kind: 'max' | 'avg'): LayerSpec {
  return {
    category: 'pool',
    params: () => 0,
    output(input, args) {
      const requested = args.value(0, 'output_size');
      const sizes = typeof requested === 'number' ? Array.from({ length: dims }, () => requested) : requested;
      if (!Array.isArray(sizes) || sizes.length !== dims) throw new LayerArgumentError(`Adaptive pooling needs \`output_size\` with ${dims} values`);
      const spatialStart = input.length - dims;
      // `None` keeps the input size along that dimension.
      return input.map((size, i) => (i < spatialStart ? size : typeof sizes[i - spatialStart] === 'number' ? (sizes[i - spatialStart] as number) : size));
    },
    savesInput: false,
    savesOutput: false,
    extraBytesPerElement: kind === 'max' ? 8 : 0,
  };
}

const flatten: LayerSpec = {
  category: 'reshape',
  params: () => 0,
  output(input, args) {
    // start_dim and end_dim count the batch dimension; sample dimension i is batch dimension i + 1.
    const start = args.int(0, 'start_dim', 1);
    const end = args.int(1, 'end_dim', -1);
    if (start < 1) throw new LayerArgumentError('Flatten with start_dim=0 also flattens the batch dimension');
    const from = start - 1;
    const to = end < 0 ? input.length + end : end - 1;
    if (from > to) return input;
    return [...input.slice(0, from), product(input.slice(from, to + 1)), ...input.slice(to + 1)];
  },
  savesInput: false,
  savesOutput: false,
};

const identity: LayerSpec = { category: 'identity', params: () => 0, output: (input) => input, savesInput: false, savesOutput: false };

const dropout: LayerSpec = {
  category: 'dropout',
  params: () => 0,
  output: (input) => input,
  savesInput: false,
  savesOutput: false,
  extraBytesPerElement: 1,
};

function layerNorm(): LayerSpec {
  return {
    category: 'norm',
    params(args) {
      const affine = args.bool(2, 'elementwise_affine', true);
      const bias = args.bool(3, 'bias', true);
      const size = args.shape(0, 'normalized_shape').reduce((a, b) => a * b, 1);
      return affine ? size * (bias ? 2 : 1) : 0;
    },
    output: (input) => input,
    savesInput: true,
    savesOutput: false,
  };
}

function embedding(): LayerSpec {
  return {
    category: 'embedding',
    params: (args) => args.int(0, 'num_embeddings') * args.int(1, 'embedding_dim'),
    // An index tensor of shape S becomes S x embedding_dim.
    output: (input, args) => [...input, args.int(1, 'embedding_dim')],
    savesInput: true,
    savesOutput: false,
  };
}

/** Activations that backward computes from their output. */
const OUTPUT_SAVING = ['ReLU', 'ReLU6', 'Sigmoid', 'Tanh', 'ELU', 'Softmax', 'LogSoftmax', 'Softmin', 'Hardtanh'];
/** Activations that backward computes from their input. */
const INPUT_SAVING = [
  'LeakyReLU', 'SELU', 'CELU', 'GELU', 'SiLU', 'Mish', 'Softplus', 'Softsign', 'Hardswish', 'Hardsigmoid',
  'LogSigmoid', 'Tanhshrink', 'Softshrink', 'Hardshrink', 'Threshold', 'RReLU',
];

function buildCatalog(): ReadonlyMap<string, LayerSpec> {
  const catalog = new Map<string, LayerSpec>();
  catalog.set('Linear', linear());
  catalog.set('LazyLinear', linear());
  for (const dims of [1, 2, 3]) {
    catalog.set(`Conv${dims}d`, convolution(dims));
    catalog.set(`BatchNorm${dims}d`, batchNorm());
    catalog.set(`MaxPool${dims}d`, pooling(dims, 'max'));
    catalog.set(`AvgPool${dims}d`, pooling(dims, 'avg'));
    catalog.set(`AdaptiveMaxPool${dims}d`, adaptivePooling(dims, 'max'));
    catalog.set(`AdaptiveAvgPool${dims}d`, adaptivePooling(dims, 'avg'));
  }
  catalog.set('LayerNorm', layerNorm());
  catalog.set('Embedding', embedding());
  catalog.set('Flatten', flatten);
  catalog.set('Identity', identity);
  for (const name of ['Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'AlphaDropout', 'FeatureAlphaDropout']) catalog.set(name, dropout);
  for (const name of OUTPUT_SAVING) catalog.set(name, elementwise(false, true));
  for (const name of INPUT_SAVING) catalog.set(name, elementwise(true, false));
  // PReLU learns one slope per channel (or one in all), the only activation with parameters.
  catalog.set('PReLU', elementwise(true, false, (args) => args.int(0, 'num_parameters', 1)));
  catalog.set('GLU', {
    ...elementwise(true, false),
    output(input, args) {
      const dim = args.int(0, 'dim', -1);
      const index = dim < 0 ? input.length + dim : dim - 1;
      return input.map((size, i) => (i === index ? Math.floor(size / 2) : size));
    },
  });
  return catalog;
}

const CATALOG = buildCatalog();

export function layerSpec(type: string): LayerSpec | undefined {
  return CATALOG.get(type);
}

export function knownLayerTypes(): string[] {
  return [...CATALOG.keys()].sort();
}
