/** MultiheadAttention, also used inside the Transformer layers. */
import type { EagerAttention } from '../layerTable/layerTable';
import type { LayerArgs } from './layerArgs';
import type { ForwardCall, LayerSpec } from './layerSpec';
import { checkFeatures } from './linear';
import { callFlag, fail, formatDim, inputAt, sameDim, withLast, type LayerSpecGroup } from './shapes';
import { formatShape, isBatchDim, type Dim, type LayerOutput, type TensorShape } from './tensorShape';

export interface AttentionConfig {
  readonly embed: number;
  readonly heads: number;
  readonly bias: boolean;
  readonly addBiasKv: boolean;
  readonly addZeroAttn: boolean;
  readonly kdim: number;
  readonly vdim: number;
  readonly batchFirst: boolean;
}

/**
 * MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
 * add_zero_attn=False, kdim=None, vdim=None, batch_first=False).
 */
function attentionConfig(args: LayerArgs): AttentionConfig {
  const embed = args.positive(0, 'embed_dim');
  const heads = args.positive(1, 'num_heads');
  if (embed % heads !== 0) fail(`${args.type}: embed_dim (${embed}) must be divisible by num_heads (${heads})`);
  return {
    embed,
    heads,
    bias: args.bool(3, 'bias', true),
    addBiasKv: args.bool(4, 'add_bias_kv', false),
    addZeroAttn: args.bool(5, 'add_zero_attn', false),
    kdim: args.has(6, 'kdim') ? args.positive(6, 'kdim') : embed,
    vdim: args.has(7, 'vdim') ? args.positive(7, 'vdim') : embed,
    batchFirst: args.bool(8, 'batch_first', false),
  };
}

/** in_proj (one packed weight, or q/k/v weights when kdim or vdim differ), in_proj_bias, out_proj, bias_k/bias_v. */
export function attentionParams(c: AttentionConfig): number {
  const inProj = c.embed * (c.embed + c.kdim + c.vdim) + (c.bias ? 3 * c.embed : 0);
  const outProj = c.embed * c.embed + (c.bias ? c.embed : 0);
  return inProj + outProj + (c.addBiasKv ? 2 * c.embed : 0);
}

/** The batch dimension of a (L, N, E) or batch-first (N, L, E) input; none for an unbatched (L, E). */
function batchOf(input: TensorShape, batchFirst: boolean): Dim | undefined {
  return input.length === 3 ? input[batchFirst ? 0 : 1] : undefined;
}

/** The sequence length of a (L, N, E), (N, L, E) or (L, E) input. */
function sequenceOf(input: TensorShape, batchFirst: boolean): Dim {
  return input.length === 3 && batchFirst ? input[1]! : input[0]!;
}

/** Inputs of a sequence layer: (L, E), or (L, N, E) / (N, L, E) by batch_first. */
export function checkSequence(input: TensorShape, layer: string, batchFirst: boolean, what = 'input'): void {
  if (input.length !== 2 && input.length !== 3) {
    fail(`${layer} expects a 2-D (L, E) or 3-D (${batchFirst ? 'N, L' : 'L, N'}, E) ${what}, got ${formatShape(input)}`);
  }
}

/** Checks that `other` has the rank and batch of `first`. */
export function checkSameBatch(first: TensorShape, other: TensorShape, layer: string, batchFirst: boolean, names: [string, string]): void {
  if (first.length !== other.length) {
    fail(`${layer}: ${names[0]} ${formatShape(first)} and ${names[1]} ${formatShape(other)} should both be batched (3-D) or both unbatched (2-D)`);
  }
  const a = batchOf(first, batchFirst);
  const b = batchOf(other, batchFirst);
  if (a !== undefined && !sameDim(a, b)) {
    fail(`${layer}: ${names[0]} ${formatShape(first)} and ${names[1]} ${formatShape(other)} have different batch sizes`);
  }
}

/**
 * module(query, key, value, need_weights=True, average_attn_weights=True): (attn_output,
 * attn_weights), the weights averaged over heads (N, L, S), per head (N, heads, L, S), or None.
 */
