/**
 * The config classes of Falcon, Swin and CLIP as transformers 5.18.0 defines them (defaults, field
 * kinds, `attribute_map`, `__post_init__`); configs.ts puts them beside the others. Swin's `depths`
 * and `num_heads` are lists and CLIPConfig holds two configs (`text_config`, `vision_config`): those
 * fields are of kind 'any' here and checked, and resolved with their class defaults, in `finish`.
 */
import { commonUncovered, divisible, f, resolvePart, type ConfigSchema, type ConfigValue, type Field } from './configKit';

/** A list of positive ints (Swin's depths and heads), or undefined. */
function counts(value: unknown): number[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every((v) => Number.isInteger(v) && (v as number) >= 1) ? (value as number[]) : undefined;
}

/** CLIPTextConfig's and CLIPVisionConfig's structural fields with their 5.18 defaults; the resolved part holds exactly these. */
export const CLIP_TEXT_DEFAULTS = {
  vocab_size: 49408, hidden_size: 512, intermediate_size: 2048, projection_dim: 512, num_hidden_layers: 12, num_attention_heads: 8,
  max_position_embeddings: 77, hidden_act: 'quick_gelu',
} as const;
export const CLIP_VISION_DEFAULTS = {
  hidden_size: 768, intermediate_size: 3072, projection_dim: 512, num_hidden_layers: 12, num_attention_heads: 12, num_channels: 3,
  image_size: 224, patch_size: 32, hidden_act: 'quick_gelu',
} as const;
/** Fields of the two parts that make no row (dropouts, epsilons, token ids, initialisation). */
const CLIP_PART_NO_EFFECT = new Set(['layer_norm_eps', 'attention_dropout', 'dropout', 'initializer_range', 'initializer_factor']);

export type ClipPart = Readonly<Record<string, number | string>>;

/** `CLIPTextConfig(**text_config)` / `CLIPVisionConfig(**vision_config)`: the part's defaults, then the given values; a message where one is not accepted. */
function clipPart(what: 'text_config' | 'vision_config', given: unknown): ClipPart | string {
  const part = resolvePart(what, what === 'text_config' ? CLIP_TEXT_DEFAULTS : CLIP_VISION_DEFAULTS, given, CLIP_PART_NO_EFFECT);
  if (typeof part === 'string') return part;
  return divisible(part.hidden_size!, part.num_attention_heads!, `${what}: hidden_size must be a multiple of num_attention_heads`) ?? (part as ClipPart);
}

const SWIN_FIELDS: Readonly<Record<string, Field>> = {
  image_size: f('count'), patch_size: f('count'), num_channels: f('count'), embed_dim: f('count'), depths: f('any'), num_heads: f('any'),
  window_size: f('count'), mlp_ratio: f('number'), qkv_bias: f('bool'), hidden_dropout_prob: f('number'), attention_probs_dropout_prob: f('number'),
  drop_path_rate: f('number'), hidden_act: f('activation'), use_absolute_embeddings: f('bool'), layer_norm_eps: f('number'), encoder_stride: f('count'),
  out_features: f('any'), out_indices: f('any'), hidden_size: f('any'), num_layers: f('any'),
};

