/** Conv1d/2d/3d, ConvTranspose1d/2d/3d and their Lazy variants. */
import type { LayerArgs } from './layerArgs';
import type { ForwardCall, LayerSpec } from './layerSpec';
import { callArgs, expectRank, fail, inputAt, product, sizeOf, spatialSizes, windowOutput, type LayerSpecGroup } from './shapes';
import { formatShape, type TensorShape } from './tensorShape';

const SPATIAL_NAMES: Readonly<Record<number, string>> = { 1: 'L', 2: 'H, W', 3: 'D, H, W' };

/**
 * Where each constructor argument sits. Conv: (in_channels, out_channels, kernel_size, stride=1,
 * padding=0, dilation=1, groups=1, bias=True, padding_mode='zeros'); ConvTranspose: (in_channels,
 * out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
 * dilation=1, padding_mode='zeros'). The Lazy variants drop in_channels, shifting the rest by one.
 */
interface Positions {
  readonly out: number;
  readonly kernel: number;
  readonly stride: number;
  readonly padding: number;
  readonly outputPadding: number;
  readonly groups: number;
  readonly bias: number;
  readonly dilation: number;
}

function positions(transposed: boolean, lazy: boolean): Positions {
  const s = lazy ? -1 : 0;
  return transposed
    ? { out: 1 + s, kernel: 2 + s, stride: 3 + s, padding: 4 + s, outputPadding: 5 + s, groups: 6 + s, bias: 7 + s, dilation: 8 + s }
    : // Conv has no output_padding: -1 is no position, so only the keyword could give it (and is ignored).
      { out: 1 + s, kernel: 2 + s, stride: 3 + s, padding: 4 + s, dilation: 5 + s, groups: 6 + s, bias: 7 + s, outputPadding: -1 };
}

/** (C, spatial...) or (N, C, spatial...). */
function checkInput(input: TensorShape, dims: number, layer: string): void {
  const names = SPATIAL_NAMES[dims] ?? 'spatial';
  expectRank(input, [dims + 1, dims + 2], layer, `a ${dims + 1}-D (C, ${names}) or ${dims + 2}-D (N, C, ${names})`);
}

function channelsOf(input: TensorShape, dims: number, layer: string): number {
  return sizeOf(input[input.length - dims - 1], layer, 'channel dimension', input);
}

interface ConvConfig {
  readonly dims: number;
  readonly transposed: boolean;
  readonly lazy: boolean;
}

function inChannels(args: LayerArgs, config: ConvConfig, input: TensorShape | undefined): number {
  if (!config.lazy) return args.positive(0, 'in_channels');
  if (!input) fail(`${args.type} takes in_channels from its first input, which is not known`);
  checkInput(input, config.dims, args.type);
  return channelsOf(input, config.dims, args.type);
}

function convParams(args: LayerArgs, config: ConvConfig, inputs?: readonly TensorShape[]): number {
  const at = positions(config.transposed, config.lazy);
  const inCh = inChannels(args, config, inputs?.[0]);
  const outCh = args.positive(at.out, 'out_channels');
  const groups = checkGroups(args, at, inCh, outCh);
  const kernel = product(args.positives(at.kernel, 'kernel_size', config.dims));
  // Weight: (out, in/groups, *k) for Conv, (in, out/groups, *k) for ConvTranspose; both in*out*k/groups.
  return (inCh * outCh * kernel) / groups + (args.bool(at.bias, 'bias', true) ? outCh : 0);
}

function checkGroups(args: LayerArgs, at: Positions, inCh: number, outCh: number): number {
  const groups = args.positive(at.groups, 'groups', 1);
  if (inCh % groups !== 0) fail(`${args.type}: in_channels (${inCh}) must be divisible by groups (${groups})`);
  if (outCh % groups !== 0) fail(`${args.type}: out_channels (${outCh}) must be divisible by groups (${groups})`);
  return groups;
}

