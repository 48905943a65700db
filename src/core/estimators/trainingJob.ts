import type { OptimizerKind, Precision } from '../analysis/modelDescription';
import type { LayerTable } from '../layerTable/layerTable';

/** What every estimator takes: the layer table and the few set-up values that scale it. */
export interface TrainingJob {
  readonly table: LayerTable;
  readonly batchSize: number;
  readonly optimizer: OptimizerKind;
  readonly precision: Precision;
}
