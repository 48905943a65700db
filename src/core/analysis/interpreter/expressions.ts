// Expressions of the interpreter: literals, names, attributes, subscripts, comprehensions, operators (calls are in calls.ts).
import { rangeOf, stringValue, type SyntaxNode } from '../../parsing/syntax';
import { call } from './calls';
import { commandLineValue, environSubscript, readConfigKey } from './configCalls';
import { isYacsNode } from './yacsConfig';
import { bindMethod, classAttribute } from './classes';
import { MAX_EXPRESSION_DEPTH, type Evaluator } from './evaluator';
import { callTensorMethod, tensorAttribute, tensorBinary } from './forwardOps';
import { isHfArgumentParser } from './hfArgumentParser';
import { isFrameworkObject } from './frameworkObjects';
import { arithmetic, batchArithmetic, compareValues } from './operators';
import { partialAttribute } from './partials';
import { isTokenizer, isVocabularyAttribute, tokenizerVocabulary } from './tokenizers';
import { BUILTINS } from './pythonBuiltins';
import { asModule, isList, isUnresolvedValue, kindOf, mappingOf, ModuleObject, truthy, tuple, unresolved, type ClassValue, type DictValue, type ExternalValue, type InstanceValue, type ModuleValue, type PartialValue, type PyList, type PyValue, type Scope, type SliceValue } from './pyValues';
import { isLibraryRegistryObject } from './libraryRegistries';
import { isRegistry, registryLookup } from './registryLookups';
import { isTensorLike, shapeOf } from './tensorOps';
import { catalogChildNames, catalogPart, catalogSlice, moduleAttribute } from './torchModules';
import { MAX_LIST, append, percentFormat, sliceList, unescape } from './valueMethods';

export function evaluate(interp: Evaluator, node: SyntaxNode, scope: Scope): PyValue {
  interp.tick();
  if (interp.expressionDepth >= MAX_EXPRESSION_DEPTH) return unresolved(node.text, 'the expression nests too deeply to follow');
  interp.expressionDepth += 1;
  try {
    return evaluateNode(interp, node, scope);
  } finally {
    interp.expressionDepth -= 1;
  }
}

