// `functools.partial(Net, depth=18)`: a builder with some arguments fixed, as registries and
// layer factories (`norm_layer=partial(nn.LayerNorm, eps=1e-6)`) hold them.
import type { SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { kindOf, tuple, type DictValue, type InstanceValue, type PyValue } from './pyValues';

const PARTIAL = 'functools.partial';

/** `functools.partial(fn, *args, **kwargs)`: an object remembering them (`.func`, `.args`, `.keywords`, as in Python). */
export function makePartial(qualified: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>): InstanceValue | undefined {
  if (qualified !== PARTIAL || args.length === 0) return undefined;
  const keywords: DictValue = { kind: 'dict', entries: new Map(kwargs) };
  return { kind: 'instance', className: PARTIAL, attrs: new Map<string, PyValue>([['func', args[0]!], ['args', tuple(args.slice(1))], ['keywords', keywords]]) };
}

export function isPartial(value: PyValue | undefined): value is InstanceValue {
  return kindOf(value) === 'instance' && (value as InstanceValue).className === PARTIAL;
}

/** Calling a partial: its function with its arguments first and its keywords under the call's. */
export function callPartial(interp: Evaluator, partial: InstanceValue, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode): PyValue {
  const fixed = partial.attrs.get('args');
  const keywords = partial.attrs.get('keywords');
  const merged = new Map<string, PyValue>(kindOf(keywords) === 'dict' ? (keywords as DictValue).entries : []);
  for (const [key, value] of kwargs) merged.set(key, value);
  return interp.callValue(partial.attrs.get('func') ?? null, [...(Array.isArray(fixed) ? fixed : []), ...args], merged, node);
}
