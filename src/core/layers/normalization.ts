/**
 * BatchNorm, InstanceNorm (and their Lazy variants), SyncBatchNorm, LayerNorm, RMSNorm,
 * GroupNorm, LocalResponseNorm. Running statistics are buffers, not parameters; only the affine
 * weight and bias count. All of them return a tensor of the input's shape and keep their input
 * (plus per-channel statistics, negligible) for backward.
 */
import type { LayerArgs } from './layerArgs';
import type { LayerSpec } from './layerSpec';
import { expectRank, fail, formatDim, inputAt, product, ranksText, sameDim, sizeOf, type LayerSpecGroup } from './shapes';
import { formatShape, type TensorShape } from './tensorShape';

const SPATIAL: Readonly<Record<number, string>> = { 1: 'L', 2: 'H, W', 3: 'D, H, W' };

function norm(params: LayerSpec['params'], check: (input: TensorShape, args: LayerArgs) => void): LayerSpec {
  return {
    category: 'norm',
    params,
    forward(inputs, args) {
      const input = inputAt(inputs, 0, args.type);
      check(input, args);
      return input;
    },
    savesInput: true,
    savesOutput: false,
  };
}

function checkChannels(input: TensorShape, index: number, expected: number, layer: string): void {
  const channels = sizeOf(input[index], layer, 'channel dimension', input);
  if (channels !== expected) fail(`${layer} expects ${expected} channels but receives ${channels} (input ${formatShape(input)})`);
}

/** The channel count of a Lazy norm's first input. */
function lazyChannels(args: LayerArgs, inputs: readonly TensorShape[] | undefined, index: (input: TensorShape) => number): number {
  const input = inputs?.[0];
  if (!input) fail(`${args.type} takes num_features from its first input, which is not known`);
  return sizeOf(input[index(input)], args.type, 'channel dimension', input);
}

/** BatchNorm1d: (N, C) or (N, C, L); BatchNorm2d: (N, C, H, W); BatchNorm3d: (N, C, D, H, W). */
function batchNormRanks(dims: number): { ranks: number[]; text: string } {
  return dims === 1
    ? { ranks: [2, 3], text: 'a 2-D (N, C) or 3-D (N, C, L)' }
    : { ranks: [dims + 2], text: `a ${dims + 2}-D (N, C, ${SPATIAL[dims]})` };
}

// BatchNorm{1,2,3}d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True).
function batchNorm(dims: number): LayerSpec {
  const { ranks, text } = batchNormRanks(dims);
  return norm(
    (args) => (args.bool(3, 'affine', true) ? 2 * args.count(0, 'num_features') : 0),
    (input, args) => {
      expectRank(input, ranks, args.type, text);
      if (args.bool(3, 'affine', true) || args.bool(4, 'track_running_stats', true)) checkChannels(input, 1, args.count(0, 'num_features'), args.type);
    },
  );
}

// LazyBatchNorm{1,2,3}d(eps=1e-5, momentum=0.1, affine=True, track_running_stats=True).
function lazyBatchNorm(dims: number): LayerSpec {
  const { ranks, text } = batchNormRanks(dims);
  return norm(
    (args, inputs) => (args.bool(2, 'affine', true) ? 2 * lazyChannels(args, inputs, () => 1) : 0),
    (input, args) => expectRank(input, ranks, args.type, text),
  );
}

// SyncBatchNorm(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, process_group=None).
const syncBatchNorm = norm(
  (args) => (args.bool(3, 'affine', true) ? 2 * args.count(0, 'num_features') : 0),
  (input, args) => {
    if (input.length < 2) fail(`${args.type} expects an input with at least 2 dimensions (N, C, ...), got ${formatShape(input)}`);
    checkChannels(input, 1, args.count(0, 'num_features'), args.type);
  },
);

/** InstanceNorm: (C, spatial...) or (N, C, spatial...). */
function instanceRanks(dims: number): { ranks: number[]; text: string } {
  return { ranks: [dims + 1, dims + 2], text: `a ${dims + 1}-D (C, ${SPATIAL[dims]}) or ${dims + 2}-D (N, C, ${SPATIAL[dims]})` };
}

// InstanceNorm{1,2,3}d(num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False).
function instanceNorm(dims: number): LayerSpec {
  const { ranks, text } = instanceRanks(dims);
  return norm(
    (args) => (args.bool(3, 'affine', false) ? 2 * args.count(0, 'num_features') : 0),
    (input, args) => {
      expectRank(input, ranks, args.type, text);
      // Without affine weights or running statistics PyTorch only warns about a channel mismatch.
      if (args.bool(3, 'affine', false) || args.bool(4, 'track_running_stats', false)) {
        checkChannels(input, input.length - dims - 1, args.count(0, 'num_features'), args.type);
      }
    },
  );
}

