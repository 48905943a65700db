// Python's arithmetic and comparison operators on known numbers, strings and batch-dependent sizes.
import type { SyntaxNode } from '../../parsing/syntax';
import { asModule, isList, isUnresolvedValue, kindOf, mappingOf, unresolved, type ExternalValue, type FunctionValue, type PyValue } from './pyValues';

export function arithmetic(operator: string, a: number, b: number): number | undefined {
  switch (operator) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0 ? undefined : a / b;
    case '//':
      return b === 0 ? undefined : Math.floor(a / b);
    case '%':
      return b === 0 ? undefined : a - b * Math.floor(a / b);
    case '**':
      return a ** b;
    // Python's integers have no width: JavaScript's 32-bit `<<` would make 1 << 32 equal 1.
    case '<<':
      return Number.isInteger(a) && Number.isInteger(b) && b >= 0 ? a * 2 ** b : undefined;
    case '>>':
      return Number.isInteger(a) && Number.isInteger(b) && b >= 0 ? Math.floor(a / 2 ** b) : undefined;
    case '&':
      return Number.isSafeInteger(a) && Number.isSafeInteger(b) ? Number(BigInt(a) & BigInt(b)) : undefined;
    case '|':
      return Number.isSafeInteger(a) && Number.isSafeInteger(b) ? Number(BigInt(a) | BigInt(b)) : undefined;
    default:
      return undefined;
  }
}

export function batchArithmetic(operator: string, a: PyValue, b: PyValue, node: SyntaxNode): PyValue {
  const factor = (v: PyValue) => (kindOf(v) === 'batch' ? (v as { dim: { batch: number } }).dim.batch : undefined);
  const fa = factor(a);
  const fb = factor(b);
  if (operator === '*' && fa !== undefined && typeof b === 'number') return { kind: 'batch', dim: { batch: fa * b } };
  if (operator === '*' && fb !== undefined && typeof a === 'number') return { kind: 'batch', dim: { batch: fb * a } };
  if ((operator === '//' || operator === '/') && fa !== undefined && typeof b === 'number' && Number.isInteger(fa / b)) return { kind: 'batch', dim: { batch: fa / b } };
  return unresolved(node.text, 'depends on the batch size');
}

export function compareValues(op: string, a: PyValue, b: PyValue): boolean | undefined {
  const identity = compareCallables(op, a, b);
  if (identity !== undefined) return identity;
  if (op === 'is' || op === 'is not') {
    const known = (v: PyValue) => v === null || typeof v === 'boolean' || (kindOf(v) !== undefined && kindOf(v) !== 'external') || isList(v);
    if (isUnresolvedValue(a) || isUnresolvedValue(b)) return undefined;
    if (!known(a) || !known(b)) return undefined;
    const same = a === b || (asModule(a) !== undefined && asModule(a) === asModule(b));
    return op === 'is' ? same : !same;
  }
  if (op === 'in' || op === 'not in') {
    if (isList(b) && (typeof a === 'number' || typeof a === 'string')) return b.includes(a) === (op === 'in');
    if (typeof b === 'string' && typeof a === 'string') return b.includes(a) === (op === 'in');
    // `if name not in _model_entrypoints:`: a dict's keys.
    const mapping = mappingOf(b);
    if (mapping && (typeof a === 'string' || typeof a === 'number')) return mapping.entries.has(String(a)) === (op === 'in');
    return undefined;
  }
  const plain = (v: PyValue) => typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' || v === null;
  if (!plain(a) || !plain(b)) return undefined;
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return (a as number) < (b as number);
    case '>':
      return (a as number) > (b as number);
    case '<=':
      return (a as number) <= (b as number);
    case '>=':
      return (a as number) >= (b as number);
    default:
      return undefined;
  }
}

/**
 * `norm_layer.func == nn.InstanceNorm2d`, `type(norm_layer) == functools.partial`, `cls == Net`:
 * library classes are the same object when their qualified names are (for `is` too), a partial is
 * equal only to itself, and the code's classes and functions compare by identity (`==` only: a
 * method looked up twice is equal, not the same object).
 */
function compareCallables(op: string, a: PyValue, b: PyValue): boolean | undefined {
  if (op !== '==' && op !== '!=' && op !== 'is' && op !== 'is not') return undefined;
  const libraryName = (v: PyValue) => (kindOf(v) === 'external' && (v as ExternalValue).self === undefined ? (v as ExternalValue).name : undefined);
  let same: boolean | undefined;
  const [nameA, nameB] = [libraryName(a), libraryName(b)];
  if (nameA !== undefined && nameB !== undefined) same = nameA === nameB;
  else if ((kindOf(a) === 'partial' || kindOf(b) === 'partial') && !isUnresolvedValue(a) && !isUnresolvedValue(b)) same = a === b;
  else if ((op === '==' || op === '!=') && namedObject(a) && namedObject(b)) same = sameObject(a, b);
  if (same === undefined) return undefined;
  return op === '==' || op === 'is' ? same : !same;
}

/** A library name (`nn.InstanceNorm2d`, not a method of a value) or a class or function of the code. */
function namedObject(value: PyValue): boolean {
  const kind = kindOf(value);
  return (kind === 'external' && (value as ExternalValue).self === undefined) || kind === 'class' || kind === 'function';
}

/** Two named objects that are not both library names (those compare by name above). */
function sameObject(a: PyValue, b: PyValue): boolean {
  if (kindOf(a) !== kindOf(b)) return false;
  // A method looked up twice is two copies of one function: the same definition and receiver.
  if (kindOf(a) === 'function') return (a as FunctionValue).node.id === (b as FunctionValue).node.id && (a as FunctionValue).self === (b as FunctionValue).self;
  return a === b;
}