function evaluateNode(interp: Evaluator, node: SyntaxNode, scope: Scope): PyValue {
  switch (node.type) {
    case 'integer':
      return exactNumber(interp, Number(node.text.replace(/_/g, '').replace(/[lL]$/, '')), node);
    case 'float':
      return Number(node.text.replace(/_/g, ''));
    case 'true':
      return true;
    case 'false':
      return false;
    case 'none':
      return null;
    case 'string':
      return stringLiteral(interp, node, scope);
    case 'concatenated_string': {
      const parts = node.namedChildren.map((part) => stringLiteral(interp, part, scope));
      return parts.every((p): p is string => typeof p === 'string') ? parts.join('') : unresolved(node.text, 'formatted string');
    }
    case 'ellipsis':
      return { kind: 'external', name: '...' };
    case 'identifier':
      return lookup(interp, node.text, scope, node);
    case 'parenthesized_expression': {
      const inner = node.namedChildren.find((c) => c.type !== 'comment');
      return inner ? evaluate(interp, inner, scope) : tuple([]);
    }
    case 'tuple':
    case 'expression_list':
      return tuple(evaluateItems(interp, node, scope));
    case 'list':
      return evaluateItems(interp, node, scope);
    case 'set':
      return evaluateItems(interp, node, scope);
    case 'dictionary':
      return evaluateDict(interp, node, scope);
    case 'list_comprehension':
    case 'generator_expression':
    case 'set_comprehension':
      return comprehension(interp, node, scope);
    case 'dictionary_comprehension': {
      const pairs = comprehension(interp, node, scope);
      if (!isList(pairs)) return pairs;
      const entries = new Map<string, PyValue>();
      for (const pair of pairs) if (isList(pair) && (typeof pair[0] === 'string' || typeof pair[0] === 'number')) entries.set(String(pair[0]), pair[1]!);
      return { kind: 'dict', entries };
    }
    case 'attribute': {
      const object = evaluate(interp, node.childForFieldName('object')!, scope);
      const name = node.childForFieldName('attribute')!.text;
      // `cfg.model.n_layer` on a loaded OmegaConf file: its keys read as attributes.
      if (interp.config?.isConfigDict(object) && (object as DictValue).entries.has(name)) {
        readConfigKey(interp, object, name, node);
        return (object as DictValue).entries.get(name)!;
      }
      // `Path("config.json").read_text()`, `f.read()`: methods of a file the script opens.
      if (interp.config?.isHandle(object)) return { kind: 'external', name: `method.${name}`, self: object };
      if (isTokenizer(object) && isVocabularyAttribute(name)) return tokenizerVocabulary(interp, object, node);
      return commandLineValue(interp, attribute(object, name, node));
    }
    case 'subscript':
      return subscript(interp, node, scope);
    case 'slice': {
      const parts: (SyntaxNode | null)[] = [null, null, null];
      let index = 0;
      for (const child of node.children) {
        if (child.type === ':') index += 1;
        else if (child.isNamed) parts[index] = child;
      }
      const value = (n: SyntaxNode | null) => (n ? evaluate(interp, n, scope) : null);
      return { kind: 'slice', start: value(parts[0]!), stop: value(parts[1]!), step: value(parts[2]!) };
    }
    case 'call':
      return exactNumber(interp, call(interp, node, scope), node);
    case 'unary_operator': {
      const value = evaluate(interp, node.childForFieldName('argument')!, scope);
      const operator = node.childForFieldName('operator')?.text;
      if (typeof value === 'number' && operator === '~') return Number.isInteger(value) ? -value - 1 : unresolved(node.text, 'not an integer');
      if (typeof value === 'number') return operator === '-' ? -value : value;
      if (isTensorLike(value)) return value;
      return unresolved(node.text, 'not a number');
    }
    case 'binary_operator':
      return binary(interp, node.childForFieldName('operator')?.text ?? '', evaluate(interp, node.childForFieldName('left')!, scope), evaluate(interp, node.childForFieldName('right')!, scope), node);
    case 'not_operator': {
      const value = truthy(evaluate(interp, node.childForFieldName('argument')!, scope));
      return value === undefined ? unresolved(node.text, 'unknown condition') : !value;
    }
    case 'boolean_operator': {
      const left = evaluate(interp, node.childForFieldName('left')!, scope);
      const test = truthy(left);
      if (test === undefined) return unresolved(node.text, 'unknown condition');
      const isAnd = node.childForFieldName('operator')?.text === 'and';
      if (isAnd ? !test : test) return left;
      return evaluate(interp, node.childForFieldName('right')!, scope);
    }
    case 'comparison_operator':
      return compare(interp, node, scope);
    case 'conditional_expression': {
      const [consequence, condition, alternative] = node.namedChildren;
      const test = condition ? truthy(evaluate(interp, condition, scope)) : undefined;
      return test === false && alternative ? evaluate(interp, alternative, scope) : consequence ? evaluate(interp, consequence, scope) : null;
    }
    case 'lambda':
      // A function value whose body is one expression (calls.ts evaluates it): `checkpoint(lambda t: block(t), x)`.
      return { kind: 'function', name: '<lambda>', node, closure: scope };
    case 'await':
    case 'named_expression':
      return unresolved(node.text, node.type.replace(/_/g, ' '));
    default:
      return unresolved(node.text, `${node.type.replace(/_/g, ' ')} is not followed`);
  }
}

