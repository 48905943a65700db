import { stringValue, type SyntaxNode } from '../parsing/syntax';
import { isUnresolved, type Unresolved, type Value } from './modelDescription';

/** Names whose values are known, innermost scope first (a function's defaults, then the module). */
export class Scope {
  private readonly values = new Map<string, Value>();

  constructor(private readonly parent?: Scope) {}

  set(name: string, value: Value): void {
    this.values.set(name, value);
  }

  get(name: string): Value | undefined {
    return this.values.get(name) ?? this.parent?.get(name);
  }

  child(): Scope {
    return new Scope(this);
  }
}

function unresolved(node: SyntaxNode, reason: string): Unresolved {
  return { unresolved: node.text.length > 60 ? `${node.text.slice(0, 57)}...` : node.text, reason };
}

type BinaryOp = (a: number, b: number) => number;
const BINARY: Readonly<Record<string, BinaryOp>> = {
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
  '//': (a, b) => Math.floor(a / b),
  '%': (a, b) => a - b * Math.floor(a / b),
  '**': (a, b) => a ** b,
};

/** Built-ins that training scripts wrap constants in. */
const NUMERIC_BUILTINS: Readonly<Record<string, (args: number[]) => number>> = {
  int: ([a = 0]) => Math.trunc(a),
  float: ([a = 0]) => a,
  round: ([a = 0]) => Math.round(a),
  abs: ([a = 0]) => Math.abs(a),
  min: (args) => Math.min(...args),
  max: (args) => Math.max(...args),
};

/**
 * Reduces an expression to a constant where the source pins it down: literals, known names,
 * arithmetic, tuples and lists. Anything else comes back as `Unresolved` with the reason.
 */
export function evaluate(node: SyntaxNode, scope: Scope): Value {
  switch (node.type) {
    case 'integer':
      return Number(node.text.replace(/_/g, '').replace(/[lL]$/, ''));
    case 'float':
      return Number(node.text.replace(/_/g, ''));
    case 'true':
      return true;
    case 'false':
      return false;
    case 'none':
      return null;
    case 'string':
      return stringValue(node) ?? unresolved(node, 'formatted string');
    case 'parenthesized_expression': {
      const inner = node.namedChildren.find((child) => child.type !== 'comment');
      return inner ? evaluate(inner, scope) : unresolved(node, 'empty expression');
    }
    case 'tuple':
    case 'list':
      return node.namedChildren.filter((child) => child.type !== 'comment').map((child) => evaluate(child, scope));
    case 'identifier': {
      const value = scope.get(node.text);
      return value === undefined ? unresolved(node, `\`${node.text}\` has no constant value in this file`) : value;
    }
    case 'unary_operator': {
      const operand = node.childForFieldName('argument');
      const operator = node.childForFieldName('operator')?.text;
      const value = operand ? evaluate(operand, scope) : undefined;
      if (typeof value !== 'number') return unresolved(node, 'not a number');
      return operator === '-' ? -value : value;
    }
    case 'binary_operator':
      return evaluateBinary(node, scope);
    case 'call':
      return evaluateCall(node, scope);
    default:
      return unresolved(node, `${node.type.replace(/_/g, ' ')} is not a constant`);
  }
}

function evaluateBinary(node: SyntaxNode, scope: Scope): Value {
  const left = node.childForFieldName('left');
  const right = node.childForFieldName('right');
  const operator = node.childForFieldName('operator')?.text ?? '';
  if (!left || !right) return unresolved(node, 'incomplete expression');
  const a = evaluate(left, scope);
  const b = evaluate(right, scope);
  if (isUnresolved(a)) return a;
  if (isUnresolved(b)) return b;
  if (operator === '+' && Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
  if (operator === '*' && Array.isArray(a) && typeof b === 'number') {
    return Array.from({ length: b }, () => a).flat();
  }
  const op = BINARY[operator];
  if (typeof a !== 'number' || typeof b !== 'number' || !op) return unresolved(node, `cannot compute \`${operator}\` here`);
  return op(a, b);
}

function evaluateCall(node: SyntaxNode, scope: Scope): Value {
  const name = node.childForFieldName('function')?.text ?? '';
  const builtin = NUMERIC_BUILTINS[name];
  const argumentList = node.childForFieldName('arguments');
  if (!builtin || !argumentList) return unresolved(node, `result of \`${name}(...)\` is not known statically`);
  const values = argumentList.namedChildren.map((child) => evaluate(child, scope));
  const firstUnresolved = values.find(isUnresolved);
  if (firstUnresolved) return firstUnresolved;
  if (!values.every((v): v is number => typeof v === 'number')) return unresolved(node, 'not a number');
  return builtin(values);
}

/** A positive integer, or undefined. */
export function asCount(value: Value | undefined): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}
