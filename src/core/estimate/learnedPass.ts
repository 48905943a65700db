/**
 * The learned pass of an estimate: after the analysis, the estimators that run with the ONNX
 * sessions (the families' ensembles) estimate each model again. Where one of them is the estimate
 * (estimators.ts: a network like those it was trained on), it replaces the analysis pass's point
 * and range with its own, adds the memory bin, and the verdict is taken again of it. Where it is
 * passed over, its reading is listed for comparison and its utilization classes are kept, with a
 * note that the model is outside its data.
 */
import { analyticalEstimator } from '../estimators/analyticalEstimator';
import { curveReach, ensembleEstimator } from '../estimators/learned';
import type { OnnxRunner } from '../estimators/onnx/onnxRunner';
import { findGpuProfile, type GpuProfile } from '../gpus/gpuProfiles';
import { resultOf } from './estimator';
import { readingsOf, runLearnedEstimators, theEstimate } from './estimators';
import type { FileEstimate, MemoryEstimate, ModelEstimate } from './fileEstimate';
import { warningsOf } from './notes';
import { analyticalCurve, jobAt } from './outlook';
import { fits, largestFittingBatch, largestFittingBatchOnGrid, riskOf } from './verdict';

export interface LearnedOptions {
  /** Share of the GPU's memory kept free before an estimate counts as fitting comfortably (0..1). */
  readonly safetyMargin: number;
}

/** The estimate with every model a learned estimator covers estimated by it. */
export async function withLearnedEstimates(estimate: FileEstimate, runner: OnnxRunner, options: LearnedOptions): Promise<FileEstimate> {
  const models: ModelEstimate[] = [];
  for (const model of estimate.models) {
    try {
      models.push(await learnedModel(model, gpuProfileOf(estimate.gpu), runner, options));
    } catch (error) {
      const message = `The learned estimator could not run (${error instanceof Error ? error.message : String(error)}); the analytical model's estimate is shown.`;
      models.push({ ...model, notes: [...model.notes, { severity: 'warning', message }] });
    }
  }
  return { ...estimate, models };
}

/**
 * Learned estimates already worked out, by runner (its loaded ensembles) and layer table: the
 * editor keeps an unchanged model's layer table object across edits (the analysis cache), so
 * after an edit only the models it touched go through the ensembles again.
 */
const remembered = new WeakMap<OnnxRunner, WeakMap<object, Map<string, ModelEstimate>>>();

/** The estimate's GPU as a profile: the known one, else (a GPU the profiles do not list) what the estimate says of it. */
function gpuProfileOf(gpu: FileEstimate['gpu']): GpuProfile {
  return findGpuProfile(gpu.id) ?? { ...gpu, fullName: gpu.name, architecture: 'unknown' };
}

async function learnedModel(model: ModelEstimate, gpu: GpuProfile, runner: OnnxRunner, options: LearnedOptions): Promise<ModelEstimate> {
  const gpuMiB = gpu.memoryMiB;
  if (model.batchSize === null || model.memory.estimateMiB === null) return model;
  let byTable = remembered.get(runner);
  if (!byTable) remembered.set(runner, (byTable = new WeakMap()));
  let known = byTable.get(model.layerTable);
  if (!known) byTable.set(model.layerTable, (known = new Map<string, ModelEstimate>()));
  const key = JSON.stringify([model.family, model.batchSize, model.optimizer, model.precision, model.memory.estimateMiB, warningsOf(model), gpu.id, gpuMiB, options.safetyMargin]);
  const found = known.get(key);
  if (found) return { ...model, memory: found.memory, estimates: found.estimates, utilization: found.utilization, fits: found.fits, risk: found.risk, maxBatchSize: found.maxBatchSize, notes: found.notes };
  const analyticalMiB = model.estimates.find((reading) => reading.estimator === analyticalEstimator.id)?.estimateMiB ?? model.memory.estimateMiB;
  const learned = await learnFor(model, model.batchSize, analyticalMiB, gpu, runner, options);
  known.set(key, learned);
  return learned;
}

async function learnFor(model: ModelEstimate, batchSize: number, analyticalMiB: number, gpu: GpuProfile, runner: OnnxRunner, options: LearnedOptions): Promise<ModelEstimate> {
  const gpuMiB = gpu.memoryMiB;
  const results = await runLearnedEstimators({ job: jobAt(model, batchSize), family: model.family, gpu }, runner);
  const chosen = theEstimate(results);
  const ensemble = resultOf(results, ensembleEstimator);
  if (!ensemble) return model;
  const { detail } = ensemble;
  if (chosen?.estimator !== ensembleEstimator) {
    const message = `Utilization classes from the ${ensembleEstimator.attribution(model.family)}, ${ensemble.outsideTrainingData ?? 'not the estimate'}: read them as a rough guide.`;
    return { ...model, estimates: readingsOf(results, model.family, model.estimates), utilization: detail.utilization, notes: [...model.notes, { severity: 'info', message }] };
  }
  const estimateMiB = Math.round(ensemble.pointMiB);
  const maxBatchSize = await largestFittingBatchOnGrid(
    detail.grid.map((p) => p.batchSize),
    detail.grid.map((p) => p.pointMiB),
    gpuMiB,
    detail.pointsAt,
  );
  // The grid up to 2^24 is large: keep it as far as the report's curve reaches (outlook.ts: twice the
  // largest batch by the ensemble or the analytical model, or the script's), and one point past.
  const reach = curveReach(maxBatchSize, largestFittingBatch(analyticalCurve(model), gpuMiB), batchSize);
  const last = detail.grid.findIndex((p) => p.batchSize >= reach);
  const curve = detail.grid.slice(0, last === -1 ? detail.grid.length : last + 1).map((p) => ({ batchSize: p.batchSize, estimateMiB: Math.round(p.pointMiB), lowMiB: Math.round(p.lowMiB), highMiB: Math.round(p.highMiB) }));
  const memory: MemoryEstimate = {
    ...model.memory,
    estimateMiB,
    lowMiB: ensemble.range ? Math.round(ensemble.range.lowMiB) : null,
    highMiB: ensemble.range ? Math.round(ensemble.range.highMiB) : null,
    rangeQuantiles: detail.run.rangeQuantiles,
    bin: detail.bin,
    method: 'ensemble',
    ensemble: { ...detail.run, analyticalMiB, curve },
  };
  return {
    ...model,
    memory,
    estimates: readingsOf(results, model.family, model.estimates),
    utilization: detail.utilization,
    fits: fits(estimateMiB, gpuMiB),
    risk: riskOf(estimateMiB, gpuMiB, options.safetyMargin),
    maxBatchSize,
    notes: [...model.notes, ...ensemble.warnings.map((message) => ({ severity: 'warning' as const, message }))],
  };
}
