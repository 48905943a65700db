/**
 * The decoders transformers 5.18.0 builds on LLaMA's tree with other norms (llama.ts's llamaTree):
 *
 * - Gemma-2 (models/gemma2/modeling_gemma2.py; google/gemma-2-2b, 9b, 27b): four RMS norms a layer
 *   (input, post-attention, pre- and post-feedforward), the scaled embedding of Gemma (the library's
 *   subclass of nn.Embedding: a Parameter row, no call row), head_dim 256 apart from the width, and a
 *   tied head. Logit soft-capping is a tanh, sliding-window layers differ in their mask only: no rows.
 * - OLMo (models/olmo/modeling_olmo.py; allenai/OLMo-1B-hf, OLMo-7B-hf): LayerNorm without weight or
 *   bias (OlmoLayerNorm holds no parameter); clip_qkv clamps in place.
 * - OLMo-2 (models/olmo2/modeling_olmo2.py; allenai/OLMo-2-1124-7B): no norm before attention or MLP;
 *   RMS norms after each (post_attention_layernorm, post_feedforward_layernorm) and over the projected
 *   queries and keys (q_norm, k_norm: the full width of all heads).
 * - Gemma-3's text model (models/gemma3/modeling_gemma3.py, model type gemma3_text; google/gemma-3-1b-pt
 *   and -it): Gemma-2's four norms, scaled embedding, head_dim 256 and tied head, with Qwen3's
 *   per-head q_norm and k_norm; its classes are Gemma3TextModel, Gemma3ForCausalLM and
 *   Gemma3TextForSequenceClassification. No logit soft-capping by default; the 5:1 pattern of
 *   sliding-window and full layers is in the mask only.
 * - Qwen3 (models/qwen3/modeling_qwen3.py; Qwen/Qwen3-0.6B to -32B): LLaMA's layer with RMS norms over
 *   each head's queries and keys (q_norm, k_norm: head_dim wide, shared by the heads), head_dim 128
 *   apart from the width, no attention bias unless attention_bias. Sliding-window layers differ in
 *   their mask only: no rows.
 *
 * Their heads are the generic ones of modeling_layers.py on `model`; only the classes the library has.
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec } from '../modelTypeSpec';
import type { ModelType } from '../configKit';
import { userModule, weightOnlyNorm } from '../layers';
import { decoderClasses } from './decoderHeads';
import { llamaTree, type LlamaTreeSpec } from './llama';

const NO_BIAS = { gate_proj: false, up_proj: false, down_proj: false } as const;

/** q, k, v and o with attention_bias's bias, the MLP without. */
function attentionBias(c: HfConfig): LlamaTreeSpec['bias'] {
  const b = c.attention_bias === true;
  return { q_proj: b, k_proj: b, v_proj: b, o_proj: b, ...NO_BIAS };
}

function variantTypeSpec(modelType: ModelType, prefix: string, heads: readonly string[], spec: (c: HfConfig) => LlamaTreeSpec, causalLm = `${prefix}ForCausalLM`): ModelTypeSpec {
  const all: Record<string, ClassSpec> = decoderClasses({
    prefix,
    causalLm,
    base: 'model',
    hidden: 'hidden_size',
    embedding: 'embed_tokens',
    tokenClassifier: (c) => ({ name: 'score', bias: c.token_classification_bias !== false }),
  }, (c) => llamaTree(spec(c), c));
  const classes = Object.fromEntries([`${prefix}Model`, causalLm, ...heads].map((name) => [name, all[name]!]));
  return {
    modelType,
    input: 'tokens',
    classes,
    // Rotary positions have no table: the longest sequence is the trained context, capped as the LLaMA-style types are.
    defaultShape: (c) => [Math.min(4096, num(c, 'max_position_embeddings'))],
  };
}

/** Gemma-2's and Gemma-3's layer: the scaled embedding, four RMS norms a layer, the activation named hidden_activation. */
function gemmaTree(generation: 'Gemma2' | 'Gemma3', c: HfConfig): Omit<LlamaTreeSpec, 'prefix'> {
  return {
    embedding: { type: `${generation}TextScaledWordEmbedding`, torch: false },
    bias: attentionBias(c),
    activation: str(c, 'hidden_activation'),
    layerNorms: ['input_layernorm', 'post_attention_layernorm', 'pre_feedforward_layernorm', 'post_feedforward_layernorm'],
    norm: (d) => weightOnlyNorm(`${generation}RMSNorm`, d),
  };
}

export const gemma2TypeSpec = variantTypeSpec('gemma2', 'Gemma2', ['Gemma2ForSequenceClassification', 'Gemma2ForTokenClassification'], (c) => ({
  prefix: 'Gemma2',
  ...gemmaTree('Gemma2', c),
}));

export const olmoTypeSpec = variantTypeSpec('olmo', 'Olmo', ['OlmoForSequenceClassification'], (c) => ({
  prefix: 'Olmo',
  embedding: { type: 'Embedding', torch: true },
  bias: attentionBias(c),
  activation: str(c, 'hidden_act'),
  layerNorms: ['input_layernorm', 'post_attention_layernorm'],
  // OlmoLayerNorm: F.layer_norm with neither weight nor bias.
  norm: () => userModule('OlmoLayerNorm'),
}));

export const olmo2TypeSpec = variantTypeSpec('olmo2', 'Olmo2', ['Olmo2ForSequenceClassification'], (c) => ({
  prefix: 'Olmo2',
  embedding: { type: 'Embedding', torch: true },
  bias: attentionBias(c),
  activation: str(c, 'hidden_act'),
  layerNorms: ['post_attention_layernorm', 'post_feedforward_layernorm'],
  norm: (d) => weightOnlyNorm('Olmo2RMSNorm', d),
  qkNorms: true,
}));

export const qwen3TypeSpec = variantTypeSpec('qwen3', 'Qwen3', ['Qwen3ForSequenceClassification', 'Qwen3ForTokenClassification', 'Qwen3ForQuestionAnswering'], (c) => ({
  prefix: 'Qwen3',
  embedding: { type: 'Embedding', torch: true },
  bias: attentionBias(c),
  activation: str(c, 'hidden_act'),
  layerNorms: ['input_layernorm', 'post_attention_layernorm'],
  norm: (d) => weightOnlyNorm('Qwen3RMSNorm', d),
  qkNorms: 'perHead',
}));

/** Gemma-3's text model, alone (gemma3_text) or inside the multimodal model (gemma3.ts). */
export function gemma3TextSpec(c: HfConfig): LlamaTreeSpec {
  return { prefix: 'Gemma3', baseClass: 'Gemma3TextModel', ...gemmaTree('Gemma3', c), qkNorms: 'perHead' };
}

export const gemma3TextTypeSpec = variantTypeSpec('gemma3_text', 'Gemma3Text', ['Gemma3TextForSequenceClassification'], gemma3TextSpec, 'Gemma3ForCausalLM');
