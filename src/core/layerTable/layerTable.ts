/**
 * The layer table: one row per layer with its output shape, activations and parameters. The
 * same schema (schema/layer-table.schema.json) is written by the analyzer, the Python harness
 * and the training pipeline, so a model measured on a GPU and one read from source compare.
 */
export const LAYER_TABLE_SCHEMA_VERSION = 1;

export interface LayerRow {
  /** Dotted module path, as `named_modules()` prints it. */
  readonly path: string;
  /** The `torch.nn` class name, `Parameter`, or a functional call's name (`torch.cat`, `torch.layer_norm`; rule 2 of docs/layer-table.md). */
  readonly type: string;
  /** Output shape of one sample; null where it could not be worked out. */
  readonly outputShape: readonly number[] | null;
  /** Output elements per sample (the product of `outputShape`). */
  readonly activations: number | null;
  readonly params: number | null;
  readonly trainable: boolean;
  /** nn.MultiheadAttention rows whose call leaves need_weights True: the score matrices eager attention keeps (rule 9 of docs/layer-table.md). */
  readonly eagerAttention?: EagerAttention;
  /** The call ran with autograd off (`with torch.no_grad():` in forward, rule 11): it keeps nothing for backward, and its parameters get no gradient from it. */
  readonly noGrad?: true;
  /**
   * The call ran inside a `torch.utils.checkpoint` call (rule 12): calls with the same number form one checkpointed
   * segment, which keeps only its input for backward and is run again when backward reaches it.
   */
  readonly checkpoint?: number;
  /**
   * A stack of cloned layers (TransformerEncoder, TransformerDecoder: num_layers; Transformer: the larger of its
   * encoder's and decoder's counts): what each layer keeps for backward is counted that many times (rule 13).
   */
  readonly stackedLayers?: number;
}

/** The batch x heads x L x S matrices an eager torch.nn attention call computes and autograd keeps. */
export interface EagerAttention {
  /** Elements per sample over every eager attention call inside the row's call: heads x L x S each. */
  readonly elements: number;
  /** Dropout runs on the matrices (p > 0 in train mode): its output and mask are kept too. */
  readonly dropout: boolean;
}

export interface LayerTableTotals {
  readonly params: number;
  readonly trainableParams: number;
  /**
   * Sum of every layer-module call's output elements per sample, functional rows excluded: the
   * research's "total activations".
   */
  readonly activations: number;
}

export interface LayerTable {
  readonly schemaVersion: typeof LAYER_TABLE_SCHEMA_VERSION;
  readonly model: string;
  /** Shape of one input sample; null where unknown. */
  readonly inputShape: readonly number[] | null;
  readonly rows: readonly LayerRow[];
  readonly totals: LayerTableTotals;
  /** True when some row lacks a shape or a parameter count, so totals are lower bounds. */
  readonly incomplete: boolean;
  /**
   * What PyTorch's autograd keeps for backward in parts of the model whose source the rows only
   * summarise (a catalog architecture: its library's own layer classes and functional code save
   * tensors no row shows). Absent where nothing was measured.
   */
  readonly measuredActivations?: readonly MeasuredActivations[];
}

/** The libraries whose models' saved activations were measured (src/core/catalog/savedActivations.ts). */
export type MeasuredLibrary = 'timm' | 'torchvision' | 'transformers';

/** The activations autograd was measured to save in the forward pass of one part of a model. */
export interface MeasuredActivations {
  /** The part's module path (`''` for the whole model): its rows are those at or under it. */
  readonly path: string;
  /** Bytes per sample of the distinct tensors autograd saves in the part's forward, at fp32, parameters excluded. */
  readonly savedBytesPerSample: number;
  /**
   * The most bytes per sample the part's forward holds at once with autograd off (a frozen
   * backbone), at fp32, its input and parameters excluded, where measured: the rows show one
   * tensor after another, but the residual stream, an activation's input and output and the
   * library's functional code live side by side.
   */
  readonly forwardPeakBytesPerSample?: number;
  /** Where the figure comes from: `timm 1.0.31 (torch 1.13), autograd on the meta device`. */
  readonly source: string;
  /** The library that measured it: the real-model correction was fitted on timm's tables (realModel.ts). */
  readonly library?: MeasuredLibrary;
}

/** The dotted path of `name` under `parent` (`''`: the root itself). */
export function childPath(parent: string, name: string): string {
  return parent && name ? `${parent}.${name}` : parent || name;
}

/** A Linear row's in_features from its parameters (weight and bias) and its output; undefined where they do not give a whole number. */
export function linearInFeatures(row: Pick<LayerRow, 'type' | 'outputShape' | 'params'>): number | undefined {
  const out = row.outputShape?.length === 1 ? row.outputShape[0] : undefined;
  const inFeatures = row.type === 'Linear' && out && row.params ? row.params / out - 1 : undefined;
  return inFeatures !== undefined && Number.isInteger(inFeatures) && inFeatures > 0 ? inFeatures : undefined;
}

/** A row at or under a module path (`''`: every row). */
export function isUnderPath(row: Pick<LayerRow, 'path'>, path: string): boolean {
  return path === '' || row.path === path || row.path.startsWith(`${path}.`);
}

/** A row of a functional call (`torch.cat`, `F.layer_norm`, ...) rather than of a module or a parameter. */
export function isFunctionalRow(row: Pick<LayerRow, 'type'>): boolean {
  return row.type.startsWith('torch.');
}

/** A functional row of a concatenation (`torch.cat`, `torch.stack`): what the learned estimators' functional features count. */
export function isConcatenationRow(row: Pick<LayerRow, 'type'>): boolean {
  return row.type === 'torch.cat' || row.type === 'torch.stack';
}
