/**
 * Swin (transformers 5.18.0, models/swin/modeling_swin.py; microsoft/swin-tiny-patch4-window7-224
 * and its small and base siblings). Stages of SwinLayers attend within windows of
 * `window_size x window_size` patches: q, k, v, o and the attention output's dropout run on
 * `(batch * windows, window², width)`, so their per-sample shape is `[windows, window², width]`
 * (`[window², width]` when a stage is one window). A stage pads its grid up to whole windows, the
 * patch embedding pads the image up to whole patches, and each patch merging pads odd grids. The
 * relative position bias tables and the absolute position embeddings (`use_absolute_embeddings`)
 * are parameters of the library's modules: Parameter rows. A block whose drop-path rate is 0 (the
 * first block always; all with `drop_path_rate=0`) holds an `nn.Identity`, a row when called; the
 * others hold the library's SwinDropPath (no row). Attention dropout is functional.
 */
import { counts, num, str, type HfConfig } from '../configs';
import type { BuiltModel, ClassSpec, ForwardInput, ModelKwargs, ModelTypeSpec } from '../modelTypeSpec';
import { activation, conv2d, layerNorm, linear, plain, userModule } from '../layers';
import type { Module, Trace } from '../moduleTree';
import { imageClassification } from './imageHeads';

type Forward = (trace: Trace, input: ForwardInput) => void;

const lists = (c: HfConfig): { depths: number[]; heads: number[] } => ({ depths: counts(c, 'depths'), heads: counts(c, 'num_heads') });

/** The patch grid of an image (padded up to whole patches), then each stage's grid after patch merging. */
function stageGrids(c: HfConfig, height: number, width: number): Array<[number, number]> {
  const patch = num(c, 'patch_size');
  const grids: Array<[number, number]> = [[Math.ceil(height / patch), Math.ceil(width / patch)]];
  for (let i = 1; i < lists(c).depths.length; i++) {
    const [h, w] = grids[i - 1]!;
    grids.push([Math.floor((h + 1) / 2), Math.floor((w + 1) / 2)]);
  }
  return grids;
}

/** Why the library cannot run this image, if it cannot. */
function refuseImage(c: HfConfig, height: number, width: number, interpolate: boolean): string | undefined {
  const window = num(c, 'window_size');
  const grids = stageGrids(c, height, width);
  const small = grids.findIndex(([h, w]) => Math.min(h, w) < window);
  if (small >= 0) {
    const [h, w] = grids[small]!;
    return (
      `a ${height}x${width} image leaves stage ${small} a ${h}x${w} grid, smaller than its ${window}x${window} window: ` +
      'the library shrinks the window and its relative position bias no longer fits (it raises)'
    );
  }
  if (c.use_absolute_embeddings === true) {
    const patch = num(c, 'patch_size');
    const [h, w] = grids[0]!;
    const side = Math.floor(num(c, 'image_size') / patch);
    const same = h * w === side * side;
    if (!interpolate && !same) {
      return `its absolute position embeddings hold ${side}x${side} patches; a ${height}x${width} image needs forward(..., interpolate_pos_encoding=True)`;
    }
    if (interpolate && !(same && height === width) && (height % patch !== 0 || width % patch !== 0)) {
      return `interpolated position embeddings need the image's sides to be multiples of the ${patch}-pixel patch`;
    }
  }
  return undefined;
}