function convForward(inputs: readonly TensorShape[], args: LayerArgs, call: ForwardCall, config: ConvConfig): TensorShape {
  const { dims, transposed } = config;
  const layer = args.type;
  const at = positions(transposed, config.lazy);
  const input = inputAt(inputs, 0, layer);
  checkInput(input, dims, layer);
  const channels = channelsOf(input, dims, layer);
  const inCh = inChannels(args, config, input);
  if (channels !== inCh) fail(`${layer} expects ${inCh} input channels but receives ${channels} (input ${formatShape(input)})`);
  const outCh = args.positive(at.out, 'out_channels');
  checkGroups(args, at, inCh, outCh);
  const kernel = args.positives(at.kernel, 'kernel_size', dims);
  const stride = args.positives(at.stride, 'stride', dims, 1);
  const dilation = args.positives(at.dilation, 'dilation', dims, 1);
  const sizes = spatialSizes(input, dims, layer);
  const spatial = transposed
    ? transposedSizes(sizes, kernel, stride, dilation, args, at, call)
    : convSizes(sizes, kernel, stride, dilation, args, at);
  spatial.forEach((size) => {
    if (size < 1) fail(`${layer}: the input ${formatShape(input)} is too small for kernel_size (${kernel.join(', ')}); the output would be empty`);
  });
  return [...input.slice(0, input.length - dims - 1), outCh, ...spatial];
}

function convSizes(sizes: number[], kernel: number[], stride: number[], dilation: number[], args: LayerArgs, at: Positions): number[] {
  const padding = args.value(at.padding, 'padding');
  if (padding === 'same') {
    if (stride.some((s) => s !== 1)) fail(`${args.type}: padding='same' is not supported for strided convolutions`);
    return sizes;
  }
  const pads = padding === 'valid' ? sizes.map(() => 0) : args.counts(at.padding, 'padding', sizes.length, 0);
  return sizes.map((size, i) => windowOutput(size, kernel[i]!, stride[i]!, pads[i]!, dilation[i]!));
}

function transposedSizes(
  sizes: number[],
  kernel: number[],
  stride: number[],
  dilation: number[],
  args: LayerArgs,
  at: Positions,
  call: ForwardCall,
): number[] {
  if (typeof args.value(at.padding, 'padding') === 'string') fail(`${args.type} only supports zero padding given as numbers`);
  const padding = args.counts(at.padding, 'padding', sizes.length, 0);
  const outputPadding = args.counts(at.outputPadding, 'output_padding', sizes.length, 0);
  outputPadding.forEach((p, i) => {
    if (p >= stride[i]! && p >= dilation[i]!) fail(`${args.type}: output_padding must be smaller than either stride or dilation`);
  });
  const minimum = sizes.map((size, i) => (size - 1) * stride[i]! - 2 * padding[i]! + dilation[i]! * (kernel[i]! - 1) + 1);
  // forward(input, output_size=...) picks the size within the stride's range.
  const requested = call.kwargs.output_size;
  if (requested === undefined || requested === null) return minimum.map((m, i) => m + outputPadding[i]!);
  const values = Array.isArray(requested) ? requested : [];
  const wanted = callArgs(args.type, { kwargs: { output_size: values.slice(values.length - sizes.length) } }).ints(-1, 'output_size', sizes.length);
  return wanted.map((w, i) => {
    const low = minimum[i]!;
    const high = low + stride[i]! - 1;
    if (w < low || w > high) fail(`${args.type}: output_size ${w} is outside the possible range ${low} to ${high}`);
    return w;
  });
}

function convolution(dims: number, transposed: boolean, lazy: boolean): LayerSpec {
  const config = { dims, transposed, lazy };
  return {
    category: 'conv',
    params: (args, inputs) => convParams(args, config, inputs),
    forward: (inputs, args, call) => convForward(inputs, args, call, config),
    savesInput: true,
    savesOutput: false,
  };
}

export const convolutionLayers: LayerSpecGroup = Object.fromEntries(
  [1, 2, 3].flatMap((dims) => [
    [`Conv${dims}d`, convolution(dims, false, false)],
    [`ConvTranspose${dims}d`, convolution(dims, true, false)],
    [`LazyConv${dims}d`, convolution(dims, false, true)],
    [`LazyConvTranspose${dims}d`, convolution(dims, true, true)],
  ]),
);
