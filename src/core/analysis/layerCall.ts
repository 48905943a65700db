import type { SourceRange } from '../parsing/syntax';

/**
 * The layer constructions a script writes and the argument values they take, as the analyzer
 * reads them: the part of the model description that the interpreter's values, the layer
 * specs and the architecture catalog all build on, so it sits below them all.
 */

/** An argument the analyzer could not reduce to a constant, and why. */
export interface Unresolved {
  readonly unresolved: string;
  readonly reason: string;
}

/**
 * A value that is itself a `torch.nn` layer construction: the `encoder_layer` of
 * `nn.TransformerEncoder(nn.TransformerEncoderLayer(512, 8), num_layers=6)`, its `norm=nn.LayerNorm(512)`,
 * `nn.Transformer(custom_encoder=...)`. `type`, `args` and `kwargs` mean what they mean in a
 * LayerCall (type is the torch.nn class name, without `nn.`); `range` is where the construction is
 * written (for a layer built earlier and passed by name, where it was built). The layer specs
 * reads it with `LayerArgs.layer(position, name)`.
 */
export interface LayerValue {
  readonly layer: {
    readonly type: string;
    readonly args: readonly Value[];
    readonly kwargs: Readonly<Record<string, Value>>;
    readonly range?: SourceRange;
  };
}

export type Value = number | string | boolean | null | readonly Value[] | Unresolved | LayerValue;

export function isLayerValue(value: Value | undefined): value is LayerValue {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'layer' in value;
}

export function isUnresolved(value: Value | undefined): value is Unresolved {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'unresolved' in value;
}

/** One layer construction as written, e.g. `nn.Linear(784, 512)`. */
export interface LayerCall {
  /** The `torch.nn` class name: `Linear`, `Conv2d`, ... */
  readonly type: string;
  /** Dotted path inside the model, as `named_modules()` would print it: `0`, `encoder.fc1`. */
  readonly path: string;
  readonly args: readonly Value[];
  readonly kwargs: Readonly<Record<string, Value>>;
  readonly range: SourceRange;
}
