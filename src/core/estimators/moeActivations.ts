import type { MoeShape } from './moe';
import { linearInputs, type LayerActivationOptions } from './savedActivations';

/**
 * What transformers 4's sparse MoE block keeps for the backward, per token (moe.ts describes the
 * block's forward). harness/tests/test_moe_saved_activations.py measures the same block with
 * PyTorch's saved-tensor hooks against these figures (test/vectors/moe/sparse-moe-block.json).
 */

/** Bytes of an int64 index, which the gather, the weights' indexing and index_add_ keep. */
const INDEX_BYTES = 8;

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
