/**
 * TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and
 * Transformer. The stacks take a layer as an argument (a LayerValue, read with LayerArgs.layer)
 * and clone it num_layers times; their parameters are counted recursively like
 * `sum(p.numel() for p in module.parameters())`.
 *
 * They have no `eagerAttention` (rule 9 of docs/layer-table.md): their layers call the
 * self- and cross-attention with need_weights=False, which PyTorch 2 runs through
 * scaled_dot_product_attention, whose fused kernels keep no score matrix for backward.
 */
import type { LayerArgs } from './layerArgs';
import type { LayerSpec } from './layerSpec';
import { attentionParams, checkSameBatch, checkSequence, type AttentionConfig } from './attention';
import { checkFeatures } from './linear';
import { fail, inputAt, sameDim, type LayerSpecGroup } from './shapes';
import { isTensorShape, type TensorShape } from './tensorShape';

/** Looks a layer type up in the layer specs (passed in to keep the modules free of import cycles). */
export type SpecResolver = (type: string) => LayerSpec | undefined;

interface LayerConfig {
  readonly dModel: number;
  readonly heads: number;
  readonly feedforward: number;
  readonly batchFirst: boolean;
  readonly bias: boolean;
}

/**
 * Transformer{Encoder,Decoder}Layer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
 * activation=relu, layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True).
 */
function layerConfig(args: LayerArgs): LayerConfig {
  return {
    dModel: args.positive(0, 'd_model'),
    heads: args.positive(1, 'nhead'),
    feedforward: args.positive(2, 'dim_feedforward', 2048),
    batchFirst: args.bool(6, 'batch_first', false),
    bias: args.bool(8, 'bias', true),
  };
}

function attention(c: LayerConfig, layer: string): AttentionConfig {
  if (c.heads <= 0 || c.dModel % c.heads !== 0) fail(`${layer}: d_model (${c.dModel}) must be divisible by nhead (${c.heads})`);
  return { embed: c.dModel, heads: c.heads, bias: c.bias, addBiasKv: false, addZeroAttn: false, kdim: c.dModel, vdim: c.dModel, batchFirst: c.batchFirst };
}

/** linear1 (d -> ff), linear2 (ff -> d), and `norms` LayerNorms of d, all with or without bias. */
function blockParams(c: LayerConfig, norms: number): number {
  const b = c.bias ? 1 : 0;
  const feedforward = c.dModel * c.feedforward + b * c.feedforward + c.feedforward * c.dModel + b * c.dModel;
  return feedforward + norms * c.dModel * (1 + b);
}

function encoderLayerParams(c: LayerConfig, layer: string): number {
  return attentionParams(attention(c, layer)) + blockParams(c, 2);
}

function decoderLayerParams(c: LayerConfig, layer: string): number {
  return 2 * attentionParams(attention(c, layer)) + blockParams(c, 3);
}

function checkEncoderInput(src: TensorShape, c: LayerConfig, layer: string): void {
  checkSequence(src, layer, c.batchFirst, 'src');
  checkFeatures(src, c.dModel, layer, 'features (d_model) in src');
}

function checkDecoderInputs(tgt: TensorShape, memory: TensorShape, c: LayerConfig, layer: string): void {
  checkSequence(tgt, layer, c.batchFirst, 'tgt');
  checkSequence(memory, layer, c.batchFirst, 'memory');
  checkFeatures(tgt, c.dModel, layer, 'features (d_model) in tgt');
  checkFeatures(memory, c.dModel, layer, 'features (d_model) in memory');
  checkSameBatch(tgt, memory, layer, c.batchFirst, ['tgt', 'memory']);
}

// A layer keeps, per output element, roughly: the q/k/v projections, the attention output, the
// norm and linear inputs and the feed-forward activations (4x wide with the default sizes) in
// fp32, plus the dropout masks: about 66 bytes for an encoder layer and 91 for a decoder layer
// (Korthikanti et al.'s 34 bytes per element in 16-bit, doubled), besides its input. The
// (N, heads, L, S) attention probabilities do not scale with the output and are not counted.
// Stacks keep this for every layer (their rows' stackedLayers); the figure below is for one.
const ENCODER_LAYER_BYTES = 66;
const DECODER_LAYER_BYTES = 91;

