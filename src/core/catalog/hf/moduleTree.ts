/**
 * A model as PyTorch holds it, reduced to what the layer table needs: the module tree in
 * registration order (so `named_modules()` and `named_parameters()` come out in PyTorch's order),
 * which parameter objects each module holds (tied weights are one object held twice), and the
 * layer calls one forward pass makes. `layerRows` then applies the rules of docs/layer-table.md the
 * way harness/layer_table.py does, so a table built here reads like one the harness measures.
 */
import type { LayerRow } from '../../layerTable/layerTable';

/** One parameter tensor; tying puts the same object in two modules. */
export class Param {
  constructor(
    readonly numel: number,
    readonly trainable = true,
  ) {}
}

/**
 * A module. `layer` marks a `torch.nn` class other than a container: one row per call, never
 * expanded. Everything else (the library's own classes, ModuleList) is expanded.
 */
export class Module {
  readonly params: Array<[string, Param]> = [];
  readonly children: Array<[string, Module]> = [];

  constructor(
    readonly type: string,
    readonly layer: boolean,
  ) {}

  /** Registers a child under `name` (as `self.name = child` does) and returns it. */
  add<M extends Module>(name: string, child: M): M {
    this.children.push([name, child]);
    return child;
  }

  /** Registers a parameter (`self.name = nn.Parameter(...)`) and returns it. */
  param(name: string, numel: number, trainable = true): Param {
    const p = new Param(numel, trainable);
    this.params.push([name, p]);
    return p;
  }

  /** The parameter registered as `name`. */
  get(name: string): Param {
    const entry = this.params.find(([n]) => n === name);
    if (!entry) throw new Error(`${this.type} has no parameter ${name}`);
    return entry[1];
  }

  /** Replaces a registered parameter by another object, keeping its place: weight tying. */
  tie(name: string, to: Param): void {
    const index = this.params.findIndex(([n]) => n === name);
    if (index < 0) throw new Error(`${this.type} has no parameter ${name}`);
    this.params[index] = [name, to];
  }

  /** `module.parameters()`: own parameters, then the children's, each object once. */
  allParams(): Param[] {
    const seen = new Set<Param>();
    for (const [, module] of namedModules(this)) for (const [, p] of module.params) seen.add(p);
    return [...seen];
  }
}

/** `named_modules()`: pre-order, each module object once, under the first name it is reached by. */
export function namedModules(root: Module): Array<[string, Module]> {
  const out: Array<[string, Module]> = [];
  const seen = new Set<Module>();
  const visit = (module: Module, prefix: string): void => {
    if (seen.has(module)) return;
    seen.add(module);
    out.push([prefix, module]);
    for (const [name, child] of module.children) visit(child, prefix ? `${prefix}.${name}` : name);
  };
  visit(root, '');
  return out;
}

/** `named_parameters()`: the modules in `named_modules()` order, each one's own parameters, each object once. */
export function namedParameters(root: Module): Array<[string, Param]> {
  const out: Array<[string, Param]> = [];
  const seen = new Set<Param>();
  for (const [prefix, module] of namedModules(root)) {
    for (const [name, p] of module.params) {
      if (seen.has(p)) continue;
      seen.add(p);
      out.push([prefix ? `${prefix}.${name}` : name, p]);
    }
  }
  return out;
}

/** `sum(p.numel() for p in model.parameters())`. */
export function countParams(root: Module): number {
  return namedParameters(root).reduce((sum, [, p]) => sum + p.numel, 0);
}

/** One layer call: the module and the per-sample shapes of every tensor it returned. */
export interface LayerCall {
  readonly module: Module;
  readonly outputs: ReadonlyArray<readonly number[]>;
}

/** The layer calls of one forward pass, in call order. */
export class Trace {
  readonly calls: LayerCall[] = [];
  /** Per-sample shape of the model output's `last_hidden_state`, where the forward pass records it. */
  lastHiddenState?: readonly number[];

  /** Records the shape `outputs.last_hidden_state` has (a backbone's sequence or feature map before pooling). */
  hidden(shape: readonly number[]): void {
    this.lastHiddenState = [...shape];
  }

  /** Records a call of `module` returning tensors of these per-sample shapes; calls of expanded modules record nothing. */
  call(module: Module, ...outputs: ReadonlyArray<readonly number[]>): void {
    if (module.layer) this.calls.push({ module, outputs });
  }
}

const product = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

/**
 * The rows of the layer table (docs/layer-table.md), as harness/layer_table.py builds them:
 * Parameter rows for parameters outside every layer module (in `named_parameters()` order), one
 * row per layer call, then the layer modules forward never called; each parameter counted by the
 * first row that holds it.
 */
export function layerRows(root: Module, trace: Trace): LayerRow[] {
  const modules = namedModules(root);
  const firstName = new Map<Module, string>();
  for (const [name, module] of modules) firstName.set(module, name);

  // Layer modules not inside another layer module, in named_modules() order.
  const leaves: Array<[string, Module]> = [];
  const leafNames = new Set<string>();
  const insideLeaf = (name: string): boolean => {
    if (leafNames.has('')) return true;
    const parts = name.split('.');
    for (let i = 1; i < parts.length; i++) if (leafNames.has(parts.slice(0, i).join('.'))) return true;
    return false;
  };
  for (const [name, module] of modules) {
    if (insideLeaf(name)) continue;
    if (module.layer) {
      leaves.push([name, module]);
      leafNames.add(name);
    }
  }

  const counted = new Set<Param>();
  const newParams = (params: readonly Param[]): number => {
    let total = 0;
    for (const p of params) {
      if (counted.has(p)) continue;
      counted.add(p);
      total += p.numel;
    }
    return total;
  };

  const rows: LayerRow[] = [];
  const inLeaves = new Set<Param>();
  for (const [, module] of leaves) for (const p of module.allParams()) inLeaves.add(p);
  for (const [name, p] of namedParameters(root)) {
    if (inLeaves.has(p)) continue;
    rows.push({ path: name, type: 'Parameter', outputShape: null, activations: 0, params: newParams([p]), trainable: p.trainable });
  }

  const called = new Set<Module>();
  for (const { module, outputs } of trace.calls) {
    const path = firstName.get(module);
    if (path === undefined) throw new Error(`a ${module.type} outside the model was called`);
    const params = module.allParams();
    called.add(module);
    rows.push({
      path,
      type: module.type,
      outputShape: outputs.length > 0 ? [...outputs[0]!] : null,
      activations: outputs.reduce((sum, shape) => sum + product(shape), 0),
      params: newParams(params),
      trainable: params.every((p) => p.trainable),
    });
  }

  for (const [path, module] of leaves) {
    if (called.has(module)) continue;
    const params = module.allParams();
    rows.push({ path, type: module.type, outputShape: null, activations: 0, params: newParams(params), trainable: params.every((p) => p.trainable) });
  }
  return rows;
}
