/**
 * The data scripts/catalog/generate_catalog.py records for each catalog model (docs/catalog.md):
 * an index entry that is read as is, and a compressed blob with the model's layer modules, the
 * parameters registered outside them and a torch.fx graph of its forward, decoded on first use.
 */
import { gunzipSync } from 'node:zlib';

/** A constructor option's value as the catalog compares it. */
export type OptionValue = number | string | boolean | null;

/**
 * A number that follows an option: `{ "$": "num_classes" }`, or vit's position count
 * `{ "$": "image_size", "div": 16, "pow": 2, "add": 1 }` = (image_size // 16) ** 2 + 1.
 */
export interface Symbolic {
  readonly $: string;
  readonly div?: number;
  readonly pow?: number;
  readonly mul?: number;
  readonly add?: number;
}

/** A reference to the value of an earlier graph node. */
export interface NodeRef {
  readonly r: number;
}

/** Constants of the graph that JSON has no type for. */
export type Tagged =
  | { readonly slice: readonly [DataValue, DataValue, DataValue] }
  | { readonly ellipsis: true }
  | { readonly dtype: string }
  | { readonly device: string }
  | { readonly memory_format: string }
  | { readonly float: string }
  | { readonly dict: Readonly<Record<string, DataValue>> };

export type DataValue = number | string | boolean | null | readonly DataValue[] | NodeRef | Symbolic | Tagged;

export type DataArgs = readonly DataValue[];
export type DataKwargs = Readonly<Record<string, DataValue>>;

/**
 * One node of forward's graph, in execution order:
 * - `['p', name]`: an input (placeholder);
 * - `['m', module index, tensor inputs, other arguments by name]`: a layer module call;
 * - `['f', function, args, kwargs]`: `torch.cat`, `operator.add`, `torch.nn.functional.relu`...;
 * - `['c', method, args (the tensor first), kwargs]`: `view`, `mean`, `size`...;
 * - `['g', attribute path, shape]`: a parameter or buffer read directly.
 */
export type GraphNode =
  | readonly ['p', string]
  | readonly ['m', number, DataArgs, DataKwargs]
  | readonly ['f', string, DataArgs, DataKwargs]
  | readonly ['c', string, DataArgs, DataKwargs]
  | readonly ['g', string, DataArgs];

/** One layer module: its `named_modules()` path, torch.nn class and constructor arguments (defaults left out). */
export type ModuleEntry = readonly [string, string, DataKwargs];

/** A parameter registered outside every layer module: its `named_parameters()` name and shape. */
export type ParameterEntry = readonly [string, DataArgs];

export interface TracedVariant {
  /** The option values this variant is for (`{ aux_logits: false }`); empty for most models. */
  readonly when: Readonly<Record<string, OptionValue>>;
  readonly modules: readonly ModuleEntry[];
  readonly parameters: readonly ParameterEntry[];
  readonly graph: readonly GraphNode[];
  /**
   * The paths of the modules that are not layer modules (containers, the library's blocks) in
   * `named_modules()` order: with the layer modules' paths, what `named_children()` lists.
   */
  readonly tree?: readonly string[];
  /** Per graph node, the module whose forward made it: 0 for the model's own, else 1 + its index in `tree`. */
  readonly scopes?: readonly number[];
}

export interface TracedBlob {
  readonly variants: readonly TracedVariant[];
}

/**
 * What a constructor option does to the layer table:
 * - `classes`: num_classes, symbolic in the data;
 * - `template`: a formula of its value (vit's image_size);
 * - `variant`: one of `values`, each with its own data (aux_logits, width_mult);
 * - `none`: accepted, the table does not depend on it (dropout, init_weights);
 * - `fixed`: only `covers` is covered, where present (the default, where passing it builds the same
 *   model); `reason` says why nothing else is.
 */
export interface OptionInfo {
  readonly kind: 'classes' | 'template' | 'variant' | 'none' | 'fixed';
  readonly default: OptionValue;
  readonly values?: readonly OptionValue[];
  readonly covers?: OptionValue;
  /** A template option's value must be a multiple of this (vit's image_size: the patch size). */
  readonly multipleOf?: number;
  readonly reason?: string;
  readonly note?: string;
}

export interface WeightsMember {
  /** Options the builder sets for these weights; another value makes torchvision raise. */
  readonly fixes: Readonly<Record<string, OptionValue>>;
  /** The variant the builder returns when the script does not choose (googlenet drops its aux heads). */
  readonly variant: Readonly<Record<string, OptionValue>>;
}

export interface WeightsInfo {
  /** The enum's class name: `ResNet50_Weights`. */
  readonly enum: string;
  readonly members: Readonly<Record<string, WeightsMember>>;
  /** What `DEFAULT` stands for. */
  readonly default: string;
  /** What the deprecated `pretrained=True` loads, or null where it loads nothing. */
  readonly legacy: string | null;
}

export interface TracedIndexEntry {
  /** The class PyTorch prints for the model. */
  readonly className: string;
  /** The per-sample input the model is trained with (the DEFAULT weights' crop size). */
  readonly input: readonly number[];
  readonly options?: Readonly<Record<string, OptionInfo>>;
  readonly weights?: WeightsInfo | null;
  /** The `when` of each variant in the blob, in the same order. */
  readonly variants: readonly Readonly<Record<string, OptionValue>>[];
  /** For a model built from its published architecture: the published parameter count. */
  readonly published?: number;
}

export type TracedIndex = Readonly<Record<string, TracedIndexEntry>>;

/** A blob as the generator writes it: gzip-compressed JSON in base64. */
export function decodeBlob(text: string): TracedBlob {
  return JSON.parse(gunzipSync(Buffer.from(text, 'base64')).toString('utf8')) as TracedBlob;
}

/** Decodes each model's blob once, on first use. */
export class BlobCache {
  private readonly decoded = new Map<string, TracedBlob>();

  constructor(private readonly blobs: Readonly<Record<string, string>>) {}

  get(name: string): TracedBlob {
    let blob = this.decoded.get(name);
    if (!blob) {
      const text = this.blobs[name];
      if (text === undefined) throw new Error(`no catalog data for ${name}`);
      blob = decodeBlob(text);
      this.decoded.set(name, blob);
    }
    return blob;
  }
}

export function isNodeRef(value: DataValue | undefined): value is NodeRef {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'r' in value;
}

export function isSymbolic(value: DataValue | undefined): value is Symbolic {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && '$' in value;
}

/** The value of a symbolic number for the options' values. */
export function evaluateSymbolic(value: Symbolic, values: Readonly<Record<string, number>>): number {
  const x = values[value.$];
  if (x === undefined) throw new Error(`catalog data refers to the option ${value.$}, which has no value`);
  const divided = Math.floor(x / (value.div ?? 1));
  return divided ** (value.pow ?? 1) * (value.mul ?? 1) + (value.add ?? 0);
}

/** `value` with every symbolic number replaced by its value. */
export function instantiate(value: DataValue, values: Readonly<Record<string, number>>): DataValue {
  if (Array.isArray(value)) return (value as readonly DataValue[]).map((v) => instantiate(v, values));
  if (isSymbolic(value)) return evaluateSymbolic(value, values);
  if (typeof value === 'object' && value !== null && 'dict' in value) {
    return { dict: Object.fromEntries(Object.entries(value.dict).map(([k, v]) => [k, instantiate(v, values)])) };
  }
  return value;
}

export function instantiateKwargs(kwargs: DataKwargs, values: Readonly<Record<string, number>>): Record<string, DataValue> {
  return Object.fromEntries(Object.entries(kwargs).map(([k, v]) => [k, instantiate(v, values)]));
}
