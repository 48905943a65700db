import type { SyntaxNode } from '../../parsing/syntax';
import type { BatchDim, TensorShape } from '../../layers/tensorShape';
import type { Unresolved, Value } from '../layerCall';
import type { ModuleObject } from './moduleObject';
import type { Scope } from './scope';

/**
 * Values while the analyzer "runs" a script symbolically. Plain data (numbers, strings, lists)
 * is as in Python; tensors carry only their shape; modules are objects whose layers and
 * parameters are known; anything the source does not pin down is `Unresolved`, with the reason.
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
  | SliceValue;

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
  /** For subclasses of nn.Sequential, nn.ModuleList or nn.ModuleDict: which one. */
  readonly container?: 'sequential' | 'list' | 'dict';
  /** Names declared in the class body with annotations, in order (dataclass fields). */
  readonly fields: readonly string[];
}

/** Something from a library, known by its qualified name: `torch.nn.functional.relu`, `torch.cat`. */
export interface ExternalValue {
  readonly kind: 'external';
  readonly name: string;
  /** The receiver when this is a method looked up on a value (`x.view`). */
  readonly self?: PyValue;
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
