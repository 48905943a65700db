// Python builtins (range, len, min, zip...) and math/numpy numeric helpers, on known values.
import type { SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { isPartial, isPartialClass, PARTIAL } from './partials';
import { isTokenizer, tokenizerVocabulary } from './tokenizers';
import { asModule, isList, isUnresolvedValue, kindOf, truthy, tuple, unresolved, type ClassValue, type DictValue, type ExternalValue, type ModuleObject, type PyValue } from './pyValues';

const MAX_RANGE = 10_000;

export const BUILTINS = new Set(['range', 'len', 'int', 'float', 'round', 'abs', 'min', 'max', 'sum', 'list', 'tuple', 'zip', 'enumerate', 'reversed', 'sorted', 'bool', 'str', 'isinstance', 'getattr', 'hasattr', 'print', 'dict', 'set', 'super', 'iter', 'next', 'map', 'any', 'all', 'pow', 'divmod', 'open', 'vars', 'type']);

export function callBuiltin(interpreter: Evaluator, name: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  const numbers = args.every((a): a is number => typeof a === 'number');
  switch (name) {
    case 'range': {
      if (!numbers || args.length === 0) return unresolved(node.text, 'range of unknown length');
      const [start, stop, step] = args.length === 1 ? [0, args[0]!, 1] : [args[0]!, args[1]!, args[2] ?? 1];
      const count = step === 0 ? 0 : Math.max(0, Math.ceil((stop - start) / step));
      if (count > MAX_RANGE) return unresolved(node.text, `range of ${count} items`);
      return Array.from({ length: count }, (_, i) => start + i * step);
    }
    case 'len': {
      if (isTokenizer(args[0])) return tokenizerVocabulary(interpreter, args[0], node);
      const items = interpreter.iterate(args[0] ?? null);
      return items ? items.length : unresolved(node.text, 'length unknown');
    }
    case 'int':
      return typeof args[0] === 'number' ? Math.trunc(args[0]) : typeof args[0] === 'string' && /^-?\d+$/.test(args[0]) ? Number(args[0]) : (args[0] ?? 0);
    case 'float':
      if (typeof args[0] === 'string' && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(args[0])) return Number(args[0]);
      return typeof args[0] === 'number' ? args[0] : unresolved(node.text, 'not a number');
    case 'round':
      return typeof args[0] === 'number' ? Math.round(args[0]) : unresolved(node.text, 'not a number');
    case 'abs':
      return typeof args[0] === 'number' ? Math.abs(args[0]) : unresolved(node.text, 'not a number');
    case 'min':
    case 'max': {
      const values = args.length === 1 ? (interpreter.iterate(args[0]!) ?? []) : args;
      if (values.length && values.every((v): v is number => typeof v === 'number')) return name === 'min' ? Math.min(...values) : Math.max(...values);
      return unresolved(node.text, `${name} of unknown values`);
    }
    case 'sum': {
      const values = interpreter.iterate(args[0] ?? null);
      return values?.every((v): v is number => typeof v === 'number') ? values.reduce((a, b) => a + b, 0) : unresolved(node.text, 'sum of unknown values');
    }
    case 'list':
    case 'tuple':
    case 'sorted':
    case 'set': {
      const items = args.length ? interpreter.iterate(args[0]!) : [];
      if (!items) return unresolved(node.text, `${name} of unknown values`);
      return name === 'tuple' ? tuple(items) : items;
    }
    case 'reversed': {
      const items = interpreter.iterate(args[0] ?? null);
      return items ? items.reverse() : unresolved(node.text, 'unknown sequence');
    }
    case 'enumerate': {
      const items = interpreter.iterate(args[0] ?? null);
      const start = typeof args[1] === 'number' ? args[1] : 0;
      return items ? items.map((item, i) => tuple([start + i, item])) : unresolved(node.text, 'unknown sequence');
    }
    case 'zip': {
      const rows = sideBySide(interpreter, args);
      return rows ? rows.map((row) => tuple(row)) : unresolved(node.text, 'unknown sequence');
    }
    case 'map': {
      // `q, k, v = map(lambda t: rearrange(t, ...), qkv)`: the function on each item, eagerly (the script unpacks or lists the result).
      const rows = args[0] === undefined || args.length < 2 ? undefined : sideBySide(interpreter, args.slice(1));
      return rows ? rows.map((row) => interpreter.callValue(args[0]!, row, new Map(), node)) : unresolved(node.text, 'map over an unknown sequence');
    }
    case 'bool': {
      const value = truthy(args[0] ?? false);
      return value ?? unresolved(node.text, 'unknown');
    }
    case 'str':
      return typeof args[0] === 'number' ? String(args[0]) : unresolved(node.text, 'string');
    case 'getattr': {
      const fallback = args[2];
      if (typeof args[1] !== 'string') return fallback ?? unresolved(node.text, 'getattr');
      const value = interpreter.attribute(args[0] ?? null, args[1], node);
      return isUnresolvedValue(value) && fallback !== undefined ? fallback : value;
    }
    case 'isinstance': {
      // Known against functools.partial (norm-layer factories) and, for a module, against module classes
      // (`isinstance(m, Block)`, `isinstance(m, nn.Linear)`); other cases stay unknown.
      if (isPartialClass(args[1]) && args[0] !== undefined && !isUnresolvedValue(args[0])) return isPartial(args[0]);
      const module = asModule(args[0]);
      const known = module ? moduleIsInstance(module, args[1] ?? null) : builtinIsInstance(args[0], args[1]);
      return known ?? unresolved(node.text, 'isinstance');
    }
    case 'type': {
      const type = args.length === 1 ? typeName(args[0]!) : undefined;
      return type ? { kind: 'external', name: type } : unresolved(node.text, 'type()');
    }
    case 'hasattr':
      return unresolved(node.text, 'hasattr');
    case 'dict':
      return dictOf(interpreter, args[0], kwargs);
    case 'pow':
      return numbers && args.length === 2 ? interpreter.binary('**', args[0]!, args[1]!, node) : unresolved(node.text, 'pow');
    case 'print':
      return null;
    default:
      return unresolved(node.text, `${name}() is not followed`);
  }
}

/** The items of several sequences side by side, as zip pairs them (up to the shortest); undefined where one is unknown. */
function sideBySide(interpreter: Evaluator, sequences: readonly PyValue[]): PyValue[][] | undefined {
  const lists = sequences.map((a) => interpreter.iterate(a));
  if (lists.some((l) => !l)) return undefined;
  const length = Math.min(...lists.map((l) => l!.length));
  return Array.from({ length }, (_, i) => lists.map((l) => l![i]!));
}

/**
 * `isinstance(t, tuple)`, `isinstance(size, (list, tuple))`: against built-in types, for a value
 * whose type is certain (vit-pytorch's `pair(t)`); bool counts as an int, as in Python.
 */
function builtinIsInstance(value: PyValue | undefined, types: PyValue | undefined): boolean | undefined {
  const type = value === undefined ? undefined : typeName(value);
  const names = (isList(types) ? types : [types]).map((t) => (kindOf(t) === 'external' && (t as ExternalValue).self === undefined ? (t as ExternalValue).name : undefined));
  if (!type || type === PARTIAL || names.length === 0 || names.some((name) => !name?.startsWith('builtins.'))) return undefined;
  return names.some((name) => name === type || (name === 'builtins.int' && type === 'builtins.bool'));
}

/** `type(value)` where the value's class is certain, as the qualified name a comparison matches. */
function typeName(value: PyValue): string | undefined {
  if (isPartial(value)) return PARTIAL;
  if (value === null) return 'builtins.NoneType';
  if (typeof value === 'boolean') return 'builtins.bool';
  if (typeof value === 'string') return 'builtins.str';
  if (typeof value === 'number') return Number.isInteger(value) ? 'builtins.int' : 'builtins.float';
  if (isList(value)) return value.tuple ? 'builtins.tuple' : 'builtins.list';
  if (kindOf(value) === 'dict') return 'builtins.dict';
  // A library class (`nn.BatchNorm2d` passed as a norm layer) is an instance of `type`.
  const external = kindOf(value) === 'external' ? (value as ExternalValue) : undefined;
  if (external && external.self === undefined && /^[A-Z]/.test(external.name.slice(external.name.lastIndexOf('.') + 1))) return 'builtins.type';
  return undefined;
}

/**
 * `dict(cfg)`, `dict(cfg, lr=0.1)`, `dict([("a", 1)])`, `dict(a=1)`: a new dict with the mapping's
 * entries (or the pairs'), then the keywords. A copy of a loaded configuration still reads as the file's.
 */
function dictOf(interpreter: Evaluator, source: PyValue | undefined, kwargs: Map<string, PyValue>): DictValue {
  const entries = new Map<string, PyValue>();
  if (kindOf(source) === 'dict') for (const [key, value] of (source as DictValue).entries) entries.set(key, value);
  else if (isList(source)) for (const pair of source) if (isList(pair) && pair.length === 2 && (typeof pair[0] === 'string' || typeof pair[0] === 'number')) entries.set(String(pair[0]), pair[1]!);
  for (const [key, value] of kwargs) entries.set(key, value);
  const copy: DictValue = { kind: 'dict', entries };
  if (source !== undefined) interpreter.config?.copied(source, copy);
  return copy;
}

const MATH: Readonly<Record<string, (...values: number[]) => number>> = {
  sqrt: Math.sqrt,
  log: Math.log,
  log2: Math.log2,
  log10: Math.log10,
  exp: Math.exp,
  ceil: Math.ceil,
  floor: Math.floor,
  pow: Math.pow,
  prod: (...values) => values.reduce((a, b) => a * b, 1),
  gcd: (a = 0, b = 0) => {
    let [x, y] = [Math.abs(a), Math.abs(b)];
    while (y) [x, y] = [y, x % y];
    return x;
  },
};

/** `math.sqrt(d_model)`, `math.ceil(n / 8)`: the numeric helpers model code uses. */
export function callMath(name: string, args: PyValue[], node: SyntaxNode): PyValue {
  const fn = MATH[name];
  const values = name === 'prod' && isList(args[0]) ? args[0] : args;
  if (!fn || !values.every((v): v is number => typeof v === 'number')) return unresolved(node.text, `${name}() of unknown values`);
  return fn(...values);
}

/** torch.nn's container classes, by the module kind the interpreter builds for them. */
const CONTAINER_KINDS: Readonly<Record<string, string>> = { Sequential: 'sequential', ModuleList: 'list', ModuleDict: 'dict' };

/**
 * Whether `module` is an instance of `classes` (a class, a torch.nn class, or a tuple of them):
 * undefined where a class is not one the analysis knows as a module class.
 */
function moduleIsInstance(module: ModuleObject, classes: PyValue): boolean | undefined {
  const matches = (option: PyValue): boolean | undefined => {
    if (kindOf(option) === 'class') {
      const target = option as ClassValue;
      const derives = (cls: ClassValue | undefined): boolean => cls !== undefined && (cls === target || cls.bases.some(derives));
      return derives(module.classValue) ? true : target.isModule ? false : undefined;
    }
    const name = kindOf(option) === 'external' ? /^torch\.nn\.([A-Z]\w*)$/.exec((option as ExternalValue).name)?.[1] : undefined;
    if (name === undefined) return undefined;
    if (name === 'Module' || (module.kind === 'layer' && module.layer?.type === name) || CONTAINER_KINDS[name] === module.kind) return true;
    return module.kind === 'catalog' ? undefined : false;
  };
  let answer = false;
  for (const option of isList(classes) ? classes : [classes]) {
    const match = matches(option);
    if (match === undefined) return undefined;
    answer ||= match;
  }
  return answer;
}