/** A string literal, f-strings included where every interpolated value is known. */
function stringLiteral(interp: Evaluator, node: SyntaxNode, scope: Scope): PyValue {
  if (!node.namedChildren.some((c) => c.type === 'interpolation')) return stringValue(node) ?? unresolved(node.text, 'string');
  let text = '';
  for (const child of node.namedChildren) {
    if (child.type === 'string_content') text += child.text;
    else if (child.type === 'escape_sequence') text += unescape(child.text);
    else if (child.type === 'interpolation') {
      const expression = child.namedChildren.find((c) => c.type !== 'format_specifier' && c.type !== 'type_conversion');
      const value = expression ? evaluate(interp, expression, scope) : null;
      if (typeof value !== 'number' && typeof value !== 'string') return unresolved(node.text, 'formatted string with unknown values');
      text += String(value);
    }
  }
  return text;
}

function evaluateItems(interp: Evaluator, node: SyntaxNode, scope: Scope): PyList {
  const items: PyList = [];
  for (const child of node.namedChildren) {
    if (child.type === 'comment') continue;
    if (child.type === 'list_splat') {
      const spread = interp.iterate(evaluate(interp, child.namedChildren[0]!, scope));
      if (spread) append(items, spread);
      else items.push(unresolved(child.text, 'unpacked value is unknown'));
    } else items.push(evaluate(interp, child, scope));
  }
  return items;
}

function evaluateDict(interp: Evaluator, node: SyntaxNode, scope: Scope): DictValue {
  const entries = new Map<string, PyValue>();
  for (const pair of node.namedChildren) {
    if (pair.type === 'dictionary_splat') {
      // `{**defaults, **overrides}`: later entries win, as in Python.
      const spread = evaluate(interp, pair.namedChildren[0]!, scope);
      if (kindOf(spread) === 'dict') {
        for (const [k, v] of (spread as DictValue).entries) {
          entries.set(k, v);
          readConfigKey(interp, spread, k, pair);
        }
      } else interp.note(pair, `\`${pair.text}\` is not a dict the analysis knows; its entries are missing from the dict`);
      continue;
    }
    if (pair.type !== 'pair') continue;
    const key = evaluate(interp, pair.childForFieldName('key')!, scope);
    if (typeof key === 'string' || typeof key === 'number') entries.set(String(key), evaluate(interp, pair.childForFieldName('value')!, scope));
  }
  return { kind: 'dict', entries };
}

function comprehension(interp: Evaluator, node: SyntaxNode, scope: Scope): PyValue {
  const body = node.childForFieldName('body');
  const clauses = node.namedChildren.filter((c) => c.type === 'for_in_clause' || c.type === 'if_clause');
  if (!body) return unresolved(node.text, 'comprehension');
  const results: PyList = [];
  const run = (index: number, inner: Scope): boolean => {
    const clause = clauses[index];
    if (!clause) {
      // A dict comprehension's body is a `key: value` pair.
      results.push(body.type === 'pair' ? tuple([evaluate(interp, body.childForFieldName('key')!, inner), evaluate(interp, body.childForFieldName('value')!, inner)]) : evaluate(interp, body, inner));
      return true;
    }
    if (clause.type === 'if_clause') {
      const test = truthy(evaluate(interp, clause.namedChildren[0]!, inner));
      return test === false ? true : run(index + 1, inner);
    }
    const items = interp.iterate(evaluate(interp, clause.childForFieldName('right')!, inner));
    if (!items) return false;
    for (const item of items) {
      interp.bind(clause.childForFieldName('left')!, item, inner);
      if (!run(index + 1, inner)) return false;
    }
    return true;
  };
  return run(0, scope.child()) ? results : unresolved(node.text, 'comprehension over an unknown sequence');
}

export function lookup(interp: Evaluator, name: string, scope: Scope, node: SyntaxNode): PyValue {
  const value = scope.get(name);
  if (value !== undefined) return value;
  const qualified = interp.imports.resolve(name);
  const { place } = interp;
  if (qualified) return (place && place.project.resolve(qualified, place.file)) ?? commandLineValue(interp, { kind: 'external', name: qualified });
  const fromProject = place && interp.imports.wildcardModules.length ? place.project.fromWildcards(interp.imports.wildcardModules, name, place.file) : undefined;
  if (fromProject !== undefined) return fromProject;
  if (BUILTINS.has(name)) return { kind: 'external', name: `builtins.${name}` };
  return unresolved(node.text, `\`${name}\` has no value known to the analysis`);
}

