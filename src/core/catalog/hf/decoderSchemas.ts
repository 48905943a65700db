/**
 * The config classes of Phi, OPT, DeBERTa-v2, BLOOM, GPT-Neo, GPT-J, ELECTRA, ALBERT and BART as transformers 5.18.0 defines them
 * (defaults, field kinds, `attribute_map`, `__post_init__`); configs.ts puts them beside the others.
 */
import { commonUncovered, divisible, f, type ConfigSchema } from './configKit';

export const DECODER_SCHEMAS: Readonly<Record<'phi' | 'opt' | 'deberta-v2' | 'bloom' | 'gpt_neo' | 'gptj' | 'electra' | 'albert' | 'bart', ConfigSchema>> = {
  phi: {
    modelType: 'phi',
    configClass: 'PhiConfig',
    defaults: {
      vocab_size: 51200, hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 24, num_attention_heads: 32, num_key_value_heads: null,
      resid_pdrop: 0.0, embd_pdrop: 0.0, attention_dropout: 0.0, hidden_act: 'gelu_new', max_position_embeddings: 2048, layer_norm_eps: 1e-5,
      qk_layernorm: false, bos_token_id: 1, eos_token_id: 2, pad_token_id: null, tie_word_embeddings: false,
    },
    fields: {
      vocab_size: f('count'), hidden_size: f('count'), intermediate_size: f('count'), num_hidden_layers: f('count'), num_attention_heads: f('count'),
      num_key_value_heads: f('count', { nullable: true }), resid_pdrop: f('number'), embd_pdrop: f('number'), attention_dropout: f('number'),
      hidden_act: f('activation'), max_position_embeddings: f('count'), layer_norm_eps: f('number'), qk_layernorm: f('bool'),
      rope_parameters: f('any'), rope_theta: f('number'), partial_rotary_factor: f('number'), rope_scaling: f('any'), token_classification_bias: f('bool'),
    },
    aliases: {},
    finish(c) {
      if (c.num_key_value_heads === null) c.num_key_value_heads = c.num_attention_heads!;
      return (
        divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads') ??
        divisible(c.num_attention_heads!, c.num_key_value_heads!, 'num_attention_heads must be a multiple of num_key_value_heads')
      );
    },
    uncovered: (c) => commonUncovered(c) ?? (c.qk_layernorm === true ? 'qk_layernorm=True (norms on queries and keys) is not covered' : undefined),
  },
  opt: {
    modelType: 'opt',
    configClass: 'OPTConfig',
    defaults: {
      vocab_size: 50272, hidden_size: 768, num_hidden_layers: 12, ffn_dim: 3072, max_position_embeddings: 2048, do_layer_norm_before: true,
      _remove_final_layer_norm: false, word_embed_proj_dim: null, dropout: 0.1, attention_dropout: 0.0, num_attention_heads: 12,
      activation_function: 'relu', layerdrop: 0.0, init_std: 0.02, pad_token_id: 1, bos_token_id: 2, eos_token_id: 2, enable_bias: true,
      layer_norm_elementwise_affine: true, tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), hidden_size: f('count'), num_hidden_layers: f('count'), ffn_dim: f('count'), max_position_embeddings: f('count'),
      do_layer_norm_before: f('bool'), _remove_final_layer_norm: f('bool'), word_embed_proj_dim: f('count', { nullable: true }), dropout: f('number'),
      attention_dropout: f('number'), num_attention_heads: f('count'), activation_function: f('activation'), layerdrop: f('number'), init_std: f('number'),
      enable_bias: f('bool'), layer_norm_elementwise_affine: f('bool'),
    },
    aliases: {},
    finish(c) {
      if (c.word_embed_proj_dim === null) c.word_embed_proj_dim = c.hidden_size!;
      return divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads');
    },
    uncovered: (c) => commonUncovered(c) ?? (c.layerdrop !== 0 ? 'layerdrop > 0 (layers skipped at random in training) is not covered' : undefined),
  },
  'deberta-v2': {
    modelType: 'deberta-v2',
    configClass: 'DebertaV2Config',
    defaults: {
      vocab_size: 128100, hidden_size: 1536, num_hidden_layers: 24, num_attention_heads: 24, intermediate_size: 6144, hidden_act: 'gelu',
      hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1, max_position_embeddings: 512, type_vocab_size: 0, layer_norm_eps: 1e-7,
      relative_attention: false, max_relative_positions: -1, pad_token_id: 0, position_biased_input: true, pos_att_type: null, pooler_dropout: 0,
      pooler_hidden_act: 'gelu', legacy: true, tie_word_embeddings: true,
      // Read with getattr and a default by the modeling code, not fields of the config class.
      embedding_size: null, position_buckets: -1, share_att_key: false, norm_rel_ebd: 'none', conv_kernel_size: 0, pooler_hidden_size: null,
      cls_dropout: null,
    },
    fields: {
      vocab_size: f('count'), hidden_size: f('count'), num_hidden_layers: f('count'), num_attention_heads: f('count'), intermediate_size: f('count'),
      hidden_act: f('activation'), hidden_dropout_prob: f('number'), attention_probs_dropout_prob: f('number'), max_position_embeddings: f('count'),
      type_vocab_size: f('int'), layer_norm_eps: f('number'), relative_attention: f('bool'), max_relative_positions: f('int'),
      position_biased_input: f('bool'), pos_att_type: f('string', { nullable: true }), pooler_dropout: f('number'), pooler_hidden_act: f('activation'),
      legacy: f('bool'), embedding_size: f('count', { nullable: true }), position_buckets: f('int'), share_att_key: f('bool'),
      norm_rel_ebd: f('string'), conv_kernel_size: f('int'), conv_act: f('any'), pooler_hidden_size: f('count', { nullable: true }),
      cls_dropout: f('number', { nullable: true }),
    },
    aliases: {},
    finish(c) {
      if (c.embedding_size === null) c.embedding_size = c.hidden_size!;
      if (c.pooler_hidden_size === null) c.pooler_hidden_size = c.hidden_size!;
      const unknown = String(c.pos_att_type ?? '').toLowerCase().split('|').map((s) => s.trim()).filter((s) => s && s !== 'p2c' && s !== 'c2p');
      if (unknown.length > 0) return `pos_att_type takes 'p2c', 'c2p' or both ('p2c|c2p'), not ${unknown.join(', ')}`;
      return divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads');
    },
    uncovered: (c) => commonUncovered(c) ?? ((c.conv_kernel_size as number) > 0 ? 'conv_kernel_size > 0 (the convolution beside the first layer) is not covered' : undefined),
  },
  bloom: {
    modelType: 'bloom',
    configClass: 'BloomConfig',
    defaults: {
      vocab_size: 250880, hidden_size: 64, n_layer: 2, n_head: 8, layer_norm_epsilon: 1e-5, initializer_range: 0.02, use_cache: true, bos_token_id: 1,
      eos_token_id: 2, pad_token_id: null, apply_residual_connection_post_layernorm: false, hidden_dropout: 0, attention_dropout: 0,
      pretraining_tp: 1, slow_but_exact: false, tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), hidden_size: f('count'), n_layer: f('count'), n_head: f('count'), layer_norm_epsilon: f('number'),
      apply_residual_connection_post_layernorm: f('bool'), hidden_dropout: f('number'), attention_dropout: f('number'), pretraining_tp: f('count'),
      slow_but_exact: f('bool'), seq_length: f('any'), masked_softmax_fusion: f('any'), offset_alibi: f('any'), skip_bias_add: f('any'),
      skip_bias_add_qkv: f('any'), unk_token_id: f('any'), attention_softmax_in_fp32: f('any'), bias_dropout_fusion: f('any'),
    },
    aliases: { num_hidden_layers: 'n_layer', num_attention_heads: 'n_head', n_embed: 'hidden_size' },
    finish: (c) => divisible(c.hidden_size!, c.n_head!, 'hidden_size must be a multiple of n_head'),
    uncovered: (c) =>
      commonUncovered(c) ??
      (c.slow_but_exact === true && (c.pretraining_tp as number) > 1 ? 'slow_but_exact=True with pretraining_tp > 1 (sliced projections) is not covered' : undefined),
  },
  gpt_neo: {
    modelType: 'gpt_neo',
    configClass: 'GPTNeoConfig',
    defaults: {
      vocab_size: 50257, max_position_embeddings: 2048, hidden_size: 2048, num_layers: 24, attention_types: null, num_heads: 16,
      intermediate_size: null, window_size: 256, activation_function: 'gelu_new', resid_dropout: 0, embed_dropout: 0, attention_dropout: 0,
      classifier_dropout: 0.1, layer_norm_epsilon: 1e-5, bos_token_id: 50256, eos_token_id: 50256, pad_token_id: null, tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), max_position_embeddings: f('count'), hidden_size: f('count'), num_layers: f('count'),
      // A list ([[["global", "local"], 12]]): global and local layers have the same modules; only its length is checked.
      attention_types: f('any'), num_heads: f('count'), intermediate_size: f('count', { nullable: true }), window_size: f('count'),
      activation_function: f('activation'), resid_dropout: f('number'), embed_dropout: f('number'), attention_dropout: f('number'),
      layer_norm_epsilon: f('number'),
    },
    aliases: { num_attention_heads: 'num_heads', num_hidden_layers: 'num_layers' },
    finish(c) {
      // __post_init__'s default: 12 global/local pairs, so 24 layers.
      const types = (c.attention_types ?? [[['global', 'local'], 12]]) as unknown;
      const expanded = Array.isArray(types)
        ? types.reduce((n: number, item: unknown) => n + (Array.isArray(item) && Array.isArray(item[0]) ? item[0].length * Number(item[1]) : NaN), 0)
        : NaN;
      if (!Number.isInteger(expanded)) return 'attention_types should be a list of [[layer types], repeats] pairs';
      if (expanded !== c.num_layers) return `len(attention_layers) (${expanded}, from attention_types) must equal num_layers (${String(c.num_layers)})`;
      return divisible(c.hidden_size!, c.num_heads!, 'hidden_size must be a multiple of num_heads');
    },
    uncovered: commonUncovered,
  },
  electra: {
    modelType: 'electra',
    configClass: 'ElectraConfig',
    defaults: {
      vocab_size: 30522, embedding_size: 128, hidden_size: 256, num_hidden_layers: 12, num_attention_heads: 4, intermediate_size: 1024,
      hidden_act: 'gelu', hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1, max_position_embeddings: 512, type_vocab_size: 2,
      layer_norm_eps: 1e-12, summary_type: 'first', summary_use_proj: true, summary_activation: 'gelu', summary_last_dropout: 0.1, pad_token_id: 0,
      tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), embedding_size: f('count'), hidden_size: f('count'), num_hidden_layers: f('count'), num_attention_heads: f('count'),
      intermediate_size: f('count'), hidden_act: f('activation'), hidden_dropout_prob: f('number'), attention_probs_dropout_prob: f('number'),
      max_position_embeddings: f('count'), type_vocab_size: f('count'), layer_norm_eps: f('number'), summary_type: f('any'),
      summary_use_proj: f('any'), summary_activation: f('any'), summary_last_dropout: f('any'),
    },
    aliases: {},
    finish: (c) => divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads'),
    uncovered: commonUncovered,
  },
  gptj: {
    modelType: 'gptj',
    configClass: 'GPTJConfig',
    defaults: {
      vocab_size: 50400, n_positions: 2048, n_embd: 4096, n_layer: 28, n_head: 16, rotary_dim: 64, n_inner: null, activation_function: 'gelu_new',
      resid_pdrop: 0, embd_pdrop: 0, attn_pdrop: 0, layer_norm_epsilon: 1e-5, bos_token_id: 50256, eos_token_id: 50256, pad_token_id: null,
      tie_word_embeddings: false,
    },
    fields: {
      vocab_size: f('count'), n_positions: f('count'), n_embd: f('count'), n_layer: f('count'), n_head: f('count'), rotary_dim: f('count', { nullable: true }),
      n_inner: f('count', { nullable: true }), activation_function: f('activation'), resid_pdrop: f('number'), embd_pdrop: f('number'),
      attn_pdrop: f('number'), layer_norm_epsilon: f('number'),
    },
    aliases: { max_position_embeddings: 'n_positions', hidden_size: 'n_embd', num_attention_heads: 'n_head', num_hidden_layers: 'n_layer' },
    finish: (c) => divisible(c.n_embd!, c.n_head!, 'n_embd must be a multiple of n_head'),
    uncovered: commonUncovered,
  },
  bart: {
    modelType: 'bart',
    configClass: 'BartConfig',
    defaults: {
      vocab_size: 50265, max_position_embeddings: 1024, encoder_layers: 12, encoder_ffn_dim: 4096, encoder_attention_heads: 16, decoder_layers: 12,
      decoder_ffn_dim: 4096, decoder_attention_heads: 16, encoder_layerdrop: 0, decoder_layerdrop: 0, activation_function: 'gelu', d_model: 1024,
      dropout: 0.1, attention_dropout: 0, activation_dropout: 0, init_std: 0.02, classifier_dropout: 0, scale_embedding: false, pad_token_id: 1,
      bos_token_id: 0, eos_token_id: 2, decoder_start_token_id: 2, forced_eos_token_id: 2, tie_word_embeddings: true,
      // __post_init__: 3 labels unless id2label says otherwise.
      num_labels: 3,
    },
    fields: {
      vocab_size: f('count'), max_position_embeddings: f('count'), encoder_layers: f('count'), encoder_ffn_dim: f('count'),
      encoder_attention_heads: f('count'), decoder_layers: f('count'), decoder_ffn_dim: f('count'), decoder_attention_heads: f('count'),
      encoder_layerdrop: f('number'), decoder_layerdrop: f('number'), activation_function: f('activation'), d_model: f('count'), dropout: f('number'),
      attention_dropout: f('number'), activation_dropout: f('number'), init_std: f('number'), scale_embedding: f('bool'),
      forced_eos_token_id: f('any'), forced_bos_token_id: f('any'),
      // fairseq conversion keys older config.json files carry; BART's modeling code reads none of them.
      normalize_before: f('any'), add_bias_logits: f('any'), add_final_layer_norm: f('any'), extra_pos_embeddings: f('any'),
      static_position_embeddings: f('any'), normalize_embedding: f('any'), classif_dropout: f('any'), output_past: f('any'),
    },
    aliases: { num_attention_heads: 'encoder_attention_heads', hidden_size: 'd_model', num_hidden_layers: 'encoder_layers' },
    finish: (c) =>
      divisible(c.d_model!, c.encoder_attention_heads!, 'd_model must be a multiple of encoder_attention_heads') ??
      divisible(c.d_model!, c.decoder_attention_heads!, 'd_model must be a multiple of decoder_attention_heads'),
    uncovered: (c) =>
      commonUncovered(c) ??
      (c.encoder_layerdrop !== 0 || c.decoder_layerdrop !== 0 ? 'layerdrop > 0 (layers skipped at random in training) is not covered' : undefined),
  },
  albert: {
    modelType: 'albert',
    configClass: 'AlbertConfig',
    defaults: {
      vocab_size: 30000, embedding_size: 128, hidden_size: 4096, num_hidden_layers: 12, num_hidden_groups: 1, num_attention_heads: 64,
      intermediate_size: 16384, inner_group_num: 1, hidden_act: 'gelu_new', hidden_dropout_prob: 0, attention_probs_dropout_prob: 0,
      max_position_embeddings: 512, type_vocab_size: 2, layer_norm_eps: 1e-12, classifier_dropout_prob: 0.1, pad_token_id: 0, bos_token_id: 2,
      eos_token_id: 3, tie_word_embeddings: true,
    },
    fields: {
      vocab_size: f('count'), embedding_size: f('count'), hidden_size: f('count'), num_hidden_layers: f('count'), num_hidden_groups: f('count'),
      num_attention_heads: f('count'), intermediate_size: f('count'), inner_group_num: f('count'), hidden_act: f('activation'),
      hidden_dropout_prob: f('number'), attention_probs_dropout_prob: f('number'), max_position_embeddings: f('count'), type_vocab_size: f('count'),
      layer_norm_eps: f('number'), classifier_dropout_prob: f('number', { nullable: true }), down_scale_factor: f('any'), gap_size: f('any'),
      net_structure_type: f('any'), num_memory_blocks: f('any'),
    },
    aliases: {},
    finish: (c) => divisible(c.hidden_size!, c.num_attention_heads!, 'hidden_size must be a multiple of num_attention_heads'),
    uncovered: commonUncovered,
  },
};
