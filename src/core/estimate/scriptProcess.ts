/**
 * A script's models run in one process: a teacher beside its student, a GAN's generator and
 * discriminator, a frozen backbone whose features feed a trained head. Each model's estimate is
 * its own step with its own CUDA context; what the GPU must hold is the process's peak, and what
 * limits the batch the models share is that peak, not either model's.
 */
import { contextMiBOf } from '../estimators/analytical';
import type { GpuProfile } from '../gpus/gpuProfiles';
import type { FileEstimate, ModelEstimate, ScriptProcess } from './fileEstimate';
import { estimateCurve } from './outlook';
import { fits, largestFittingBatch, riskOf } from './verdict';

/** What the peak of a script's process needs of its models (a model's `--json` output has these too). */
export type ProcessModel = Pick<ModelEstimate, 'memory' | 'inferenceOnly'> & { readonly layerTable: { readonly rows: readonly { readonly type: string }[] } };

/**
 * The CUDA context inside a model's estimate: the breakdown's where it says one (the fine-tuning
 * model's), else cuDNN's larger one for a network with convolutions (every estimator's figure for
 * one was fitted on, or replays, runs that loaded cuDNN), else the runtime's.
 */
function contextOf(model: ProcessModel): number {
  return model.memory.breakdown?.contextMiB ?? contextMiBOf(model.layerTable.rows);
}

/** The script's process, or null when fewer than two of its models have an estimate (a model's own figures then say it all). */
export function scriptProcessOf(estimate: Pick<FileEstimate, 'models'>, gpu: Pick<GpuProfile, 'memoryMiB'>, safetyMargin: number): ScriptProcess | null {
  const estimated = estimate.models.filter((model) => model.memory.estimateMiB !== null);
  if (estimated.length < 2) return null;
  const estimateMiB = scriptPeakMiB(estimated);
  const batches = new Set(estimated.map((model) => model.batchSize));
  const batchSize = batches.size === 1 ? [...batches][0]! : null;
  const maxBatchSize = batchSize !== null && estimated.every((model) => model.layerTable.rows.length > 0) ? largestSharedBatch(estimated, gpu.memoryMiB) : null;
  return {
    models: estimated.map((model) => model.name),
    inferenceOnly: estimated.filter((model) => model.inferenceOnly).map((model) => model.name),
    estimateMiB,
    fits: fits(estimateMiB, gpu.memoryMiB),
    risk: riskOf(estimateMiB, gpu.memoryMiB, safetyMargin),
    batchSize,
    maxBatchSize,
  };
}

/** The process's peak at any batch its models share: each model's estimate curve (outlook.ts), taken together. */
export function processCurve(models: readonly ModelEstimate[]): (batchSize: number) => number {
  const curves = new Map(models.map((model) => [model, estimateCurve(model)]));
  return (batchSize) => scriptPeakMiB(models, (model) => curves.get(model)!(batchSize));
}

/**
 * Largest shared batches already searched, by the first model's layer table: the editor keeps an
 * unchanged model's table object across edits (the analysis cache, as learnedPass.ts relies on), and
 * the search replays every model's step per probe (tens of ms), which an edit elsewhere need not redo.
 */
const searched = new WeakMap<object, Map<string, number>>();
const tableIds = new WeakMap<object, number>();
let nextTableId = 0;

function largestSharedBatch(models: readonly ModelEstimate[], limitMiB: number): number {
  const tableId = (table: object): number => tableIds.get(table) ?? (tableIds.set(table, ++nextTableId), nextTableId);
  // What estimateCurve and scriptPeakMiB read of each model.
  const key = JSON.stringify([
    limitMiB,
    ...models.map((model) => [tableId(model.layerTable), model.batchSize, model.optimizer, model.precision, model.inferenceOnly ?? false, model.memory.method, model.memory.estimateMiB, model.memory.breakdown?.weightsMiB, model.memory.breakdown?.contextMiB, model.fineTuning ? [model.fineTuning.job, model.fineTuning.sharding] : null]),
  ]);
  let known = searched.get(models[0]!.layerTable);
  if (!known) searched.set(models[0]!.layerTable, (known = new Map<string, number>()));
  let found = known.get(key);
  if (found === undefined) known.set(key, (found = largestFittingBatch(processCurve(models), limitMiB)));
  return found;
}

/** The estimate with its script's process (`FileEstimate.process`) where it has one. */
export function withScriptProcess(estimate: FileEstimate, safetyMargin: number): FileEstimate {
  const process = scriptProcessOf(estimate, estimate.gpu, safetyMargin);
  return process ? { ...estimate, process } : estimate;
}

/** The peak of one script's process from its estimated models' figures (each model's estimate, or `figure` of it: a batch's). */
export function scriptPeakMiB<M extends ProcessModel>(models: readonly M[], figure: (model: M) => number = (model) => model.memory.estimateMiB!): number {
  const resident = (model: M) => model.memory.breakdown?.weightsMiB ?? Math.max(0, figure(model) - contextOf(model));
  return processPeak(
    models.filter((model) => !model.inferenceOnly).map((model) => ({ peakMiB: figure(model), contextMiB: contextOf(model) })),
    models.filter((model) => model.inferenceOnly).map((model) => ({ peakMiB: figure(model), contextMiB: contextOf(model), residentMiB: resident(model) })),
  );
}

interface ProcessPart {
  readonly peakMiB: number;
  readonly contextMiB: number;
}

/**
 * One process: every model's estimate includes a CUDA context; the process has one, the largest of
 * theirs (cuDNN's libraries are loaded once). Models it trains are added whole; a model it only runs
 * for inference (a teacher) adds its weights, as its forward's transient tensors are gone before
 * the trained models' backward, but the process needs at least that model's own peak.
 */
function processPeak(trained: readonly ProcessPart[], inference: readonly (ProcessPart & { readonly residentMiB: number })[]): number {
  const together = (parts: readonly ProcessPart[]) => parts.reduce((sum, part) => sum + part.peakMiB - part.contextMiB, 0) + Math.max(0, ...parts.map((part) => part.contextMiB));
  if (trained.length === 0) return together(inference);
  const contextMiB = Math.max(0, ...[...trained, ...inference].map((part) => part.contextMiB));
  const trainedPeak = together(trained) + Math.max(0, contextMiB - Math.max(0, ...trained.map((part) => part.contextMiB)));
  return Math.max(trainedPeak + inference.reduce((sum, model) => sum + model.residentMiB, 0), ...inference.map((model) => model.peakMiB));
}
