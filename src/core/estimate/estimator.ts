/**
 * What an estimator is: given one model's layer table and training set-up (and its family, which
 * picks a learned ensemble), a labelled memory estimate or none. The registry (estimators.ts)
 * lists them; the pipeline runs them and decides which one is the estimate.
 */
import type { ModelFamily } from '../estimators/family';
import type { GpuProfile } from '../gpus/gpuProfiles';
import type { OnnxRunner } from '../estimators/onnx/onnxRunner';
import type { TrainingJob } from '../estimators/trainingJob';

export interface EstimatorInput {
  /** The layer table and the set-up values that scale it (batch size, optimizer, precision). */
  readonly job: TrainingJob;
  readonly family: ModelFamily;
  /** The GPU the estimate is for: an estimator calibrated on another may widen its range. */
  readonly gpu: GpuProfile;
}

export interface EstimatorResult<Detail = unknown> {
  /** The estimator's label, as the estimate's `memory.method` names it. */
  readonly method: string;
  /** Peak GPU memory of a training step as nvidia-smi would show it, MiB, unrounded. */
  readonly pointMiB: number;
  /** The calibrated range, for estimators that have one, with the quantiles it spans (0.05-0.95). */
  readonly range: { readonly lowMiB: number; readonly highMiB: number; readonly quantiles?: readonly [number, number] } | null;
  /** Problems with this estimate (outside the training data, ...). */
  readonly warnings: readonly string[];
  /**
   * Why this result must not be the estimate although it ran: the model lies outside what the
   * estimator was trained on (a learned ensemble on an architecture its data never had). The
   * rule in estimators.ts then passes it over, and the result is shown for comparison.
   */
  readonly outsideTrainingData?: string;
  /** The same estimate at another batch size (the rest of the job unchanged), for the largest batch that fits; absent when the estimator cannot say cheaply. */
  readonly memoryAt?: (batchSize: number) => number;
  /** What only this estimator knows (the analytical breakdown, the ensemble's run). */
  readonly detail: Detail;
}

/**
 * How an estimator is named wherever its figure is shown: every surface (CLI table and details,
 * hover, CodeLens, status bar, report) lists the estimators' readings with these words, so a new
 * estimator needs no code in any of them.
 */
export interface EstimatorNames {
  readonly id: string;
  /** `Horus formula`: the hover, the status tooltip, the report, the CLI's details. */
  readonly label: string;
  /** `Horus`: where room is short (the CLI table's column, the CodeLens). */
  readonly short: string;
  /** How the estimate is attributed when it is this estimator's: `CNN ensemble`, `analytical model`. */
  attribution(family: ModelFamily): string;
  /** What the CLI prints once under its table to explain a figure shown for comparison. */
  readonly footnote?: string;
  /** The key the `--json` output gives a comparison estimator's figure (`horusMiB`); the estimate itself is `memory`. */
  readonly jsonKey?: string;
  /** Listed only for the models it estimates (the fine-tuning model, for pretrained Transformers fine-tuned): elsewhere it is no reading at all, not `n/a`. */
  readonly onlyWhereItApplies?: boolean;
}

/**
 * `analysis` estimators are synchronous and cheap: they run on every edit, inside the analysis.
 * `learned` ones run after it, with the ONNX sessions.
 */
export type Estimator<Detail = unknown> = EstimatorNames &
  (
    | { readonly pass: 'analysis'; estimate(input: EstimatorInput): EstimatorResult<Detail> | null }
    | { readonly pass: 'learned'; estimate(input: EstimatorInput, runner: OnnxRunner): Promise<EstimatorResult<Detail> | null> }
  );

/** Results by the estimator that made them. */
export type EstimatorResults = ReadonlyMap<Estimator, EstimatorResult>;

/** One estimator's result, with its own detail type. */
export function resultOf<Detail>(results: EstimatorResults, estimator: Estimator<Detail>): EstimatorResult<Detail> | undefined {
  return results.get(estimator) as EstimatorResult<Detail> | undefined;
}
