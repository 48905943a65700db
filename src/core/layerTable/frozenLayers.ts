/**
 * What frozen parameters (`requires_grad=False`: transfer learning with a fixed backbone, linear
 * probing, partial fine-tuning; docs/layer-table.md, rule 10) and calls made with autograd off
 * (`with torch.no_grad():` in forward, rule 11) change in a training step: those parameters get no
 * gradient and no optimizer state, and autograd records nothing before the first layer whose
 * parameters train, nor any call made without it: those layers keep no activations for backward,
 * and backward does not reach them. The model's input never requires grad in a training script,
 * so the graph starts at the first trained layer.
 */
import { isUnderPath, type LayerRow, type LayerTable } from './layerTable';

/** Some parameter of the table is frozen, or some call ran with autograd off. */
export function hasFrozenParts(table: LayerTable): boolean {
  return table.rows.some((row) => row.noGrad === true || (!row.trainable && (row.params ?? 0) > 0));
}

/** A row whose parameters train: its call puts its output in autograd's graph (a row of unknown size may). */
export function trainsParameters(row: LayerRow): boolean {
  return row.trainable && row.noGrad !== true && (row.params === null || row.params > 0);
}

/**
 * The index in `calls` (the table's rows in call order, or a subset of them) of the first call
 * whose output autograd records: 0 where nothing is frozen (so an unfrozen model is modelled as
 * before, whatever its first rows are) or where a trainable parameter enters the forward pass
 * outside the rows' order (a `Parameter` row such as a position embedding); `calls.length` where
 * nothing trains.
 */
export function firstRecordedCall(table: LayerTable, calls: readonly LayerRow[]): number {
  if (!hasFrozenParts(table)) return 0;
  if (table.rows.some((row) => row.type === 'Parameter' && trainsParameters(row))) return 0;
  const index = calls.findIndex(trainsParameters);
  return index < 0 ? calls.length : index;
}

/** A row whose parameters the optimizer holds: it trains them, and they are under a path the optimizer was given (all, where `optimizedPaths` is absent). */
export function optimizesParameters(row: LayerRow, optimizedPaths: readonly string[] | undefined): boolean {
  return trainsParameters(row) && (optimizedPaths === undefined || optimizedPaths.some((path) => isUnderPath(row, path)));
}

/** Per call, whether autograd records it: from the first recorded call on, unless it ran with autograd off. */
export function recordedCalls(table: LayerTable, calls: readonly LayerRow[]): boolean[] {
  const start = firstRecordedCall(table, calls);
  return calls.map((row, index) => index >= start && row.noGrad !== true);
}