export function attribute(object: PyValue, name: string, node: SyntaxNode): PyValue {
  const kind = kindOf(object);
  if (kind === 'external') {
    const external = object as ExternalValue;
    if (external.self !== undefined) return unresolved(node.text, 'attribute of a library value');
    if (external.name === 'math' && (name === 'pi' || name === 'e' || name === 'inf')) return name === 'pi' ? Math.PI : name === 'e' ? Math.E : Infinity;
    return { kind: 'external', name: `${external.name}.${name}` };
  }
  if (kind === "module") return moduleAttribute((object as ModuleValue).module, name, object);
  // `x.max(dim=2).values`, `torch.sort(x).indices`: torch's (values, indices) named tuples.
  if (isList(object) && object.tuple && object.length === 2 && (name === 'values' || name === 'indices') && object.every((item) => shapeOf(item) !== undefined)) return object[name === 'values' ? 0 : 1]!;
  if (kind === 'instance') {
    const instance = object as InstanceValue;
    if (instance.argparse || isFrameworkObject(instance) || isHfArgumentParser(instance)) return { kind: 'external', name: `${instance.argparse ? 'argparse' : instance.className}.${name}`, self: object };
    // A library's Registry object: its entries dict by name, its methods as library calls (libraryRegistries.ts).
    if (isLibraryRegistryObject(instance) && !instance.attrs.has(name)) return { kind: 'external', name: `${instance.className}.${name}`, self: object };
    if (instance.attrs.has(name)) return instance.attrs.get(name)!;
    // `self.__dict__.update(kwargs)` (yacs/minGPT's CfgNode): a view of the attributes, so writes through it set them.
    if (name === '__dict__') return { kind: 'dict', entries: instance.attrs };
    // A yacs CfgNode's methods (clone, merge_from_file...): yacsConfig.ts answers them.
    if (isYacsNode(instance)) return { kind: 'external', name: `yacs.CfgNode.${name}`, self: object };
    const fromClass = instance.classValue && classAttribute(instance.classValue, name);
    if (fromClass !== undefined) return bindMethod(fromClass, object);
    // `registry.get(name)`, `registry.keys()` on a `dict` subclass: the methods of its entries.
    const mapping = mappingOf(instance);
    if (mapping) return { kind: 'external', name: `method.${name}`, self: mapping };
    return unresolved(node.text, `\`${name}\` is not set on ${instance.className}`);
  }
  // `fn.__name__`, `cls.__name__`: the key registries store builders and classes under.
  if ((kind === 'function' || kind === 'class') && (name === '__name__' || name === '__qualname__')) return (object as { name: string }).name;
  if (kind === 'class') {
    const found = classAttribute(object as ClassValue, name);
    return found ?? unresolved(node.text, `class ${(object as ClassValue).name} has no \`${name}\``);
  }
  if (kind === 'tensor' || kind === 'parameter') return tensorAttribute(object, name, node);
  if (kind === 'partial') return partialAttribute(object as PartialValue, name, node);
  if (kind === 'dict' || isList(object) || typeof object === 'string') return { kind: 'external', name: `method.${name}`, self: object };
  if (isUnresolvedValue(object)) return object;
  return unresolved(node.text, `cannot read \`${name}\` here`);
}

