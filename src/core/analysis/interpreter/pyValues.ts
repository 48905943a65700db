import type { SourceRange, SyntaxNode } from '../../parsing/syntax';
import type { BatchDim, TensorShape } from '../../layers/tensorShape';
import type { LayerCall, Unresolved, Value } from '../layerCall';
import type { CatalogArchitecture } from '../../catalog/catalog';
import { childPath } from '../../layerTable/layerTable';

/**
 * Values while the analyzer "runs" a script symbolically. Plain data (numbers, strings, lists)
 * is as in Python; tensors carry only their shape; modules are objects whose layers and
 * parameters are known; anything the source does not pin down is `Unresolved`, with the reason.
 *
 * The value kinds, the module objects and the scopes refer to one another (a module's attributes
 * are values, a value can be a module, a function closes over a scope of values), so they share
 * this module: split, they would import each other.
 */
export type PyValue =
  | number
  | string
  | boolean
  | null
  | Unresolved
  | PyList
  | BatchValue
  | TensorValue
  | ModuleValue
  | InstanceValue
  | DictValue
  | FunctionValue
  | ClassValue
  | ExternalValue
  | ParameterValue
  | SliceValue
  | PartialValue;

/** A list or tuple; mutable so that `layers.append(...)` works. */
export interface PyList extends Array<PyValue> {
  tuple?: boolean;
}

/** A batch-size-dependent integer (`x.size(0)`, `B * T`). */
export interface BatchValue {
  readonly kind: 'batch';
  readonly dim: BatchDim;
}

export interface TensorValue {
  readonly kind: 'tensor';
  /** Null where the shape could not be followed. */
  readonly shape: TensorShape | null;
  readonly dtype?: 'float' | 'long' | 'bool';
  /** A transformers image backbone's output: the shape its `.last_hidden_state` has beside the pooled one. */
  readonly lastHiddenState?: TensorShape;
  /** A text base model's output: the shape of its `.pooler_output`. */
  readonly pooledOutput?: TensorShape;
}

export interface ModuleValue {
  readonly kind: 'module';
  readonly module: ModuleObject;
}

/** An object with attributes: a dataclass or config instance, an argparse namespace, `self` of a non-module class. */
export interface InstanceValue {
  readonly kind: 'instance';
  readonly className: string;
  readonly attrs: Map<string, PyValue>;
  /** For argparse parsers: the options added so far, turned into a namespace by parse_args(). */
  readonly argparse?: boolean;
  readonly classValue?: ClassValue;
}

export interface DictValue {
  readonly kind: 'dict';
  readonly entries: Map<string, PyValue>;
}

export interface FunctionValue {
  readonly kind: 'function';
  readonly name: string;
  readonly node: SyntaxNode;
  readonly closure: Scope;
  /** The receiver, for a method looked up on an object. */
  readonly self?: PyValue;
  readonly classValue?: ClassValue;
}

export interface ClassValue {
  readonly kind: 'class';
  readonly name: string;
  readonly node: SyntaxNode;
  readonly attrs: Map<string, PyValue>;
  readonly bases: readonly ClassValue[];
  /** Derives from torch.nn.Module (directly or through another class of this file). */
  readonly isModule: boolean;
  readonly isDataclass: boolean;
  /** Derives from Lightning's LightningModule: its configure_optimizers() makes its optimizers. */
  readonly lightning?: boolean;
  /** Derives from Lightning's LightningCLI: building it builds and fits the model its configuration names (lightningCli.ts). */
  readonly lightningCli?: boolean;
  /** For subclasses of nn.Sequential, nn.ModuleList or nn.ModuleDict: which one. */
  readonly container?: 'sequential' | 'list' | 'dict';
  /**
   * For subclasses of a torch.nn layer (`class LayerNorm2d(nn.LayerNorm)`, `class StdConv2d(nn.Conv2d)`):
   * its type. An instance is that layer, built with the arguments its `super().__init__` passes
   * (or the call's, without an `__init__` of its own), and sized by the layer's rules, its own
   * `forward` (a permute, a standardized weight) aside.
   */
  readonly layerBase?: string;
  /** Names declared in the class body with annotations, in order (dataclass fields). */
  readonly fields: readonly string[];
  /** The project file that defines the class, when it is not the analysed script (an imported module). */
  readonly file?: string;
  /** Derives from `dict` (`class Registry(dict)`): its instances hold entries, under MAPPING_ENTRIES. */
  readonly mapping?: boolean;
}

