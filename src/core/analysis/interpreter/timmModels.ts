// What fine-tuning scripts call on a timm model besides forward: its classifier (read, replaced) and its width.
import type { SyntaxNode } from '../../parsing/syntax';
import { catalogRows } from './catalogRows';
import { checkpointBlocks } from './checkpointCalls';
import type { Evaluator } from './evaluator';
import type { ModuleObject, PyValue } from './pyValues';
import { linearInFeatures } from '../../layerTable/layerTable';

/** timm model methods and attributes that are not parts of the model (they are read here, or left unresolved, never taken as a submodule). */
export const TIMM_MEMBERS = new Set(['get_classifier', 'reset_classifier', 'forward_head', 'set_grad_checkpointing', 'num_features', 'num_classes', 'head_hidden_size', 'default_cfg', 'pretrained_cfg', 'feature_info', 'group_matcher', 'no_weight_decay']);

/** timm's classifier: the last Linear with parameters, under the modules `forward_head` runs (its in_features from its parameters: weight and bias). */
export function timmClassifier(module: ModuleObject): { readonly path: string; readonly inFeatures: number; readonly classes: number } | undefined {
  const part = module.catalog;
  if (!part || part.path !== '' || part.architecture.library !== 'timm') return undefined;
  const calls = (catalogRows(part.architecture) ?? []).filter((row) => row.type !== 'Parameter' && (row.params ?? 0) > 0);
  const last = calls.at(-1);
  const inFeatures = last && /^(head|fc|classifier)(\.|$)/.test(last.path) ? linearInFeatures(last) : undefined;
  return inFeatures === undefined ? undefined : { path: last!.path, inFeatures, classes: last!.outputShape![0]! };
}

/** `model.num_features`, `model.num_classes` of a timm model; undefined where not known. */
export function timmAttribute(module: ModuleObject, name: string): PyValue | undefined {
  // Read on every attribute of a catalog model: the classifier is looked for only for these names.
  if (name !== 'num_features' && name !== 'head_hidden_size' && name !== 'num_classes') return undefined;
  const classifier = timmClassifier(module);
  if (!classifier) return undefined;
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
  if (method === 'set_grad_checkpointing' && module.catalog?.path === '' && module.catalog.architecture.library === 'timm') {
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
