/**
 * The learned step of an estimate: the family's bundled ONNX ensemble (see models/README.md)
 * refines what the synchronous analytical pass found. It runs after `estimateSource` (the editor
 * estimates on every edit with the fast analytical path, then adds this), fills the point estimate
 * and its calibrated range, the memory bin and the utilization classes, and re-checks fit and the
 * largest batch against the learned estimate. Families without an ensemble (Transformers, until
 * our harness has collected their data) keep the analytical model's estimate, labelled as such.
 */
import { riskOf } from '../estimateSource';
import { FEATURE_NAMES, featureVector } from '../features/features';
import type { FileEstimate, MemoryEstimate, ModelEstimate, UtilizationClass } from '../report/fileEstimate';
import type { OnnxRunner, RunResult } from './onnx/onnxRunner';
import { outOfDistribution, type ModelCard } from './onnx/modelCard';
import type { TrainingJob } from './trainingJob';

export interface LearnedOptions {
  /** Share of the GPU's memory kept free before an estimate counts as fitting comfortably (0..1). */
  readonly safetyMargin: number;
}

/** Batch sizes searched for the largest that fits: 2^(k/8) up to 2^24, then every step between the last two. */
const GRID_STEPS_PER_DOUBLING = 8;
const LARGEST_BATCH = 1 << 24;
const REFINE_POINTS = 256;

/** The estimate with every model the bundled ensembles cover re-estimated by them. */
export async function withLearnedEstimates(estimate: FileEstimate, runner: OnnxRunner, options: LearnedOptions): Promise<FileEstimate> {
  const models: ModelEstimate[] = [];
  for (const model of estimate.models) {
    try {
      models.push(await learnedModel(model, estimate.gpu.memoryMiB, runner, options));
    } catch (error) {
      const message = `The learned estimator could not run (${error instanceof Error ? error.message : String(error)}); the analytical model's estimate is shown.`;
      models.push({ ...model, warnings: [...model.warnings, message], notes: [...model.notes, { severity: 'warning', message }] });
    }
  }
  return { ...estimate, models };
}

/**
 * Learned estimates already worked out, by loaded ensemble and layer table: the editor keeps an
 * unchanged model's layer table object across edits (estimateSource's cache), so after an edit
 * only the models it touched go through the ensemble again.
 */
const remembered = new WeakMap<object, WeakMap<object, Map<string, ModelEstimate>>>();

async function learnedModel(model: ModelEstimate, gpuMiB: number, runner: OnnxRunner, options: LearnedOptions): Promise<ModelEstimate> {
  if (model.batchSize === null || model.memory.estimateMiB === null) return model;
  const loaded = await runner.model(model.family);
  if (!loaded) return model;
  let byTable = remembered.get(loaded);
  if (!byTable) remembered.set(loaded, (byTable = new WeakMap()));
  let known = byTable.get(model.layerTable);
  if (!known) byTable.set(model.layerTable, (known = new Map<string, ModelEstimate>()));
  const key = JSON.stringify([model.batchSize, model.optimizer, model.precision, model.memory.estimateMiB, model.warnings, gpuMiB, options.safetyMargin]);
  const found = known.get(key);
  if (found) return { ...model, memory: found.memory, utilization: found.utilization, fits: found.fits, risk: found.risk, maxBatchSize: found.maxBatchSize, warnings: found.warnings, notes: found.notes };
  const learned = await learnFor(model, gpuMiB, runner, options, loaded);
  known.set(key, learned);
  return learned;
}