function subscript(interp: Evaluator, node: SyntaxNode, scope: Scope): PyValue {
  const container = evaluate(interp, node.childForFieldName('value')!, scope);
  const indexNodes = node.childrenForFieldName('subscript');
  const indices = indexNodes.map((n) => evaluate(interp, n, scope));
  const key = indices.length === 1 ? indices[0]! : tuple(indices);
  if (isTensorLike(container)) return callTensorMethod(interp, container, '__getitem__', isList(key) && key.tuple ? [...key] : [key], new Map(), node);
  if (isList(container)) {
    if (typeof key === 'number') {
      const item = container[key < 0 ? container.length + key : key];
      return item === undefined ? unresolved(node.text, 'index out of range') : item;
    }
    if (kindOf(key) === 'slice') return sliceList(container, key as { start: PyValue; stop: PyValue; step: PyValue });
  }
  // `name[-11:]`, `name[0]`: characters of a string (a parameter's name in a freezing loop).
  if (typeof container === 'string') {
    if (typeof key === 'number') return container[key < 0 ? container.length + key : key] ?? unresolved(node.text, 'index out of range');
    const bounds = kindOf(key) === 'slice' ? (key as { start: PyValue; stop: PyValue; step: PyValue }) : undefined;
    if (bounds && [bounds.start, bounds.stop, bounds.step].every((bound) => bound === null || typeof bound === 'number')) return sliceList([...container], bounds).join('');
    if (bounds) return unresolved(node.text, 'a slice with bounds the analysis cannot read');
  }
  const mapping = mappingOf(container);
  if (isRegistry(mapping)) registryLookup(interp, mapping, key, { registry: node.childForFieldName('value')!.text, key: indexNodes.map((n) => n.text).join(', ') });
  if (mapping && (typeof key === 'string' || typeof key === 'number')) {
    readConfigKey(interp, mapping, String(key), node);
    return mapping.entries.get(String(key)) ?? unresolved(node.text, `no key ${String(key)}`);
  }
  // `cfg["MODEL"]`: a yacs node is a dict of its keys.
  if (isYacsNode(container) && typeof key === 'string') return (container as InstanceValue).attrs.get(key) ?? unresolved(node.text, `no key ${key}`);
  const environ = environSubscript(interp, container, key, node);
  if (environ !== undefined) return environ;
  // `models.__dict__[args.arch]`: a library's namespace looked up by name.
  if (kindOf(container) === 'external' && (container as ExternalValue).name.endsWith('.__dict__') && (container as ExternalValue).self === undefined && typeof key === 'string') {
    return { kind: 'external', name: `${(container as ExternalValue).name.slice(0, -'.__dict__'.length)}.${key}` };
  }
  const module = asModule(container);
  if (module?.kind === 'catalog' && kindOf(key) === 'slice') return catalogSlice(module, key as SliceValue, node);
  if (module?.kind === 'catalog' && typeof key === 'number' && key < 0) {
    // `model.classifier[-1]`: counted from the end of the container's children.
    const name = catalogChildNames(module).at(key);
    return (name !== undefined && catalogPart(module, name)) || unresolved(node.text, `no module ${key} in ${module.catalog!.architecture.name}`);
  }
  if (module?.kind === 'catalog' && (typeof key === 'string' || (typeof key === 'number' && key >= 0))) {
    return catalogPart(module, String(key)) ?? unresolved(node.text, `no module ${String(key)} in ${module.catalog!.architecture.name}`);
  }
  if (module && module.kind !== 'layer') {
    const children = [...module.children.entries()];
    if (typeof key === 'number') {
      const entry = children[key < 0 ? children.length + key : key];
      return entry ? { kind: 'module', module: entry[1] } : unresolved(node.text, 'index out of range');
    }
    if (typeof key === 'string') {
      const child = module.children.get(key);
      return child ? { kind: 'module', module: child } : unresolved(node.text, `no module named ${key}`);
    }
    if (kindOf(key) === 'slice') {
      const slice = new ModuleObject('sequential', 'Sequential', rangeOf(node));
      for (const [name, child] of sliceList(children as unknown as PyValue[], key as never) as unknown as [string, ModuleObject][]) slice.setChild(name, child);
      return { kind: 'module', module: slice };
    }
  }
  // `real.shape[0]` keeps its own text: the first dimension of a batch that was not followed (forwardOps.ts, BATCH_QUERY).
  if (isUnresolvedValue(container)) return key === 0 ? unresolved(node.text, container.reason) : container;
  return unresolved(node.text, 'cannot index this value');
}

