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
 * What the block keeps per token is moeActivations.ts's.
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

/**
 * The MoE block of a config.json, undefined for a dense model, or a note saying why the model is
 * not one this module describes (a layer layout it does not count).
 */
export function moeFromConfig(modelType: string, config: Readonly<Record<string, unknown>>): MoeShape | string | undefined {
  const num = (name: string): number | undefined => (typeof config[name] === 'number' ? config[name] : undefined);
  if (modelType === 'mixtral') {
    // MixtralConfig's defaults: 8 experts, top-2, the expert the size of intermediate_size; the chosen weights are always renormalised.
    return { experts: num('num_local_experts') ?? 8, topK: num('num_experts_per_tok') ?? 2, expertIntermediate: num('intermediate_size') ?? 14336, normTopK: true };
  }
  if (modelType === 'qwen3_moe') {
    // Qwen3MoeConfig: no shared expert; dense layers as Qwen2-MoE's (none in the published checkpoints).
    const step = num('decoder_sparse_step') ?? 1;
    const dense = Array.isArray(config.mlp_only_layers) ? config.mlp_only_layers.length : 0;
    if (step !== 1 || dense > 0) return `qwen3_moe with dense layers (decoder_sparse_step=${step}, ${dense} mlp_only_layers), which the fine-tuning model does not count`;
    return { experts: num('num_experts') ?? 128, topK: num('num_experts_per_tok') ?? 8, expertIntermediate: num('moe_intermediate_size') ?? 768, normTopK: config.norm_topk_prob === true };
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

/** What the estimate says about a mixture of experts, beside its figure. */
export function moeNote(moe: MoeShape): string {
  const shared = moe.sharedIntermediate ? ' and a shared expert' : '';
  return `Mixture of experts: ${moe.experts} experts per layer${shared}, each token routed to ${moe.topK}. Every expert is held (and quantized with the rest); the activations are those of the ${moe.topK} experts each token goes through, as transformers 4's per-expert linears keep them. The experts shard as any other parameters (expert parallelism is not modelled).`;
}
