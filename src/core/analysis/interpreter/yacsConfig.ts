/**
 * yacs's `CfgNode` (and fvcore's and detectron2's, which extend it): the configuration object of
 * many vision projects. Defaults are set attribute by attribute (`_C = CN(); _C.MODEL = CN();
 * _C.MODEL.DEPTH = 50`), copied (`cfg = _C.clone()`), then overridden by a YAML file
 * (`cfg.merge_from_file(args.config_file)`, with fvcore's `_BASE_` files under it) and by
 * `KEY VALUE` pairs (`cfg.merge_from_list(args.opts)`).
 *
 * A node is an object whose attributes are its keys. A mapping merged from a file into a key the
 * node does not have stays the loaded mapping, so reading it is still recorded with its file and
 * line; a key the node has takes the file's value.
 */
import type { SyntaxNode } from '../../parsing/syntax';
import { assumedValueOf } from '../config/assumedValues';
import type { Evaluator } from './evaluator';
import { isList, kindOf, unresolved, type DictValue, type InstanceValue, type PyValue } from './pyValues';

const YACS_CLASS = /^(yacs\.config|fvcore\.common\.config|detectron2\.config(\.config)?)\.CfgNode$/;
const NODE = 'yacs.CfgNode';
/** How many `_BASE_` files may stack under one file. */
const MAX_BASES = 4;
/** How deeply nodes are copied or merged (configurations are a few levels deep). */
const MAX_DEPTH = 16;

export function isYacsClass(qualified: string): boolean {
  // Asked of every library call: the cheap test first.
  return qualified.endsWith('.CfgNode') && YACS_CLASS.test(qualified);
}

export function isYacsNode(value: PyValue | undefined): boolean {
  return kindOf(value) === 'instance' && (value as InstanceValue).className === NODE;
}

/** `CN()`, `CN(new_allowed=True)`, `CN({"lr": 0.1, "model": {...}})`: a node, nested mappings as nodes. */
export function newNode(init?: PyValue, depth = 0): InstanceValue {
  const node: InstanceValue = { kind: 'instance', className: NODE, attrs: new Map() };
  if (kindOf(init) === 'dict' && depth < MAX_DEPTH) {
    for (const [key, value] of (init as DictValue).entries) node.attrs.set(key, kindOf(value) === 'dict' ? newNode(value, depth + 1) : value);
  }
  return node;
}

/** A method of a node; unresolved (with the reason) for one the analysis does not follow. */
export function yacsMethod(interp: Evaluator, self: InstanceValue, method: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode): PyValue {
  switch (method) {
    case 'clone':
      return copy(self, 0);
    case 'merge_from_file': {
      const path = args[0] ?? kwargs.get('cfg_filename');
      if (typeof path !== 'string') {
        interp.note(node, `${node.text.slice(0, 60)}: the file's name is not known to the analysis; the node keeps its defaults (set values with --set or give the script's arguments)`);
        return null;
      }
      mergeFile(interp, self, path, node, 0);
      return null;
    }
    case 'merge_from_other_cfg':
      if (isYacsNode(args[0])) merge(self, (args[0] as InstanceValue).attrs, 0);
      return null;
    case 'merge_from_list': {
      const words = args[0];
      if (!isList(words)) return null;
      for (let i = 0; i + 1 < words.length; i += 2) {
        const key = words[i];
        const text = words[i + 1];
        if (typeof key === 'string') setPath(self, key.split('.'), typeof text === 'string' ? literal(text) : (text ?? null));
      }
      return null;
    }
    case 'freeze':
    case 'defrost':
    case 'set_new_allowed':
    case 'register_deprecated_key':
    case 'register_renamed_key':
      return null;
    case 'is_frozen':
    case 'is_new_allowed':
      return false;
    case 'get':
      return typeof args[0] === 'string' ? (self.attrs.get(args[0]) ?? args[1] ?? null) : unresolved(node.text, 'CfgNode.get');
    case 'keys':
      return [...self.attrs.keys()];
    case 'values':
      return [...self.attrs.values()];
    case 'items':
      return [...self.attrs].map(([key, value]) => Object.assign([key, value] as PyValue[], { tuple: true }));
    case 'update':
      if (kindOf(args[0]) === 'dict') for (const [key, value] of (args[0] as DictValue).entries) self.attrs.set(key, value);
      for (const [key, value] of kwargs) self.attrs.set(key, value);
      return null;
    default:
      return unresolved(node.text, `CfgNode.${method}() is not followed`);
  }
}

/** `merge_from_file(path)`: its `_BASE_` file first (fvcore), then its own keys. */
function mergeFile(interp: Evaluator, self: InstanceValue, path: string, node: SyntaxNode, bases: number): void {
  const loaded = interp.config?.load(path, 'by-name', node);
  if (kindOf(loaded) !== 'dict') return;
  const entries = (loaded as DictValue).entries;
  const base = entries.get('_BASE_');
  if (typeof base === 'string') {
    if (bases >= MAX_BASES) interp.note(node, `${path}: _BASE_ files stack deeper than ${MAX_BASES}; the deeper ones are not read`);
    else mergeFile(interp, self, base.startsWith('/') ? base : `${path.slice(0, path.lastIndexOf('/') + 1)}${base}`, node, bases + 1);
  }
  merge(self, new Map([...entries].filter(([key]) => key !== '_BASE_')), 0);
}

/** The entries over the node's keys: a mapping into a node merges, anything else replaces. */
function merge(self: InstanceValue, entries: ReadonlyMap<string, PyValue>, depth: number): void {
  for (const [key, value] of entries) {
    const own = self.attrs.get(key);
    if (isYacsNode(own) && depth < MAX_DEPTH && (kindOf(value) === 'dict' || isYacsNode(value))) merge(own as InstanceValue, kindOf(value) === 'dict' ? (value as DictValue).entries : (value as InstanceValue).attrs, depth + 1);
    else self.attrs.set(key, value);
  }
}

function copy(self: InstanceValue, depth: number): InstanceValue {
  const node = newNode();
  for (const [key, value] of self.attrs) node.attrs.set(key, isYacsNode(value) && depth < MAX_DEPTH ? copy(value as InstanceValue, depth + 1) : isList(value) ? Object.assign([...value], value.tuple ? { tuple: true } : {}) : value);
  return node;
}

/** `MODEL.DEPTH` in merge_from_list: the value set at that path (through nodes or mappings merged from a file), nodes made on the way. */
function setPath(self: InstanceValue, path: readonly string[], value: PyValue): void {
  if (path.length > MAX_DEPTH) return;
  const entriesOf = (holder: PyValue | undefined): Map<string, PyValue> | undefined => (isYacsNode(holder) ? (holder as InstanceValue).attrs : kindOf(holder) === 'dict' ? (holder as DictValue).entries : undefined);
  let entries = self.attrs;
  for (const key of path.slice(0, -1)) {
    let next = entriesOf(entries.get(key));
    if (!next) {
      const made = newNode();
      entries.set(key, made);
      next = made.attrs;
    }
    entries = next;
  }
  entries.set(path[path.length - 1]!, value);
}

/** What yacs's literal_eval makes of a word: numbers, booleans, None, a list of those, else the text. */
function literal(text: string): PyValue {
  const t = text.trim();
  if (t === 'None') return null;
  const list = /^[[(](.*)[\])]$/.exec(t);
  if (list) return list[1]!.trim() === '' ? [] : list[1]!.split(',').map((item) => literal(item.trim().replace(/^['"]|['"]$/g, '')));
  return assumedValueOf(t.replace(/^['"](.*)['"]$/, '$1'));
}
