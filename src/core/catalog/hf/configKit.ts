/**
 * The pieces every config schema is made of (configs.ts and decoderSchemas.ts): value and field
 * kinds, PretrainedConfig's own fields, the checks the config classes share, the builder that
 * resolves a config against its schema, and the parts (text_config, vision_config) a composite
 * config holds.
 */
import { knownActivation } from './layers';
import type { LlamaStyleType } from './llamaStyle';

export type ConfigValue = number | string | boolean | null;
export type HfConfig = Readonly<Record<string, ConfigValue>>;

export type ModelType = 'bert' | 'roberta' | 'distilbert' | 'gpt2' | 'xlnet' | 't5' | 'vit' | 'phi' | 'opt' | 'deberta-v2' | 'bloom' | 'gpt_neo' | 'gptj' | 'electra' | 'albert' | 'bart' | 'falcon' | 'swin' | 'clip' | 'mixtral' | 'qwen2_moe' | 'qwen3_moe' | 'gemma2' | 'phi3' | 'gpt_neox' | 'olmo' | 'olmo2' | 'qwen3' | 'gemma3_text' | 'gemma3' | 'convnext' | 'resnet' | 'dinov2' | LlamaStyleType;

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

/** Where a value came from, for messages. */
export type ValueOrigin = 'the checkpoint' | 'the config' | 'the call';

function describeKind(field: Field): string {
  switch (field.kind) {
    case 'count':
      return 'an int of at least 1';
    case 'labels':
      return 'an int of at least 0';
    case 'int':
      return 'an int';
    case 'number':
      return 'a number';
    case 'bool':
      return 'True or False';
    case 'string':
      return field.choices ? `one of ${field.choices.map((c) => `'${c}'`).join(', ')}` : 'a string';
    case 'activation':
      return 'an activation name of transformers (ACT2FN), e.g. gelu, relu, silu, tanh';
    case 'any':
      return 'any value';
  }
}

function fits(field: Field, value: ConfigValue): boolean {
  if (value === null) return field.nullable === true || field.kind === 'any';
  switch (field.kind) {
    case 'count':
      return typeof value === 'number' && Number.isInteger(value) && value >= 1;
    case 'labels':
      return typeof value === 'number' && Number.isInteger(value) && value >= 0;
    case 'int':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'bool':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string' && (!field.choices || field.choices.includes(value));
    case 'activation':
      return typeof value === 'string' && knownActivation(value);
    case 'any':
      return true;
  }
}

/** The field a name stands for in this config class (`n_layer` in GPT-2 is itself; `num_hidden_layers` maps to it). */
export function canonicalField(schema: ConfigSchema, name: string): string | undefined {
  const mapped = schema.aliases[name] ?? name;
  if (Object.prototype.hasOwnProperty.call(schema.fields, mapped) || Object.prototype.hasOwnProperty.call(COMMON, mapped)) return mapped;
  return undefined;
}

/** A field's spec (the class's own or PretrainedConfig's). */
function fieldSpec(schema: ConfigSchema, name: string): Field {
  return schema.fields[name] ?? COMMON[name]!;
}

export class ConfigBuilder {
  private readonly values: Record<string, ConfigValue>;

  constructor(readonly schema: ConfigSchema) {
    this.values = { ...COMMON_DEFAULTS, ...schema.defaults };
  }

  /** Sets `name` (any of its names); returns a message where the name or the value is not accepted. */
  set(name: string, value: ConfigValue, origin: ValueOrigin): string | undefined {
    const field = canonicalField(this.schema, name);
    if (!field) return `${this.schema.configClass} has no option '${name}' the catalog knows`;
    const spec = fieldSpec(this.schema, field);
    if (!fits(spec, value)) {
      const expected = `${describeKind(spec)}${spec.nullable ? ' or None' : ''}`;
      return `${name}=${formatValue(value)} (from ${origin}) is not accepted by ${this.schema.configClass}: it should be ${expected}`;
    }
    if (field === 'n_token') this.values.vocab_size = value;
    else this.values[field === 'torch_dtype' ? 'dtype' : field] = value;
    return undefined;
  }

  /** The finished config (derived values filled in), or a message saying why it is not valid or not covered. */
  finish(): { readonly config: HfConfig } | { readonly miss: string } {
    const message = this.schema.finish?.(this.values);
    if (message) return { miss: `${this.schema.configClass}: ${message}` };
    const config: HfConfig = { ...this.values };
    const uncovered = this.schema.uncovered?.(config);
    if (uncovered) return { miss: `${this.schema.configClass}: ${uncovered}` };
    return { config };
  }
}

export function formatValue(value: ConfigValue): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return `'${value}'`;
  return String(value);
}

/** Reads a config value the schema guarantees to be a number. */

/** A part of a composite config (CLIP's and Gemma-3's `text_config` / `vision_config`), resolved over its class's structural defaults. */
export type ConfigPart = Record<string, number | string | boolean>;

/**
 * `PartConfig(**given)` for the structural fields in `defaults` (an activation name where the default
 * is a string, True or False where it is a boolean, else an int of at least 1); fields in `noEffect`
 * and PretrainedConfig's own are accepted and dropped; a message where a value is not accepted.
 */
export function resolvePart(what: string, defaults: Readonly<ConfigPart>, given: unknown, noEffect: ReadonlySet<string>): ConfigPart | string {
  if (given === null || given === undefined) return { ...defaults };
  if (typeof given !== 'object' || Array.isArray(given)) return `${what} should be a dict of config values`;
  const part: ConfigPart = { ...defaults };
  for (const [key, value] of Object.entries(given as Record<string, unknown>)) {
    if (Object.prototype.hasOwnProperty.call(defaults, key)) {
      const kind = typeof defaults[key];
      const ok = kind === 'string' ? typeof value === 'string' && knownActivation(value) : kind === 'boolean' ? typeof value === 'boolean' : Number.isInteger(value) && (value as number) >= 1;
      const expected = kind === 'string' ? 'an activation name of transformers (ACT2FN)' : kind === 'boolean' ? 'True or False' : 'an int of at least 1';
      if (!ok) return `${what}.${key}=${JSON.stringify(value)} is not accepted: it should be ${expected}`;
      part[key] = value as number | string | boolean;
    } else if (!noEffect.has(key) && !Object.prototype.hasOwnProperty.call(COMMON, key)) {
      return `${what} has no option '${key}' the catalog knows`;
    }
  }
  return part;
}