// LazyInstanceNorm{1,2,3}d(eps=1e-5, momentum=0.1, affine=True, track_running_stats=True): note the defaults.
function lazyInstanceNorm(dims: number): LayerSpec {
  const { ranks, text } = instanceRanks(dims);
  return norm(
    (args, inputs) => (args.bool(2, 'affine', true) ? 2 * lazyChannels(args, inputs, (input) => input.length - dims - 1) : 0),
    (input, args) => expectRank(input, ranks, args.type, text),
  );
}

/** The trailing dimensions must equal normalized_shape. */
function checkTrailing(input: TensorShape, normalized: readonly number[], layer: string): void {
  const trailing = input.slice(input.length - normalized.length);
  if (input.length < normalized.length || !trailing.every((d, i) => sameDim(d, normalized[i]))) {
    fail(`${layer} normalizes over (${normalized.join(', ')}) but the input ${formatShape(input)} ends in (${trailing.map(formatDim).join(', ')})`);
  }
}

// LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True).
const layerNorm = norm(
  (args) => {
    if (!args.bool(2, 'elementwise_affine', true)) return 0;
    return product(args.shape(0, 'normalized_shape', 0)) * (args.bool(3, 'bias', true) ? 2 : 1);
  },
  (input, args) => checkTrailing(input, args.shape(0, 'normalized_shape', 0), args.type),
);

// RMSNorm(normalized_shape, eps=None, elementwise_affine=True): a weight, no bias.
const rmsNorm = norm(
  (args) => (args.bool(2, 'elementwise_affine', true) ? product(args.shape(0, 'normalized_shape', 0)) : 0),
  (input, args) => checkTrailing(input, args.shape(0, 'normalized_shape', 0), args.type),
);

function groupNormArgs(args: LayerArgs): { groups: number; channels: number; affine: boolean } {
  const groups = args.positive(0, 'num_groups');
  const channels = args.count(1, 'num_channels');
  if (groups <= 0 || channels % groups !== 0) fail(`${args.type}: num_channels (${channels}) must be divisible by num_groups (${groups})`);
  return { groups, channels, affine: args.bool(3, 'affine', true) };
}

// GroupNorm(num_groups, num_channels, eps=1e-5, affine=True) over (N, C, *).
const groupNorm = norm(
  (args) => {
    const { channels, affine } = groupNormArgs(args);
    return affine ? 2 * channels : 0;
  },
  (input, args) => {
    const { groups, channels, affine } = groupNormArgs(args);
    if (input.length < 2) fail(`${args.type} expects an input with at least 2 dimensions (N, C, ...), got ${formatShape(input)}`);
    if (affine) checkChannels(input, 1, channels, args.type);
    else if (sizeOf(input[1], args.type, 'channel dimension', input) % groups !== 0) {
      fail(`${args.type}: the input's ${formatDim(input[1]!)} channels are not divisible by num_groups (${groups})`);
    }
  },
);

// LocalResponseNorm(size, alpha=1e-4, beta=0.75, k=1.0): no parameters, (N, C, *) with at least 3 dimensions.
const localResponseNorm = norm(
  () => 0,
  (input, args) => {
    if (input.length < 3) fail(`${args.type} expects an input with at least 3 dimensions (N, C, ...), got ${formatShape(input)}`);
  },
);

// CrossMapLRN2d(size, alpha=1e-4, beta=0.75, k=1): the legacy 4-D form.
const crossMapLrn = norm(
  () => 0,
  (input, args) => expectRank(input, [4], args.type, `a ${ranksText([4])} (N, C, H, W)`),
);

export const normalizationLayers: LayerSpecGroup = {
  ...Object.fromEntries(
    [1, 2, 3].flatMap((dims) => [
      [`BatchNorm${dims}d`, batchNorm(dims)],
      [`LazyBatchNorm${dims}d`, lazyBatchNorm(dims)],
      [`InstanceNorm${dims}d`, instanceNorm(dims)],
      [`LazyInstanceNorm${dims}d`, lazyInstanceNorm(dims)],
    ]),
  ),
  SyncBatchNorm: syncBatchNorm,
  LayerNorm: layerNorm,
  RMSNorm: rmsNorm,
  GroupNorm: groupNorm,
  LocalResponseNorm: localResponseNorm,
  CrossMapLRN2d: crossMapLrn,
};
