/**
 * DINOv2 (transformers 5.18.0, models/dinov2/modeling_dinov2.py; facebook/dinov2-small, -base,
 * -large and -giant). A ViT with 14-pixel patches whose position table is interpolated to any image
 * size (`interpolate_pos_encoding` runs in every forward when the grid differs), a layer scale after
 * attention and after the MLP (the library's Dinov2LayerScale: a Parameter row each), and the same
 * `drop_path` module called after both (an `nn.Identity`, a row per call, at the checkpoints'
 * `drop_path_rate=0`; the library's Dinov2DropPath otherwise). The MLP is fc1 / activation / fc2, or
 * with `use_swiglu_ffn` (giant) gate_proj, up_proj and down_proj around SiLU. The image classifier
 * reads the class token and the patch tokens' mean side by side: a Linear of twice the width.
 */
import { num, str, type HfConfig } from '../configs';
import type { BuiltModel, ClassSpec, ForwardInput, ModelTypeSpec } from '../modelTypeSpec';
import { activation, conv2d, layerNorm, linear, plain, userModule } from '../layers';
import type { Module, Trace } from '../moduleTree';
import { imageClassification } from './imageHeads';
import { attentionProjections } from './vit';

type Forward = (trace: Trace, input: ForwardInput) => void;

/** Dinov2SwiGLUFFN's hidden width: two thirds of the MLP's, rounded up to a multiple of 8. */
export function swigluWidth(hidden: number, mlpRatio: number): number {
  return Math.floor((Math.floor(Math.floor(hidden * mlpRatio) * 2 / 3) + 7) / 8) * 8;
}

function base(c: HfConfig): [Module, Forward] {
  const hidden = num(c, 'hidden_size');
  const heads = num(c, 'num_attention_heads');
  const inner = heads * Math.floor(hidden / heads);
  const patch = num(c, 'patch_size');
  const size = num(c, 'image_size');
  const root = userModule('Dinov2Model');
  const emb = root.add('embeddings', userModule('Dinov2Embeddings'));
  emb.param('cls_token', hidden);
  if (c.use_mask_token !== false) emb.param('mask_token', hidden);
  emb.param('position_embeddings', (Math.floor(size / patch) ** 2 + 1) * hidden);
  const projection = emb.add('patch_embeddings', userModule('Dinov2PatchEmbeddings')).add('projection', conv2d(num(c, 'num_channels'), hidden, [patch, patch]));
  const embDropout = emb.add('dropout', plain('Dropout'));
  const list = root.add('encoder', userModule('Dinov2Encoder')).add('layer', userModule('ModuleList'));
  const swiglu = c.use_swiglu_ffn === true;
  const mlpWidth = swiglu ? swigluWidth(hidden, num(c, 'mlp_ratio')) : Math.floor(hidden * num(c, 'mlp_ratio'));
  const layers: Array<(trace: Trace, n: number) => void> = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule('Dinov2Layer'));
    const norm1 = layer.add('norm1', layerNorm(hidden));
    const attention = attentionProjections(layer.add('attention', userModule('Dinov2Attention')), hidden, inner, c.qkv_bias === true);
    layer.add('layer_scale1', userModule('Dinov2LayerScale')).param('lambda1', hidden);
    const dropPath = layer.add('drop_path', (c.drop_path_rate as number) > 0 ? userModule('Dinov2DropPath') : plain('Identity'));
    const norm2 = layer.add('norm2', layerNorm(hidden));
    let mlpForward: (trace: Trace, n: number) => void;
    if (swiglu) {
      const mlp = layer.add('mlp', userModule('Dinov2SwiGLUFFN'));
      const gate = mlp.add('gate_proj', linear(hidden, mlpWidth));
      const up = mlp.add('up_proj', linear(hidden, mlpWidth));
      const down = mlp.add('down_proj', linear(mlpWidth, hidden));
      mlp.add('act_fn', activation('silu'));
      mlpForward = (trace, n) => {
        trace.call(gate, [n, mlpWidth]);
        trace.call(up, [n, mlpWidth]);
        trace.call(down, [n, hidden]);
      };
    } else {
      const mlp = layer.add('mlp', userModule('Dinov2MLP'));
      const act = mlp.add('activation_fn', activation(str(c, 'hidden_act')));
      const fc1 = mlp.add('fc1', linear(hidden, mlpWidth));
      const fc2 = mlp.add('fc2', linear(mlpWidth, hidden));
      mlpForward = (trace, n) => {
        trace.call(fc1, [n, mlpWidth]);
        trace.call(act, [n, mlpWidth]);
        trace.call(fc2, [n, hidden]);
      };
    }
    layer.add('layer_scale2', userModule('Dinov2LayerScale')).param('lambda1', hidden);
    layers.push((trace, n) => {
      trace.call(norm1, [n, hidden]);
      attention(trace, n);
      trace.call(dropPath, [n, hidden]);
      trace.call(norm2, [n, hidden]);
      mlpForward(trace, n);
      trace.call(dropPath, [n, hidden]);
    });
  }
  const norm = root.add('layernorm', layerNorm(hidden));
  return [
    root,
    (trace, input) => {
      const [, height, width] = input.image!;
      const [h, w] = [Math.floor(height / patch), Math.floor(width / patch)];
      const n = h * w + 1;
      trace.call(projection, [hidden, h, w]);
      trace.call(embDropout, [n, hidden]);
      for (const layer of layers) layer(trace, n);
      trace.call(norm, [n, hidden]);
      trace.hidden([n, hidden]);
    },
  ];
}

const classes: Record<string, ClassSpec> = {
  Dinov2Model: {
    build(c): BuiltModel {
      const [root, forward] = base(c);
      return { root, forward };
    },
  },
  Dinov2ForImageClassification: {
    build: (c) => imageClassification('Dinov2ForImageClassification', 'dinov2', base(c), 2 * num(c, 'hidden_size'), num(c, 'num_labels')),
  },
};

export const dinov2TypeSpec: ModelTypeSpec = {
  modelType: 'dinov2',
  input: 'image',
  classes,
  // The checkpoints' image processor crops to 224 x 224 (their config's image_size, 518, sizes only the position table).
  defaultShape: (c) => [num(c, 'num_channels'), 224, 224],
  image: {
    channels: (c) => num(c, 'num_channels'),
    refuse: (c, height, width) => {
      const patch = num(c, 'patch_size');
      return height < patch || width < patch ? `a ${height}x${width} image is smaller than one ${patch}-pixel patch` : undefined;
    },
  },
};
