/**
 * CLIP (transformers 5.18.0, models/clip/modeling_clip.py; openai/clip-vit-base-patch32,
 * -base-patch16, -large-patch14). A CLIPConfig holds a text and a vision config; CLIPTextModel and
 * CLIPVisionModel (with or without their projection) are built from their part, as from_pretrained
 * builds them from a CLIP checkpoint, CLIPModel from both. 5.x keeps each tower's modules at its
 * root (`embeddings`, `encoder`, `final_layer_norm` / `pre_layrnorm`, `post_layernorm`).
 * The vision tower's `class_embedding` is a Parameter row, its patch convolution has no bias, and
 * its position embedding runs on the `(1, patches + 1)` position ids buffer, `[1, N, hidden]`
 * (with `interpolate_pos_encoding` on another image size its table is read, never called). Both
 * towers' `post_layernorm`-style pooling and the projections run on one vector per sample (the
 * class token, the end-of-text token). No dropout modules; attention dropout is functional.
 * CLIPModel runs the vision tower first, then the text tower; `logit_scale` is a Parameter row.
 */
import { num, str, type HfConfig } from '../configs';
import type { BuiltModel, ClassSpec, ForwardInput, ModelTypeSpec } from '../modelTypeSpec';
import { activation, conv2d, embedding, layerNorm, linear, userModule } from '../layers';
import type { Module, Trace } from '../moduleTree';
import { imageClassification } from './imageHeads';
import { patchGrid, refusePatchImage } from './vit';

type Forward = (trace: Trace, input: ForwardInput) => void;

/** The text or vision part of a resolved CLIPConfig (falconSwinClipSchemas.ts resolves both). */
const part = (c: HfConfig, which: 'text_config' | 'vision_config'): HfConfig => c[which] as unknown as HfConfig;

/** CLIPEncoder: the layers, and their forward on `n` tokens. */
function encoder(parent: Module, p: HfConfig): (trace: Trace, n: number) => void {
  const d = num(p, 'hidden_size');
  const inter = num(p, 'intermediate_size');
  const list = parent.add('encoder', userModule('CLIPEncoder')).add('layers', userModule('ModuleList'));
  const layers: Array<(trace: Trace, n: number) => void> = [];
  for (let i = 0; i < num(p, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule('CLIPEncoderLayer'));
    const attn = layer.add('self_attn', userModule('CLIPAttention'));
    const k = attn.add('k_proj', linear(d, d));
    const v = attn.add('v_proj', linear(d, d));
    const q = attn.add('q_proj', linear(d, d));
    const out = attn.add('out_proj', linear(d, d));
    const norm1 = layer.add('layer_norm1', layerNorm(d));
    const mlp = layer.add('mlp', userModule('CLIPMLP'));
    const act = mlp.add('activation_fn', activation(str(p, 'hidden_act')));
    const fc1 = mlp.add('fc1', linear(d, inter));
    const fc2 = mlp.add('fc2', linear(inter, d));
    const norm2 = layer.add('layer_norm2', layerNorm(d));
    layers.push((trace, n) => {
      trace.call(norm1, [n, d]);
      for (const proj of [q, k, v, out]) trace.call(proj, [n, d]);
      trace.call(norm2, [n, d]);
      trace.call(fc1, [n, inter]);
      trace.call(act, [n, inter]);
      trace.call(fc2, [n, d]);
    });
  }
  return (trace, n) => {
    for (const layer of layers) layer(trace, n);
  };
}

/** CLIPTextModel; its forward runs on `input.tokens` tokens. */
function textTower(p: HfConfig): [Module, Forward] {
  const d = num(p, 'hidden_size');
  const root = userModule('CLIPTextModel');
  const emb = root.add('embeddings', userModule('CLIPTextEmbeddings'));
  const tokens = emb.add('token_embedding', embedding(num(p, 'vocab_size'), d));
  const positions = emb.add('position_embedding', embedding(num(p, 'max_position_embeddings'), d));
  const layers = encoder(root, p);
  const norm = root.add('final_layer_norm', layerNorm(d));
  return [
    root,
    (trace, input) => {
      const t = input.tokens!;
      trace.call(tokens, [t, d]);
      trace.call(positions, [1, t, d]);
      layers(trace, t);
      trace.call(norm, [t, d]);
    },
  ];
}

