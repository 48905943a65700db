import { linearInputs, type LayerActivationOptions } from './savedActivations';

/**
 * Mixture-of-experts decoders (Mixtral, Qwen-MoE) in the fine-tuning model: what the config gives,
 * the parameters every expert adds, and what transformers' sparse MoE block keeps for the backward.
 *
 * The block followed is transformers 4's (MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock), the layout
 * QLoRA on these models is run with: every expert is an nn.Linear triple (w1/w3/w2, or
 * gate_proj/up_proj/down_proj), so bitsandbytes quantizes them and PEFT's "all-linear" adapts them,
 * and the router (`gate`) is one more nn.Linear. Its forward, per layer of `T` tokens routed to `k`
 * experts each:
 *   router_logits = gate(x)                               frozen: keeps nothing
 *   p = softmax(router_logits, dtype=float32)             keeps p (E fp32 a token)
 *   w, chosen = topk(p, k)                                keeps the indices (k int64 a token)
 *   w /= w.sum(-1) [norm_topk_prob] ; w = w.to(dtype)     keeps the sum and the divided weights (fp32)
 *   per expert: rows, slots = where(one_hot(chosen)[e])   one int64 pair a routed slot
 *     h = x[rows]                                         the gathered copy, kept where w1/w3 need it
 *     y = w2(silu(w1(h)) * w3(h))                         one dense gated MLP's tensors per slot
 *     out.index_add_(0, rows, y * w[rows, slots])         keeps y, the slot's weight and the product
 * Qwen-MoE adds a shared expert every token goes through, scaled by sigmoid(shared_expert_gate(x)).
 * harness/tests/test_moe_saved_activations.py measures the same block with PyTorch's saved-tensor
 * hooks against the figures here (test/vectors/moe/sparse-moe-block.json).
 */
export interface MoeShape {
  /** Routed experts per layer (num_local_experts, num_experts). */
  readonly experts: number;
  /** Experts each token is routed to (num_experts_per_tok). */
  readonly topK: number;
  /** One expert's intermediate size (moe_intermediate_size, else intermediate_size). */
  readonly expertIntermediate: number;
  /** Qwen-MoE's shared expert (shared_expert_intermediate_size) with its sigmoid gate, Linear(hidden, 1). */
  readonly sharedIntermediate?: number;
  /** norm_topk_prob: the chosen weights are divided by their sum (Mixtral always; Qwen1.5-MoE not). */
  readonly normTopK: boolean;
}

/** Bytes of an int64 index, which the gather, the weights' indexing and index_add_ keep. */
const INDEX_BYTES = 8;

/**
 * The MoE block of a config.json, undefined for a dense model, or a note saying why the model is
 * not one this module describes (a layer layout it does not count).
 */
export function moeFromConfig(modelType: string, config: Readonly<Record<string, unknown>>): MoeShape | string | undefined {
  const num = (name: string): number | undefined => (typeof config[name] === 'number' ? (config[name] as number) : undefined);
  if (modelType === 'mixtral') {
    // MixtralConfig's defaults: 8 experts, top-2, the expert the size of intermediate_size; the chosen weights are always renormalised.
    return { experts: num('num_local_experts') ?? 8, topK: num('num_experts_per_tok') ?? 2, expertIntermediate: num('intermediate_size') ?? 14336, normTopK: true };
  }
  if (modelType === 'qwen2_moe') {
    // Qwen2MoeConfig: layers whose index is in mlp_only_layers, or not a multiple of decoder_sparse_step, keep a dense MLP; none does in the published checkpoints.
    const step = num('decoder_sparse_step') ?? 1;
    const dense = Array.isArray(config.mlp_only_layers) ? config.mlp_only_layers.length : 0;
    if (step !== 1 || dense > 0) return `qwen2_moe with dense layers (decoder_sparse_step=${step}, ${dense} mlp_only_layers), which the fine-tuning model does not count`;
    const shared = num('shared_expert_intermediate_size') ?? 5632;
    return {
      experts: num('num_experts') ?? 60,
      topK: num('num_experts_per_tok') ?? 4,
      expertIntermediate: num('moe_intermediate_size') ?? 1408,
      ...(shared > 0 ? { sharedIntermediate: shared } : {}),
      normTopK: config.norm_topk_prob === true,
    };
  }
  return undefined;
}