/** Where an instance of a `dict` subclass keeps its entries. */
export const MAPPING_ENTRIES = '__entries__';

/** Something from a library, known by its qualified name: `torch.nn.functional.relu`, `torch.cat`. */
export interface ExternalValue {
  readonly kind: 'external';
  readonly name: string;
  /** The receiver when this is a method looked up on a value (`x.view`). */
  readonly self?: PyValue;
  /** For a tokenizer `AutoTokenizer.from_pretrained(name)` loaded: the checkpoint, when its name is a constant. */
  readonly tokenizer?: { readonly checkpoint?: string };
}

/** `nn.Parameter(torch.zeros(1, T, C))`. */
export interface ParameterValue {
  readonly kind: 'parameter';
  readonly numel: number | null;
  readonly shape: readonly number[] | null;
  readonly trainable: boolean;
}

export interface SliceValue {
  readonly kind: 'slice';
  readonly start: PyValue;
  readonly stop: PyValue;
  readonly step: PyValue;
}

/**
 * `functools.partial(nn.BatchNorm2d, affine=True)`: a callable with arguments bound ahead, as
 * norm-layer factories pass it around; calling it calls `func` with the bound arguments first.
 */
export interface PartialValue {
  readonly kind: 'partial';
  readonly func: PyValue;
  readonly args: readonly PyValue[];
  readonly keywords: ReadonlyMap<string, PyValue>;
}

/** Python names in one function call or module, falling back to the enclosing scope. */
export class Scope {
  private readonly values = new Map<string, PyValue>();

  constructor(readonly parent?: Scope) {}

  set(name: string, value: PyValue): void {
    this.values.set(name, value);
  }

  get(name: string): PyValue | undefined {
    return this.values.has(name) ? this.values.get(name) : this.parent?.get(name);
  }

  has(name: string): boolean {
    return this.values.has(name) || (this.parent?.has(name) ?? false);
  }

  /** A name bound in this scope itself, not in the ones around it. */
  own(name: string): PyValue | undefined {
    return this.values.get(name);
  }

  child(): Scope {
    return new Scope(this);
  }

  /** Names bound directly in this scope, in binding order. */
  ownNames(): string[] {
    return [...this.values.keys()];
  }
}

export type ModuleKind = 'layer' | 'sequential' | 'list' | 'dict' | 'user' | 'catalog';

/**
 * A standard architecture from the catalog (`torchvision.models.resnet50()`), or a part of one
 * reached by attribute (`model.classifier`). Layers the script puts in place of the
 * architecture's are children of the root, under their dotted path (`fc`, `classifier.6`).
 */
export interface CatalogPart {
  readonly architecture: CatalogArchitecture;
  readonly root: ModuleObject;
  /** Dotted module path inside the architecture; '' for the model itself. */
  readonly path: string;
  /** timm's `model.forward_features`: the model without its head (layerTable/catalogPartCalls.ts, `featuresTable`). */
  readonly featuresOnly?: true;
}

let nextId = 1;
/** Bumped whenever any module's children change, so cached module lists know they are stale. */
let generation = 0;
/** Orders every `requires_grad` setting of the run, across modules: the last one made for a parameter wins. */
let gradOrder = 0;

/**
 * A `requires_grad` setting the script made on a module (`backbone.requires_grad_(False)`, `p.requires_grad = False`
 * in a loop over its parameters), for the parameters under `path`, relative to that module ('' for all of them).
 */
export interface GradSetting {
  readonly path: string;
  readonly trainable: boolean;
  readonly order: number;
  /** The statement, for the note that says what was frozen; null for the implicit setting of a module put in place. */
  readonly range: SourceRange | null;
  /** The layer's own row at `path` only (its weight and bias), not parameters a subclass of the layer registers under it (a hand-written LoRA's). */
  readonly ownRow?: boolean;
}

/**
 * An `nn.Module` built by the analyzed script: a torch.nn layer with its constructor arguments,
 * a container, or an instance of the script's own class with its registered children (in
 * registration order, as `named_modules()` lists them) and parameters.
 */
export class ModuleObject {
  /** How many modules were built so far in this process (lets loops tell whether they build any). */
  static get created(): number {
    return nextId - 1;
  }

