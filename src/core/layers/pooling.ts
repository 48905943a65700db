/**
 * Max, average, adaptive, power-average and fractional pooling, and MaxUnpool, over the last 1, 2
 * or 3 dimensions of a (C, spatial...) or (N, C, spatial...) input. No parameters.
 */
import type { LayerArgs } from './layerArgs';
import type { ForwardCall, LayerSpec } from './layerSpec';
import { callArgs, expectRank, fail, inputAt, spatialSizes, windowOutput, type LayerSpecGroup } from './shapes';
import { formatShape, type LayerOutput, type TensorShape } from './tensorShape';

const SPATIAL: Readonly<Record<number, string>> = { 1: 'L', 2: 'H, W', 3: 'D, H, W' };

/** Checks the rank and returns the spatial sizes. */
function spatialInput(inputs: readonly TensorShape[], dims: number, layer: string): { input: TensorShape; sizes: number[] } {
  const input = inputAt(inputs, 0, layer);
  expectRank(input, [dims + 1, dims + 2], layer, `a ${dims + 1}-D (C, ${SPATIAL[dims]}) or ${dims + 2}-D (N, C, ${SPATIAL[dims]})`);
  return { input, sizes: spatialSizes(input, dims, layer) };
}

function withSpatial(input: TensorShape, dims: number, sizes: readonly number[], layer: string): TensorShape {
  sizes.forEach((size) => {
    if (size < 1) fail(`${layer}: the input ${formatShape(input)} is too small; the output would be empty`);
  });
  return [...input.slice(0, input.length - dims), ...sizes];
}

/** kernel_size, stride (None: the kernel) and padding of a pooling window. */
function window(args: LayerArgs, dims: number, at: { kernel: number; stride: number; padding: number }): { kernel: number[]; stride: number[]; padding: number[] } {
  const kernel = args.positives(at.kernel, 'kernel_size', dims);
  const stride = args.has(at.stride, 'stride') ? args.positives(at.stride, 'stride', dims) : kernel;
  const padding = at.padding < 0 ? kernel.map(() => 0) : args.counts(at.padding, 'padding', dims, 0);
  padding.forEach((p, i) => {
    if (p > Math.floor(kernel[i]! / 2)) fail(`${args.type}: padding (${p}) should be at most half of kernel_size (${kernel[i]})`);
  });
  return { kernel, stride, padding };
}

/** Max pooling keeps its argmax indices (int64) for backward; the other poolings keep nothing big. */
function pool(forward: LayerSpec['forward'], extras: Partial<LayerSpec> = {}): LayerSpec {
  return { category: 'pool', params: () => 0, forward, savesInput: false, savesOutput: false, ...extras };
}

// MaxPool{1,2,3}d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False).
function maxPool(dims: number): LayerSpec {
  return pool(
    (inputs, args): LayerOutput => {
      const { input, sizes } = spatialInput(inputs, dims, args.type);
      const { kernel, stride, padding } = window(args, dims, { kernel: 0, stride: 1, padding: 2 });
      const dilation = args.positives(3, 'dilation', dims, 1);
      const ceil = args.bool(5, 'ceil_mode', false);
      const output = withSpatial(input, dims, sizes.map((s, i) => windowOutput(s, kernel[i]!, stride[i]!, padding[i]!, dilation[i]!, ceil)), args.type);
      return args.bool(4, 'return_indices', false) ? [output, output] : output;
    },
    { extraBytesPerElement: 8 },
  );
}

// AvgPool1d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True);
// AvgPool2d/3d add divisor_override=None. count_include_pad changes values, not shapes.
function avgPool(dims: number): LayerSpec {
  return pool((inputs, args) => {
    const { input, sizes } = spatialInput(inputs, dims, args.type);
    const { kernel, stride, padding } = window(args, dims, { kernel: 0, stride: 1, padding: 2 });
    const ceil = args.bool(3, 'ceil_mode', false);
    return withSpatial(input, dims, sizes.map((s, i) => windowOutput(s, kernel[i]!, stride[i]!, padding[i]!, 1, ceil)), args.type);
  });
}

// LPPool{1,2,3}d(norm_type, kernel_size, stride=None, ceil_mode=False): an average pool of x^p, no padding.
function lpPool(dims: number): LayerSpec {
  return pool(
    (inputs, args) => {
      const { input, sizes } = spatialInput(inputs, dims, args.type);
      const { kernel, stride } = window(args, dims, { kernel: 1, stride: 2, padding: -1 });
      const ceil = args.bool(3, 'ceil_mode', false);
      return withSpatial(input, dims, sizes.map((s, i) => windowOutput(s, kernel[i]!, stride[i]!, 0, 1, ceil)), args.type);
    },
    // x.pow(p) keeps its input.
    { savesInput: true },
  );
}

