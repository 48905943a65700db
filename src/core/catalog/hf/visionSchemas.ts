/**
 * The config classes of ConvNeXt, ResNet and DINOv2 as transformers 5.18.0 defines them (defaults,
 * field kinds, `__post_init__`); configs.ts puts them beside the others. ConvNeXt's and ResNet's
 * `depths` and `hidden_sizes` are lists (one value per stage): kind 'any' here, checked in `finish`.
 */
import { commonUncovered, f, type ConfigSchema, type ConfigValue, type Field } from './configKit';

/** A list of positive ints (depths, hidden sizes), or undefined. */
function counts(value: unknown): number[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every((v) => Number.isInteger(v) && (v as number) >= 1) ? (value as number[]) : undefined;
}

/** Checks the per-stage lists and stores copies; a message where they cannot build the model. */
function stageLists(c: Record<string, ConfigValue>, stages: number | undefined): string | undefined {
  const depths = counts(c.depths);
  const sizes = counts(c.hidden_sizes);
  if (!depths) return 'depths should be a list of ints of at least 1, one per stage';
  if (!sizes) return 'hidden_sizes should be a list of ints of at least 1, one per stage';
  if (sizes.length !== depths.length) return `hidden_sizes has ${sizes.length} stages and depths ${depths.length}: the catalog builds models with one of each per stage`;
  if (stages !== undefined && stages !== depths.length) return `num_stages=${stages} with ${depths.length} depths: the catalog builds models with one depth per stage`;
  c.depths = [...depths] as unknown as ConfigValue;
  c.hidden_sizes = [...sizes] as unknown as ConfigValue;
  return undefined;
}

const BACKBONE_FIELDS: Readonly<Record<string, Field>> = {
  // BackboneConfigMixin's: which stages a backbone returns; the classes the catalog builds read neither.
  out_features: f('any'), out_indices: f('any'), stage_names: f('any'), initializer_range: f('number'),
};

export const VISION_SCHEMAS: Readonly<Record<'convnext' | 'resnet' | 'dinov2', ConfigSchema>> = {
  convnext: {
    modelType: 'convnext',
    configClass: 'ConvNextConfig',
    defaults: {
      num_channels: 3, patch_size: 4, num_stages: 4, hidden_sizes: [96, 192, 384, 768] as unknown as ConfigValue,
      depths: [3, 3, 9, 3] as unknown as ConfigValue, hidden_act: 'gelu', layer_norm_eps: 1e-12, layer_scale_init_value: 1e-6,
      drop_path_rate: 0, image_size: 224,
    },
    fields: {
      ...BACKBONE_FIELDS,
      num_channels: f('count'), patch_size: f('count'), num_stages: f('count'), hidden_sizes: f('any'), depths: f('any'),
      hidden_act: f('activation'), layer_norm_eps: f('number'), layer_scale_init_value: f('number'), drop_path_rate: f('number'),
      image_size: f('count'),
    },
    aliases: {},
    finish: (c) => stageLists(c, c.num_stages as number),
    uncovered: commonUncovered,
  },
  resnet: {
    modelType: 'resnet',
    configClass: 'ResNetConfig',
    defaults: {
      num_channels: 3, embedding_size: 64, hidden_sizes: [256, 512, 1024, 2048] as unknown as ConfigValue,
      depths: [3, 4, 6, 3] as unknown as ConfigValue, layer_type: 'bottleneck', hidden_act: 'relu', downsample_in_first_stage: false,
      downsample_in_bottleneck: false,
    },
    fields: {
      ...BACKBONE_FIELDS,
      num_channels: f('count'), embedding_size: f('count'), hidden_sizes: f('any'), depths: f('any'),
      layer_type: f('string', { choices: ['basic', 'bottleneck'] }), hidden_act: f('activation'), downsample_in_first_stage: f('bool'),
      downsample_in_bottleneck: f('bool'),
    },
    aliases: {},
    finish(c) {
      const message = stageLists(c, undefined);
      if (message) return message;
      // A bottleneck's inner convolutions have a quarter of its width.
      const narrow = (c.hidden_sizes as unknown as number[]).find((size) => size < 4);
      return c.layer_type === 'bottleneck' && narrow !== undefined ? `hidden_sizes: a bottleneck layer ${narrow} wide has no channels for its inner convolutions (a quarter of it)` : undefined;
    },
    uncovered: commonUncovered,
  },
  dinov2: {
    modelType: 'dinov2',
    configClass: 'Dinov2Config',
    defaults: {
      hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, mlp_ratio: 4, hidden_act: 'gelu', hidden_dropout_prob: 0,
      attention_probs_dropout_prob: 0, layer_norm_eps: 1e-6, image_size: 224, patch_size: 14, num_channels: 3, qkv_bias: true,
      layerscale_value: 1.0, drop_path_rate: 0, use_swiglu_ffn: false, apply_layernorm: true, reshape_hidden_states: true, use_mask_token: true,
    },
    fields: {
      ...BACKBONE_FIELDS,
      hidden_size: f('count'), num_hidden_layers: f('count'), num_attention_heads: f('count'), mlp_ratio: f('number'), hidden_act: f('activation'),
      hidden_dropout_prob: f('number'), attention_probs_dropout_prob: f('number'), layer_norm_eps: f('number'), image_size: f('count'),
      patch_size: f('count'), num_channels: f('count'), qkv_bias: f('bool'), layerscale_value: f('number'), drop_path_rate: f('number'),
      use_swiglu_ffn: f('bool'), apply_layernorm: f('bool'), reshape_hidden_states: f('bool'), use_mask_token: f('bool'),
    },
    aliases: {},
    finish: (c) => ((c.mlp_ratio as number) > 0 ? undefined : 'mlp_ratio must be positive'),
    uncovered: commonUncovered,
  },
};
