import type { AnalysisNote, LayerCall, ModelDescription, Sourced, TrainingSetup } from '../analysis/modelDescription';
import { LayerArgs, LayerArgumentError } from '../layers/layerArgs';
import { layerSpec, type Shape } from '../layers/layerCatalog';
import { LAYER_TABLE_SCHEMA_VERSION, type LayerRow, type LayerTable } from './layerTable';

export interface LayerTableResult {
  readonly table: LayerTable;
  /** The sample shape used and where it came from. */
  readonly inputShape?: Sourced<readonly number[]>;
  readonly notes: readonly AnalysisNote[];
}

const product = (dims: readonly number[]): number => dims.reduce((a, b) => a * b, 1);

/** Propagates the sample shape through the layers in order and counts parameters and activations. */
export function buildLayerTable(model: ModelDescription, setup: TrainingSetup): LayerTableResult {
  const notes: AnalysisNote[] = [];
  const inputShape = setup.inputShape ?? inferInputShape(model);
  if (!inputShape) {
    notes.push({ severity: 'warning', message: `${model.name}: input shape unknown, so activations are not counted. Add an example tensor such as torch.randn(batch_size, ...).`, range: model.range });
  }
  let shape: Shape | undefined = inputShape?.value;
  const rows: LayerRow[] = [];
  for (const layer of model.layers) {
    const spec = layerSpec(layer.type);
    const args = new LayerArgs(layer);
    if (!spec) {
      notes.push({ severity: 'warning', message: `${layer.path}: nn.${layer.type} is not understood yet; its parameters and activations are not counted.`, range: layer.range });
      rows.push({ path: layer.path, type: layer.type, outputShape: null, activations: null, params: null, trainable: true });
      shape = undefined;
      continue;
    }
    shape ??= restartShape(layer);
    const params = attempt(() => spec.params(args, shape), layer, notes);
    const output: Shape | undefined = shape && attempt(() => spec.output(shape!, args), layer, notes);
    rows.push({ path: layer.path, type: layer.type, outputShape: output ? [...output] : null, activations: output ? product(output) : null, params: params ?? null, trainable: true });
    shape = output;
  }
  const known = (values: (number | null)[]) => values.reduce<number>((sum, v) => sum + (v ?? 0), 0);
  const totalParams = known(rows.map((r) => r.params));
  return {
    table: {
      schemaVersion: LAYER_TABLE_SCHEMA_VERSION,
      model: model.name,
      inputShape: inputShape ? [...inputShape.value] : null,
      rows,
      totals: { params: totalParams, trainableParams: known(rows.filter((r) => r.trainable).map((r) => r.params)), activations: known(rows.map((r) => r.activations)) },
      incomplete: rows.some((r) => r.params === null || r.activations === null),
    },
    inputShape,
    notes,
  };
}

/** With no example input, a leading Linear or Embedding still pins the sample shape down. */
function inferInputShape(model: ModelDescription): Sourced<readonly number[]> | undefined {
  const first = model.layers[0];
  const shape = first && restartShape(first);
  return shape && first ? { value: shape, range: first.range, origin: `in_features of the first layer (${first.path})` } : undefined;
}

/** The input shape a layer declares by itself, used to resume after an unknown layer. */
function restartShape(layer: LayerCall): Shape | undefined {
  if (layer.type !== 'Linear') return undefined;
  try {
    return [new LayerArgs(layer).int(0, 'in_features')];
  } catch {
    return undefined;
  }
}

function attempt<T>(compute: () => T, layer: LayerCall, notes: AnalysisNote[]): T | undefined {
  try {
    return compute();
  } catch (error) {
    if (!(error instanceof LayerArgumentError)) throw error;
    notes.push({ severity: 'warning', message: `${layer.path}: ${error.message}`, range: layer.range });
    return undefined;
  }
}
