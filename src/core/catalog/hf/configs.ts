/**
 * The configuration classes of the covered model types, as transformers 5.18.0 defines them: each
 * field's default, its other names (`attribute_map`: `n_layer` is `num_hidden_layers` in GPT-2),
 * what values it takes, and the values `__post_init__` derives. A config is resolved from the class
 * defaults, the checkpoint's config.json, the config object's arguments and the call's keyword
 * arguments, in that order; anything the catalog does not know is a miss, not a guess.
 */
import { knownActivation } from './layers';
import { LLAMA_STYLE, LLAMA_STYLE_TYPES, type LlamaStyleEntry, type LlamaStyleType } from './llamaStyle';
import { COMMON, commonUncovered, divisible, f, type ConfigSchema, type Field, type HfConfig, type ModelType } from './configKit';
import { DECODER_SCHEMAS } from './decoderSchemas';
import { FALCON_SWIN_CLIP_SCHEMAS } from './falconSwinClipSchemas';
import { MOE_SCHEMAS } from './moeSchemas';
import { DECODER_VARIANT_SCHEMAS } from './decoderVariantSchemas';
import { GEMMA3_SCHEMA } from './gemma3Schema';
import { VISION_SCHEMAS } from './visionSchemas';

export type { ConfigSchema, ConfigValue, HfConfig, ModelType } from './configKit';

const BERT_FIELDS: Readonly<Record<string, Field>> = {
  vocab_size: f('count'),
  hidden_size: f('count'),
  num_hidden_layers: f('count'),
  num_attention_heads: f('count'),
  intermediate_size: f('count'),
  hidden_act: f('activation'),
  hidden_dropout_prob: f('number'),
  attention_probs_dropout_prob: f('number'),
  max_position_embeddings: f('count'),
  type_vocab_size: f('count'),
  layer_norm_eps: f('number'),
};

/** The kinds of the fields LLaMA-style models are built from; every other field of theirs is read by nothing that makes a row. */
const LLAMA_STYLE_KINDS: Readonly<Record<string, Field>> = {
  vocab_size: f('count'), hidden_size: f('count'), intermediate_size: f('count'), num_hidden_layers: f('count'), num_attention_heads: f('count'),
  num_key_value_heads: f('count', { nullable: true }), head_dim: f('count', { nullable: true }), hidden_act: f('activation'),
  hidden_activation: f('activation'), max_position_embeddings: f('count'), rms_norm_eps: f('number'), attention_bias: f('bool'), mlp_bias: f('bool'),
  attention_dropout: f('number'),
};

/** A LLaMA-style config class from what the generator read from the library (llamaStyle.json). */
function llamaStyleSchema(entry: LlamaStyleEntry): ConfigSchema {
  const fields: Record<string, Field> = {
    // Names older config.json files carry and the generic heads read with getattr.
    rope_theta: f('number'), rope_scaling: f('any'), token_classification_bias: f('bool'),
  };
  for (const name of entry.fields) if (!Object.prototype.hasOwnProperty.call(COMMON, name)) fields[name] = LLAMA_STYLE_KINDS[name] ?? f('any');
  return {
    modelType: entry.modelType,
    configClass: entry.configClass,
    defaults: entry.defaults,
    fields,
    aliases: entry.aliases,
    finish(c) {
      const act = c[entry.activationField];
      if (typeof act === 'string' && entry.activationRewrites[act]) c[entry.activationField] = entry.activationRewrites[act]!;
      if (c.head_dim === null || c.head_dim === undefined) c.head_dim = Math.floor((c.hidden_size as number) / (c.num_attention_heads as number));
      if (c.num_key_value_heads === null) c.num_key_value_heads = c.num_attention_heads!;
      return (
        divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads') ??
        divisible(c.num_attention_heads!, c.num_key_value_heads!, 'num_attention_heads must be a multiple of num_key_value_heads')
      );
    },
    uncovered: commonUncovered,
  };
}

