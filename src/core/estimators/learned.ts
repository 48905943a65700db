/**
 * The learned estimators: the family's bundled ONNX ensemble (see models/README.md) refines what
 * the analytical model found. They run after the analysis (the editor estimates on every edit with
 * the fast analytical path, then adds this) and give a point estimate with its calibrated range,
 * the memory bin and the utilization classes. Families without an ensemble (Transformers, until
 * our harness has collected their data) get none, and keep the analytical model's estimate.
 */
import type { Estimator } from '../estimate/estimator';
import type { EnsembleRun, MemoryEstimate, ModelEstimate, UtilizationClass } from '../estimate/fileEstimate';
import { FEATURE_NAMES, featureVector } from '../features/features';
import type { RunResult } from './onnx/onnxRunner';
import { outOfDistribution, type ModelCard } from './onnx/modelCard';
import type { LayerTable } from '../layerTable/layerTable';
import type { ModelFamily } from './family';
import type { TrainingJob } from './trainingJob';
import { hasFrozenParts } from '../layerTable/frozenLayers';
import { hasCheckpointedCalls } from '../layerTable/checkpointSegments';

/** Batch sizes searched for the largest that fits: 2^(k/8) up to 2^24. */
const GRID_STEPS_PER_DOUBLING = 8;
const LARGEST_BATCH = 1 << 24;

/** What the ensemble gives besides its point and range. */
export interface EnsembleDetail {
  /** How it ran, as the estimate's `memory.ensemble` states it (without the parts the pipeline adds). */
  readonly run: Omit<EnsembleRun, 'analyticalMiB' | 'curve'>;
  readonly bin: MemoryEstimate['bin'];
  readonly utilization: ModelEstimate['utilization'];
  /** The ensemble over its batch grid (MiB, unrounded), for the largest batch that fits and the report's curve. */
  readonly grid: readonly { readonly batchSize: number; readonly lowMiB: number; readonly pointMiB: number; readonly highMiB: number }[];
  /** The point estimate at any batch sizes, in one run. */
  readonly pointsAt: (batchSizes: number[]) => Promise<number[]>;
}

/** The family's ensemble; none for a family without one, or when it did not run. */
export const ensembleEstimator: Estimator<EnsembleDetail> = {
  id: 'ensemble',
  label: 'Trained ensemble',
  short: 'ensemble',
  attribution: (family) => `${family.toUpperCase()} ensemble`,
  pass: 'learned',
  async estimate({ job, family }, runner) {
    const loaded = await runner.model(family);
    if (!loaded) return null;
    const { card } = loaded;
    const at = (batchSize: number): TrainingJob => ({ ...job, batchSize });
    const features = featureVector(job);
    const sizes = batchGrid();
    const result = await runner.run(family, [features, ...sizes.map((b) => featureVector(at(b)))]);
    if (!result) return null;

    const memory = row(result, card.outputs.memory.name, 0);
    const [low, point, high] = [memory[0]!, memory[1]!, memory[2]!];
    const ood = outOfDistribution(card, FEATURE_NAMES, features);
    const outside = outsideEnsembleData(job.table, family, ood);
    const grid = sizes.map((batchSize, i) => {
      const values = row(result, card.outputs.memory.name, i + 1);
      return { batchSize, lowMiB: values[0]!, pointMiB: values[1]!, highMiB: values[2]! };
    });
    const pointsAt = async (batchSizes: number[]): Promise<number[]> => {
      const refined = await runner.run(family, batchSizes.map((b) => featureVector(at(b))));
      return batchSizes.map((_, i) => row(refined!, card.outputs.memory.name, i)[1]!);
    };
    return {
      method: 'ensemble',
      pointMiB: point,
      range: { lowMiB: low, highMiB: high, quantiles: card.outputs.memory.range.quantiles },
      warnings: [],
      ...(outside === undefined ? {} : { outsideTrainingData: outside }),
      detail: {
        run: { model: loaded.modelPath, executionProvider: result.provider, pointQuantile: card.outputs.memory.pointQuantile, rangeQuantiles: card.outputs.memory.range.quantiles, outOfDistribution: ood },
        bin: primaryBin(card, result, point),
        utilization: {
          smact: utilizationClass(card, result, card.outputs.utilization.smact),
          smocc: utilizationClass(card, result, card.outputs.utilization.smocc),
          drama: utilizationClass(card, result, card.outputs.utilization.drama),
        },
        grid,
        pointsAt,
      },
    };
  },
};

/**
 * The layer types of the networks the ensembles were trained on, GPUMemNet's generated MLPs and
 * CNNs (../shared/data/gpumemnet-a100; a unit test checks the lists against the data): a table
 * with any other type (pooling, attention, LayerNorm, a residual network's own modules) is an
 * architecture the ensemble never saw, however ordinary its features.
 */
export const ENSEMBLE_LAYER_TYPES: Readonly<Record<'mlp' | 'cnn', readonly string[]>> = {
  mlp: ['BatchNorm1d', 'Dropout', 'ELU', 'GELU', 'Identity', 'LeakyReLU', 'Linear', 'Mish', 'PReLU', 'ReLU', 'SELU', 'Sigmoid', 'SiLU', 'Softmax', 'Softplus', 'Tanh'],
  cnn: ['AdaptiveAvgPool2d', 'BatchNorm2d', 'Conv2d', 'Dropout', 'ELU', 'GELU', 'LeakyReLU', 'Linear', 'Mish', 'PReLU', 'ReLU', 'SELU', 'SiLU', 'Softmax', 'Softplus', 'Tanh', 'torch.cat'],
};

/**
 * Why the family's ensemble should not give this model's estimate, or undefined when the model is
 * like the networks it was trained on: layer types its data never had, or features outside the
 * data's range (`ood`).
 */
export function outsideEnsembleData(table: LayerTable, family: ModelFamily, ood: readonly string[]): string | undefined {
  // nn.Flatten is a view, what the generator's networks do with x.view(): no memory, no new shape of network.
  const known = family === 'transformer' ? [] : [...ENSEMBLE_LAYER_TYPES[family], 'Flatten'];
  const unseen = [...new Set(table.rows.map((row) => row.type).filter((type) => !known.includes(type)))];
  const reasons: string[] = [];
  if (unseen.length > 0) reasons.push(`layer types it never saw: ${listed(unseen)}`);
  if (ood.length > 0) reasons.push(listed(ood));
  if (hasFrozenParts(table)) reasons.push('frozen parameters: its networks train every one');
  if (hasCheckpointedCalls(table)) reasons.push('gradient checkpointing: its networks keep every activation');
  return reasons.length === 0 ? undefined : `outside the ${family.toUpperCase()} ensemble's training data, GPUMemNet's generated networks (${reasons.join('; ')})`;
}

function listed(items: readonly string[]): string {
  return items.length > 3 ? `${items.slice(0, 3).join(', ')} and ${items.length - 3} more` : items.join(', ');
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
