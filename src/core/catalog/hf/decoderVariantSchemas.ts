/**
 * The config classes of Gemma-2, Gemma-3's text model, Phi-3, GPT-NeoX, OLMo, OLMo-2 and Qwen3 as transformers 5.18.0 defines
 * them (defaults, field kinds, `__post_init__`, `validate_architecture`); configs.ts puts them beside
 * the others. Fields that size no module (rotary settings, soft-capping, sliding windows, dropout
 * rates of functional dropout) are kind 'any' or 'number': the generator's cases check they change no row.
 */
import { commonUncovered, divisible, f, type ConfigSchema, type ConfigValue, type Field } from './configKit';

/** Rotary settings every one of these accepts, including the names older config.json files carry. */
const ROTARY: Readonly<Record<string, Field>> = {
  rope_parameters: f('any'), rope_theta: f('number'), rope_scaling: f('any'), partial_rotary_factor: f('number'), token_classification_bias: f('bool'),
};

/** A decoder's core sizes: what every one of them reads to size its modules. */
const SIZES: Readonly<Record<string, Field>> = {
  vocab_size: f('count'), hidden_size: f('count'), intermediate_size: f('count'), num_hidden_layers: f('count'), num_attention_heads: f('count'),
  max_position_embeddings: f('count'), attention_dropout: f('number'),
};

/** `num_key_value_heads=None` means full multi-head attention (`__post_init__`), then the shared divisibility checks. */
function groupedHeads(c: Record<string, ConfigValue>): string | undefined {
  if (c.num_key_value_heads === null) c.num_key_value_heads = c.num_attention_heads!;
  return (
    divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads') ??
    divisible(c.num_attention_heads!, c.num_key_value_heads!, 'num_attention_heads must be a multiple of num_key_value_heads')
  );
}

/** OlmoConfig's and Olmo2Config's shared defaults. */
const OLMO_DEFAULTS: Readonly<Record<string, ConfigValue>> = {
  vocab_size: 50304, hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: null,
  hidden_act: 'silu', max_position_embeddings: 2048, pad_token_id: 1, bos_token_id: null, eos_token_id: 50279, tie_word_embeddings: false,
  attention_bias: false, attention_dropout: 0,
};

const OLMO_FIELDS: Readonly<Record<string, Field>> = {
  ...SIZES, ...ROTARY, num_key_value_heads: f('count', { nullable: true }), hidden_act: f('activation'), attention_bias: f('bool'),
};

/** What Gemma-2's and Gemma-3's text configs share: defaults (their sizes are Gemma-2 2B's) and fields. */
const GEMMA_DEFAULTS: Readonly<Record<string, ConfigValue>> = {
  hidden_size: 2304, intermediate_size: 9216, num_hidden_layers: 26, num_attention_heads: 8, num_key_value_heads: 4, head_dim: 256,
  hidden_activation: 'gelu_pytorch_tanh', rms_norm_eps: 1e-6, pad_token_id: 0, eos_token_id: 1, bos_token_id: 2, tie_word_embeddings: true,
  attention_bias: false, attention_dropout: 0, query_pre_attn_scalar: 256, sliding_window: 4096, layer_types: null,
};
const GEMMA_FIELDS: Readonly<Record<string, Field>> = {
  ...SIZES, ...ROTARY, num_key_value_heads: f('count'), head_dim: f('count'), hidden_activation: f('activation'), rms_norm_eps: f('number'),
  attention_bias: f('bool'), query_pre_attn_scalar: f('number'), sliding_window: f('count', { nullable: true }),
  // Which layers attend to a sliding window and which to the whole sequence: the mask, not the modules.
  layer_types: f('any'), final_logit_softcapping: f('number', { nullable: true }), attn_logit_softcapping: f('number', { nullable: true }),
  use_bidirectional_attention: f('any'), cache_implementation: f('any'),
  // Gemma's config.json files carry hidden_act beside hidden_activation; the config keeps it as an attribute the MLP does not read.
  hidden_act: f('any'),
};

