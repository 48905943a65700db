// functools.partial: norm-layer factories (`get_norm_layer()` in pix2pix/CycleGAN-style code) hand
// `partial(nn.BatchNorm2d, affine=True)` to the network, which calls it per layer and tests
// `norm_layer.func == nn.InstanceNorm2d` to choose the convolutions' bias.
import type { SyntaxNode } from '../../parsing/syntax';
import { isUnresolvedValue, kindOf, tuple, unresolved, type ExternalValue, type PartialValue, type PyValue } from './pyValues';

export const PARTIAL = 'functools.partial';

export function isPartial(value: PyValue | undefined): value is PartialValue {
  return kindOf(value) === 'partial';
}

/** `functools.partial(func, *args, **keywords)`. */
export function makePartial(args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode): PyValue {
  const func = args[0];
  if (func === undefined || isUnresolvedValue(func)) return unresolved(node.text, 'partial of an unknown function');
  // partial(partial(f, a), b) is partial(f, a, b), as Python flattens it.
  if (isPartial(func)) return { kind: 'partial', func: func.func, args: [...func.args, ...args.slice(1)], keywords: new Map([...func.keywords, ...kwargs]) };
  return { kind: 'partial', func, args: args.slice(1), keywords: new Map(kwargs) };
}

/** The arguments a call of the partial passes on: the bound ones first, the call's keywords win. */
export function partialArguments(partial: PartialValue, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>): { args: PyValue[]; kwargs: Map<string, PyValue> } {
  return { args: [...partial.args, ...args], kwargs: new Map([...partial.keywords, ...kwargs]) };
}

/** `.func`, `.args` and `.keywords` of a partial. */
export function partialAttribute(partial: PartialValue, name: string, node: SyntaxNode): PyValue {
  if (name === 'func') return partial.func;
  if (name === 'args') return tuple([...partial.args]);
  if (name === 'keywords') return { kind: 'dict', entries: new Map(partial.keywords) };
  return unresolved(node.text, `partial has no \`${name}\` the analysis knows`);
}

/** `isinstance(value, functools.partial)` and `type(value) == functools.partial`: known where the value is. */
export function isPartialClass(value: PyValue | undefined): boolean {
  return kindOf(value) === 'external' && (value as ExternalValue).self === undefined && (value as ExternalValue).name === PARTIAL;
}