function attentionForward(query: TensorShape, key: TensorShape, value: TensorShape, c: AttentionConfig, layer: string, call: ForwardCall): LayerOutput {
  checkSequence(query, layer, c.batchFirst, 'query');
  checkSequence(key, layer, c.batchFirst, 'key');
  checkSequence(value, layer, c.batchFirst, 'value');
  checkFeatures(query, c.embed, layer, 'features in the query');
  checkFeatures(key, c.kdim, layer, 'features in the key');
  checkFeatures(value, c.vdim, layer, 'features in the value');
  checkSameBatch(query, key, layer, c.batchFirst, ['query', 'key']);
  checkSameBatch(query, value, layer, c.batchFirst, ['query', 'value']);
  const source = sequenceOf(key, c.batchFirst);
  if (!sameDim(source, sequenceOf(value, c.batchFirst))) fail(`${layer}: key ${formatShape(key)} and value ${formatShape(value)} have different lengths`);
  const output = withLast(query, c.embed);
  if (!callFlag(call, 'need_weights', true)) return [output, null];
  // bias_k/bias_v and the zero attention each add one key position.
  const extra = (c.addBiasKv ? 1 : 0) + (c.addZeroAttn ? 1 : 0);
  if (extra > 0 && isBatchDim(source)) fail(`${layer}: the key length ${formatDim(source)} plus ${extra} is not a shape`);
  const keys: Dim = extra > 0 ? (source as number) + extra : source;
  const target = sequenceOf(query, c.batchFirst);
  const batch = batchOf(query, c.batchFirst);
  const heads = callFlag(call, 'average_attn_weights', true) ? [] : [c.heads];
  return [output, [...(batch === undefined ? [] : [batch]), ...heads, target, keys]];
}

/**
 * The score matrices one call keeps for backward, heads x L x S per sample (S with bias_k's and
 * the zero attention's extra key), or undefined when they are not kept or a length is not a
 * number. Training skips the inference fast path and runs `F.multi_head_attention_forward`;
 * PyTorch 2 computes softmax(q k^T) and its dropout eagerly there only when the weights are asked
 * for (need_weights, True by default, also when the call's value is not read), and otherwise
 * calls scaled_dot_product_attention, whose fused kernels keep no matrix.
 */
function eagerAttention(query: TensorShape, key: TensorShape, c: AttentionConfig, dropout: number, call: ForwardCall): EagerAttention | undefined {
  if (!callFlag(call, 'need_weights', true)) return undefined;
  const target = sequenceOf(query, c.batchFirst);
  const source = sequenceOf(key, c.batchFirst);
  if (typeof target !== 'number' || typeof source !== 'number') return undefined;
  const extra = (c.addBiasKv ? 1 : 0) + (c.addZeroAttn ? 1 : 0);
  return { elements: c.heads * target * (source + extra), dropout: dropout > 0 };
}

const multiheadAttention: LayerSpec = {
  category: 'attention',
  params: (args) => attentionParams(attentionConfig(args)),
  forward(inputs, args, call) {
    const query = inputAt(inputs, 0, args.type, 3);
    const key = inputAt(inputs, 1, args.type, 3);
    const value = inputAt(inputs, 2, args.type, 3);
    return attentionForward(query, key, value, attentionConfig(args), args.type, call);
  },
  // Backward keeps the inputs, the q/k/v projections and the attention output before out_proj
  // (about four fp32 values per output element), plus the (N, heads, L, S) attention
  // probabilities, which do not scale with the output and are not counted here.
  savesInput: true,
  savesOutput: false,
  extraBytesPerElement: 16,
  eagerAttention(inputs, args, call) {
    const [query, key] = [inputAt(inputs, 0, args.type, 3), inputAt(inputs, 1, args.type, 3)];
    return eagerAttention(query, key, attentionConfig(args), args.float(2, 'dropout', 0), call);
  },
};

export const attentionLayers: LayerSpecGroup = { MultiheadAttention: multiheadAttention };
