/**
 * The estimate as `gpu-estimate --json` prints it, the "Estimate GPU memory" command returns it and
 * the report exports it: a published shape that schedulers and scripts read, so it is written out
 * here field by field instead of being whatever the in-memory estimate holds. A comparison
 * estimator (Horus) appears under its own key (estimator.ts, `jsonKey`); the estimate that counts
 * is `memory`; the notes appear twice, as lines of text (`warnings`) and with their source ranges.
 */
import type { AnalysisNote } from '../analysis/modelDescription';
import type { LayerTable } from '../layerTable/layerTable';
import { ESTIMATORS } from './estimators';
import type { FileEstimate, FineTuningOutlook, ModelEstimate, RemedyKind, Risk, ScriptProcess } from './fileEstimate';
import { warningsOf } from './notes';

type Shared = Pick<
  ModelEstimate,
  | 'name'
  | 'line'
  | 'classLine'
  | 'trainingLoops'
  | 'params'
  | 'batchSize'
  | 'family'
  | 'architecture'
  | 'inputShape'
  | 'optimizer'
  | 'precision'
  | 'gradientCheckpointing'
  | 'compiled'
  | 'inferenceOnly'
  | 'memory'
  | 'utilization'
  | 'fits'
  | 'risk'
  | 'maxBatchSize'
  | 'assumptions'
>;

export type ModelEstimateJson = Shared & {
  /** For a fine-tune the fine-tuning model estimates: the longest sequence that fits at the script's batch and the changes that make it fit, MiB rounded as `memory` is. */
  readonly fineTuning?: FineTuningJson;
  /** The Horus formula as published, for comparison; null without a batch size. Other comparison estimators add their own keys here. */
  readonly horusMiB: number | null;
  readonly [comparisonKey: `${string}MiB`]: number | null;
  readonly layerTable: LayerTable;
  readonly warnings: readonly string[];
  /** The same notes with the source range each is about (zero-based), for editors. */
  readonly notes: readonly AnalysisNote[];
};

export interface FileEstimateJson extends Omit<FileEstimate, 'models'> {
  readonly models: readonly ModelEstimateJson[];
}

export interface FineTuningJson {
  readonly batch: number;
  readonly sequence: number;
  readonly longestSequence: { readonly tokens: number; readonly modelMaximum: number | null; readonly modelMaximumFits: boolean; readonly driverMiB: number | null };
  readonly remedies: readonly { readonly change: string; readonly changes: readonly RemedyKind[]; readonly driverMiB: number; readonly fits: boolean; readonly risk: Risk; readonly sameTraining: boolean }[];
}

function fineTuningJson(outlook: FineTuningOutlook): FineTuningJson {
  const { longestSequence: longest } = outlook;
  return {
    batch: outlook.batch,
    sequence: outlook.seq,
    longestSequence: { tokens: longest.tokens, modelMaximum: longest.modelMaximum, modelMaximumFits: longest.modelMaximumFits, driverMiB: longest.driverMiB === null ? null : Math.round(longest.driverMiB) },
    remedies: outlook.remedies.map((r) => ({ change: r.change, changes: r.changes, driverMiB: Math.round(r.driverMiB), fits: r.fits, risk: r.risk, sameTraining: r.sameTraining })),
  };
}

export function estimateJson(estimate: FileEstimate): FileEstimateJson {
  return { file: estimate.file, gpu: estimate.gpu, models: estimate.models.map(modelJson), ...(estimate.process ? { process: processJson(estimate.process) } : {}), warnings: estimate.warnings };
}

function processJson(process: ScriptProcess): ScriptProcess {
  return { models: process.models, inferenceOnly: process.inferenceOnly, estimateMiB: Math.round(process.estimateMiB), fits: process.fits, risk: process.risk, batchSize: process.batchSize, maxBatchSize: process.maxBatchSize };
}

function modelJson(model: ModelEstimate): ModelEstimateJson {
  const comparisons: Record<string, number | null> = {};
  for (const estimator of ESTIMATORS) {
    if (estimator.jsonKey) comparisons[estimator.jsonKey] = model.estimates.find((reading) => reading.estimator === estimator.id)?.estimateMiB ?? null;
  }
  return {
    name: model.name,
    line: model.line,
    classLine: model.classLine,
    ...(model.classFile === undefined ? {} : { classFile: model.classFile }),
    trainingLoops: model.trainingLoops,
    params: model.params,
    batchSize: model.batchSize,
    family: model.family,
    architecture: model.architecture,
    inputShape: model.inputShape,
    optimizer: model.optimizer,
    precision: model.precision,
    gradientCheckpointing: model.gradientCheckpointing,
    compiled: model.compiled,
    ...(model.inferenceOnly ? { inferenceOnly: true } : {}),
    memory: model.memory,
    ...(comparisons as { horusMiB: number | null }),
    utilization: model.utilization,
    fits: model.fits,
    risk: model.risk,
    maxBatchSize: model.maxBatchSize,
    ...(model.fineTuning ? { fineTuning: fineTuningJson(model.fineTuning) } : {}),
    assumptions: model.assumptions,
    layerTable: model.layerTable,
    warnings: warningsOf(model),
    notes: model.notes,
  };
}
