/**
 * What an estimator is: given one model's layer table and training set-up (and its family, which
 * picks a learned ensemble), a labelled memory estimate or none. The registry (estimators.ts)
 * lists them; the pipeline runs them and decides which one is the estimate.
 */
import type { ModelFamily } from '../estimators/family';
import type { OnnxRunner } from '../estimators/onnx/onnxRunner';
import type { TrainingJob } from '../estimators/trainingJob';

export interface EstimatorInput {
  /** The layer table and the set-up values that scale it (batch size, optimizer, precision). */
  readonly job: TrainingJob;
  readonly family: ModelFamily;
}

export interface EstimatorResult<Detail = unknown> {
  /** The estimator's label, as the estimate's `memory.method` names it. */
  readonly method: string;
  /** Peak GPU memory of a training step as nvidia-smi would show it, MiB, unrounded. */
  readonly pointMiB: number;
  /** The calibrated range, for estimators that have one. */
  readonly range: { readonly lowMiB: number; readonly highMiB: number } | null;
  /** Problems with this estimate (outside the training data, ...). */
  readonly warnings: readonly string[];
  /** The same estimate at another batch size (the rest of the job unchanged), for the largest batch that fits; absent when the estimator cannot say cheaply. */
  readonly memoryAt?: (batchSize: number) => number;
  /** What only this estimator knows (the analytical breakdown, the ensemble's run). */
  readonly detail: Detail;
}

/**
 * `analysis` estimators are synchronous and cheap: they run on every edit, inside the analysis.
 * `learned` ones run after it, with the ONNX sessions.
 */
export type Estimator<Detail = unknown> =
  | { readonly id: string; readonly pass: 'analysis'; estimate(input: EstimatorInput): EstimatorResult<Detail> | null }
  | { readonly id: string; readonly pass: 'learned'; estimate(input: EstimatorInput, runner: OnnxRunner): Promise<EstimatorResult<Detail> | null> };

/** Results by the estimator that made them. */
export type EstimatorResults = ReadonlyMap<Estimator, EstimatorResult>;

/** One estimator's result, with its own detail type. */
export function resultOf<Detail>(results: EstimatorResults, estimator: Estimator<Detail>): EstimatorResult<Detail> | undefined {
  return results.get(estimator) as EstimatorResult<Detail> | undefined;
}