const HAND_SCHEMAS: Readonly<Record<Exclude<ModelType, LlamaStyleType | keyof typeof DECODER_SCHEMAS | keyof typeof FALCON_SWIN_CLIP_SCHEMAS | keyof typeof MOE_SCHEMAS | keyof typeof DECODER_VARIANT_SCHEMAS | keyof typeof VISION_SCHEMAS | 'gemma3'>, ConfigSchema>> = {
  bert: {
    modelType: 'bert',
    configClass: 'BertConfig',
    defaults: {
      vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu',
      hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1, max_position_embeddings: 512, type_vocab_size: 2, layer_norm_eps: 1e-12,
      pad_token_id: 0, tie_word_embeddings: true,
    },
    fields: BERT_FIELDS,
    aliases: {},
    finish: (c) => divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads'),
    uncovered: commonUncovered,
  },
  roberta: {
    modelType: 'roberta',
    configClass: 'RobertaConfig',
    defaults: {
      vocab_size: 50265, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu',
      hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1, max_position_embeddings: 512, type_vocab_size: 2, layer_norm_eps: 1e-12,
      pad_token_id: 1, bos_token_id: 0, eos_token_id: 2, tie_word_embeddings: true,
    },
    fields: BERT_FIELDS,
    aliases: {},
    finish: (c) => divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads'),
    uncovered: (c) => commonUncovered(c) ?? (c.pad_token_id === null ? 'RoBERTa needs pad_token_id (its position ids start after it)' : undefined),
  },
  distilbert: {
    modelType: 'distilbert',
    configClass: 'DistilBertConfig',
    defaults: {
      vocab_size: 30522, max_position_embeddings: 512, sinusoidal_pos_embds: false, n_layers: 6, n_heads: 12, dim: 768, hidden_dim: 3072,
      dropout: 0.1, attention_dropout: 0.1, activation: 'gelu', qa_dropout: 0.1, seq_classif_dropout: 0.2, pad_token_id: 0, tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), max_position_embeddings: f('count'), sinusoidal_pos_embds: f('bool'), n_layers: f('count'), n_heads: f('count'),
      dim: f('count'), hidden_dim: f('count'), dropout: f('number'), attention_dropout: f('number'), activation: f('activation'),
      qa_dropout: f('number'), seq_classif_dropout: f('number'),
    },
    aliases: { hidden_size: 'dim', num_attention_heads: 'n_heads', num_hidden_layers: 'n_layers' },
    finish: (c) => divisible(c.dim!, c.n_heads!, 'dim must be a multiple of n_heads'),
    uncovered: commonUncovered,
  },
  gpt2: {
    modelType: 'gpt2',
    configClass: 'GPT2Config',
    defaults: {
      vocab_size: 50257, n_positions: 1024, n_embd: 768, n_layer: 12, n_head: 12, n_inner: null, activation_function: 'gelu_new',
      resid_pdrop: 0.1, embd_pdrop: 0.1, attn_pdrop: 0.1, layer_norm_epsilon: 1e-5, summary_type: 'cls_index', summary_use_proj: true,
      summary_activation: null, summary_proj_to_labels: true, summary_first_dropout: 0.1, scale_attn_weights: true,
      scale_attn_by_inverse_layer_idx: false, reorder_and_upcast_attn: false, bos_token_id: 50256, eos_token_id: 50256, pad_token_id: null,
      tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), n_positions: f('count'), n_embd: f('count'), n_layer: f('count'), n_head: f('count'), n_inner: f('count', { nullable: true }),
      activation_function: f('activation'), resid_pdrop: f('number'), embd_pdrop: f('number'), attn_pdrop: f('number'), layer_norm_epsilon: f('number'),
      summary_type: f('any'), summary_use_proj: f('any'), summary_activation: f('any'), summary_proj_to_labels: f('any'), summary_first_dropout: f('any'),
      scale_attn_weights: f('bool'), scale_attn_by_inverse_layer_idx: f('bool'), reorder_and_upcast_attn: f('bool'), n_ctx: f('any'),
    },
    aliases: { hidden_size: 'n_embd', max_position_embeddings: 'n_positions', num_attention_heads: 'n_head', num_hidden_layers: 'n_layer' },
    finish: (c) => divisible(c.n_embd!, c.n_head!, 'n_embd must be a multiple of n_head'),
    uncovered: commonUncovered,
  },
  xlnet: {
    modelType: 'xlnet',
    configClass: 'XLNetConfig',
    defaults: {
      vocab_size: 32000, d_model: 1024, n_layer: 24, n_head: 16, d_inner: 4096, d_head: null, ff_activation: 'gelu', attn_type: 'bi',
      layer_norm_eps: 1e-12, dropout: 0.1, mem_len: 512, reuse_len: null, use_mems_eval: true, use_mems_train: false, bi_data: false,
      clamp_len: -1, same_length: false, summary_type: 'last', summary_use_proj: true, summary_activation: 'tanh', summary_last_dropout: 0.1,
      start_n_top: 5, end_n_top: 5, pad_token_id: 5, bos_token_id: 1, eos_token_id: 2, tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), d_model: f('count'), n_layer: f('count'), n_head: f('count'), d_inner: f('count'), d_head: f('count', { nullable: true }),
      ff_activation: f('activation'), attn_type: f('string', { choices: ['bi', 'uni'] }), layer_norm_eps: f('number'), dropout: f('number'),
      mem_len: f('int', { nullable: true }), reuse_len: f('int', { nullable: true }), use_mems_eval: f('bool'), use_mems_train: f('bool'),
      bi_data: f('bool'), clamp_len: f('int'), same_length: f('bool'), summary_type: f('string', { choices: ['last', 'first', 'mean', 'cls_index'] }),
      summary_use_proj: f('bool'), summary_activation: f('activation'), summary_last_dropout: f('number'),
      start_n_top: f('int'), end_n_top: f('int'), untie_r: f('any'), n_token: f('count'),
    },
    aliases: { n_token: 'vocab_size', hidden_size: 'd_model', num_attention_heads: 'n_head', num_hidden_layers: 'n_layer' },
    finish(c) {
      const message = divisible(c.d_model!, c.n_head!, 'd_model must be a multiple of n_head');
      if (message) return message;
      const dHead = (c.d_model as number) / (c.n_head as number);
      if (c.d_head === null) c.d_head = dHead;
      else if (c.d_head !== dHead) return `d_head (${c.d_head}) should be equal to d_model // n_head (${dHead})`;
      return undefined;
    },
    uncovered: (c) => commonUncovered(c) ?? (c.bi_data === true ? 'bi_data=True (pretraining with bidirectional data) is not covered' : undefined),
  },
  t5: {
    modelType: 't5',
    configClass: 'T5Config',
    defaults: {
      vocab_size: 32128, d_model: 512, d_kv: 64, d_ff: 2048, num_layers: 6, num_decoder_layers: null, num_heads: 8,
      relative_attention_num_buckets: 32, relative_attention_max_distance: 128, dropout_rate: 0.1, layer_norm_epsilon: 1e-6,
      feed_forward_proj: 'relu', pad_token_id: 0, eos_token_id: 1, decoder_start_token_id: 0, classifier_dropout: 0.0, tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), d_model: f('count'), d_kv: f('count'), d_ff: f('count'), num_layers: f('count'), num_decoder_layers: f('count', { nullable: true }),
      num_heads: f('count'), relative_attention_num_buckets: f('count'), relative_attention_max_distance: f('count'), dropout_rate: f('number'),
      layer_norm_epsilon: f('number'), feed_forward_proj: f('string'), n_positions: f('any'),
    },
    aliases: { hidden_size: 'd_model', num_attention_heads: 'num_heads', num_hidden_layers: 'num_layers', head_dim: 'd_kv' },
    finish(c) {
      if (c.num_decoder_layers === null) c.num_decoder_layers = c.num_layers!;
      const parts = String(c.feed_forward_proj).split('-');
      const act = c.feed_forward_proj === 'gated-gelu' ? 'gelu_new' : parts[parts.length - 1]!;
      if (parts.length > 2 || (parts.length === 2 && parts[0] !== 'gated') || !knownActivation(act)) {
        return (
          `feed_forward_proj '${c.feed_forward_proj}' is not a valid activation function of the dense layer; ` +
          `it should be 'gated-{ACT_FN}' or '{ACT_FN}', e.g. 'gated-gelu' or 'relu'`
        );
      }
      // T5Config forces tie_word_embeddings to True in transformers 5.x (False only stops the output scaling).
      c.tie_word_embeddings = true;
      return undefined;
    },
    uncovered: commonUncovered,
  },
  vit: {
    modelType: 'vit',
    configClass: 'ViTConfig',
    defaults: {
      hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu', hidden_dropout_prob: 0.0,
      attention_probs_dropout_prob: 0.0, layer_norm_eps: 1e-12, image_size: 224, patch_size: 16, num_channels: 3, qkv_bias: true,
      encoder_stride: 16, pooler_output_size: null, pooler_act: 'tanh',
    },
    fields: {
      hidden_size: f('count'), num_hidden_layers: f('count'), num_attention_heads: f('count'), intermediate_size: f('count'), hidden_act: f('activation'),
      hidden_dropout_prob: f('number'), attention_probs_dropout_prob: f('number'), layer_norm_eps: f('number'), image_size: f('count'),
      patch_size: f('count'), num_channels: f('count'), qkv_bias: f('bool'), encoder_stride: f('count'), pooler_output_size: f('count', { nullable: true }),
      pooler_act: f('activation'),
    },
    aliases: {},
    finish(c) {
      if (c.pooler_output_size === null) c.pooler_output_size = c.hidden_size!;
      return undefined;
    },
    uncovered: commonUncovered,
  },
};