const encoderLayer: LayerSpec = {
  category: 'transformer',
  params: (args) => encoderLayerParams(layerConfig(args), args.type),
  forward(inputs, args) {
    const src = inputAt(inputs, 0, args.type);
    const c = layerConfig(args);
    attention(c, args.type);
    checkEncoderInput(src, c, args.type);
    return src;
  },
  savesInput: true,
  savesOutput: false,
  extraBytesPerElement: ENCODER_LAYER_BYTES,
};

const decoderLayer: LayerSpec = {
  category: 'transformer',
  params: (args) => decoderLayerParams(layerConfig(args), args.type),
  forward(inputs, args) {
    const tgt = inputAt(inputs, 0, args.type, 2);
    const memory = inputAt(inputs, 1, args.type, 2);
    const c = layerConfig(args);
    attention(c, args.type);
    checkDecoderInputs(tgt, memory, c, args.type);
    return tgt;
  },
  savesInput: true,
  savesOutput: false,
  extraBytesPerElement: DECODER_LAYER_BYTES,
};

function sameShape(a: TensorShape, b: TensorShape): boolean {
  return a.length === b.length && a.every((d, i) => sameDim(d, b[i]));
}

/** A nested layer's spec and arguments. */
function nested(args: LayerArgs, position: number, name: string, resolve: SpecResolver): { spec: LayerSpec; args: LayerArgs } | undefined {
  const inner = args.layer(position, name);
  if (!inner) return undefined;
  const spec = resolve(inner.type);
  if (!spec) fail(`${args.type}: \`${name}\` is nn.${inner.type}, which is not understood yet`);
  return { spec, args: inner };
}

function required(args: LayerArgs, position: number, name: string, resolve: SpecResolver): { spec: LayerSpec; args: LayerArgs } {
  const layer = nested(args, position, name, resolve);
  if (!layer) fail(`${args.type} needs \`${name}\``);
  return layer;
}

/** Runs a nested layer that returns one tensor. */
function run(layer: { spec: LayerSpec; args: LayerArgs }, inputs: readonly TensorShape[], outer: string): TensorShape {
  const output = layer.spec.forward(inputs, layer.args, { kwargs: {} });
  if (output === null || !isTensorShape(output)) fail(`${outer}: nn.${layer.args.type} should return one tensor`);
  return output;
}

function stackLayers(args: LayerArgs): number {
  return args.count(1, 'num_layers');
}

/** Applies a cloned layer `count` times; once it keeps the shape, the rest would too. */
function repeat(count: number, x: TensorShape, step: (x: TensorShape) => TensorShape): TensorShape {
  for (let i = 0; i < count; i++) {
    const y = step(x);
    if (sameShape(x, y)) return y;
    x = y;
  }
  return x;
}

/**
 * A stack of clones of one layer, then an optional norm: TransformerEncoder(encoder_layer,
 * num_layers, norm=None, ...) runs forward(src); TransformerDecoder(decoder_layer, num_layers,
 * norm=None) runs forward(tgt, memory), passing memory to every clone.
 */
function transformerStack(resolve: SpecResolver, layerName: 'encoder_layer' | 'decoder_layer', extraBytesPerElement: number): LayerSpec {
  const withMemory = layerName === 'decoder_layer';
  return {
    category: 'transformer',
    params(args) {
      const layer = required(args, 0, layerName, resolve);
      const norm = nested(args, 2, 'norm', resolve);
      return stackLayers(args) * layer.spec.params(layer.args) + (norm ? norm.spec.params(norm.args) : 0);
    },
    forward(inputs, args) {
      const layer = required(args, 0, layerName, resolve);
      const norm = nested(args, 2, 'norm', resolve);
      const first = withMemory ? inputAt(inputs, 0, args.type, 2) : inputAt(inputs, 0, args.type);
      const memory = withMemory ? [inputAt(inputs, 1, args.type, 2)] : [];
      const x = repeat(stackLayers(args), first, (y) => run(layer, [y, ...memory], args.type));
      return norm ? run(norm, [x], args.type) : x;
    },
    savesInput: true,
    savesOutput: false,
    extraBytesPerElement,
    stackedLayers: stackLayers,
  };
}

