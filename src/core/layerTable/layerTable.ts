/**
 * The layer table: one row per layer with its output shape, activations and parameters. The
 * same schema (schema/layer-table.schema.json) is written by the analyzer, the Python harness
 * and the training pipeline, so a model measured on a GPU and one read from source compare.
 */
export const LAYER_TABLE_SCHEMA_VERSION = 1;

export interface LayerRow {
  /** Dotted module path, as `named_modules()` prints it. */
  readonly path: string;
  /** The `torch.nn` class name, `Parameter`, or a functional call's name (`torch.cat`, `torch.stack`). */
  readonly type: string;
  /** Output shape of one sample; null where it could not be worked out. */
  readonly outputShape: readonly number[] | null;
  /** Output elements per sample (the product of `outputShape`). */
  readonly activations: number | null;
  readonly params: number | null;
  readonly trainable: boolean;
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
}

/** A row of a functional call (`torch.cat`, `torch.stack`) rather than of a module or a parameter. */
export function isFunctionalRow(row: Pick<LayerRow, 'type'>): boolean {
  return row.type.startsWith('torch.');
}
