/**
 * Hydra's `instantiate` and `call` (hydra.utils): an object built from a configuration mapping
 * whose `_target_` names the class or function by its dotted path (`_target_: models.segnet.SegNet`
 * and the mapping's other keys as its keyword arguments). The path is looked up among the
 * project's modules (as Python's import would find it from the script's folder), else it is a
 * library name the interpreter knows (`torch.nn.Linear`, `torch.optim.AdamW`, `torchvision.models.resnet18`).
 *
 * As Hydra does: keyword arguments given to the call are merged over the mapping's keys
 * (`instantiate(cfg.model, num_classes=10)`), positional ones replace `_args_`, nested mappings
 * with a `_target_` (in mappings and lists) are built first unless `_recursive_: false`, and
 * `_partial_: true` gives a `functools.partial` of the target instead of calling it.
 */
import type { SyntaxNode } from '../../parsing/syntax';
import { readConfigKey } from './configCalls';
import { makePartial } from './partials';
import type { Evaluator } from './evaluator';
import { isList, kindOf, unresolved, type DictValue, type PyValue } from './pyValues';

const INSTANTIATE = new Set(['hydra.utils.instantiate', 'hydra.utils.call', 'hydra.utils.instantiate_node']);
/** Hydra's compose API (also under hydra.experimental in Hydra 1.0). */
const INITIALIZE = /^hydra(\.experimental)?\.(initialize|initialize_config_dir)$/;
const COMPOSE = /^hydra(\.experimental)?\.compose$/;
const LOCATE = new Set(['hydra.utils.get_class', 'hydra.utils.get_method', 'hydra.utils.get_object', 'hydra._internal.utils._locate']);
/** Hydra's own keys in a mapping: never passed to the target. */
const RESERVED = new Set(['_target_', '_recursive_', '_convert_', '_partial_', '_args_']);
/** How deeply `_target_`s may nest (a model of a backbone of a block...) before the rest is left unbuilt. */
const MAX_NESTING = 8;
/** A dotted Python path: what `_target_` must be for the analysis to look it up. */
const DOTTED_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

type CallValue = (callee: PyValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode) => PyValue;

/** A Hydra call answered (instantiate, call, get_class...); undefined for any other name. */
export function hydraCall(interp: Evaluator, name: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode, callValue: CallValue): PyValue | undefined {
  // Asked of every library call: the cheap test first.
  if (!name.startsWith('hydra.')) return undefined;
  if (LOCATE.has(name)) {
    const path = args[0] ?? kwargs.get('path');
    return typeof path === 'string' ? locateDottedPath(interp, path, node) : unresolved(node.text, 'a Hydra path the analysis cannot read');
  }
  if (INITIALIZE.test(name)) {
    // `with initialize(config_path="conf"):` then `compose(config_name="config", overrides=[...])`.
    const path = kwargs.get('config_path') ?? kwargs.get('config_dir') ?? args[0];
    if (interp.config && typeof path === 'string') interp.config.hydraConfigPath = path;
    return null;
  }
  if (COMPOSE.test(name)) {
    const configName = kwargs.get('config_name') ?? args[0];
    const overrides = kwargs.get('overrides') ?? args[1];
    const configPath = interp.config?.hydraConfigPath;
    if (!interp.config || typeof configName !== 'string' || configPath === undefined) {
      interp.note(node, `${node.text.slice(0, 60)}: no initialize(config_path=...) and config_name the analysis can read; the configuration is unknown (set values with --set)`);
      return unresolved(node.text, 'an unknown Hydra configuration');
    }
    const words = isList(overrides) ? overrides.filter((word): word is string => typeof word === 'string') : [];
    return interp.config.hydraConfig(configPath, configName, node, words);
  }
  if (!INSTANTIATE.has(name)) return undefined;
  const config = args[0] ?? kwargs.get('config');
  const given = new Map([...kwargs].filter(([key]) => key !== 'config'));
  return build(interp, config ?? null, args.slice(1), given, node, callValue, 0);
}

