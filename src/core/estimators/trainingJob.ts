import type { OptimizerKind, Precision } from '../analysis/modelDescription';
import type { LayerTable } from '../layerTable/layerTable';
import type { FineTuningJob } from './fineTuning';
import type { ShardingSpec } from './shardedFineTuning';

/** What every estimator takes: the layer table and the few set-up values that scale it. */
export interface TrainingJob {
  readonly table: LayerTable;
  readonly batchSize: number;
  readonly optimizer: OptimizerKind;
  /** State the optimizer keeps beyond its kind's, in copies of the weights it holds (OptimizerSource.extraStateCopies). Absent: none. */
  readonly optimizerExtraCopies?: number;
  readonly precision: Precision;
  /**
   * Every attention of the model runs fused (`scaled_dot_product_attention`): set for timm's
   * tables read without their measured activations, whose library calls the fused kernels. Absent,
   * attention is eager unless a part with measured activations holds it (trainingStep.ts).
   */
  readonly fusedAttention?: boolean;
  /** The module paths whose parameters the optimizer holds, where it holds only parts of the model (`Adam(model.fc.parameters())`): the others get gradients but no optimizer state. Absent: all. */
  readonly optimizedPaths?: readonly string[];
  /** Fine-tuning a pretrained Transformer (fineTuningEstimator.ts): the job without its batch, and what was assumed to make it. */
  readonly fineTuning?: { readonly job: Omit<FineTuningJob, 'batch'>; readonly notes: readonly string[]; readonly sharding?: ShardingSpec };
}
