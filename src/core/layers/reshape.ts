/** Flatten, Unflatten, PixelShuffle, PixelUnshuffle, ChannelShuffle, Unfold, Fold: no parameters, views or copies. */
import type { LayerSpec } from './layerSpec';
import type { LayerArgs } from './layerArgs';
import { dimProduct, divideDim, expectRank, fail, formatDim, inputAt, normalizeDim, product, sizeOf, windowOutput, type LayerSpecGroup } from './shapes';
import { formatShape, isBatchDim, type Dim, type TensorShape } from './tensorShape';

function reshape(forward: LayerSpec['forward']): LayerSpec {
  return { category: 'reshape', params: () => 0, forward, savesInput: false, savesOutput: false };
}

// Flatten(start_dim=1, end_dim=-1), counting the batch dimension like torch.flatten.
const flatten = reshape((inputs, args) => {
  const input = inputAt(inputs, 0, args.type);
  if (input.length === 0) return [1];
  const start = normalizeDim(args.int(0, 'start_dim', 1), input.length, args.type);
  const end = normalizeDim(args.int(1, 'end_dim', -1), input.length, args.type);
  if (start > end) fail(`${args.type}: start_dim (${start}) comes after end_dim (${end}) for the input ${formatShape(input)}`);
  return [...input.slice(0, start), dimProduct(input.slice(start, end + 1), args.type), ...input.slice(end + 1)];
});

// Unflatten(dim, unflattened_size): one dimension into several; one size may be -1.
const unflatten = reshape((inputs, args) => {
  const input = inputAt(inputs, 0, args.type);
  if (typeof args.value(0, 'dim') === 'string') fail(`${args.type} over named dimensions is not supported`);
  const dim = normalizeDim(args.int(0, 'dim'), input.length, args.type);
  const sizes = args.shape(1, 'unflattened_size');
  const original = input[dim]!;
  const inferred = sizes.filter((s) => s === -1).length;
  if (inferred > 1 || sizes.some((s) => s < -1)) fail(`${args.type}: unflattened_size (${sizes.join(', ')}) may hold at most one -1 and no other negative size`);
  const known = product(sizes.filter((s) => s !== -1));
  let result: Dim[];
  if (inferred === 1) {
    const rest = divideDim(original, known, args.type, `dimension ${dim}`);
    result = sizes.map((s) => (s === -1 ? rest : s));
  } else {
    if (isBatchDim(original)) fail(`${args.type}: dimension ${dim} is the batch (${formatDim(original)}); unflatten it with a -1 size`);
    if (known !== original) fail(`${args.type}: unflattened_size (${sizes.join(', ')}) does not multiply to dimension ${dim} of the input ${formatShape(input)}`);
    result = sizes;
  }
  return [...input.slice(0, dim), ...result, ...input.slice(dim + 1)];
});

/** The (C, H, W) at the end of an input of at least 3 dimensions. */
function lastThree(input: TensorShape, layer: string): { lead: TensorShape; channels: Dim; height: number; width: number } {
  if (input.length < 3) fail(`${layer} expects an input of at least 3 dimensions (*, C, H, W), got ${formatShape(input)}`);
  const n = input.length;
  return {
    lead: input.slice(0, n - 3),
    channels: input[n - 3]!,
    height: sizeOf(input[n - 2], layer, 'height', input),
    width: sizeOf(input[n - 1], layer, 'width', input),
  };
}

// PixelShuffle(upscale_factor): (*, C*r^2, H, W) -> (*, C, H*r, W*r).
const pixelShuffle = reshape((inputs, args) => {
  const input = inputAt(inputs, 0, args.type);
  const r = args.positive(0, 'upscale_factor');
  const { lead, channels, height, width } = lastThree(input, args.type);
  return [...lead, divideDim(channels, r * r, args.type, 'the channel count'), height * r, width * r];
});

// PixelUnshuffle(downscale_factor): (*, C, H*r, W*r) -> (*, C*r^2, H, W).
const pixelUnshuffle = reshape((inputs, args) => {
  const input = inputAt(inputs, 0, args.type);
  const r = args.positive(0, 'downscale_factor');
  const { lead, channels, height, width } = lastThree(input, args.type);
  const c = sizeOf(channels, args.type, 'channel dimension', input);
  return [...lead, c * r * r, divideDim(height, r, args.type, 'the height'), divideDim(width, r, args.type, 'the width')];
});

// ChannelShuffle(groups): (N, C, *) with C divisible by groups; same shape.
const channelShuffle = reshape((inputs, args) => {
  const input = inputAt(inputs, 0, args.type);
  if (input.length < 3) fail(`${args.type} expects an input of at least 3 dimensions (N, C, *), got ${formatShape(input)}`);
  divideDim(input[1]!, args.positive(0, 'groups'), args.type, 'the channel count');
  return input;
});

/** The sliding blocks of Unfold and Fold over a (H, W) image: blocks per dimension, and values per block. */
function blocks(args: LayerArgs, at: number, sizes: readonly number[]): { counts: number[]; kernel: number } {
  const kernel = args.positives(at, 'kernel_size', 2);
  const dilation = args.positives(at + 1, 'dilation', 2, 1);
  const padding = args.counts(at + 2, 'padding', 2, 0);
  const stride = args.positives(at + 3, 'stride', 2, 1);
  const counts = sizes.map((size, i) => windowOutput(size, kernel[i]!, stride[i]!, padding[i]!, dilation[i]!));
  if (counts.some((c) => c < 1)) fail(`${args.type}: kernel_size (${kernel.join(', ')}) does not fit in (${sizes.join(', ')})`);
  return { counts, kernel: product(kernel) };
}

// Unfold(kernel_size, dilation=1, padding=0, stride=1): (N, C, H, W) -> (N, C * prod(kernel_size), L).
const unfold = reshape((inputs, args) => {
  const input = inputAt(inputs, 0, args.type);
  expectRank(input, [3, 4], args.type, 'a 3-D (C, H, W) or 4-D (N, C, H, W)');
  const n = input.length;
  const sizes = [sizeOf(input[n - 2], args.type, 'height', input), sizeOf(input[n - 1], args.type, 'width', input)];
  const { counts, kernel } = blocks(args, 0, sizes);
  const channels = sizeOf(input[n - 3], args.type, 'channel dimension', input);
  return [...input.slice(0, n - 3), channels * kernel, product(counts)];
});

// Fold(output_size, kernel_size, dilation=1, padding=0, stride=1): (N, C * prod(kernel_size), L) -> (N, C, *output_size).
const fold = reshape((inputs, args) => {
  const input = inputAt(inputs, 0, args.type);
  expectRank(input, [2, 3], args.type, 'a 2-D (C * prod(kernel_size), L) or 3-D (N, C * prod(kernel_size), L)');
  const n = input.length;
  const output = args.positives(0, 'output_size', 2);
  const { counts, kernel } = blocks(args, 1, output);
  const channels = divideDim(input[n - 2]!, kernel, args.type, 'the channel count');
  const length = sizeOf(input[n - 1], args.type, 'block count', input);
  if (length !== product(counts)) fail(`${args.type}: the input ${formatShape(input)} has ${length} blocks but output_size (${output.join(', ')}) needs ${product(counts)}`);
  return [...input.slice(0, n - 2), channels, ...output];
});

export const reshapeLayers: LayerSpecGroup = {
  Flatten: flatten,
  Unflatten: unflatten,
  PixelShuffle: pixelShuffle,
  PixelUnshuffle: pixelUnshuffle,
  ChannelShuffle: channelShuffle,
  Unfold: unfold,
  Fold: fold,
};
