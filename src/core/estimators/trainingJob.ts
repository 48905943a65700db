import type { OptimizerKind, Precision } from '../analysis/modelDescription';
import type { LayerTable } from '../layerTable/layerTable';
import type { FineTuningJob } from './fineTuning';
import type { ShardingSpec } from './shardedFineTuning';

/** What every estimator takes: the layer table and the few set-up values that scale it. */
export interface TrainingJob {
  readonly table: LayerTable;
  readonly batchSize: number;
  readonly optimizer: OptimizerKind;
  readonly precision: Precision;
  /** Fine-tuning a pretrained Transformer (fineTuningEstimator.ts): the job without its batch, and what was assumed to make it. */
  readonly fineTuning?: { readonly job: Omit<FineTuningJob, 'batch'>; readonly notes: readonly string[]; readonly sharding?: ShardingSpec };
}