  readonly id = nextId++;
  readonly children = new Map<string, ModuleObject>();
  readonly parameters = new Map<string, ParameterValue>();
  readonly attrs = new Map<string, PyValue>();
  /** For a layer whose `weight` was assigned another layer's (weight tying). */
  tiedWeightOf?: ModuleObject;
  /** For kind 'catalog': which architecture, and which part of it. */
  catalog?: CatalogPart;
  /** The script's `requires_grad` settings on this module's parameters (requiresGrad.ts reads them); a catalog part's go to its root. */
  gradSettings: GradSetting[] = [];
  /** A standard architecture's own gradient checkpointing (timm's `set_grad_checkpointing()`, transformers' `gradient_checkpointing_enable()`): each of its blocks is a checkpointed segment. */
  blocksCheckpointed?: boolean;
  /** Wrapped for activation checkpointing (`checkpoint_wrapper(block)`, `apply_activation_checkpointing`): each call is a checkpointed segment. */
  checkpointWrapped?: boolean;

  constructor(
    readonly kind: ModuleKind,
    readonly className: string,
    readonly range: SourceRange,
    // Set again by a layer subclass's `super().__init__(...)` (ClassValue.layerBase).
    public layer?: Omit<LayerCall, 'path'> & { path: string },
    readonly classValue?: ClassValue,
  ) {}

  /** Registers a child the way `nn.Module.__setattr__` does: a new name is appended, an old one keeps its place. */
  setChild(name: string, child: ModuleObject): void {
    this.children.set(name, child);
    this.attrs.delete(name);
    generation += 1;
    // A layer the script puts into a standard architecture after freezing it trains (a new head), unless it was frozen itself:
    // the architecture's own layers are no objects, so its settings are paths, and this one's path starts afresh.
    if (this.kind === 'catalog' && gradOrder > 0) {
      this.gradSettings.push({ path: name, trainable: true, order: ++gradOrder, range: null });
      for (const module of [child, ...child.namedModules().map(([, m]) => m)]) {
        module.gradSettings = [...module.gradSettings].sort((a, b) => a.order - b.order).map((setting) => ({ ...setting, order: ++gradOrder }));
      }
    }
  }

  /**
   * `requires_grad_(trainable)` on the parameters under `path` (relative to this module): kept by
   * the module objects themselves, so that a module moved into another container takes its
   * setting along; a standard architecture's own layers are no objects, so a part records it on
   * the architecture's root, under the part's path.
   */
  setRequiresGrad(path: string, trainable: boolean, range: SourceRange, ownRow = false): void {
    const order = ++gradOrder;
    // `layer.weight.requires_grad = False` on a layer subclass leaves the parameters it adds as they are.
    if (ownRow && path === '' && this.kind === 'layer' && this.classValue && !this.catalog) {
      this.gradSettings.push({ path, trainable, order, range, ownRow });
      return;
    }
    const record = (module: ModuleObject, within: string) => {
      if (module.catalog && module.catalog.root !== module) {
        module.catalog.root.gradSettings.push({ path: childPath(module.catalog.path, within), trainable, order, range });
      } else module.gradSettings.push({ path: within, trainable, order, range });
    };
    if (path !== '') {
      record(this, path);
      return;
    }
    // The parameters there are now, each on its holder: a layer put in later (a new head) is not covered.
    for (const module of [this, ...this.namedModules().map(([, m]) => m)]) {
      if (module.kind === 'layer' || module.kind === 'catalog') record(module, '');
      for (const name of module.parameters.keys()) record(module, name);
    }
  }

  /**
   * `copy.deepcopy(module)`: new module objects with the same layers, parameters and settings
   * (a tied weight stays tied to its copy); `copy.copy` shares the children, as Python's does.
   */
  clone(deep = true): ModuleObject {
    const copies = new Map<ModuleObject, ModuleObject>();
    const copy = (module: ModuleObject): ModuleObject => {
      const known = copies.get(module);
      if (known) return known;
      const twin = new ModuleObject(module.kind, module.className, module.range, module.layer && { ...module.layer }, module.classValue);
      copies.set(module, twin);
      for (const [name, child] of module.children) twin.children.set(name, deep ? copy(child) : child);
      for (const [name, parameter] of module.parameters) twin.parameters.set(name, parameter);
      for (const [name, value] of module.attrs) twin.attrs.set(name, value);
      twin.gradSettings = [...module.gradSettings];
      if (module.blocksCheckpointed !== undefined) twin.blocksCheckpointed = module.blocksCheckpointed;
      if (module.checkpointWrapped) twin.checkpointWrapped = true;
      return twin;
    };
    const root = copy(this);
    for (const [original, twin] of copies) {
      if (original.tiedWeightOf) twin.tiedWeightOf = copies.get(original.tiedWeightOf) ?? original.tiedWeightOf;
      if (original.catalog) twin.catalog = { ...original.catalog, root: copies.get(original.catalog.root) ?? original.catalog.root };
    }
    generation += 1;
    return root;
  }