function compare(interp: Evaluator, node: SyntaxNode, scope: Scope): PyValue {
  const operands = node.namedChildren.filter((c) => c.type !== 'comment');
  const operators = node.children.filter((c) => !c.isNamed).map((c) => c.text);
  // `is not` and `not in` come as two tokens.
  const ops: string[] = [];
  for (let i = 0; i < operators.length; i++) {
    const op = operators[i]!;
    if ((op === 'is' && operators[i + 1] === 'not') || (op === 'not' && operators[i + 1] === 'in')) {
      ops.push(`${op} ${operators[i + 1]}`);
      i++;
    } else ops.push(op);
  }
  let left = evaluate(interp, operands[0]!, scope);
  for (let i = 0; i < ops.length; i++) {
    const right = evaluate(interp, operands[i + 1]!, scope);
    const result = compareValues(ops[i]!, left, right);
    if (result === undefined) return unresolved(node.text, 'unknown comparison');
    if (!result) return false;
    left = right;
  }
  return true;
}

export function binary(interp: Evaluator, operator: string, a: PyValue, b: PyValue, node: SyntaxNode): PyValue {
  if (isTensorLike(a) || isTensorLike(b)) return tensorBinary(interp, operator, a, b, node);
  if (typeof a === 'number' && typeof b === 'number') {
    const result = arithmetic(operator, a, b);
    return result === undefined ? unresolved(node.text, `cannot compute \`${operator}\``) : exactNumber(interp, result, node, Number.isFinite(a) && Number.isFinite(b));
  }
  if (kindOf(a) === 'batch' || kindOf(b) === 'batch') return batchArithmetic(operator, a, b, node);
  if ((operator === '+' && isList(a) && isList(b) && a.length + b.length > MAX_LIST) || (operator === '*' && isList(a) && typeof b === 'number' && (b > MAX_LIST || a.length * b > MAX_LIST))) {
    return unresolved(node.text, `a list of more than ${MAX_LIST} items`);
  }
  if (operator === '+' && isList(a) && isList(b)) return Object.assign([...a, ...b], { tuple: a.tuple });
  if (operator === '*' && isList(a) && typeof b === 'number') return Object.assign(Array.from({ length: Math.max(0, Math.trunc(b)) }, () => a).flat(), { tuple: a.tuple });
  if (operator === '+' && typeof a === 'string' && typeof b === 'string') return a + b;
  if (operator === '%' && typeof a === 'string') return percentFormat(a, isList(b) ? b : [b]) ?? unresolved(node.text, 'formatted string');
  if (isUnresolvedValue(a)) return a;
  if (isUnresolvedValue(b)) return b;
  return unresolved(node.text, `cannot compute \`${operator}\` here`);
}

/**
 * A whole number past 2**53 - 1 has no exact JavaScript number (2**64 would print as
 * 18446744073709552000), and no layer or batch is that large: it becomes unknown, with a note.
 * So does arithmetic on finite numbers that overflows to infinity (`2 ** 2000`).
 */
function exactNumber(interp: Evaluator, value: PyValue, node: SyntaxNode, fromFinite = false): PyValue {
  if (typeof value !== 'number') return value;
  const tooLarge = Number.isInteger(value) ? !Number.isSafeInteger(value) : fromFinite && (value === Infinity || value === -Infinity);
  if (!tooLarge) return value;
  const unknown = unresolved(node.text, `larger than ${Number.MAX_SAFE_INTEGER}`);
  interp.note(node, `\`${unknown.unresolved}\` is larger than ${Number.MAX_SAFE_INTEGER} (2**53 - 1), beyond what can be estimated exactly; it is taken as unknown`);
  return unknown;
}