async function learnFor(model: ModelEstimate, gpuMiB: number, runner: OnnxRunner, options: LearnedOptions, loaded: NonNullable<Awaited<ReturnType<OnnxRunner['model']>>>): Promise<ModelEstimate> {
  // learnedModel checked both.
  const batchSize = model.batchSize!;
  const analyticalMiB = model.memory.estimateMiB!;
  const { card } = loaded;
  const job = (batchSize: number): TrainingJob => ({ table: model.layerTable, batchSize, optimizer: model.optimizer, precision: model.precision });
  const features = featureVector(job(batchSize));
  const grid = batchGrid();
  const result = await runner.run(model.family, [features, ...grid.map((b) => featureVector(job(b)))]);
  if (!result) return model;

  const memory = row(result, card.outputs.memory.name, 0);
  const [low, point, high] = [memory[0]!, memory[1]!, memory[2]!];
  const estimateMiB = Math.round(point);
  const ood = outOfDistribution(card, FEATURE_NAMES, features);
  const warnings = [...model.warnings];
  const notes = [...model.notes];
  if (ood.length > 0) {
    const shown = ood.length > 3 ? `${ood.slice(0, 3).join(', ')} and ${ood.length - 3} more` : ood.join(', ');
    const message = `Outside the ${model.family.toUpperCase()} ensemble's training data (${shown}): its learned correction is held at the edge of that data, so the estimate leans on the analytical model.`;
    warnings.push(message);
    notes.push({ severity: 'warning', message });
  }
  const gridPoints = grid.map((_, i) => row(result, card.outputs.memory.name, i + 1)[1]!);
  const maxBatchSize = await largestFittingBatch(grid, gridPoints, gpuMiB, async (sizes) => {
    const refined = await runner.run(model.family, sizes.map((b) => featureVector(job(b))));
    return sizes.map((_, i) => row(refined!, card.outputs.memory.name, i)[1]!);
  });
  // The grid up to 2^24 is large: keep it as far as the report's curve reaches, and one point past.
  const reach = curveReach(maxBatchSize, model.maxBatchSize, batchSize);
  const last = grid.findIndex((b) => b >= reach);
  const curve = grid.slice(0, last === -1 ? grid.length : last + 1).map((b, i) => {
    const at = row(result, card.outputs.memory.name, i + 1);
    return { batchSize: b, estimateMiB: Math.round(at[1]!), lowMiB: Math.round(at[0]!), highMiB: Math.round(at[2]!) };
  });
  const ensemble = {
    model: loaded.modelPath,
    executionProvider: result.provider,
    pointQuantile: card.outputs.memory.pointQuantile,
    rangeQuantiles: card.outputs.memory.range.quantiles,
    outOfDistribution: ood,
    analyticalMiB,
    curve,
  };
  const learnedMemory: MemoryEstimate = {
    ...model.memory,
    estimateMiB,
    lowMiB: Math.round(low),
    highMiB: Math.round(high),
    bin: primaryBin(card, result, point),
    method: 'ensemble',
    ensemble,
  };
  return {
    ...model,
    memory: learnedMemory,
    utilization: {
      smact: utilizationClass(card, result, card.outputs.utilization.smact),
      smocc: utilizationClass(card, result, card.outputs.utilization.smocc),
      drama: utilizationClass(card, result, card.outputs.utilization.drama),
    },
    fits: estimateMiB <= gpuMiB,
    risk: riskOf(estimateMiB, gpuMiB, options.safetyMargin),
    maxBatchSize,
    warnings,
    notes,
  };
}

/** The memory-vs-batch curve reaches at least this batch size, so tiny batches still show a slope. */
const MIN_CURVE_BATCH = 8;

/**
 * How far the report's memory-vs-batch curve reaches: twice the largest of the batch sizes given
 * (the largest that fits by either estimator, the script's), at least MIN_CURVE_BATCH.
 */
export function curveReach(...batchSizes: readonly (number | null)[]): number {
  return Math.max(MIN_CURVE_BATCH, ...batchSizes.map((b) => 2 * (b ?? 0)));
}

/** The geometric grid of batch sizes: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, ... up to 2^24. */
export function batchGrid(): number[] {
  const sizes = new Set<number>();
  for (let k = 0; k <= 24 * GRID_STEPS_PER_DOUBLING; k++) sizes.add(Math.min(LARGEST_BATCH, Math.round(2 ** (k / GRID_STEPS_PER_DOUBLING))));
  return [...sizes].sort((a, b) => a - b);
}

/**
 * The largest batch whose estimate fits `limitMiB`: the last grid point before the first that
 * does not fit, then the batch sizes between the two (all of them, or 256 evenly spaced, and
 * again between the two of those that bracket the limit, until they are neighbours).
 */
export async function largestFittingBatch(grid: readonly number[], memory: readonly number[], limitMiB: number, refine: (sizes: number[]) => Promise<number[]>): Promise<number> {
  const firstOver = memory.findIndex((mib) => mib > limitMiB);
  if (firstOver === 0) return 0;
  if (firstOver === -1) return grid[grid.length - 1]!;
  let low = grid[firstOver - 1]!;
  let high = grid[firstOver]!;
  while (high - low > 1) {
    const count = Math.min(REFINE_POINTS, high - low - 1);
    const step = (high - low) / (count + 1);
    const sizes = Array.from({ length: count }, (_, i) => low + Math.round((i + 1) * step));
    const refined = await refine(sizes);
    const over = refined.findIndex((mib) => mib > limitMiB);
    if (over === -1) low = sizes[sizes.length - 1]!;
    else {
      high = sizes[over]!;
      if (over > 0) low = sizes[over - 1]!;
    }
  }
  return low;
}

function row(result: RunResult, output: string, index: number): Float32Array {
  const data = result.outputs[output];
  const columns = result.columns[output];
  if (!data || columns === undefined) throw new Error(`the model has no output ${output}`);
  return data.subarray(index * columns, (index + 1) * columns);
}

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** The most probable bin of the family's primary width; null when the estimate lies above every bin the data covers. */
function primaryBin(card: ModelCard, result: RunResult, pointMiB: number): MemoryEstimate['bin'] {
  const bins = card.outputs.bins.find((b) => b.primary) ?? card.outputs.bins[0];
  if (!bins || pointMiB > bins.count * bins.widthMiB) return null;
  const probabilities = row(result, bins.name, 0);
  const index = argmax(probabilities);
  return { lowMiB: index * bins.widthMiB, highMiB: (index + 1) * bins.widthMiB, probability: Math.round(probabilities[index]! * 1000) / 1000 };
}

function utilizationClass(card: ModelCard, result: RunResult, output: string | null): UtilizationClass | null {
  if (!output || !result.outputs[output]) return null;
  return card.outputs.utilization.classes[argmax(row(result, output, 0))] ?? null;
}