function build(interp: Evaluator, config: PyValue, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode, callValue: CallValue, depth: number): PyValue {
  if (depth > MAX_NESTING) {
    interp.note(node, `Hydra \`_target_\`s nest deeper than ${MAX_NESTING}; the inner ones are not built`);
    return unresolved(node.text, 'Hydra targets nested too deeply');
  }
  if (isList(config)) return config.map((item) => build(interp, item, [], new Map(), node, callValue, depth + 1));
  if (kindOf(config) !== 'dict') {
    interp.note(node, `${node.text.slice(0, 60)}: the configuration Hydra would instantiate is not one the analysis read; what it builds is unknown (set values with --set)`);
    return unresolved(node.text, 'an unknown Hydra configuration');
  }
  const dict = config as DictValue;
  const read = (key: string): PyValue | undefined => {
    if (kwargs.has(key)) return kwargs.get(key);
    if (dict.entries.has(key)) readConfigKey(interp, dict, key, node);
    return dict.entries.get(key);
  };
  const target = read('_target_');
  // A mapping without `_target_` is returned as it is, its nested targets built (Hydra returns a DictConfig).
  if (target === undefined) return nested(interp, dict, node, callValue, depth);
  if (typeof target !== 'string' || !DOTTED_PATH.test(target)) {
    interp.note(node, `Hydra \`_target_\` ${typeof target === 'string' ? `"${target.slice(0, 60)}"` : 'with an unknown value'} is not a dotted path the analysis can look up; what it builds is unknown`);
    return unresolved(node.text, 'an unknown Hydra _target_');
  }
  const recursive = read('_recursive_') !== false;
  const keywords = new Map<string, PyValue>();
  for (const key of new Set([...dict.entries.keys(), ...kwargs.keys()])) {
    if (RESERVED.has(key)) continue;
    const value = read(key)!;
    keywords.set(key, recursive ? nestedValue(interp, value, node, callValue, depth) : value);
  }
  const listed = read('_args_');
  const positional = args.length > 0 ? [...args] : isList(listed) ? listed.map((item) => (recursive ? nestedValue(interp, item, node, callValue, depth) : item)) : [];
  const callee = locateDottedPath(interp, target, node);
  if (read('_partial_') === true) return makePartial([callee, ...positional], keywords, node);
  return callValue(callee, positional, keywords, node);
}

/** A value passed to the target: a mapping with `_target_` is built, mappings and lists are looked into. */
function nestedValue(interp: Evaluator, value: PyValue, node: SyntaxNode, callValue: CallValue, depth: number): PyValue {
  if (isList(value)) return value.some((item) => holdsTarget(item)) ? value.map((item) => nestedValue(interp, item, node, callValue, depth + 1)) : value;
  if (kindOf(value) !== 'dict') return value;
  if ((value as DictValue).entries.has('_target_')) return build(interp, value, [], new Map(), node, callValue, depth + 1);
  return holdsTarget(value) ? nested(interp, value as DictValue, node, callValue, depth) : value;
}

/** A copy of the mapping with its nested targets built; the mapping itself when it holds none (so its reads are still the file's). */
function nested(interp: Evaluator, dict: DictValue, node: SyntaxNode, callValue: CallValue, depth: number): PyValue {
  if (!holdsTarget(dict)) return dict;
  return { kind: 'dict', entries: new Map([...dict.entries].map(([key, value]) => [key, nestedValue(interp, value, node, callValue, depth + 1)])) };
}

/** Whether a `_target_` is somewhere inside (looked for no deeper than targets are built: a dict the script made may hold itself). */
function holdsTarget(value: PyValue, depth = 0): boolean {
  if (depth > MAX_NESTING) return false;
  if (isList(value)) return value.some((item) => holdsTarget(item, depth + 1));
  if (kindOf(value) !== 'dict') return false;
  const entries = (value as DictValue).entries;
  return entries.has('_target_') || [...entries.values()].some((item) => holdsTarget(item, depth + 1));
}

/** The class or function a dotted path names (Hydra's `_target_`, LightningCLI's `class_path`): the project's own, else a library name. */
export function locateDottedPath(interp: Evaluator, path: string, node: SyntaxNode): PyValue {
  if (!DOTTED_PATH.test(path)) return unresolved(node.text, `"${path.slice(0, 60)}" is not a dotted path`);
  const place = interp.place;
  const own = place?.project.resolve(path, place.file);
  if (own !== undefined) return own;
  // A target is an absolute path: the script's own import aliases do not apply to it.
  return { kind: 'external', name: path };
}
