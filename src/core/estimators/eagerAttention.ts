/**
 * What eager attention keeps for backward per score-matrix element (batch x heads x L x S), as
 * PyTorch runs `softmax(q k^T) [-> dropout] @ v` on a GPU: softmax saves its output; dropout
 * (CUDA's fused kernel) saves a 1-byte mask, and the matmul with v saves dropout's output. Under
 * autocast softmax runs in fp32 and the matmul saves its half-precision copy of the probabilities.
 * harness/tests/test_eager_attention.py checks these figures against autograd's saved tensors.
 */
import type { EagerAttention, LayerRow } from '../layerTable/layerTable';
import type { Precision } from '../analysis/modelDescription';

const MASK_BYTES = 1;

export function eagerAttentionBytesPerElement(precision: Precision, dropout: boolean): number {
  switch (precision) {
    case 'fp32':
      return dropout ? 4 + MASK_BYTES + 4 : 4;
    case 'fp16-mixed':
    case 'bf16-mixed':
      return 4 + (dropout ? MASK_BYTES : 0) + 2;
    case 'fp16':
    case 'bf16':
      return dropout ? 2 + MASK_BYTES + 2 : 2;
  }
}

/**
 * The score matrices a row computes when attention runs eagerly: an nn.MultiheadAttention row's
 * own figure (a call with need_weights left True; the nn.Transformer* layers are fused on
 * PyTorch 2 and carry none), or a hand-written attention's dropout row (`attn_drop` on [heads, N, N]).
 */
export function rowEagerAttention(row: LayerRow, attentionMatrix: boolean): EagerAttention | undefined {
  if (row.eagerAttention) return row.eagerAttention;
  if (attentionMatrix && row.activations) return { elements: row.activations, dropout: true };
  return undefined;
}
