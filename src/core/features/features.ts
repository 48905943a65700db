/**
 * The feature vector of the learned estimators, from a layer table and the training set-up.
 * One definition (featureDefinition.json) for both sides: harness/training/features.py computes
 * the same numbers for training, and test/vectors/features/*.json are checked by mocha and pytest,
 * so a model trained in Python sees in the editor exactly the features it was trained on.
 * Raw values only: the ONNX graph applies its own transforms and scaling.
 *
 * Functional rows (row type "torch.<function>": `torch.cat`, `F.layer_norm`, ...) feed only the
 * analytical estimate and its state/activation parts, which take every row; the concatenations
 * also feed two features of their own (version 2: how many, and their output elements x B). All
 * other features are computed from the table without them (totals.activations already leaves them out).
 */
import { analyticalBytes, OPTIMIZER_COPIES, PRECISION_BYTES, RUNTIME_OVERHEAD_MIB } from '../estimators/analytical';
import type { TrainingJob } from '../estimators/trainingJob';
import { BYTES_PER_MIB } from '../format/units';
import { layerSpec } from '../layers/layerSpecs';
import { isConcatenationRow, isFunctionalRow } from '../layerTable/layerTable';
import definition from './featureDefinition.json';

export const FEATURE_DEFINITION_VERSION: number = definition.version;
export const FEATURE_NAMES: readonly string[] = definition.features.map((feature) => feature.name);

const COUNT_FEATURE: Readonly<Record<string, string>> = definition.countCategories;
const DEPTH_CATEGORIES = new Set(definition.depthCategories);
const NOT_HIDDEN = new Set(definition.hiddenActivationExcluded);
const ANGLES: Readonly<Record<string, { sin: number; cos: number }>> = definition.activationAngles;

/** The hidden activation: the most frequent activation row type outside the softmax family; ties go to the one called first. */
export function hiddenActivation(types: readonly string[]): string | null {
  const counts = new Map<string, number>();
  for (const type of types) {
    if (layerSpec(type)?.category !== 'activation' || NOT_HIDDEN.has(type)) continue;
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  let best: string | null = null;
  for (const [type, count] of counts) if (best === null || count > counts.get(best)!) best = type;
  return best;
}

/** What the features take from the layer table alone, whatever the batch size. */
interface TableSummary {
  /** Features that do not depend on the batch size, by name (the rest are 0). */
  readonly base: Readonly<Record<string, number>>;
  /** Per-sample activations by layer group, multiplied by the batch size for `activations_x_batch_<group>`. */
  readonly groupActivations: ReadonlyMap<string, number>;
  readonly largestActivations: number;
  /** Per-sample output elements of the functional rows together. */
  readonly functionalActivations: number;
}

/** Remembered per table object: the largest-batch search asks for hundreds of batch sizes of one table. */
const summaries = new WeakMap<TrainingJob['table'], TableSummary>();

function tableSummary(table: TrainingJob['table']): TableSummary {
  const known = summaries.get(table);
  if (known) return known;
  const f: Record<string, number> = Object.fromEntries(FEATURE_NAMES.map((name) => [name, 0]));
  const rows = table.rows.filter((row) => row.type !== 'Parameter' && !isFunctionalRow(row));
  f.params = table.totals.params;
  f.activations = table.totals.activations;
  f.layer_calls = rows.length;
  let largestActivations = 0;
  let largestParams = 0;
  // Per-sample activations by group first (whole numbers), then times the batch size.
  const groupActivations = new Map<string, number>();
  for (const row of rows) {
    const category = layerSpec(row.type)?.category;
    if (category !== undefined && DEPTH_CATEGORIES.has(category)) f.depth! += 1;
    const count = (category !== undefined && COUNT_FEATURE[category]) || 'count_other';
    f[count]! += 1;
    const group = count.slice('count_'.length);
    groupActivations.set(group, (groupActivations.get(group) ?? 0) + (row.activations ?? 0));
    largestActivations = Math.max(largestActivations, row.activations ?? 0);
    largestParams = Math.max(largestParams, row.params ?? 0);
  }
  const activation = hiddenActivation(rows.map((row) => row.type));
  const angle = activation === null ? undefined : ANGLES[activation];
  f.activation_sin = angle?.sin ?? 0;
  f.activation_cos = angle?.cos ?? 0;
  const shape = table.inputShape;
  f.input_elements = shape ? shape.reduce((a, b) => a * b, 1) : 0;
  f.input_spatial = shape && shape.length >= 2 ? shape.slice(1).reduce((a, b) => a * b, 1) : 0;
  f.largest_params = largestParams;
  // The concatenations alone: the ensembles were trained on tables whose only functional rows they are.
  const functional = table.rows.filter(isConcatenationRow);
  f.functional_calls = functional.length;
  const functionalActivations = functional.reduce((sum, row) => sum + (row.activations ?? 0), 0);
  const summary = { base: f, groupActivations, largestActivations, functionalActivations };
  summaries.set(table, summary);
  return summary;
}

/** The features by name, in definition order. */
export function featureRecord(job: TrainingJob): Record<string, number> {
  const { table, batchSize, optimizer, precision } = job;
  const { base, groupActivations, largestActivations, functionalActivations } = tableSummary(table);
  const f: Record<string, number> = { ...base };
  f.batch_size = batchSize;
  f.activations_x_batch = table.totals.activations * batchSize;
  for (const [group, activations] of groupActivations) f[`activations_x_batch_${group}`] = activations * batchSize;
  f.largest_activations_x_batch = largestActivations * batchSize;
  const bytes = analyticalBytes(job); // every row, functional ones too
  const state = bytes.weightBytes + bytes.gradientBytes + bytes.optimizerBytes;
  const activations = bytes.savedBytes + bytes.backwardBytes;
  f.analytical_mib = (state + activations) / BYTES_PER_MIB + RUNTIME_OVERHEAD_MIB;
  f.analytical_state_mib = state / BYTES_PER_MIB;
  f.analytical_activations_mib = activations / BYTES_PER_MIB;
  f.optimizer_state_copies = OPTIMIZER_COPIES[optimizer] + (job.optimizerExtraCopies ?? 0);
  f.weight_bytes = PRECISION_BYTES[precision].weights;
  f.activation_bytes = PRECISION_BYTES[precision].activations;
  f.functional_activations_x_batch = functionalActivations * batchSize;
  return f;
}

/** The feature vector in definition order, as the ONNX models take it. */
export function featureVector(job: TrainingJob): number[] {
  const record = featureRecord(job);
  return FEATURE_NAMES.map((name) => record[name]!);
}