  private cached: { generation: number; modules: [string, ModuleObject][] } | undefined;

  /** Every module below this one with its dotted path, depth first in registration order; a shared module keeps its first path. */
  namedModules(): [string, ModuleObject][] {
    if (this.cached?.generation !== generation) this.cached = { generation, modules: this.collect('', new Set()) };
    return this.cached.modules;
  }

  /**
   * The standard architecture this module is, or the first one it holds whole: a pretrained model
   * kept in a wrapper (`self.model = AutoModelForCausalLM.from_pretrained(...)` in a LightningModule).
   */
  wholeCatalogModule(): ModuleObject | undefined {
    if (this.catalog) return this.catalog.path === '' ? this : undefined;
    return this.namedModules().find(([, module]) => module.catalog?.path === '')?.[1];
  }

  private collect(prefix: string, seen: Set<number>): [string, ModuleObject][] {
    const result: [string, ModuleObject][] = [];
    for (const [name, child] of this.children) {
      if (seen.has(child.id)) continue;
      seen.add(child.id);
      const path = prefix ? `${prefix}.${name}` : name;
      result.push([path, child]);
      for (const entry of child.collect(path, seen)) result.push(entry);
    }
    return result;
  }
}

export function unresolved(text: string, reason: string): Unresolved {
  const line = text.split('\n')[0] ?? '';
  return { unresolved: line.length > 60 ? `${line.slice(0, 57)}...` : line, reason };
}

export function isUnresolvedValue(value: PyValue | undefined): value is Unresolved {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'unresolved' in value;
}

export function isList(value: PyValue | undefined): value is PyList {
  return Array.isArray(value);
}

export function kindOf(value: PyValue | undefined): string | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'kind' in value ? value.kind : undefined;
}

/** The entries of a dict, or of an instance of a `dict` subclass (`registry[name]`, `name in registry`). */
export function mappingOf(value: PyValue | undefined): DictValue | undefined {
  if (kindOf(value) === 'dict') return value as DictValue;
  if (kindOf(value) !== 'instance' || !(value as InstanceValue).classValue?.mapping) return undefined;
  const entries = (value as InstanceValue).attrs.get(MAPPING_ENTRIES);
  return kindOf(entries) === 'dict' ? (entries as DictValue) : undefined;
}

export function asModule(value: PyValue | undefined): ModuleObject | undefined {
  return kindOf(value) === 'module' ? (value as ModuleValue).module : undefined;
}

export function asTensor(value: PyValue | undefined): TensorValue | undefined {
  return kindOf(value) === 'tensor' ? (value as TensorValue) : undefined;
}

export function tuple(items: PyValue[]): PyList {
  const list = [...items] as PyList;
  list.tuple = true;
  return list;
}

/** Python truthiness where it is known; undefined where it is not. */
export function truthy(value: PyValue): boolean | undefined {
  if (value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value.length > 0;
  if (isList(value)) return value.length > 0;
  if (isUnresolvedValue(value)) return undefined;
  const kind = kindOf(value);
  if (kind === 'dict') return (value as DictValue).entries.size > 0;
  if (kind === 'batch') return true;
  return kind === 'tensor' ? undefined : true;
}

/** The plain-data part of a value, as layer arguments take it; the rest becomes Unresolved. */
export function toValue(value: PyValue, text: string): Value {
  if (value === null || typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (isUnresolvedValue(value)) return value;
  if (isList(value)) return value.map((item) => toValue(item, text));
  const kind = kindOf(value);
  if (kind === 'module') {
    const module = (value as ModuleValue).module;
    if (module.layer) return { layer: module.layer };
  }
  if (kind === 'batch') return unresolved(text, 'depends on the batch size');
  return unresolved(text, `${kind ?? 'value'} is not a constant`);
}