/** CLIPVisionModel; `post_layernorm` runs on the class token. */
function visionTower(p: HfConfig): [Module, Forward] {
  const d = num(p, 'hidden_size');
  const patch = num(p, 'patch_size');
  const size = num(p, 'image_size');
  const positionsCount = Math.floor(size / patch) ** 2 + 1;
  const root = userModule('CLIPVisionModel');
  const emb = root.add('embeddings', userModule('CLIPVisionEmbeddings'));
  emb.param('class_embedding', d);
  const conv = emb.add('patch_embedding', conv2d(num(p, 'num_channels'), d, [patch, patch], false));
  const positions = emb.add('position_embedding', embedding(positionsCount, d));
  const pre = root.add('pre_layrnorm', layerNorm(d));
  const layers = encoder(root, p);
  const post = root.add('post_layernorm', layerNorm(d));
  return [
    root,
    (trace, input) => {
      const [, height, width] = input.image!;
      const [h, w] = patchGrid(p, height, width);
      const n = h * w + 1;
      trace.call(conv, [d, h, w]);
      // Interpolated positions read the table itself unless the grid and the image are the checkpoint's.
      if (!input.interpolatePosEncoding || (n === positionsCount && height === width)) trace.call(positions, [1, n, d]);
      trace.call(pre, [n, d]);
      layers(trace, n);
      trace.call(post, [d]);
    },
  ];
}

/** A tower under `attribute` with a bias-free projection to the part's `projection_dim` on its pooled output. */
function withProjection(className: string, attribute: string, [tower, forward]: [Module, Forward], p: HfConfig, projection: string): BuiltModel {
  const dim = num(p, 'projection_dim');
  const root = userModule(className);
  root.add(attribute, tower);
  const linearProjection = root.add(projection, linear(num(p, 'hidden_size'), dim, false));
  return {
    root,
    forward: (trace, input) => {
      forward(trace, input);
      trace.call(linearProjection, [dim]);
    },
  };
}

const classes: Record<string, ClassSpec> = {
  CLIPModel: {
    withText: true,
    build(c): BuiltModel {
      const text = part(c, 'text_config');
      const vision = part(c, 'vision_config');
      const dim = num(c, 'projection_dim');
      const root = userModule('CLIPModel');
      const [textModel, textForward] = textTower(text);
      const [visionModel, visionForward] = visionTower(vision);
      root.add('text_model', textModel);
      root.add('vision_model', visionModel);
      const visual = root.add('visual_projection', linear(num(vision, 'hidden_size'), dim, false));
      const textual = root.add('text_projection', linear(num(text, 'hidden_size'), dim, false));
      root.param('logit_scale', 1);
      return {
        root,
        forward: (trace, input) => {
          visionForward(trace, input);
          trace.call(visual, [dim]);
          textForward(trace, input);
          trace.call(textual, [dim]);
        },
      };
    },
  },
  CLIPTextModel: {
    input: 'tokens',
    build(c): BuiltModel {
      const [root, forward] = textTower(part(c, 'text_config'));
      return { root, forward };
    },
  },
  CLIPVisionModel: {
    build(c): BuiltModel {
      const [root, forward] = visionTower(part(c, 'vision_config'));
      return { root, forward };
    },
  },
  CLIPTextModelWithProjection: {
    input: 'tokens',
    build: (c) => withProjection('CLIPTextModelWithProjection', 'text_model', textTower(part(c, 'text_config')), part(c, 'text_config'), 'text_projection'),
  },
  CLIPVisionModelWithProjection: {
    build: (c) =>
      withProjection('CLIPVisionModelWithProjection', 'vision_model', visionTower(part(c, 'vision_config')), part(c, 'vision_config'), 'visual_projection'),
  },
  CLIPForImageClassification: {
    // The classifier runs on the mean of the patch tokens' last hidden states.
    build: (c) =>
      imageClassification('CLIPForImageClassification', 'vision_model', visionTower(part(c, 'vision_config')), num(part(c, 'vision_config'), 'hidden_size'), num(c, 'num_labels')),
  },
};

export const clipTypeSpec: ModelTypeSpec = {
  modelType: 'clip',
  input: 'image',
  classes,
  defaultShape(c, className) {
    if (classes[className]?.input === 'tokens') return [num(part(c, 'text_config'), 'max_position_embeddings')];
    const vision = part(c, 'vision_config');
    return [num(vision, 'num_channels'), num(vision, 'image_size'), num(vision, 'image_size')];
  },
  maxTokens: (c) => num(part(c, 'text_config'), 'max_position_embeddings'),
  image: {
    channels: (c) => num(part(c, 'vision_config'), 'num_channels'),
    refuse: (c, height, width, interpolate) => {
      const vision = part(c, 'vision_config');
      return refusePatchImage(vision, num(vision, 'image_size'), height, width, interpolate);
    },
  },
};
