/**
 * The pieces every config schema is made of (configs.ts and decoderSchemas.ts): value and field
 * kinds, PretrainedConfig's own fields, and the checks the config classes share.
 */
import type { LlamaStyleType } from './llamaStyle';

export type ConfigValue = number | string | boolean | null;
export type HfConfig = Readonly<Record<string, ConfigValue>>;

export type ModelType = 'bert' | 'roberta' | 'distilbert' | 'gpt2' | 'xlnet' | 't5' | 'vit' | 'phi' | 'opt' | 'deberta-v2' | 'bloom' | 'gpt_neo' | 'gptj' | 'electra' | 'albert' | 'bart' | 'falcon' | 'swin' | 'clip' | 'mixtral' | 'qwen2_moe' | 'qwen3_moe' | 'gemma2' | 'phi3' | 'gpt_neox' | 'olmo' | 'olmo2' | 'qwen3' | 'gemma3_text' | 'gemma3' | LlamaStyleType;

export type Kind =
  | 'count' // an int >= 1
  | 'int' // any int
  | 'labels' // num_labels: an int >= 0
  | 'number'
  | 'bool'
  | 'string'
  | 'activation' // a key of ACT2FN
  | 'any'; // read by nothing that changes the table; any plain value

export interface Field {
  readonly kind: Kind;
  readonly nullable?: boolean;
  readonly choices?: readonly string[];
}

export interface ConfigSchema {
  readonly modelType: ModelType;
  readonly configClass: string;
  readonly defaults: HfConfig;
  readonly fields: Readonly<Record<string, Field>>;
  readonly aliases: Readonly<Record<string, string>>;
  /** `__post_init__`: derived values; returns a message where the config is not valid. */
  readonly finish?: (config: Record<string, ConfigValue>) => string | undefined;
  /** Values of fields the catalog does not cover (an architecture change): the reason, or undefined. */
  readonly uncovered?: (config: HfConfig) => string | undefined;
}

/** PretrainedConfig's own fields and the generation settings it accepts: none changes a layer table, except num_labels. */
export const COMMON: Readonly<Record<string, Field>> = {
  num_labels: { kind: 'labels' },
  tie_word_embeddings: { kind: 'bool' },
  chunk_size_feed_forward: { kind: 'int' },
  attn_implementation: { kind: 'string', nullable: true, choices: ['eager', 'sdpa', 'flash_attention_2', 'flash_attention_3', 'flex_attention'] },
  problem_type: { kind: 'string', nullable: true, choices: ['regression', 'single_label_classification', 'multi_label_classification'] },
  output_attentions: { kind: 'bool' },
  output_hidden_states: { kind: 'bool' },
  return_dict: { kind: 'bool' },
  use_cache: { kind: 'bool' },
  dtype: { kind: 'any' },
  torch_dtype: { kind: 'any' },
  is_encoder_decoder: { kind: 'any' },
  is_decoder: { kind: 'bool' },
  add_cross_attention: { kind: 'bool' },
  pad_token_id: { kind: 'int', nullable: true },
  bos_token_id: { kind: 'int', nullable: true },
  eos_token_id: { kind: 'int', nullable: true },
  sep_token_id: { kind: 'int', nullable: true },
  decoder_start_token_id: { kind: 'int', nullable: true },
  initializer_range: { kind: 'number' },
  initializer_factor: { kind: 'number' },
  classifier_dropout: { kind: 'number', nullable: true },
  gradient_checkpointing: { kind: 'bool' },
  finetuning_task: { kind: 'any' },
  name_or_path: { kind: 'any' },
  transformers_version: { kind: 'any' },
  model_type: { kind: 'any' },
  position_embedding_type: { kind: 'string', choices: ['absolute'] },
  max_length: { kind: 'any' },
  min_length: { kind: 'any' },
  do_sample: { kind: 'any' },
  early_stopping: { kind: 'any' },
  num_beams: { kind: 'any' },
  temperature: { kind: 'any' },
  top_k: { kind: 'any' },
  top_p: { kind: 'any' },
  repetition_penalty: { kind: 'any' },
  length_penalty: { kind: 'any' },
  no_repeat_ngram_size: { kind: 'any' },
  num_return_sequences: { kind: 'any' },
};

export const COMMON_DEFAULTS: HfConfig = { num_labels: 2, chunk_size_feed_forward: 0, attn_implementation: null, is_decoder: false, add_cross_attention: false };

export const f = (kind: Kind, extra: Omit<Field, 'kind'> = {}): Field => ({ kind, ...extra });

export function commonUncovered(config: HfConfig): string | undefined {
  if (config.chunk_size_feed_forward !== 0) return 'chunk_size_feed_forward (feed-forward layers called in chunks) is not covered';
  if (config.add_cross_attention === true) return 'add_cross_attention=True (a decoder with cross-attention layers) is not covered';
  return undefined;
}

export function divisible(a: ConfigValue, b: ConfigValue, what: string): string | undefined {
  if (typeof a === 'number' && typeof b === 'number' && a % b !== 0) return `${what}: ${a} is not a multiple of ${b}`;
  return undefined;
}
