/**
 * Gemma3Config as transformers 5.18.0 defines it: a text config (Gemma3TextConfig, resolved with the
 * schema of decoderVariantSchemas.ts) and a vision config (SiglipVisionConfig), each a dict in
 * config.json, resolved here with their class defaults; configs.ts puts the schema beside the others.
 * A vision tower with SigLIP's pooling head (vision_use_head not False) is not covered: Gemma-3's
 * checkpoints have none.
 */
import { ConfigBuilder, commonUncovered, f, resolvePart, type ConfigPart, type ConfigSchema, type ConfigValue } from './configKit';
import { DECODER_VARIANT_SCHEMAS } from './decoderVariantSchemas';

/**
 * SiglipVisionConfig's structural fields with their 5.18 defaults (the class's own, not Gemma-3's
 * tower); SiglipVisionModel builds the pooling head unless the config says vision_use_head=False.
 */
const SIGLIP_VISION_DEFAULTS: Readonly<ConfigPart> = {
  hidden_size: 768, intermediate_size: 3072, num_hidden_layers: 12, num_attention_heads: 12, num_channels: 3, image_size: 224, patch_size: 16,
  hidden_act: 'gelu_pytorch_tanh', vision_use_head: true,
};
/** Fields of either part that make no row (epsilons, dropouts, the model type, initialisation, the dtype). */
const NO_ROW = new Set(['layer_norm_eps', 'attention_dropout', 'model_type', 'initializer_range', 'torch_dtype', 'dtype']);

/** `Gemma3TextConfig(**text_config)`, resolved and checked by its own schema. */
function textPart(given: unknown): Record<string, ConfigValue> | string {
  if (given !== null && given !== undefined && (typeof given !== 'object' || Array.isArray(given))) return 'text_config should be a dict of config values';
  const builder = new ConfigBuilder(DECODER_VARIANT_SCHEMAS.gemma3_text);
  for (const [key, value] of Object.entries((given ?? {}) as Record<string, ConfigValue>)) {
    if (NO_ROW.has(key) && !Object.prototype.hasOwnProperty.call(DECODER_VARIANT_SCHEMAS.gemma3_text.fields, key)) continue;
    const message = builder.set(key, value, 'the config');
    if (message) return `text_config: ${message}`;
  }
  const resolved = builder.finish();
  return 'miss' in resolved ? `text_config: ${resolved.miss}` : { ...resolved.config };
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
    const vision = resolvePart('vision_config', SIGLIP_VISION_DEFAULTS, c.vision_config, NO_ROW);
    if (typeof vision === 'string') return vision;
    // SigLIP's pooling head (built unless vision_use_head=False): not covered, and Gemma-3's towers have none.
    if (vision.vision_use_head !== false) return "vision_config without vision_use_head=False builds SigLIP's pooling head, which is not covered";
    c.text_config = text as unknown as ConfigValue;
    c.vision_config = vision as unknown as ConfigValue;
    return undefined;
  },
  uncovered: commonUncovered,
};
