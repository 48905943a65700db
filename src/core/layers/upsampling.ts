/** Upsample, UpsamplingNearest2d, UpsamplingBilinear2d: resize the spatial dimensions of (N, C, ...). */
import type { LayerArgs } from './layerArgs';
import type { LayerSpec } from './layerSpec';
import { expectRank, fail, inputAt, ranksText, spatialSizes, type LayerSpecGroup } from './shapes';
import { formatShape, type TensorShape } from './tensorShape';

/** The input ranks each mode accepts (F.interpolate needs a batch dimension). */
const MODE_RANKS: Readonly<Record<string, readonly number[]>> = {
  nearest: [3, 4, 5],
  'nearest-exact': [3, 4, 5],
  area: [3, 4, 5],
  linear: [3],
  bilinear: [4],
  bicubic: [4],
  trilinear: [5],
};

function resize(input: TensorShape, args: LayerArgs, mode: string): TensorShape {
  const layer = args.type;
  const ranks = MODE_RANKS[mode];
  if (!ranks) fail(`${layer}: unknown mode '${mode}'`);
  expectRank(input, ranks, `${layer} with mode '${mode}'`, `a ${ranksText(ranks)} (N, C, ...)`);
  const dims = input.length - 2;
  const sizes = spatialSizes(input, dims, layer);
  const size = args.intsOrNone(0, 'size', dims);
  const scale = args.floats(1, 'scale_factor', dims);
  if (size && scale) fail(`${layer}: only one of size and scale_factor should be given`);
  if (!size && !scale) fail(`${layer} needs size or scale_factor`);
  const out = size ? size.map((s, i) => s ?? sizes[i]!) : sizes.map((s, i) => Math.floor(s * scale![i]!));
  out.forEach((o) => {
    if (o < 1) fail(`${layer}: the output of the input ${formatShape(input)} would be empty`);
  });
  return [input[0]!, input[1]!, ...out];
}

function upsampling(fixedMode?: string): LayerSpec {
  return {
    category: 'reshape',
    params: () => 0,
    forward(inputs, args) {
      const mode = fixedMode ?? args.string(2, 'mode', 'nearest');
      if (!fixedMode && args.has(3, 'align_corners') && ['nearest', 'nearest-exact', 'area'].includes(mode)) {
        fail(`${args.type}: align_corners can only be set with the interpolating modes linear, bilinear, bicubic and trilinear`);
      }
      return resize(inputAt(inputs, 0, args.type), args, mode);
    },
    // Backward of interpolation needs only the sizes.
    savesInput: false,
    savesOutput: false,
  };
}

export const upsamplingLayers: LayerSpecGroup = {
  // Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None).
  Upsample: upsampling(),
  // UpsamplingNearest2d(size=None, scale_factor=None), UpsamplingBilinear2d(size=None, scale_factor=None).
  UpsamplingNearest2d: upsampling('nearest'),
  UpsamplingBilinear2d: upsampling('bilinear'),
};
