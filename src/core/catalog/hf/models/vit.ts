/**
 * ViT (transformers 5.18.0, models/vit/modeling_vit.py; 5.x keeps the layers in `layers` at the
 * model's root, where 4.x had `encoder.layer`, and names the projections q_proj..o_proj and
 * mlp.fc1/fc2). `cls_token`, `mask_token` (with use_mask_token) and `position_embeddings` are
 * parameters of ViTEmbeddings: Parameter rows. Each layer calls its one `dropout` twice. Attention
 * dropout is functional.
 */
import { num, str, type HfConfig } from '../configs';
import type { BuiltModel, ClassSpec, ModelTypeSpec, ForwardInput, ModelKwargs } from '../modelTypeSpec';
import { activation, conv2d, layerNorm, linear, plain, userModule } from '../layers';
import type { Module, Trace } from '../moduleTree';
import { imageClassification } from './imageHeads';

type Forward = (trace: Trace, input: ForwardInput) => void;

/** The patch grid of an image: (H // patch, W // patch). */
export function patchGrid(c: HfConfig, height: number, width: number): [number, number] {
  const patch = num(c, 'patch_size');
  return [Math.floor(height / patch), Math.floor(width / patch)];
}

/**
 * Why a ViT-style model (one position per patch and a class token: ViT, CLIP's vision tower) cannot
 * take the image: it must be `size` square unless positions are interpolated, and hold one patch.
 */
export function refusePatchImage(c: HfConfig, size: number, height: number, width: number, interpolate: boolean): string | undefined {
  if (interpolate) {
    const [h, w] = patchGrid(c, height, width);
    return h < 1 || w < 1 ? `a ${height}x${width} image is smaller than one ${num(c, 'patch_size')}-pixel patch` : undefined;
  }
  if (height !== size || width !== size) {
    return `it takes ${size}x${size} images (image_size); a ${height}x${width} image needs forward(..., interpolate_pos_encoding=True) (the library raises otherwise)`;
  }
  return undefined;
}

/** q_proj, k_proj, v_proj and o_proj under `attention` (ViT, DINOv2), and their calls on `n` tokens. */
export function attentionProjections(attention: Module, hidden: number, inner: number, qkvBias: boolean): (trace: Trace, n: number) => void {
  const q = attention.add('q_proj', linear(hidden, inner, qkvBias));
  const k = attention.add('k_proj', linear(hidden, inner, qkvBias));
  const v = attention.add('v_proj', linear(hidden, inner, qkvBias));
  const o = attention.add('o_proj', linear(inner, hidden));
  return (trace, n) => {
    trace.call(q, [n, inner]);
    trace.call(k, [n, inner]);
    trace.call(v, [n, inner]);
    trace.call(o, [n, hidden]);
  };
}

function base(c: HfConfig, pooler: boolean, maskToken: boolean): [Module, Forward] {
  const hidden = num(c, 'hidden_size');
  const inter = num(c, 'intermediate_size');
  const heads = num(c, 'num_attention_heads');
  const inner = heads * Math.floor(hidden / heads);
  const patch = num(c, 'patch_size');
  const [gh, gw] = patchGrid(c, num(c, 'image_size'), num(c, 'image_size'));
  const root = userModule('ViTModel');
  const emb = root.add('embeddings', userModule('ViTEmbeddings'));
  emb.param('cls_token', hidden);
  if (maskToken) emb.param('mask_token', hidden);
  const patches = emb.add('patch_embeddings', userModule('ViTPatchEmbeddings'));
  const projection = patches.add('projection', conv2d(num(c, 'num_channels'), hidden, [patch, patch]));
  emb.param('position_embeddings', (gh * gw + 1) * hidden);
  const embDropout = emb.add('dropout', plain('Dropout'));
  const list = root.add('layers', userModule('ModuleList'));
  const layers: Array<(trace: Trace, n: number) => void> = [];
  const qkvBias = c.qkv_bias === true;
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule('ViTLayer'));
    const attention = attentionProjections(layer.add('attention', userModule('ViTAttention')), hidden, inner, qkvBias);
    const before = layer.add('layernorm_before', layerNorm(hidden));
    const after = layer.add('layernorm_after', layerNorm(hidden));
    const mlp = layer.add('mlp', userModule('ViTMLP'));
    const act = mlp.add('activation_fn', activation(str(c, 'hidden_act')));
    const fc1 = mlp.add('fc1', linear(hidden, inter));
    const fc2 = mlp.add('fc2', linear(inter, hidden));
    const dropout = layer.add('dropout', plain('Dropout'));
    layers.push((trace, n) => {
      trace.call(before, [n, hidden]);
      attention(trace, n);
      trace.call(dropout, [n, hidden]);
      trace.call(after, [n, hidden]);
      trace.call(fc1, [n, inter]);
      trace.call(act, [n, inter]);
      trace.call(fc2, [n, hidden]);
      trace.call(dropout, [n, hidden]);
    });
  }
  const norm = root.add('layernorm', layerNorm(hidden));
  let poolerForward: ((trace: Trace) => void) | undefined;
  if (pooler) {
    const size = num(c, 'pooler_output_size');
    const p = root.add('pooler', userModule('ViTPooler'));
    const dense = p.add('dense', linear(hidden, size));
    const act = p.add('activation', activation(str(c, 'pooler_act')));
    poolerForward = (trace) => {
      trace.call(dense, [size]);
      trace.call(act, [size]);
    };
  }
  return [
    root,
    (trace, input) => {
      const [, height, width] = input.image!;
      const [h, w] = patchGrid(c, height, width);
      const n = h * w + 1;
      trace.call(projection, [hidden, h, w]);
      trace.call(embDropout, [n, hidden]);
      for (const layer of layers) layer(trace, n);
      trace.call(norm, [n, hidden]);
      trace.hidden([n, hidden]);
      poolerForward?.(trace);
    },
  ];
}

const classes: Record<string, ClassSpec> = {
  ViTModel: {
    kwargs: { add_pooling_layer: true, use_mask_token: false },
    build(c, kwargs: ModelKwargs): BuiltModel {
      const [root, forward] = base(c, kwargs.add_pooling_layer !== false, kwargs.use_mask_token === true);
      return { root, forward };
    },
  },
  ViTForImageClassification: {
    build: (c) => imageClassification('ViTForImageClassification', 'vit', base(c, false, false), num(c, 'hidden_size'), num(c, 'num_labels')),
  },
};

export const vitTypeSpec: ModelTypeSpec = {
  modelType: 'vit',
  input: 'image',
  classes,
  defaultShape: (c) => [num(c, 'num_channels'), num(c, 'image_size'), num(c, 'image_size')],
  image: { channels: (c) => num(c, 'num_channels'), refuse: (c, height, width, interpolate) => refusePatchImage(c, num(c, 'image_size'), height, width, interpolate) },
};