/**
 * Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
 * dim_feedforward=2048, dropout=0.1, activation=relu, custom_encoder=None, custom_decoder=None,
 * layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True): an encoder stack and a
 * decoder stack, each ending in a LayerNorm, unless custom_encoder / custom_decoder replace them.
 */
function transformerConfig(args: LayerArgs): LayerConfig & { encoders: number; decoders: number } {
  return {
    dModel: args.positive(0, 'd_model', 512),
    heads: args.positive(1, 'nhead', 8),
    encoders: args.count(2, 'num_encoder_layers', 6),
    decoders: args.count(3, 'num_decoder_layers', 6),
    feedforward: args.positive(4, 'dim_feedforward', 2048),
    batchFirst: args.bool(10, 'batch_first', false),
    bias: args.bool(12, 'bias', true),
  };
}

function transformer(resolve: SpecResolver): LayerSpec {
  return {
    category: 'transformer',
    params(args) {
      const c = transformerConfig(args);
      const norm = c.dModel * (c.bias ? 2 : 1);
      const encoder = nested(args, 7, 'custom_encoder', resolve);
      const decoder = nested(args, 8, 'custom_decoder', resolve);
      const encoderParams = encoder ? encoder.spec.params(encoder.args) : c.encoders * encoderLayerParams(c, args.type) + norm;
      const decoderParams = decoder ? decoder.spec.params(decoder.args) : c.decoders * decoderLayerParams(c, args.type) + norm;
      return encoderParams + decoderParams;
    },
    forward(inputs, args) {
      const c = transformerConfig(args);
      const src = inputAt(inputs, 0, args.type, 2);
      const tgt = inputAt(inputs, 1, args.type, 2);
      checkSequence(src, args.type, c.batchFirst, 'src');
      checkSequence(tgt, args.type, c.batchFirst, 'tgt');
      checkSameBatch(src, tgt, args.type, c.batchFirst, ['src', 'tgt']);
      checkFeatures(src, c.dModel, args.type, 'features (d_model) in src');
      checkFeatures(tgt, c.dModel, args.type, 'features (d_model) in tgt');
      const encoder = nested(args, 7, 'custom_encoder', resolve);
      const decoder = nested(args, 8, 'custom_decoder', resolve);
      if (!encoder || !decoder) attention(c, args.type);
      const memory = encoder ? run(encoder, [src], args.type) : src;
      return decoder ? run(decoder, [tgt, memory], args.type) : tgt;
    },
    savesInput: true,
    savesOutput: false,
    extraBytesPerElement: ENCODER_LAYER_BYTES + DECODER_LAYER_BYTES,
    // Each encoder and decoder layer keeps its share: counted as max(encoders, decoders) pairs, exact for the default 6 and 6.
    stackedLayers(args) {
      if (nested(args, 7, 'custom_encoder', resolve) || nested(args, 8, 'custom_decoder', resolve)) return undefined;
      const c = transformerConfig(args);
      return Math.max(c.encoders, c.decoders);
    },
  };
}

export function transformerLayers(resolve: SpecResolver): LayerSpecGroup {
  return {
    TransformerEncoderLayer: encoderLayer,
    TransformerDecoderLayer: decoderLayer,
    TransformerEncoder: transformerStack(resolve, 'encoder_layer', ENCODER_LAYER_BYTES),
    TransformerDecoder: transformerStack(resolve, 'decoder_layer', DECODER_LAYER_BYTES),
    Transformer: transformer(resolve),
  };
}
