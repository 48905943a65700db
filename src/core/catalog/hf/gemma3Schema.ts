/**
 * Gemma3Config as transformers 5.18.0 defines it: a text config (Gemma3TextConfig, resolved with the
 * schema of decoderVariantSchemas.ts) and a vision config (SiglipVisionConfig), each a dict in
 * config.json, resolved here with their class defaults; configs.ts puts the schema beside the others.
 * A vision tower with SigLIP's pooling head (vision_use_head not False) is not covered: Gemma-3's
 * checkpoints have none.
 */
import { COMMON, commonUncovered, f, type ConfigSchema, type ConfigValue } from './configKit';
import { DECODER_VARIANT_SCHEMAS } from './decoderVariantSchemas';
import { knownActivation } from './layers';

/** SiglipVisionConfig's structural fields with their 5.18 defaults (the class's own, not Gemma-3's tower). */
const SIGLIP_VISION_DEFAULTS: Readonly<Record<string, number | string | boolean>> = {
  hidden_size: 768, intermediate_size: 3072, num_hidden_layers: 12, num_attention_heads: 12, num_channels: 3, image_size: 224, patch_size: 16,
  hidden_act: 'gelu_pytorch_tanh',
};
/** Fields of either part that make no row (epsilons, dropouts, token ids, the model type, rotary and attention settings). */
const NO_ROW = new Set(['layer_norm_eps', 'attention_dropout', 'model_type', 'initializer_range', 'torch_dtype', 'dtype', 'vision_use_head']);

type Part = Record<string, ConfigValue>;

function textPart(given: unknown): Part | string {
  const schema = DECODER_VARIANT_SCHEMAS.gemma3_text;
  const part: Part = { ...schema.defaults };
  if (given !== null && given !== undefined) {
    if (typeof given !== 'object' || Array.isArray(given)) return 'text_config should be a dict of config values';
    for (const [key, value] of Object.entries(given as Record<string, unknown>)) {
      if (!Object.prototype.hasOwnProperty.call(schema.fields, key) && !Object.prototype.hasOwnProperty.call(COMMON, key) && !NO_ROW.has(key)) {
        return `text_config has no option '${key}' the catalog knows`;
      }
      part[key] = value as ConfigValue;
    }
  }
  for (const size of ['vocab_size', 'hidden_size', 'intermediate_size', 'num_hidden_layers', 'num_attention_heads', 'num_key_value_heads', 'head_dim']) {
    if (!Number.isInteger(part[size]) || (part[size] as number) < 1) return `text_config.${size}=${JSON.stringify(part[size])} is not accepted: it should be an int of at least 1`;
  }
  return schema.finish?.(part) ?? part;
}

function visionPart(given: unknown): Part | string {
  const part: Part = { ...SIGLIP_VISION_DEFAULTS };
  if (given === null || given === undefined) return part;
  if (typeof given !== 'object' || Array.isArray(given)) return 'vision_config should be a dict of config values';
  for (const [key, value] of Object.entries(given as Record<string, unknown>)) {
    if (Object.prototype.hasOwnProperty.call(SIGLIP_VISION_DEFAULTS, key)) {
      const ok = key === 'hidden_act' ? typeof value === 'string' && knownActivation(value) : Number.isInteger(value) && (value as number) >= 1;
      if (!ok) return `vision_config.${key}=${JSON.stringify(value)} is not accepted`;
      part[key] = value as ConfigValue;
    } else if (key === 'vision_use_head') {
      if (value !== false) return "vision_config.vision_use_head: SigLIP's pooling head is not covered (Gemma-3's towers have none)";
      part[key] = false;
    } else if (!NO_ROW.has(key) && !Object.prototype.hasOwnProperty.call(COMMON, key)) {
      return `vision_config has no option '${key}' the catalog knows`;
    }
  }
  return part;
}

export const GEMMA3_SCHEMA: ConfigSchema = {
  modelType: 'gemma3',
  configClass: 'Gemma3Config',
  defaults: { text_config: null, vision_config: null, mm_tokens_per_image: 256, boi_token_index: 255999, eoi_token_index: 256000, image_token_index: 262144, initializer_range: 0.02, tie_word_embeddings: true },
  fields: {
    text_config: f('any'), vision_config: f('any'), mm_tokens_per_image: f('count'), boi_token_index: f('int'), eoi_token_index: f('int'),
    image_token_index: f('int'), initializer_range: f('number'),
  },
  aliases: {},
  finish(c) {
    const text = textPart(c.text_config);
    if (typeof text === 'string') return text;
    const vision = visionPart(c.vision_config);
    if (typeof vision === 'string') return vision;
    // A config.json without vision_use_head builds SigLIP's pooling head: not covered.
    if (vision.vision_use_head !== false) return "vision_config without vision_use_head=False builds SigLIP's pooling head, which is not covered";
    c.text_config = text as unknown as ConfigValue;
    c.vision_config = vision as unknown as ConfigValue;
    return undefined;
  },
  uncovered: commonUncovered,
};
