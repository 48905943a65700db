/**
 * ConvNeXt (transformers 5.18.0, models/convnext/modeling_convnext.py; facebook/convnext-tiny-224 and
 * its siblings). A 4x4 patch convolution, then stages of blocks: a 7x7 depthwise convolution, a
 * layer norm over the channels (after a permute to channels-last), two Linears around the
 * activation, the layer scale, and the residual. Every stage after the first starts with a layer
 * norm and a 2x2 stride-2 convolution. ConvNextLayerNorm is the library's own subclass of
 * nn.LayerNorm: its weight and bias are Parameter rows and its call makes no row (it calls
 * F.layer_norm), as do the layer scale and the library's activations. A block whose drop-path rate
 * is 0 (the first always; all with `drop_path_rate=0`, the checkpoints' value) holds an
 * `nn.Identity`, a row when called; the others the library's ConvNextDropPath (no row). The model
 * pools by a mean over the grid, then an nn.LayerNorm.
 */
import { counts, num, str, type HfConfig } from '../configs';
import type { BuiltModel, ClassSpec, ForwardInput, ModelTypeSpec } from '../modelTypeSpec';
import { activation, conv2d, layerNorm, linear, plain, userModule } from '../layers';
import type { Module, Trace } from '../moduleTree';
import { imageClassification } from './imageHeads';

type Forward = (trace: Trace, input: ForwardInput) => void;

const lists = (c: HfConfig): { depths: number[]; sizes: number[] } => ({ depths: counts(c, 'depths'), sizes: counts(c, 'hidden_sizes') });

/** The grid after the patch convolution, then after each stage's downsampling. */
function stageGrids(c: HfConfig, height: number, width: number): Array<[number, number]> {
  const patch = num(c, 'patch_size');
  const grids: Array<[number, number]> = [[Math.floor((height - patch) / patch) + 1, Math.floor((width - patch) / patch) + 1]];
  for (let i = 1; i < lists(c).depths.length; i++) {
    const [h, w] = grids[i - 1]!;
    grids.push([Math.floor((h - 2) / 2) + 1, Math.floor((w - 2) / 2) + 1]);
  }
  return grids;
}

/** Why the library cannot run this image: every convolution needs an input at least as large as its kernel. */
function refuseImage(c: HfConfig, height: number, width: number): string | undefined {
  const patch = num(c, 'patch_size');
  const stages = lists(c).depths.length;
  const smallest = patch * 2 ** (stages - 1);
  if (height < smallest || width < smallest) return `a ${height}x${width} image is too small: ${stages} stages after a ${patch}-pixel patch need at least ${smallest}x${smallest}`;
  return undefined;
}

/** `ConvNextLayerNorm(dim)`: the library's LayerNorm subclass; its parameters are Parameter rows. */
function convNextNorm(dim: number): Module {
  const m = userModule('ConvNextLayerNorm');
  m.param('weight', dim);
  m.param('bias', dim);
  return m;
}

function base(c: HfConfig): [Module, Forward, number] {
  const { depths, sizes } = lists(c);
  const patch = num(c, 'patch_size');
  const root = userModule('ConvNextModel');
  const emb = root.add('embeddings', userModule('ConvNextEmbeddings'));
  const patchConv = emb.add('patch_embeddings', conv2d(num(c, 'num_channels'), sizes[0]!, [patch, patch]));
  emb.add('layernorm', convNextNorm(sizes[0]!));
  const stagesList = root.add('encoder', userModule('ConvNextEncoder')).add('stages', userModule('ModuleList'));
  const total = depths.reduce((a, b) => a + b, 0);
  const dropPath = c.drop_path_rate as number;
  const stageForwards: Array<(trace: Trace, h: number, w: number) => void> = [];
  let block = 0;
  let previous = sizes[0]!;
  depths.forEach((depth, s) => {
    const dim = sizes[s]!;
    const stage = stagesList.add(String(s), userModule('ConvNextStage'));
    const down = stage.add('downsampling_layer', userModule('ModuleList'));
    let downConv: Module | undefined;
    if (previous !== dim || s > 0) {
      down.add('0', convNextNorm(previous));
      downConv = down.add('1', conv2d(previous, dim, [2, 2]));
    }
    const layers = stage.add('layers', userModule('ModuleList'));
    const blocks: Array<(trace: Trace, h: number, w: number) => void> = [];
    for (let j = 0; j < depth; j++, block++) {
      const layer = layers.add(String(j), userModule('ConvNextLayer'));
      if ((c.layer_scale_init_value as number) > 0) layer.param('layer_scale_parameter', dim);
      const dw = layer.add('dwconv', conv2d(dim, dim, [7, 7], true, dim));
      layer.add('layernorm', convNextNorm(dim));
      const fc1 = layer.add('pwconv1', linear(dim, 4 * dim));
      const act = layer.add('act', activation(str(c, 'hidden_act')));
      const fc2 = layer.add('pwconv2', linear(4 * dim, dim));
      // torch.linspace(0, drop_path_rate, total): only the first block's rate is 0 when the rate is not.
      const rate = total > 1 ? (dropPath * block) / (total - 1) : 0;
      const identity = rate > 0 ? undefined : layer.add('drop_path', plain('Identity'));
      if (!identity) layer.add('drop_path', userModule('ConvNextDropPath'));
      blocks.push((trace, h, w) => {
        trace.call(dw, [dim, h, w]);
        trace.call(fc1, [h, w, 4 * dim]);
        trace.call(act, [h, w, 4 * dim]);
        trace.call(fc2, [h, w, dim]);
        if (identity) trace.call(identity, [dim, h, w]);
      });
    }
    stageForwards.push((trace, h, w) => {
      if (downConv) trace.call(downConv, [dim, h, w]);
      for (const run of blocks) run(trace, h, w);
    });
    previous = dim;
  });
  const last = sizes[sizes.length - 1]!;
  const norm = root.add('layernorm', layerNorm(last));
  return [
    root,
    (trace, input) => {
      const [, height, width] = input.image!;
      const grids = stageGrids(c, height, width);
      const [h0, w0] = grids[0]!;
      trace.call(patchConv, [sizes[0]!, h0, w0]);
      grids.forEach(([h, w], s) => stageForwards[s]!(trace, h, w));
      const [hl, wl] = grids[grids.length - 1]!;
      trace.hidden([last, hl, wl]);
      trace.call(norm, [last]);
    },
    last,
  ];
}

const classes: Record<string, ClassSpec> = {
  ConvNextModel: {
    build(c): BuiltModel {
      const [root, forward] = base(c);
      return { root, forward };
    },
  },
  ConvNextForImageClassification: {
    build(c): BuiltModel {
      const [root, forward, features] = base(c);
      return imageClassification('ConvNextForImageClassification', 'convnext', [root, forward], features, num(c, 'num_labels'));
    },
  },
};

export const convnextTypeSpec: ModelTypeSpec = {
  modelType: 'convnext',
  input: 'image',
  classes,
  defaultShape: (c) => [num(c, 'num_channels'), num(c, 'image_size'), num(c, 'image_size')],
  image: { channels: (c) => num(c, 'num_channels'), refuse: (c, height, width) => refuseImage(c, height, width) },
};