export const DECODER_VARIANT_SCHEMAS: Readonly<Record<'gemma2' | 'gemma3_text' | 'phi3' | 'gpt_neox' | 'olmo' | 'olmo2' | 'qwen3', ConfigSchema>> = {
  gemma2: {
    modelType: 'gemma2',
    configClass: 'Gemma2Config',
    defaults: { ...GEMMA_DEFAULTS, vocab_size: 256000, max_position_embeddings: 8192, final_logit_softcapping: 30.0, attn_logit_softcapping: 50.0, use_bidirectional_attention: null },
    fields: GEMMA_FIELDS,
    aliases: {},
    finish: (c) => groupedHeads(c),
    uncovered: commonUncovered,
  },
  gemma3_text: {
    modelType: 'gemma3_text',
    configClass: 'Gemma3TextConfig',
    defaults: { ...GEMMA_DEFAULTS, vocab_size: 262208, max_position_embeddings: 131072, final_logit_softcapping: null, attn_logit_softcapping: null, use_bidirectional_attention: false },
    // The older sliding_window_pattern (which layers attend to a window) and the local layers' rotary base: the mask and the positions, not the modules.
    fields: { ...GEMMA_FIELDS, sliding_window_pattern: f('any'), rope_local_base_freq: f('number') },
    aliases: {},
    // Gemma3TextConfig.validate_architecture checks the width against the heads only (head_dim is its own field).
    finish: (c) => divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads'),
    uncovered: commonUncovered,
  },
  phi3: {
    modelType: 'phi3',
    configClass: 'Phi3Config',
    defaults: {
      vocab_size: 32064, hidden_size: 3072, intermediate_size: 8192, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: null,
      resid_pdrop: 0, embd_pdrop: 0, attention_dropout: 0, hidden_act: 'silu', max_position_embeddings: 4096, original_max_position_embeddings: 4096,
      rms_norm_eps: 1e-5, tie_word_embeddings: false, bos_token_id: 1, eos_token_id: 32000, pad_token_id: 32000, sliding_window: null,
    },
    fields: {
      ...SIZES, ...ROTARY, num_key_value_heads: f('count', { nullable: true }), resid_pdrop: f('number'), embd_pdrop: f('number'),
      hidden_act: f('activation'), original_max_position_embeddings: f('count'), rms_norm_eps: f('number'), sliding_window: f('count', { nullable: true }),
    },
    aliases: {},
    finish: (c) => groupedHeads(c),
    uncovered: commonUncovered,
  },
  gpt_neox: {
    modelType: 'gpt_neox',
    configClass: 'GPTNeoXConfig',
    defaults: {
      vocab_size: 50432, hidden_size: 6144, num_hidden_layers: 44, num_attention_heads: 64, intermediate_size: 24576, hidden_act: 'gelu',
      attention_dropout: 0, hidden_dropout: 0, classifier_dropout: 0.1, max_position_embeddings: 2048, layer_norm_eps: 1e-5, bos_token_id: 0,
      eos_token_id: 2, pad_token_id: null, tie_word_embeddings: false, use_parallel_residual: true, attention_bias: true,
    },
    fields: {
      ...SIZES, ...ROTARY, hidden_act: f('activation'), hidden_dropout: f('number'), layer_norm_eps: f('number'), use_parallel_residual: f('bool'),
      attention_bias: f('bool'),
      // The names Pythia's and GPT-NeoX-20B's config.json files give the rotary share and base (GPTNeoXConfig folds them into rope_parameters).
      rotary_pct: f('number'), rotary_emb_base: f('number'),
    },
    aliases: {},
    finish: (c) => divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads'),
    uncovered: commonUncovered,
  },
  olmo: {
    modelType: 'olmo',
    configClass: 'OlmoConfig',
    defaults: { ...OLMO_DEFAULTS, clip_qkv: null },
    // clip_qkv clamps the projections in place: no module.
    fields: { ...OLMO_FIELDS, clip_qkv: f('number', { nullable: true }) },
    aliases: {},
    finish: (c) => groupedHeads(c),
    uncovered: commonUncovered,
  },
  olmo2: {
    modelType: 'olmo2',
    configClass: 'Olmo2Config',
    defaults: { ...OLMO_DEFAULTS, rms_norm_eps: 1e-5 },
    fields: { ...OLMO_FIELDS, rms_norm_eps: f('number') },
    aliases: {},
    finish: (c) => groupedHeads(c),
    uncovered: commonUncovered,
  },
  qwen3: {
    modelType: 'qwen3',
    configClass: 'Qwen3Config',
    defaults: {
      vocab_size: 151936, hidden_size: 4096, intermediate_size: 22016, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: 32,
      head_dim: 128, hidden_act: 'silu', max_position_embeddings: 32768, rms_norm_eps: 1e-6, tie_word_embeddings: false, attention_bias: false,
      use_sliding_window: false, sliding_window: 4096, max_window_layers: 28, layer_types: null, attention_dropout: 0, pad_token_id: null,
      bos_token_id: null, eos_token_id: null,
    },
    fields: {
      ...OLMO_FIELDS, head_dim: f('count'), rms_norm_eps: f('number'),
      // Which layers attend to a sliding window: the mask, not the modules.
      use_sliding_window: f('bool'), sliding_window: f('count', { nullable: true }), max_window_layers: f('count'), layer_types: f('any'),
    },
    aliases: {},
    // Qwen3Config checks no divisibility (head_dim is its own field): it drops the window unless use_sliding_window, and a missing key-value count means one per head.
    finish: (c) => {
      if (c.use_sliding_window !== true) c.sliding_window = null;
      if (c.num_key_value_heads === null) c.num_key_value_heads = c.num_attention_heads!;
      return undefined;
    },
    uncovered: commonUncovered,
  },
};