export const SCHEMAS: Readonly<Record<ModelType, ConfigSchema>> = {
  ...HAND_SCHEMAS,
  ...DECODER_SCHEMAS,
  ...FALCON_SWIN_CLIP_SCHEMAS,
  ...MOE_SCHEMAS,
  ...DECODER_VARIANT_SCHEMAS,
  gemma3: GEMMA3_SCHEMA,
  ...VISION_SCHEMAS,
  ...(Object.fromEntries(LLAMA_STYLE_TYPES.map((t) => [t, llamaStyleSchema(LLAMA_STYLE[t])])) as Record<LlamaStyleType, ConfigSchema>),
};

export function num(config: HfConfig, name: string): number {
  const value = config[name];
  if (typeof value !== 'number') throw new Error(`config value ${name} is ${String(value)}, not a number`);
  return value;
}

/** A Transformer's width under the names the config classes give it (GPT-2's n_embd, T5's and BART's d_model, DistilBERT's dim). */
export function modelWidth(config: Readonly<Record<string, unknown>>): number | undefined {
  return ['hidden_size', 'n_embd', 'd_model', 'dim'].map((name) => config[name]).find((value): value is number => typeof value === 'number');
}

/** A per-stage list the schema checked in `finish` (Swin's depths and heads, ConvNeXt's and ResNet's hidden sizes). */
export function counts(config: HfConfig, name: string): number[] {
  const value = config[name] as unknown;
  if (!Array.isArray(value)) throw new Error(`config value ${name} is ${String(value)}, not a list`);
  return value as number[];
}

export function str(config: HfConfig, name: string): string {
  const value = config[name];
  if (typeof value !== 'string') throw new Error(`config value ${name} is ${String(value)}, not a string`);
  return value;
}