/** One tensor of a MoE layer: as ParameterTensor (fineTuning.ts) gives it, with how many experts hold one. */
export interface MoeTensor {
  readonly name: string;
  readonly rows: number;
  readonly cols: number;
  readonly experts?: number;
}

/**
 * The MoE block's linears, named as PEFT matches them: every routed expert's gate_proj/up_proj/down_proj
 * (Mixtral's w1/w3/w2 are their aliases), the shared expert's under the same names (PEFT's "gate_proj"
 * adapts both), the router (`gate`) and the shared expert's gate. All of them are nn.Linear, so
 * bitsandbytes quantizes them and "all-linear" adapts them, the router included (PEFT leaves out
 * the output embedding only).
 */
export function moeLinears(hidden: number, moe: MoeShape): MoeTensor[] {
  const { experts, expertIntermediate: i } = moe;
  const tensors: MoeTensor[] = [
    { name: 'router', rows: experts, cols: hidden },
    { name: 'gate_proj', rows: i, cols: hidden, experts },
    { name: 'up_proj', rows: i, cols: hidden, experts },
    { name: 'down_proj', rows: hidden, cols: i, experts },
  ];
  if (moe.sharedIntermediate) {
    const s = moe.sharedIntermediate;
    tensors.push({ name: 'gate_proj', rows: s, cols: hidden }, { name: 'up_proj', rows: s, cols: hidden }, { name: 'down_proj', rows: hidden, cols: s });
    tensors.push({ name: 'shared_expert_gate', rows: 1, cols: hidden });
  }
  return tensors;
}

/**
 * Bytes per token the MoE block keeps for the backward (the attention, the norms and the residual
 * stream are savedBytesPerTokenLayer's). Each token fills `topK` expert slots, whichever experts
 * they are, so the per-slot tensors sum to topK times one dense gated MLP's over the tokens.
 */
export function moeBlockBytesPerToken(hidden: number, moe: MoeShape, o: LayerActivationOptions): number {
  const e = o.computeBytes;
  const k = moe.topK;
  // The router: softmax's fp32 output, top-k's indices, and with norm_topk_prob the sum and the quotient (fp32) the division keeps.
  let bytes = 4 * moe.experts + INDEX_BYTES * k + (moe.normTopK ? 4 + 4 * k : 0);
  // The block's input, where a linear that reads it whole is trained (full fine-tuning, or an adapter): the router, and Qwen-MoE's shared expert and its gate.
  bytes += linearInputs(hidden, o.residualBytes, moe.sharedIntermediate ? ['router', 'gate_proj', 'up_proj', 'shared_expert_gate'] : ['router'], o);
  // Per routed slot: the gathered input (where w1/w3 need it), SiLU's input, its output and up's output (the product's two factors), down's input,
  // the expert's output and its weight (the scaling product keeps both), the weighted output (index_add_'s backward keeps its source
  // for expand_as), and the (row, slot) index pair torch.where gives.
  const slot = linearInputs(hidden, o.residualBytes, ['gate_proj', 'up_proj'], o) + 3 * moe.expertIntermediate * e + linearInputs(moe.expertIntermediate, e, ['down_proj'], o) + 2 * hidden * e + e + 2 * INDEX_BYTES;
  bytes += k * slot;
  if (moe.sharedIntermediate) {
    const s = moe.sharedIntermediate;
    // The shared expert is a dense gated MLP over every token; its output times sigmoid(gate(x)) keeps both (the sigmoid's output is also its own backward's).
    bytes += 3 * s * e + linearInputs(s, e, ['down_proj'], o) + hidden * e + e;
  }
  return bytes;
}