function base(c: HfConfig, pooler: boolean, maskToken: boolean): [Module, Forward] {
  const embed = num(c, 'embed_dim');
  const patch = num(c, 'patch_size');
  const window = num(c, 'window_size');
  const ratio = num(c, 'mlp_ratio');
  const qkvBias = c.qkv_bias === true;
  const dropPath = num(c, 'drop_path_rate');
  const { depths, heads } = lists(c);
  const root = userModule('SwinModel');
  const emb = root.add('embeddings', userModule('SwinEmbeddings'));
  const projection = emb.add('patch_embeddings', userModule('SwinPatchEmbeddings')).add('projection', conv2d(num(c, 'num_channels'), embed, [patch, patch]));
  if (maskToken) emb.param('mask_token', embed);
  if (c.use_absolute_embeddings === true) emb.param('position_embeddings', Math.floor(num(c, 'image_size') / patch) ** 2 * embed);
  const embNorm = emb.add('norm', layerNorm(embed));
  const embDropout = emb.add('dropout', plain('Dropout'));
  const stages = root.add('encoder', userModule('SwinEncoder')).add('layers', userModule('ModuleList'));
  const stageForwards: Array<(trace: Trace, h: number, w: number) => void> = [];
  let blockIndex = 0;
  for (let s = 0; s < depths.length; s++) {
    const dim = embed * 2 ** s;
    const hidden = Math.trunc(ratio * dim);
    const stage = stages.add(String(s), userModule('SwinStage'));
    const list = stage.add('blocks', userModule('ModuleList'));
    const blocks: Array<(trace: Trace, n: number, windowShape: number[]) => void> = [];
    for (let b = 0; b < depths[s]!; b++, blockIndex++) {
      const layer = list.add(String(b), userModule('SwinLayer'));
      const attention = layer.add('attention', userModule('SwinAttention'));
      const q = attention.add('q_proj', linear(dim, dim, qkvBias));
      const k = attention.add('k_proj', linear(dim, dim, qkvBias));
      const v = attention.add('v_proj', linear(dim, dim, qkvBias));
      const o = attention.add('o_proj', linear(dim, dim));
      attention.add('relative_position_bias', userModule('SwinRelativePositionBias')).param('relative_position_bias_table', (2 * window - 1) ** 2 * heads[s]!);
      const before = layer.add('layernorm_before', layerNorm(dim));
      const after = layer.add('layernorm_after', layerNorm(dim));
      const mlp = layer.add('mlp', userModule('SwinMLP'));
      const act = mlp.add('activation_fn', activation(str(c, 'hidden_act')));
      const fc1 = mlp.add('fc1', linear(dim, hidden));
      const fc2 = mlp.add('fc2', linear(hidden, dim));
      const dropout = layer.add('dropout', plain('Dropout'));
      // SwinEncoder's rates grow linearly from 0 over all blocks; a rate of 0 gets nn.Identity.
      const identity = blockIndex === 0 || dropPath === 0;
      const drop = layer.add('drop_path', identity ? plain('Identity') : userModule('SwinDropPath'));
      blocks.push((trace, n, windowShape) => {
        trace.call(before, [n, dim]);
        for (const proj of [q, k, v, o]) trace.call(proj, windowShape);
        trace.call(dropout, windowShape);
        trace.call(drop, [n, dim]);
        trace.call(after, [n, dim]);
        trace.call(fc1, [n, hidden]);
        trace.call(act, [n, hidden]);
        trace.call(fc2, [n, dim]);
        trace.call(dropout, [n, dim]);
      });
    }
    let merge: ((trace: Trace, h: number, w: number) => void) | undefined;
    if (s < depths.length - 1) {
      const downsample = stage.add('downsample', userModule('SwinPatchMerging'));
      const reduction = downsample.add('reduction', linear(4 * dim, 2 * dim, false));
      const norm = downsample.add('norm', layerNorm(4 * dim));
      merge = (trace, h, w) => {
        const merged = Math.ceil(h / 2) * Math.ceil(w / 2);
        trace.call(norm, [merged, 4 * dim]);
        trace.call(reduction, [merged, 2 * dim]);
      };
    }
    stageForwards.push((trace, h, w) => {
      const windows = Math.ceil(h / window) * Math.ceil(w / window);
      const windowShape = windows === 1 ? [window * window, dim] : [windows, window * window, dim];
      for (const block of blocks) block(trace, h * w, windowShape);
      merge?.(trace, h, w);
    });
  }
  const last = embed * 2 ** (depths.length - 1);
  const norm = root.add('layernorm', layerNorm(last));
  const pool = pooler ? root.add('pooler', plain('AdaptiveAvgPool1d')) : undefined;
  return [
    root,
    (trace, input) => {
      const [, height, width] = input.image!;
      const grids = stageGrids(c, height, width);
      const [h0, w0] = grids[0]!;
      trace.call(projection, [embed, h0, w0]);
      trace.call(embNorm, [h0 * w0, embed]);
      trace.call(embDropout, [h0 * w0, embed]);
      grids.forEach(([h, w], s) => stageForwards[s]!(trace, h, w));
      const [hl, wl] = grids[grids.length - 1]!;
      trace.call(norm, [hl * wl, last]);
      trace.hidden([hl * wl, last]);
      if (pool) trace.call(pool, [last, 1]);
    },
  ];
}

const classes: Record<string, ClassSpec> = {
  SwinModel: {
    kwargs: { add_pooling_layer: true, use_mask_token: false },
    build(c, kwargs: ModelKwargs): BuiltModel {
      const [root, forward] = base(c, kwargs.add_pooling_layer !== false, kwargs.use_mask_token === true);
      return { root, forward };
    },
  },
  SwinForImageClassification: {
    build: (c) => imageClassification('SwinForImageClassification', 'swin', base(c, true, false), num(c, 'hidden_size'), num(c, 'num_labels')),
  },
};

export const swinTypeSpec: ModelTypeSpec = {
  modelType: 'swin',
  input: 'image',
  classes,
  defaultShape: (c) => [num(c, 'num_channels'), num(c, 'image_size'), num(c, 'image_size')],
  image: { channels: (c) => num(c, 'num_channels'), refuse: refuseImage },
};
