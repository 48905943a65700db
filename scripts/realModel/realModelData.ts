/**
 * The real-model estimator's samples, shared by the training step (dumpSamples.ts) and `npm run
 * evaluate`: timm runs that fit on the GPU, and GPUMemNet's synthetic MLP and CNN runs, each with
 * the feature vector of src/core/estimators/realModelFeatures.ts.
 */
import type { OptimizerKind } from '../../src/core/analysis/modelDescription';
import { realModelFeatures } from '../../src/core/estimators/realModelFeatures';
import type { TrainingJob } from '../../src/core/estimators/trainingJob';
import { loadReferenceRuns } from '../evaluation/referenceData';
import { loadTimmRuns, type TimmGroup, type TimmRun } from '../evaluation/timmRuns';

export interface RealSample {
  /** The feature vector (REAL_MODEL_FEATURES order), log(measured MiB), and the sample's weight in the fit. */
  readonly x: readonly number[];
  readonly y: number;
  readonly weight: number;
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
/** The optimizers the timm runs may have used; AdamW keeps Adam's state. */
export const TIMM_OPTIMIZERS = ['sgd', 'sgd-momentum', 'adam'] as const;

function sample(job: TrainingJob, measuredMiB: number, rest: Omit<RealSample, 'x' | 'y' | 'weight' | 'job' | 'measuredMiB'>, weight: number): RealSample {
  return { x: realModelFeatures(job).vector, y: Math.log(measuredMiB), weight, job, measuredMiB, ...rest };
}

export interface RealModelData {
  /** The timm runs as a script's `timm.create_model(...)` gets them: the catalog's table with the activations autograd measured. */
  readonly timm: RealSample[];
  /** The same runs with the rows' account alone (measuredActivations dropped): how a model read from source, of an architecture never measured, is estimated. */
  readonly timmTableOnly: RealSample[];
  readonly synthetic: RealSample[];
  /** timm runs that did not fit on the GPU (lower bounds), and models without a layer table. */
  readonly lowerBoundRuns: number;
  readonly missingModels: string[];
}

/** timm runs assume fp32 and `optimizer` (the data does not say); GPUMemNet's generator used Adam in fp32. */
export function loadRealModelData(dataDir: string, optimizer: OptimizerKind): RealModelData {
  const { runs, missing } = loadTimmRuns(dataDir);
  const fitting = runs.filter((run) => !run.lowerBound);
  // Each run once per case, half the weight each: together they weigh what one run did.
  // timm calls the fused kernels whether or not its activations were measured.
  const timmSamples = (table: (run: TimmRun) => TimmRun['table']) =>
    fitting.map((run) => sample({ table: table(run), batchSize: run.batchSize, optimizer, precision: 'fp32', fusedAttention: true }, run.measuredMiB, { model: run.model, family: run.module, group: run.group, timm: run }, 0.5));
  const timm = timmSamples((run) => run.table);
  const timmTableOnly = timmSamples(({ table: { measuredActivations: _measured, ...rows } }) => rows);
  const reference = [...loadReferenceRuns(dataDir, 'mlp'), ...loadReferenceRuns(dataDir, 'cnn')];
  const weight = (SYNTHETIC_WEIGHT_SHARE * fitting.length) / Math.max(1, reference.length);
  const synthetic = reference.map((run) =>
    sample(
      { table: run.table, batchSize: run.batchSize, optimizer: 'adam', precision: 'fp32' },
      run.measuredMiB,
      { model: `gpumemnet/${run.file}`, family: `gpumemnet-${run.family}`, group: run.family === 'mlp' ? 'synthetic MLP' : 'synthetic CNN' },
      weight,
    ),
  );
  return { timm, timmTableOnly, synthetic, lowerBoundRuns: runs.length - fitting.length, missingModels: missing };
}
