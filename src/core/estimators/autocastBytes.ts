/**
 * What autocast (`torch.autocast`, fp16 or bf16 mixed precision) makes of a training step's rows.
 * PyTorch runs matrix products and convolutions in half precision (its "lower precision" op list),
 * norms, softmax and losses in fp32 (its "fp32" list), and every other op in the dtype of its
 * inputs; the weights stay fp32, so an embedding's output is fp32 and so is what follows it until
 * a half-precision op. A half-precision op given an fp32 input keeps the half copy it casts for its
 * backward (not the fp32 tensor), and the half copy of its weights it casts once per forward lives
 * until its backward too.
 */
import type { LayerRow } from '../layerTable/layerTable';
import type { Precision } from '../analysis/modelDescription';

/** Row types autocast runs in half precision (their outputs are half). */
const HALF = /^(Linear|LazyLinear|Bilinear|Conv[123]d|LazyConv[123]d|ConvTranspose[123]d|MultiheadAttention|RNN|LSTM|GRU|RNNCell|LSTMCell|GRUCell|torch\.(scaled_dot_product_attention|matmul))$/;
/** Row types autocast runs in fp32, and embeddings, whose fp32 weights make an fp32 output. */
const FP32 = /^(LayerNorm|GroupNorm|InstanceNorm[123]d|LocalResponseNorm|RMSNorm|Softmax|Softmin|LogSoftmax|Embedding|EmbeddingBag|torch\.(layer_norm|group_norm|rms_norm|softmax))$/;

export const isAutocast = (precision: Precision): boolean => precision === 'fp16-mixed' || precision === 'bf16-mixed';

export interface AutocastRows {
  /** Bytes per element of each row's output. */
  readonly outputBytes: number[];
  /** Per row: it casts its fp32 input to half and keeps that copy for backward (2 bytes an input element), instead of the input itself. */
  readonly castsInput: boolean[];
  /** Per row: bytes of the half copy of its weights kept until its backward. */
  readonly weightCopyBytes: number[];
}

/**
 * The rows' dtypes under `precision`: under autocast as above (the model's input is fp32, a row
 * of another type takes its predecessor's dtype); otherwise every output in `activationBytes`.
 */
export function autocastRows(rows: readonly LayerRow[], precision: Precision, activationBytes: number): AutocastRows {
  if (!isAutocast(precision)) return { outputBytes: rows.map(() => activationBytes), castsInput: rows.map(() => false), weightCopyBytes: rows.map(() => 0) };
  const outputBytes: number[] = [];
  const castsInput: boolean[] = [];
  const weightCopyBytes: number[] = [];
  rows.forEach((row, index) => {
    const input = index === 0 ? 4 : outputBytes[index - 1]!;
    const half = HALF.test(row.type);
    outputBytes.push(half ? 2 : FP32.test(row.type) ? 4 : input);
    castsInput.push(half && input === 4);
    weightCopyBytes.push(half ? (row.params ?? 0) * 2 : 0);
  });
  return { outputBytes, castsInput, weightCopyBytes };
}
