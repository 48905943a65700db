/**
 * What a traced graph's nodes evaluate to when only shapes are followed: tensors (full shapes with
 * the batch dimension marked), Python ints (possibly a multiple of the batch size, as `x.shape[0]`
 * is), floats, bools, strings, None, tuples, slices and a few opaque constants.
 */
import { isBatchDim, type BatchDim, type Dim, type TensorShape } from '../../layers/tensorShape';

export interface TensorVal {
  readonly kind: 'tensor';
  readonly shape: TensorShape;
}

/** A Python int that is `batch` times the batch size. */
export interface BatchIntVal {
  readonly kind: 'batch';
  readonly dim: BatchDim;
}

export interface SliceVal {
  readonly kind: 'slice';
  readonly start: Val;
  readonly stop: Val;
  readonly step: Val;
}

/** Ellipsis, a dtype, a device, a memory format: constants whose value does not matter here. */
export interface OpaqueVal {
  readonly kind: 'opaque';
  readonly what: string;
}

export interface DictVal {
  readonly kind: 'dict';
  readonly entries: Readonly<Record<string, Val>>;
}

export type Val = TensorVal | BatchIntVal | SliceVal | OpaqueVal | DictVal | number | string | boolean | null | readonly Val[];

export const ELLIPSIS: OpaqueVal = { kind: 'opaque', what: '...' };

export function tensorVal(shape: TensorShape): TensorVal {
  return { kind: 'tensor', shape };
}

function kindOf(value: Val | undefined): string | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { kind: string }).kind : undefined;
}

export function isTensor(value: Val | undefined): value is TensorVal {
  return kindOf(value) === 'tensor';
}

export function isSlice(value: Val | undefined): value is SliceVal {
  return kindOf(value) === 'slice';
}

export function isEllipsis(value: Val | undefined): boolean {
  return kindOf(value) === 'opaque' && (value as OpaqueVal).what === '...';
}

export function isTuple(value: Val | undefined): value is readonly Val[] {
  return Array.isArray(value);
}

/** An int (or batch-sized int) as a dimension. */
export function asDim(value: Val | undefined): Dim | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (kindOf(value) === 'batch') return (value as BatchIntVal).dim;
  return undefined;
}

export function dimVal(dim: Dim): Val {
  return isBatchDim(dim) ? { kind: 'batch', dim } : dim;
}

/** The tensors in a value (tuples flattened), as the layer table counts a call's outputs. */
export function tensorsIn(value: Val): TensorVal[] {
  if (isTensor(value)) return [value];
  if (isTuple(value)) return value.flatMap(tensorsIn);
  if (kindOf(value) === 'dict') return Object.values((value as DictVal).entries).flatMap(tensorsIn);
  return [];
}

export function describe(value: Val | undefined): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'None';
  if (isTensor(value)) return `a tensor ${formatDims(value.shape)}`;
  if (isTuple(value)) return `(${value.map(describe).join(', ')})`;
  const dim = asDim(value);
  if (dim !== undefined) return formatDims([dim]).slice(1, -1);
  return typeof value === 'object' ? (value as { kind: string }).kind : String(value);
}

export function formatDims(shape: readonly Dim[]): string {
  return `(${shape.map((d) => (isBatchDim(d) ? (d.batch === 1 ? 'B' : `${d.batch}B`) : String(d))).join(', ')})`;
}
