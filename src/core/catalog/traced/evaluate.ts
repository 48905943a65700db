/**
 * Runs a traced model's graph on shapes: module calls through the LayerSpecs,
 * functions and methods through ops.ts, and writes the layer table rows of docs/layer-table.md
 * (Parameter rows first, one row per layer call in call order, parameters counted once, uncalled
 * layers last).
 */
import { ShapeError } from '../../analysis/interpreter/tensorOps';
import type { Value } from '../../analysis/layerCall';
import type { LayerRow } from '../../layerTable/layerTable';
import { LayerArgs, LayerArgumentError } from '../../layers/layerArgs';
import { layerSpec } from '../../layers/layerSpecs';
import type { LayerSpec } from '../../layers/layerSpec';
import { BATCH, perSampleElements, perSampleShape, type TensorShape } from '../../layers/tensorShape';
import { CatalogInputError } from '../catalog';
import { AssertionFailed, callFunction, callMethod, fromOutput } from './ops';
import {
  evaluateSymbolic,
  instantiate,
  instantiateKwargs,
  isNodeRef,
  isSymbolic,
  type DataValue,
  type GraphNode,
  type Tagged,
  type TracedVariant,
} from './tracedData';
import { ELLIPSIS, describe, isTensor, isTuple, tensorsIn, tensorVal, type Val } from './values';

export interface TracedModule {
  readonly path: string;
  readonly type: string;
  readonly spec: LayerSpec;
  readonly args: LayerArgs;
  /** The constructor arguments `args` reads, by name. */
  readonly kwargs: Readonly<Record<string, Value>>;
}

export interface TracedParameter {
  readonly name: string;
  readonly shape: readonly number[];
}

/** A variant with its option values applied: what `table(sample)` runs. */
export interface TracedModel {
  /** How messages name the model: `resnet50`, `vit_b_16 (image_size=224)`. */
  readonly label: string;
  readonly modules: readonly TracedModule[];
  readonly parameters: readonly TracedParameter[];
  readonly graph: readonly GraphNode[];
  /** Values of the symbolic numbers in the graph. */
  readonly values: Readonly<Record<string, number>>;
  /** The other modules' paths and each node's module (tracedData.ts), where the data has them. */
  readonly tree?: readonly string[];
  readonly scopes?: readonly number[];
}

/** A model's data for the given option values; throws (a bug) where a layer type is unknown. */
export function instantiateVariant(variant: TracedVariant, values: Readonly<Record<string, number>>, label: string): TracedModel {
  const modules = variant.modules.map(([path, type, kwargs]) => {
    const spec = layerSpec(type);
    if (!spec) throw new Error(`catalog data for ${label} uses ${type}, which the layer specs do not know`);
    const instantiated = instantiateKwargs(kwargs, values) as Record<string, Value>;
    return { path, type, spec, args: new LayerArgs({ type, args: [], kwargs: instantiated }), kwargs: instantiated };
  });
  const parameters = variant.parameters.map(([name, shape]) => ({ name, shape: shape.map((d) => instantiate(d, values) as number) }));
  return { label, modules, parameters, graph: variant.graph, values, ...(variant.tree && variant.scopes ? { tree: variant.tree, scopes: variant.scopes } : {}) };
}

const product = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1);

/** `sum(p.numel() for p in model.parameters())`. */
export function tracedParams(model: TracedModel): number {
  return model.parameters.reduce((n, p) => n + product(p.shape), 0) + model.modules.reduce((n, m) => n + m.spec.params(m.args), 0);
}

/** The rows of the layer table for one sample (per-sample shape, without the batch); throws CatalogInputError. */
export function tracedRows(model: TracedModel, sample: readonly number[]): LayerRow[] {
  return tracedTable(model, sample).rows;
}

export interface TracedTable {
  readonly rows: LayerRow[];
  /** Per-sample shape of each call row's first input, parallel to `rows` (null for Parameter and uncalled rows). */
  readonly rowInputs: (readonly number[] | null)[];
  /** Per-sample shape of the first tensor of the last value forward computes: what the model returns. */
  readonly output: readonly number[] | undefined;
}

/** The layer table for one sample, with each row's input and the model's output; throws CatalogInputError. */
export function tracedTable(model: TracedModel, sample: readonly number[]): TracedTable {
  const rows: LayerRow[] = model.parameters.map((p) => ({ path: p.name, type: 'Parameter', outputShape: null, activations: 0, params: product(p.shape), trainable: true }));
  const rowInputs: (readonly number[] | null)[] = rows.map(() => null);
  const called = new Set<number>();
  const results: Val[] = [];
  const input: TensorShape = [BATCH, ...sample];
  for (const node of model.graph) {
    results.push(evaluateNode(node, model, results, input, sample, rows, called, rowInputs));
  }
  model.modules.forEach((module, i) => {
    if (!called.has(i)) {
      rows.push({ path: module.path, type: module.type, outputShape: null, activations: 0, params: module.spec.params(module.args), trainable: true });
      rowInputs.push(null);
    }
  });
  const last = results.length ? tensorsIn(results[results.length - 1]!)[0] : undefined;
  return { rows, rowInputs, output: last ? perSampleShape(last.shape) : undefined };
}

