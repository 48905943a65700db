// What fine-tuning scripts call on a timm model besides forward: its classifier (read, replaced) and its width.
import type { SyntaxNode } from '../../parsing/syntax';
import type { CatalogArchitecture } from '../../catalog/catalog';
import { catalogRows, catalogTableAtDefault } from './catalogRows';
import { checkpointBlocks } from './checkpointCalls';
import type { Evaluator } from './evaluator';
import { asModule, isList, kindOf, tuple, type DictValue, type ModuleObject, type PyValue } from './pyValues';
import { linearInFeatures } from '../../layerTable/layerTable';

/** timm model methods and attributes that are not parts of the model (they are read here, or left unresolved, never taken as a submodule). */
export const TIMM_MEMBERS = new Set(['get_classifier', 'reset_classifier', 'forward_head', 'set_grad_checkpointing', 'num_features', 'num_classes', 'head_hidden_size', 'default_cfg', 'pretrained_cfg', 'feature_info', 'group_matcher', 'no_weight_decay']);

/** The architecture of a whole timm model (not a part of one); undefined for any other module. */
function wholeTimmModel(module: ModuleObject | undefined): CatalogArchitecture | undefined {
  const part = module?.catalog;
  return part && part.path === '' && part.architecture.library === 'timm' ? part.architecture : undefined;
}

/** timm's classifier: the last Linear with parameters, under the modules `forward_head` runs (its in_features from its parameters: weight and bias). */
export function timmClassifier(module: ModuleObject): { readonly path: string; readonly inFeatures: number; readonly classes: number } | undefined {
  const architecture = wholeTimmModel(module);
  if (!architecture) return undefined;
  const calls = (catalogRows(architecture) ?? []).filter((row) => row.type !== 'Parameter' && (row.params ?? 0) > 0);
  const last = calls.at(-1);
  const inFeatures = last && /^(head|fc|classifier)(\.|$)/.test(last.path) ? linearInFeatures(last) : undefined;
  return inFeatures === undefined ? undefined : { path: last!.path, inFeatures, classes: last!.outputShape![0]! };
}

/**
 * The width of a timm model made without a classifier (`num_classes=0`: its pooled features), from
 * its output at its usual input; undefined where it has one or the output is not one vector.
 */
function headlessWidth(module: ModuleObject): number | undefined {
  const architecture = wholeTimmModel(module);
  const output = architecture ? catalogTableAtDefault(architecture)?.output : undefined;
  return output?.length === 1 ? output[0] : undefined;
}

/** `model.num_features`, `model.num_classes` of a timm model; undefined where not known. */
export function timmAttribute(module: ModuleObject, name: string): PyValue | undefined {
  // Read on every attribute of a catalog model: the classifier is looked for only for these names.
  if (name !== 'num_features' && name !== 'head_hidden_size' && name !== 'num_classes') return undefined;
  const classifier = timmClassifier(module);
  if (!classifier) return name === 'num_classes' ? undefined : headlessWidth(module);
  // The backbone's width stays what it is when the classifier is replaced; the number of classes is then the new one's.
  if (name === 'num_features' || name === 'head_hidden_size') return classifier.inFeatures;
  if (name === 'num_classes' && !module.children.has(classifier.path)) return classifier.classes;
  return undefined;
}

/**
 * `model.get_classifier()` (the classifier, or what the script put in its place) and
 * `model.reset_classifier(n)` (a new Linear of n classes in its place; n = 0: none) of a timm
 * model; undefined for any other call.
 */
export function timmMethod(interp: Evaluator, module: ModuleObject, method: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode, parts: { readonly part: (name: string) => PyValue | undefined; readonly replace: (path: string, layer: PyValue) => void; readonly layer: (type: string, args: PyValue[]) => PyValue }): PyValue | undefined {
  if (method === 'set_grad_checkpointing' && wholeTimmModel(module)) {
    return checkpointBlocks(interp, module, args[0] ?? kwargs.get('enable') ?? true, node);
  }
  if (method !== 'get_classifier' && method !== 'reset_classifier') return undefined;
  const classifier = timmClassifier(module);
  if (!classifier) return undefined;
  if (method === 'get_classifier') return parts.part(classifier.path);
  const classes = args[0] ?? kwargs.get('num_classes');
  if (typeof classes !== 'number') {
    interp.note(node, `\`${node.text.split('\n')[0]!.slice(0, 60)}\`: the number of classes is not a constant the analysis can read; the classifier is left as it is`);
    return null;
  }
  parts.replace(classifier.path, classes > 0 ? parts.layer('Linear', [classifier.inFeatures, classes]) : parts.layer('Identity', []));
  return null;
}

const TIMM_DATA_CONFIG = /^timm\.data(\.config)?\.resolve_(model_)?data_config$/;

/**
 * `timm.data.resolve_data_config({}, model=m)` and `resolve_model_data_config(m)`: the input size the
 * model was trained at (its pretrained config's, the catalog's usual input), or the one the script
 * passes (`{"input_size": (3, 288, 288)}`, `img_size`), as the dict `create_transform(**config)`
 * takes. Undefined for any other call, or where neither is known.
 */
export function timmDataConfig(name: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>): PyValue | undefined {
  if (!TIMM_DATA_CONFIG.test(name)) return undefined;
  const modelConfig = name.endsWith('resolve_model_data_config');
  const model = wholeTimmModel(asModule(modelConfig ? (args[0] ?? kwargs.get('model')) : kwargs.get('model')));
  const given = modelConfig ? kwargs.get('args') : (args[0] ?? kwargs.get('args'));
  const entries = kindOf(given) === 'dict' ? (given as DictValue).entries : new Map<string, PyValue>();
  const size = entries.get('input_size') ?? entries.get('img_size');
  const shape = isList(size) && size.length === 3 && size.every((side) => typeof side === 'number') ? size
    : typeof size === 'number' ? [3, size, size]
    : model ? [...model.input.defaultShape] : undefined;
  if (!shape) return undefined;
  return { kind: 'dict', entries: new Map<string, PyValue>([['input_size', tuple(shape)], ['crop_pct', 0.875], ['interpolation', 'bicubic']]) };
}
