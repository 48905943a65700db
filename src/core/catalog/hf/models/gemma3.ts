/**
 * Gemma-3's multimodal models (transformers 5.18.0: models/gemma3/modeling_gemma3.py and
 * models/siglip/modeling_siglip.py; google/gemma-3-4b, -12b and -27b, pt and it), which
 * AutoModelForCausalLM builds as Gemma3ForConditionalGeneration: Gemma3Model holds a SigLIP vision
 * tower, the multimodal projector (a Parameter of vision x text width, an RMS norm, an average pool)
 * and Gemma-3's text model (llamaVariants.ts), and the head is tied to the text model's embedding.
 * A batch of text runs the text model and the head; the vision tower and the projector hold their
 * parameters and run nothing (their rows come last, uncalled). Written from the modeling code, not
 * recorded against the library: the published totals of the three checkpoints check the counts.
 */
import { num, str, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type ModelTypeSpec, type TokenForward } from '../modelTypeSpec';
import { activation, conv2d, embedding, layerNorm, linear, plain, userModule, weightOnlyNorm } from '../layers';
import type { Module } from '../moduleTree';
import { llamaTree } from './llama';
import { gemma3TextSpec } from './llamaVariants';

/** The resolved parts of a Gemma3Config (gemma3Schema.ts puts them there). */
const part = (c: HfConfig, name: 'text_config' | 'vision_config'): HfConfig => c[name] as unknown as HfConfig;

/** SiglipVisionModel without its pooling head (vision_use_head=False): patch and position embeddings, the encoder, the last norm. */
function siglipVisionTower(v: HfConfig): Module {
  const d = num(v, 'hidden_size');
  const inter = num(v, 'intermediate_size');
  const patch = num(v, 'patch_size');
  const root = userModule('SiglipVisionModel');
  const embeddings = root.add('embeddings', userModule('SiglipVisionEmbeddings'));
  embeddings.add('patch_embedding', conv2d(num(v, 'num_channels'), d, [patch, patch]));
  embeddings.add('position_embedding', embedding((num(v, 'image_size') / patch) ** 2, d));
  const layers = root.add('encoder', userModule('SiglipEncoder')).add('layers', userModule('ModuleList'));
  for (let i = 0; i < num(v, 'num_hidden_layers'); i++) {
    const layer = layers.add(String(i), userModule('SiglipEncoderLayer'));
    layer.add('layer_norm1', layerNorm(d));
    const attention = layer.add('self_attn', userModule('SiglipAttention'));
    for (const name of ['k_proj', 'v_proj', 'q_proj', 'out_proj']) attention.add(name, linear(d, d));
    layer.add('layer_norm2', layerNorm(d));
    const mlp = layer.add('mlp', userModule('SiglipMLP'));
    mlp.add('activation_fn', activation(str(v, 'hidden_act')));
    mlp.add('fc1', linear(d, inter));
    mlp.add('fc2', linear(inter, d));
  }
  root.add('post_layernorm', layerNorm(d));
  return root;
}

function gemma3Model(c: HfConfig): [Module, Module, TokenForward] {
  const text = part(c, 'text_config');
  const vision = part(c, 'vision_config');
  const root = userModule('Gemma3Model');
  root.add('vision_tower', siglipVisionTower(vision));
  const projector = root.add('multi_modal_projector', userModule('Gemma3MultiModalProjector'));
  projector.param('mm_input_projection_weight', num(vision, 'hidden_size') * num(text, 'hidden_size'));
  projector.add('mm_soft_emb_norm', weightOnlyNorm('Gemma3RMSNorm', num(vision, 'hidden_size')));
  projector.add('avg_pool', plain('AvgPool2d'));
  const [language, forward] = llamaTree(gemma3TextSpec(text), text);
  root.add('language_model', language);
  return [root, language, forward];
}

const classes: Record<string, ClassSpec> = {
  Gemma3Model: {
    build(c) {
      const [root, , forward] = gemma3Model(c);
      return tokenModel(root, forward);
    },
  },
  Gemma3ForConditionalGeneration: {
    build(c) {
      const text = part(c, 'text_config');
      const vocab = num(text, 'vocab_size');
      const root = userModule('Gemma3ForConditionalGeneration');
      const [model, language, forward] = gemma3Model(c);
      root.add('model', model);
      const head = root.add('lm_head', linear(num(text, 'hidden_size'), vocab, false));
      head.tie('weight', language.children.find(([name]) => name === 'embed_tokens')![1].get('weight'));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(head, [t, vocab]);
      });
    },
  },
};

export const gemma3TypeSpec: ModelTypeSpec = {
  modelType: 'gemma3',
  input: 'tokens',
  classes,
  // Rotary positions: the trained context, capped as the LLaMA-style types are.
  defaultShape: (c) => [Math.min(4096, num(part(c, 'text_config'), 'max_position_embeddings'))],
};
