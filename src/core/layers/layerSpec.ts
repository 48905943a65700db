import type { Value } from '../analysis/layerCall';
import type { EagerAttention } from '../layerTable/layerTable';
import type { LayerArgs } from './layerArgs';
import type { LayerOutput, TensorShape } from './tensorShape';

export type LayerCategory =
  | 'linear'
  | 'conv'
  | 'norm'
  | 'activation'
  | 'dropout'
  | 'pool'
  | 'reshape'
  | 'embedding'
  | 'recurrent'
  | 'attention'
  | 'transformer'
  | 'identity';

/** How the layer was called in `forward`: keyword arguments of the call (`need_weights=False`). */
export interface ForwardCall {
  readonly kwargs: Readonly<Record<string, Value>>;
}

/**
 * What the analyzer and the estimators know about one `torch.nn` module type. Composite torch.nn
 * modules (LSTM, MultiheadAttention, TransformerEncoderLayer, ...) are one layer each, as in the
 * layer-table schema: their parameters are counted recursively and their output is what their
 * `forward` returns.
 */
export interface LayerSpec {
  readonly category: LayerCategory;
  /** `sum(p.numel() for p in module.parameters())` for a module built with these arguments. */
  params(args: LayerArgs, inputs?: readonly TensorShape[]): number;
  /**
   * What `module(*inputs)` returns, as full shapes with the batch dimension marked. Throws
   * LayerArgumentError with a plain message when the inputs do not fit the layer.
   */
  forward(inputs: readonly TensorShape[], args: LayerArgs, call: ForwardCall): LayerOutput;
  /** Backward needs this layer's input (Linear, Conv, norms, GELU...). */
  readonly savesInput: boolean;
  /** Backward needs this layer's output (ReLU, Sigmoid, Tanh, Softmax). */
  readonly savesOutput: boolean;
  /** Extra bytes kept per output element, such as Dropout's boolean mask; a stack's, per layer (stackedLayers). */
  readonly extraBytesPerElement?: number;
  /** A stack of cloned layers (TransformerEncoder's num_layers): each keeps its extra bytes; undefined for a layer that is no stack. */
  stackedLayers?(args: LayerArgs): number | undefined;
  /**
   * The attention score matrices `module(*inputs)` keeps for backward in training on PyTorch 2
   * (MultiheadAttention called with need_weights left True); undefined where none are kept or a
   * length is unknown.
   */
  eagerAttention?(inputs: readonly TensorShape[], args: LayerArgs, call: ForwardCall): EagerAttention | undefined;
}
