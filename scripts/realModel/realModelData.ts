/**
 * The real-model estimator's training samples and its cross-validation, shared by the training
 * script (train.ts) and `npm run evaluate`: timm runs that fit on the GPU, and GPUMemNet's
 * synthetic MLP and CNN runs, each with the feature vector of src/core/estimators/realModelFeatures.ts.
 */
import { createHash } from 'node:crypto';
import type { OptimizerKind } from '../../src/core/analysis/modelDescription';
import { realModelFeatures } from '../../src/core/estimators/realModelFeatures';
import type { TrainingJob } from '../../src/core/estimators/trainingJob';
import { loadReferenceRuns } from '../evaluation/referenceData';
import { loadTimmRuns, type TimmGroup, type TimmRun } from '../evaluation/timmRuns';
import { fitQuantile, dot, type Sample } from './quantileRegression';

export interface RealSample extends Sample {
  /** No model is on both sides of a split: the timm model name, or the synthetic run's file. */
  readonly model: string;
  /** Leave-one-family-out: timm's model module, or "gpumemnet-mlp" / "gpumemnet-cnn". */
  readonly family: string;
  readonly group: TimmGroup | 'synthetic MLP' | 'synthetic CNN';
  readonly measuredMiB: number;
  readonly job: TrainingJob;
  readonly timm?: TimmRun;
}

/** The synthetic runs together weigh this share of the timm runs: they anchor, the real runs decide. */
export const SYNTHETIC_WEIGHT_SHARE = 0.25;
export const GROUPED_FOLDS = 5;
export const RANGE_QUANTILES = [0.1, 0.9] as const;
/** Candidate point quantiles; train.ts takes the highest whose grouped-CV median error meets the target. */
export const POINT_QUANTILES = [0.5, 0.55, 0.6, 0.65, 0.7] as const;
export const MEDIAN_ERROR_TARGET = 0.08;

function sample(job: TrainingJob, measuredMiB: number, rest: Omit<RealSample, 'x' | 'y' | 'weight' | 'job' | 'measuredMiB'>, weight: number): RealSample {
  return { x: realModelFeatures(job).vector, y: Math.log(measuredMiB), weight, job, measuredMiB, ...rest };
}

export interface RealModelData {
  readonly timm: RealSample[];
  readonly synthetic: RealSample[];
  /** timm runs that did not fit on the GPU (lower bounds), and models without a layer table. */
  readonly lowerBoundRuns: number;
  readonly missingModels: string[];
}

/** timm runs assume fp32 and `optimizer` (the data does not say); GPUMemNet's generator used Adam in fp32. */
export function loadRealModelData(dataDir: string, repoRoot: string, optimizer: OptimizerKind): RealModelData {
  const { runs, missing } = loadTimmRuns(dataDir, repoRoot);
  const fitting = runs.filter((run) => !run.lowerBound);
  const timm = fitting.map((run) =>
    sample({ table: run.table, batchSize: run.batchSize, optimizer, precision: 'fp32' }, run.measuredMiB, { model: run.model, family: run.module, group: run.group, timm: run }, 1),
  );
  const reference = [...loadReferenceRuns(dataDir, 'mlp'), ...loadReferenceRuns(dataDir, 'cnn')];
  const weight = (SYNTHETIC_WEIGHT_SHARE * timm.length) / Math.max(1, reference.length);
  const synthetic = reference.map((run) =>
    sample(
      { table: run.table, batchSize: run.batchSize, optimizer: 'adam', precision: 'fp32' },
      run.measuredMiB,
      { model: `gpumemnet/${run.file}`, family: `gpumemnet-${run.family}`, group: run.family === 'mlp' ? 'synthetic MLP' : 'synthetic CNN' },
      weight,
    ),
  );
  return { timm, synthetic, lowerBoundRuns: runs.length - fitting.length, missingModels: missing };
}

export function groupedFold(model: string): number {
  return parseInt(createHash('sha256').update(model).digest('hex').slice(0, 8), 16) % GROUPED_FOLDS;
}

export interface QuantilePredictions {
  /** log MiB per sample, by quantile. */
  readonly byQuantile: ReadonlyMap<number, Float64Array>;
}

/**
 * Out-of-fold predictions for every sample: `holdOut(sample)` names its fold; each fold's samples
 * are predicted by a fit on all samples of the other folds.
 */
export function crossValidate(samples: readonly RealSample[], holdOut: (sample: RealSample) => string, quantiles: readonly number[]): QuantilePredictions {
  const byQuantile = new Map(quantiles.map((q) => [q, new Float64Array(samples.length)]));
  const folds = [...new Set(samples.map(holdOut))];
  for (const fold of folds) {
    const train = samples.filter((s) => holdOut(s) !== fold);
    for (const q of quantiles) {
      const beta = fitQuantile(train, q);
      samples.forEach((s, i) => {
        if (holdOut(s) === fold) byQuantile.get(q)![i] = dot(beta, s.x);
      });
    }
  }
  return { byQuantile };
}

export interface ErrorSummary {
  readonly runs: number;
  readonly medianAbsError: number;
  readonly underBy10: number;
  readonly rangeCoverage: number | null;
}

export function summarize(measured: readonly number[], point: readonly number[], low?: readonly number[], high?: readonly number[]): ErrorSummary {
  const relative = measured.map((m, i) => (point[i]! - m) / m);
  const sorted = relative.map(Math.abs).sort((a, b) => a - b);
  const mid = (sorted.length - 1) / 2;
  const median = sorted.length ? (sorted[Math.floor(mid)]! + sorted[Math.ceil(mid)]!) / 2 : NaN;
  const inside = low && high ? measured.filter((m, i) => m >= low[i]! && m <= high[i]!).length / Math.max(1, measured.length) : null;
  return { runs: measured.length, medianAbsError: median, underBy10: relative.filter((r) => r < -0.1).length / Math.max(1, measured.length), rangeCoverage: inside };
}