export function evaluateNode(node: GraphNode, model: TracedModel, results: readonly Val[], input: TensorShape, sample: readonly number[], rows: LayerRow[], called: Set<number>, rowInputs: (readonly number[] | null)[]): Val {
  const fail = (where: string, message: string): never => {
    throw new CatalogInputError(`${model.label} cannot take a ${sample.join('x')} input: ${where}${message}`);
  };
  const val = (value: DataValue) => toVal(value, results, model.values);
  const kwargsOf = (kwargs: Readonly<Record<string, DataValue>>) => Object.fromEntries(Object.entries(kwargs).map(([k, v]) => [k, val(v)]));
  switch (node[0]) {
    case 'p':
      return tensorVal(input);
    case 'g':
      return tensorVal(node[2].map((d) => val(d) as number));
    case 'm': {
      const [, index, args, kwargs] = node;
      const module = model.modules[index];
      if (!module) throw new Error(`catalog data for ${model.label}: no module ${index}`);
      const inputs = args.map((a) => {
        const value = val(a);
        if (!isTensor(value)) return fail(`${module.path} (${module.type}): `, `its input is ${describe(value)}, not a tensor`);
        return value.shape;
      });
      const callKwargs = Object.fromEntries(Object.entries(kwargsOf(kwargs)).map(([k, v]) => [k, plainValue(v)]));
      let output;
      try {
        output = module.spec.forward(inputs, module.args, { kwargs: callKwargs });
      } catch (error) {
        if (error instanceof LayerArgumentError) return fail(`${module.path} (${module.type}): `, error.message);
        throw error;
      }
      const value = fromOutput(output);
      const tensors = tensorsIn(value);
      const first = tensors[0];
      rowInputs.push(inputs[0] ? perSampleShape(inputs[0]) : null);
      rows.push({
        path: module.path,
        type: module.type,
        outputShape: first ? perSampleShape(first.shape) : null,
        activations: tensors.reduce((n, t) => n + perSampleElements(t.shape), 0),
        params: called.has(index) ? 0 : module.spec.params(module.args, inputs),
        trainable: true,
      });
      called.add(index);
      return value;
    }
    case 'f':
    case 'c': {
      const [kind, target, args, kwargs] = node;
      try {
        return kind === 'f' ? callFunction(target, args.map(val), kwargsOf(kwargs)) : callMethod(target, args.map(val), kwargsOf(kwargs));
      } catch (error) {
        if (error instanceof AssertionFailed) {
          const check = typeof kwargs.check === 'string' ? `: \`${kwargs.check}\`` : '';
          return fail('', `a check in its forward fails${check}`);
        }
        if (error instanceof ShapeError || error instanceof LayerArgumentError) return fail(`${kind === 'f' ? target : `.${target}()`}: `, error.message);
        throw error;
      }
    }
  }
}

function toVal(value: DataValue, results: readonly Val[], values: Readonly<Record<string, number>>): Val {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return (value as readonly DataValue[]).map((v) => toVal(v, results, values));
  if (isNodeRef(value)) {
    const result = results[value.r];
    if (result === undefined) throw new Error(`catalog graph refers to node ${value.r} before it runs`);
    return result;
  }
  if (isSymbolic(value)) return evaluateSymbolic(value, values);
  const tagged = value as Tagged;
  if ('slice' in tagged) {
    const [start, stop, step] = tagged.slice;
    return { kind: 'slice', start: toVal(start, results, values), stop: toVal(stop, results, values), step: toVal(step, results, values) };
  }
  if ('ellipsis' in tagged) return ELLIPSIS;
  if ('float' in tagged) return Number(tagged.float);
  if ('dict' in tagged) return { kind: 'dict', entries: Object.fromEntries(Object.entries(tagged.dict).map(([k, v]) => [k, toVal(v, results, values)])) };
  return { kind: 'opaque', what: JSON.stringify(tagged) };
}

/** A forward call's keyword argument as LayerSpecs read it (need_weights=False); tensors are not passed this way. */
function plainValue(value: Val): Value {
  if (value === null || typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (isTuple(value)) return value.map(plainValue);
  return { unresolved: describe(value), reason: 'not a constant' };
}