export const FALCON_SWIN_CLIP_SCHEMAS: Readonly<Record<'falcon' | 'swin' | 'clip', ConfigSchema>> = {
  falcon: {
    modelType: 'falcon',
    configClass: 'FalconConfig',
    defaults: {
      vocab_size: 65024, hidden_size: 4544, num_hidden_layers: 32, num_attention_heads: 71, num_ln_in_parallel_attn: null, layer_norm_epsilon: 1e-5,
      hidden_dropout: 0, attention_dropout: 0, num_kv_heads: null, alibi: false, new_decoder_architecture: false, multi_query: true,
      parallel_attn: true, bias: false, max_position_embeddings: 2048, bos_token_id: 11, eos_token_id: 11, pad_token_id: null,
      ffn_hidden_size: null, activation: 'gelu', tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), hidden_size: f('count'), num_hidden_layers: f('count'), num_attention_heads: f('count'),
      num_ln_in_parallel_attn: f('count', { nullable: true }), layer_norm_epsilon: f('number'), hidden_dropout: f('number'),
      attention_dropout: f('number'), num_kv_heads: f('count', { nullable: true }), alibi: f('bool'), new_decoder_architecture: f('bool'),
      multi_query: f('bool'), parallel_attn: f('bool'), bias: f('bool'), max_position_embeddings: f('count'), rope_parameters: f('any'),
      rope_theta: f('number'), rope_scaling: f('any'), ffn_hidden_size: f('count', { nullable: true }), activation: f('activation'),
      // Read by the original remote code only; FalconConfig 5.18 keeps it as an attribute no module reads.
      apply_residual_connection_post_layernorm: f('any'),
    },
    // FalconConfig takes `n_embed` for hidden_size (its backward-compatible keyword).
    aliases: { n_embed: 'hidden_size' },
    finish(c) {
      if (c.num_kv_heads === null) c.num_kv_heads = c.num_attention_heads!;
      if (c.ffn_hidden_size === null) c.ffn_hidden_size = (c.hidden_size as number) * 4;
      // FalconDecoderLayer sets it on the shared config while the layers are built.
      if (c.num_ln_in_parallel_attn === null && c.new_decoder_architecture === true) c.num_ln_in_parallel_attn = 2;
      return divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be divisible by num_attention_heads');
    },
    uncovered(c) {
      const common = commonUncovered(c);
      if (common) return common;
      // Each of these builds layer norms that forward then does not find (the library raises AttributeError).
      if (c.new_decoder_architecture === true && c.parallel_attn !== true) {
        return 'new_decoder_architecture=True with parallel_attn=False builds no norm for the MLP that forward can use (the library raises)';
      }
      if (c.new_decoder_architecture !== true && c.parallel_attn === true && c.num_ln_in_parallel_attn === 2) {
        return 'num_ln_in_parallel_attn=2 without new_decoder_architecture builds no input_layernorm for forward to call (the library raises)';
      }
      if (c.attn_implementation === 'flash_attention_3' || c.attn_implementation === 'flex_attention') {
        return `attn_implementation='${String(c.attn_implementation)}' is not supported by Falcon`;
      }
      return undefined;
    },
  },
  swin: {
    modelType: 'swin',
    configClass: 'SwinConfig',
    defaults: {
      image_size: 224, patch_size: 4, num_channels: 3, embed_dim: 96, depths: [2, 2, 6, 2] as unknown as ConfigValue, num_heads: [3, 6, 12, 24] as unknown as ConfigValue,
      window_size: 7, mlp_ratio: 4.0, qkv_bias: true, hidden_dropout_prob: 0, attention_probs_dropout_prob: 0, drop_path_rate: 0.1, hidden_act: 'gelu',
      use_absolute_embeddings: false, layer_norm_eps: 1e-5, encoder_stride: 32,
    },
    fields: SWIN_FIELDS,
    aliases: { num_attention_heads: 'num_heads', num_hidden_layers: 'num_layers' },
    finish(c) {
      const depths = counts(c.depths);
      const heads = counts(c.num_heads);
      if (!depths) return 'depths should be a list of ints of at least 1';
      if (!heads || heads.length !== depths.length) return 'num_heads should be a list of ints of at least 1, one per stage (as long as depths)';
      c.depths = [...depths] as unknown as ConfigValue;
      c.num_heads = [...heads] as unknown as ConfigValue;
      // __post_init__: the derived values (hidden_size is the last stage's width).
      c.num_layers = depths.length;
      c.hidden_size = (c.embed_dim as number) * 2 ** (depths.length - 1);
      for (let i = 0; i < depths.length; i++) {
        const message = divisible((c.embed_dim as number) * 2 ** i, heads[i]!, `stage ${i}: its width must be a multiple of num_heads[${i}]`);
        if (message) return message;
      }
      return undefined;
    },
    uncovered: commonUncovered,
  },
  clip: {
    modelType: 'clip',
    configClass: 'CLIPConfig',
    defaults: { text_config: null, vision_config: null, projection_dim: 512, logit_scale_init_value: 2.6592 },
    fields: { text_config: f('any'), vision_config: f('any'), projection_dim: f('count'), logit_scale_init_value: f('number') },
    aliases: {},
    finish(c) {
      for (const what of ['text_config', 'vision_config'] as const) {
        const part = clipPart(what, c[what]);
        if (typeof part === 'string') return part;
        c[what] = part as unknown as ConfigValue;
      }
      return undefined;
    },
    uncovered: commonUncovered,
  },
};
