/**
 * The config classes of the mixture-of-experts decoders the catalog covers, Mixtral, Qwen2-MoE and
 * Qwen3-MoE (MixtralConfig, Qwen2MoeConfig, Qwen3MoeConfig: defaults, field kinds, `__post_init__`);
 * configs.ts puts them beside the others. Layouts the module trees (models/moe.ts) do not build are
 * refused: Qwen2-MoE and Qwen3-MoE layers that keep a dense MLP (decoder_sparse_step other than 1,
 * mlp_only_layers).
 */
import { commonUncovered, divisible, f, type ConfigSchema, type ConfigValue, type Field } from './configKit';

const ATTENTION_FIELDS: Readonly<Record<string, Field>> = {
  vocab_size: f('count'), hidden_size: f('count'), intermediate_size: f('count'), num_hidden_layers: f('count'), num_attention_heads: f('count'),
  num_key_value_heads: f('count', { nullable: true }), head_dim: f('count', { nullable: true }), hidden_act: f('activation'),
  max_position_embeddings: f('count'), initializer_range: f('number'), rms_norm_eps: f('number'), rope_theta: f('number'), rope_scaling: f('any'),
  rope_parameters: f('any'), sliding_window: f('int', { nullable: true }), attention_dropout: f('number'), num_experts_per_tok: f('count'),
  output_router_logits: f('bool'), router_aux_loss_coef: f('number'), token_classification_bias: f('bool'),
};

function finishAttention(c: Record<string, ConfigValue>): string | undefined {
  if (c.num_key_value_heads === null) c.num_key_value_heads = c.num_attention_heads!;
  if (c.head_dim === null || c.head_dim === undefined) c.head_dim = Math.floor((c.hidden_size as number) / (c.num_attention_heads as number));
  return (
    divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads') ??
    divisible(c.num_attention_heads!, c.num_key_value_heads!, 'num_attention_heads must be a multiple of num_key_value_heads')
  );
}

export const MOE_SCHEMAS: Readonly<Record<'mixtral' | 'qwen2_moe' | 'qwen3_moe', ConfigSchema>> = {
  mixtral: {
    modelType: 'mixtral',
    configClass: 'MixtralConfig',
    defaults: {
      vocab_size: 32000, hidden_size: 4096, intermediate_size: 14336, num_hidden_layers: 32, num_attention_heads: 32, num_key_value_heads: 8,
      head_dim: null, hidden_act: 'silu', max_position_embeddings: 131072, initializer_range: 0.02, rms_norm_eps: 1e-5, rope_theta: 1e6,
      sliding_window: null, attention_dropout: 0.0, num_experts_per_tok: 2, num_local_experts: 8, output_router_logits: false,
      router_aux_loss_coef: 0.001, router_jitter_noise: 0.0, pad_token_id: null, bos_token_id: 1, eos_token_id: 2, tie_word_embeddings: false,
    },
    fields: { ...ATTENTION_FIELDS, num_local_experts: f('count'), router_jitter_noise: f('number') },
    aliases: {},
    finish: finishAttention,
    uncovered: commonUncovered,
  },
  qwen2_moe: {
    modelType: 'qwen2_moe',
    configClass: 'Qwen2MoeConfig',
    defaults: {
      vocab_size: 151936, hidden_size: 2048, intermediate_size: 5632, num_hidden_layers: 24, num_attention_heads: 16, num_key_value_heads: 16,
      head_dim: null, hidden_act: 'silu', max_position_embeddings: 32768, initializer_range: 0.02, rms_norm_eps: 1e-6, rope_theta: 10000.0,
      use_sliding_window: false, sliding_window: 4096, max_window_layers: 28, attention_dropout: 0.0, decoder_sparse_step: 1,
      moe_intermediate_size: 1408, shared_expert_intermediate_size: 5632, num_experts_per_tok: 4, num_experts: 60, norm_topk_prob: false,
      output_router_logits: false, router_aux_loss_coef: 0.001, pad_token_id: null, bos_token_id: null, eos_token_id: null, tie_word_embeddings: false,
    },
    fields: {
      ...ATTENTION_FIELDS, use_sliding_window: f('bool'), max_window_layers: f('int'), decoder_sparse_step: f('count'), moe_intermediate_size: f('count'),
      shared_expert_intermediate_size: f('count'), num_experts: f('count'), norm_topk_prob: f('bool'), mlp_only_layers: f('any'), qkv_bias: f('bool'),
    },
    aliases: {},
    finish: finishAttention,
    uncovered: (c) =>
      commonUncovered(c) ??
      (c.decoder_sparse_step !== 1 || (c.mlp_only_layers !== undefined && c.mlp_only_layers !== null)
        ? 'Qwen2-MoE layers that keep a dense MLP (decoder_sparse_step other than 1, mlp_only_layers) are not covered'
        : c.qkv_bias === false
          ? 'qkv_bias=False is not covered'
          : undefined),
  },
  qwen3_moe: {
    modelType: 'qwen3_moe',
    configClass: 'Qwen3MoeConfig',
    defaults: {
      vocab_size: 151936, hidden_size: 2048, intermediate_size: 6144, num_hidden_layers: 24, num_attention_heads: 32, num_key_value_heads: 4,
      // Qwen3MoeConfig has no head_dim field: the attention reads one the config.json gives, else hidden_size / heads.
      head_dim: null, hidden_act: 'silu', max_position_embeddings: 32768, initializer_range: 0.02, rms_norm_eps: 1e-6, tie_word_embeddings: false,
      attention_bias: false, use_sliding_window: false, sliding_window: 4096, attention_dropout: 0.0, decoder_sparse_step: 1, moe_intermediate_size: 768,
      num_experts_per_tok: 8, num_experts: 128, norm_topk_prob: false, output_router_logits: false, router_aux_loss_coef: 0.001,
      pad_token_id: null, bos_token_id: null, eos_token_id: null,
    },
    fields: {
      ...ATTENTION_FIELDS, attention_bias: f('bool'), use_sliding_window: f('bool'), max_window_layers: f('int'), decoder_sparse_step: f('count'),
      moe_intermediate_size: f('count'), num_experts: f('count'), norm_topk_prob: f('bool'), mlp_only_layers: f('any'),
    },
    aliases: {},
    // No divisibility check (head_dim may be apart from the width); the window is dropped unless use_sliding_window.
    finish: (c) => {
      if (c.use_sliding_window !== true) c.sliding_window = null;
      if (c.num_key_value_heads === null) c.num_key_value_heads = c.num_attention_heads!;
      if (c.head_dim === null || c.head_dim === undefined) c.head_dim = Math.floor((c.hidden_size as number) / (c.num_attention_heads as number));
      return undefined;
    },
    uncovered: (c) =>
      commonUncovered(c) ??
      (c.decoder_sparse_step !== 1 || (c.mlp_only_layers !== undefined && c.mlp_only_layers !== null)
        ? 'Qwen3-MoE layers that keep a dense MLP (decoder_sparse_step other than 1, mlp_only_layers) are not covered'
        : undefined),
  },
};
