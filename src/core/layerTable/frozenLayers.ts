/**
 * What frozen parameters (`requires_grad=False`: transfer learning with a fixed backbone, linear
 * probing, partial fine-tuning) change in a training step: they get no gradient and no optimizer
 * state, and autograd records nothing before the first layer whose parameters train, so those
 * layers keep no activations for backward and backward stops there. The model's input never
 * requires grad in a training script, so the graph starts at the first trainable layer.
 */
import type { LayerRow, LayerTable } from './layerTable';

/** Some parameter of the table is frozen. */
export function hasFrozenParameters(table: LayerTable): boolean {
  return table.rows.some((row) => !row.trainable && (row.params ?? 0) > 0);
}

/** A row whose parameters are trained: it puts its output in autograd's graph (a row of unknown size may). */
function trainsParameters(row: LayerRow): boolean {
  return row.trainable && (row.params === null || row.params > 0);
}

/**
 * The index in `calls` (the table's rows in call order, or a subset of them) of the first call
 * whose output autograd records: 0 where nothing is frozen (so an unfrozen model is modelled as
 * before, whatever its first rows are) or where a trainable parameter enters the forward pass
 * outside the rows' order (a `Parameter` row such as a position embedding); `calls.length` where
 * nothing trains.
 */
export function firstRecordedCall(table: LayerTable, calls: readonly LayerRow[]): number {
  if (!hasFrozenParameters(table)) return 0;
  if (table.rows.some((row) => row.type === 'Parameter' && trainsParameters(row))) return 0;
  const index = calls.findIndex(trainsParameters);
  return index < 0 ? calls.length : index;
}