// Adaptive{Max,Avg}Pool{1,2,3}d(output_size[, return_indices=False]): None keeps the input's size.
function adaptivePool(dims: number, max: boolean): LayerSpec {
  return pool(
    (inputs, args): LayerOutput => {
      const { input, sizes } = spatialInput(inputs, dims, args.type);
      const requested = args.intsOrNone(0, 'output_size', dims);
      if (!requested) fail(`${args.type} needs \`output_size\``);
      const output = withSpatial(input, dims, sizes.map((s, i) => requested[i] ?? s), args.type);
      return max && args.bool(1, 'return_indices', false) ? [output, output] : output;
    },
    max ? { extraBytesPerElement: 8 } : {},
  );
}

// FractionalMaxPool{2,3}d(kernel_size, output_size=None, output_ratio=None, return_indices=False).
function fractionalMaxPool(dims: number): LayerSpec {
  return pool(
    (inputs, args): LayerOutput => {
      const { input, sizes } = spatialInput(inputs, dims, args.type);
      const kernel = args.positives(0, 'kernel_size', dims);
      const size = args.intsOrNone(1, 'output_size', dims);
      const ratio = args.floats(2, 'output_ratio', dims);
      if (!size === !ratio) fail(`${args.type} needs exactly one of \`output_size\` and \`output_ratio\``);
      ratio?.forEach((r) => {
        if (!(r > 0 && r < 1)) fail(`${args.type}: output_ratio must be between 0 and 1, got ${r}`);
      });
      const out = sizes.map((s, i) => (size ? (size[i] ?? s) : Math.floor(s * ratio![i]!)));
      out.forEach((o, i) => {
        if (o + kernel[i]! - 1 > sizes[i]!) fail(`${args.type}: output size ${o} with kernel_size ${kernel[i]} is too large for an input of size ${sizes[i]}`);
      });
      const output = withSpatial(input, dims, out, args.type);
      return args.bool(3, 'return_indices', false) ? [output, output] : output;
    },
    { extraBytesPerElement: 8 },
  );
}

// MaxUnpool{1,2,3}d(kernel_size, stride=None, padding=0); forward(input, indices, output_size=None).
function maxUnpool(dims: number): LayerSpec {
  return pool((inputs: readonly TensorShape[], args: LayerArgs, call: ForwardCall) => {
    const { input, sizes } = spatialInput(inputs, dims, args.type);
    const kernel = args.positives(0, 'kernel_size', dims);
    const stride = args.has(1, 'stride') ? args.positives(1, 'stride', dims) : kernel;
    const padding = args.counts(2, 'padding', dims, 0);
    const defaults = sizes.map((s, i) => (s - 1) * stride[i]! - 2 * padding[i]! + kernel[i]!);
    const requested = call.kwargs.output_size;
    if (requested === undefined || requested === null) return withSpatial(input, dims, defaults, args.type);
    const values = Array.isArray(requested) ? requested : [];
    const wanted = callArgs(args.type, { kwargs: { output_size: values.slice(values.length - dims) } }).ints(-1, 'output_size', dims);
    wanted.forEach((w, i) => {
      const low = defaults[i]! - stride[i]!;
      const high = defaults[i]! + stride[i]!;
      if (w <= low || w >= high) fail(`${args.type}: output_size ${w} is outside the possible range ${low + 1} to ${high - 1}`);
    });
    return withSpatial(input, dims, wanted, args.type);
  });
}

export const poolingLayers: LayerSpecGroup = Object.fromEntries([
  ...[1, 2, 3].flatMap((dims): [string, LayerSpec][] => [
    [`MaxPool${dims}d`, maxPool(dims)],
    [`AvgPool${dims}d`, avgPool(dims)],
    [`LPPool${dims}d`, lpPool(dims)],
    [`AdaptiveMaxPool${dims}d`, adaptivePool(dims, true)],
    [`AdaptiveAvgPool${dims}d`, adaptivePool(dims, false)],
    [`MaxUnpool${dims}d`, maxUnpool(dims)],
  ]),
  ['FractionalMaxPool2d', fractionalMaxPool(2)],
  ['FractionalMaxPool3d', fractionalMaxPool(3)],
]);
