/**
 * One part of a traced model (`resnet50().layer3`, `vgg16().features`) run on its own input:
 * the graph nodes its forward made (the generator records each node's module), with the one value
 * that flows into them from outside bound to the input the script gives. Scripts list a standard
 * model's children and call them one by one (`nn.Sequential(*list(backbone.children())[:-1])`).
 */
import type { LayerRow } from '../../layerTable/layerTable';
import { BATCH, perSampleShape, type TensorShape } from '../../layers/tensorShape';
import { CatalogPartError } from '../catalog';
import { evaluateNode, type TracedModel } from './evaluate';
import { isNodeRef, type DataValue, type GraphNode } from './tracedData';
import { tensorsIn, tensorVal, type Val } from './values';

export interface TracedPartTable {
  /** Rows with paths relative to the part: its own parameters first, its layer calls, its uncalled layers last. */
  readonly rows: LayerRow[];
  readonly rowInputs: (readonly number[] | null)[];
  /** Per-sample shape of the first tensor the part returns. */
  readonly output: readonly number[] | undefined;
}

const under = (path: string, part: string) => path === part || path.startsWith(`${part}.`);
const relative = (path: string, part: string) => path.slice(part.length + 1);

/** The names `named_children()` gives for the module at `path` ('' for the model), in PyTorch's order; undefined where the data lacks the module tree. */
export function tracedChildNames(model: TracedModel, path: string): string[] | undefined {
  if (!model.tree) return undefined;
  const depth = path === '' ? 0 : path.split('.').length;
  return model.tree.filter((p) => (path === '' || p.startsWith(`${path}.`)) && p.split('.').length === depth + 1).map((p) => p.split('.')[depth]!);
}

/** The part at `path` on one sample (per-sample shape); throws CatalogPartError, or CatalogInputError where the input does not fit it. */
export function tracedPartTable(model: TracedModel, path: string, sample: readonly number[]): TracedPartTable {
  const { tree, scopes, graph } = model;
  if (!tree || !scopes) throw new CatalogPartError(`the data of ${model.label} has no module tree (regenerate it)`);
  const scopePath = (i: number) => (scopes[i] ? tree[scopes[i] - 1]! : '');
  const inPart = graph.map((node, i) => (node[0] === 'm' ? under(model.modules[node[1]]!.path, path) : node[0] !== 'p' && node[0] !== 'g' && under(scopePath(i), path)));
  const dynamic = dependsOnInput(graph);
  const external = new Set<number>();
  graph.forEach((node, i) => {
    if (inPart[i]) for (const ref of refsOf(node)) if (!inPart[ref] && dynamic[ref]) external.add(ref);
  });
  if (!inPart.some(Boolean)) throw new CatalogPartError(`forward of ${model.label} does not call \`${path}\``);
  if (external.size !== 1) throw new CatalogPartError(`\`${path}\` of ${model.label} takes ${external.size} tensors from the rest of the model`);
  const input: TensorShape = [BATCH, ...sample];
  const rows: LayerRow[] = model.parameters.filter((p) => p.name.startsWith(`${path}.`)).map((p) => ({ path: relative(p.name, path), type: 'Parameter', outputShape: null, activations: 0, params: p.shape.reduce((a, b) => a * b, 1), trainable: true }));
  const rowInputs: (readonly number[] | null)[] = rows.map(() => null);
  const called = new Set<number>();
  const results: Val[] = [];
  results[[...external][0]!] = tensorVal(input);
  const usedOutside = new Set<number>();
  graph.forEach((node, i) => {
    if (!inPart[i]) for (const ref of refsOf(node)) usedOutside.add(ref);
  });
  let output: number | undefined;
  graph.forEach((node, i) => {
    if (results[i] !== undefined) return;
    // Constants the part reads (a buffer's shape, a size computed once) are worked out wherever they were made.
    if (!inPart[i] && dynamic[i]) return;
    if (!inPart[i] && node[0] === 'm') return;
    const callRows: LayerRow[] = [];
    const callInputs: (readonly number[] | null)[] = [];
    results[i] = evaluateNode(node, model, results, input, sample, callRows, called, callInputs);
    if (!inPart[i]) return;
    rows.push(...callRows.map((row) => ({ ...row, path: relative(row.path, path) })));
    rowInputs.push(...callInputs);
    if (usedOutside.has(i) || i === graph.length - 1) output = i;
  });
  model.modules.forEach((module, i) => {
    if (called.has(i) || !module.path.startsWith(`${path}.`)) return;
    rows.push({ path: relative(module.path, path), type: module.type, outputShape: null, activations: 0, params: module.spec.params(module.args), trainable: true });
    rowInputs.push(null);
  });
  const last = output ?? inPart.lastIndexOf(true);
  const first = tensorsIn(results[last]!)[0];
  return { rows, rowInputs, output: first ? perSampleShape(first.shape) : undefined };
}

/** Per node, whether its value depends on the model's input. */
function dependsOnInput(graph: readonly GraphNode[]): boolean[] {
  const dynamic: boolean[] = [];
  graph.forEach((node, i) => {
    dynamic[i] = node[0] === 'p' || refsOf(node).some((ref) => dynamic[ref]);
  });
  return dynamic;
}

function refsOf(node: GraphNode): number[] {
  if (node[0] === 'p' || node[0] === 'g') return [];
  const refs: number[] = [];
  const walk = (value: DataValue | undefined): void => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value as readonly DataValue[]) walk(item);
      return;
    }
    if (isNodeRef(value)) {
      refs.push(value.r);
      return;
    }
    for (const item of Object.values(value as Record<string, DataValue>)) walk(item);
  };
  walk(node[2]);
  walk(node[3] as unknown as DataValue);
  return refs;
}
