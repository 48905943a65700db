// Methods of Python lists, strings and dicts, and list helpers bounded against hostile input.
import type { SyntaxNode } from '../../parsing/syntax';
import { isList, kindOf, tuple, unresolved, type DictValue, type PyList, type PyValue } from './pyValues';

/** Lists longer than this are not built: no model definition needs them, and hostile input could. */
export const MAX_LIST = 100_000;

/** Appends without spreading, so a long list cannot overflow the call stack. */
export function append(target: PyValue[], items: readonly PyValue[]): void {
  for (const item of items) target.push(item);
}

export function sliceList(items: PyValue[], slice: { start: PyValue; stop: PyValue; step: PyValue }): PyList {
  const n = items.length;
  const norm = (v: PyValue, fallback: number) => (typeof v === 'number' ? (v < 0 ? Math.max(0, n + v) : Math.min(v, n)) : fallback);
  const step = typeof slice.step === 'number' && slice.step !== 0 ? slice.step : 1;
  if (step < 0) return [...items].reverse();
  const result: PyList = [];
  for (let i = norm(slice.start, 0); i < norm(slice.stop, n); i += step) result.push(items[i]!);
  return result;
}

export function listMethod(list: PyList, method: string, args: PyValue[], node: SyntaxNode): PyValue {
  switch (method) {
    case 'append':
      list.push(args[0] ?? null);
      return null;
    case 'extend':
      if (isList(args[0]) && list.length + args[0].length <= MAX_LIST) append(list, args[0]);
      return null;
    case 'insert':
      if (typeof args[0] === 'number') list.splice(args[0], 0, args[1] ?? null);
      return null;
    case 'pop':
      return list.pop() ?? unresolved(node.text, 'pop from an empty list');
    case 'copy':
      return [...list];
    case 'index':
      return list.indexOf(args[0] ?? null);
    default:
      return unresolved(node.text, `list.${method}()`);
  }
}

export function unescape(sequence: string): string {
  const simple: Record<string, string> = { '\\n': '\n', '\\t': '\t', '\\\\': '\\', "\\'": "'", '\\"': '"' };
  return simple[sequence] ?? '';
}

function formatValue(value: PyValue | undefined): string | undefined {
  return typeof value === 'number' || typeof value === 'string' ? String(value) : undefined;
}

/** `"conv%d" % i`, `"%s_%d" % (name, i)`. */
export function percentFormat(template: string, values: readonly PyValue[]): string | undefined {
  let index = 0;
  let failed = false;
  const text = template.replace(/%[-+ 0#]*\d*(?:\.\d+)?[sdif%r]/g, (spec) => {
    if (spec === '%%') return '%';
    const value = formatValue(values[index++]);
    if (value === undefined) failed = true;
    return spec.endsWith('d') || spec.endsWith('i') ? String(Math.trunc(Number(value))) : (value ?? '');
  });
  return failed ? undefined : text;
}

export function stringMethod(self: string, method: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  switch (method) {
    case 'format': {
      let next = 0;
      let failed = false;
      const text = self.replace(/\{([^{}:!]*)(?:[:!][^{}]*)?\}/g, (_, key: string) => {
        const value = formatValue(key === '' ? args[next++] : /^\d+$/.test(key) ? args[Number(key)] : kwargs.get(key));
        if (value === undefined) failed = true;
        return value ?? '';
      });
      return failed ? unresolved(node.text, 'format with unknown values') : text;
    }
    case 'lower':
      return self.toLowerCase();
    case 'upper':
      return self.toUpperCase();
    case 'strip':
      return self.trim();
    case 'replace':
      return typeof args[0] === 'string' && typeof args[1] === 'string' ? self.split(args[0]).join(args[1]) : unresolved(node.text, 'replace');
    case 'startswith':
    case 'endswith': {
      // A tuple of prefixes matches when any does (`name.startswith(("layer4", "fc"))`).
      const affixes = typeof args[0] === 'string' ? [args[0]] : isList(args[0]) && args[0].every((a) => typeof a === 'string') ? args[0] : undefined;
      if (!affixes) return unresolved(node.text, method);
      return affixes.some((affix) => (method === 'startswith' ? self.startsWith(affix) : self.endsWith(affix)));
    }
    case 'split':
      return self.split(typeof args[0] === 'string' ? args[0] : /\s+/);
    case 'join': {
      const items = isList(args[0]) ? args[0] : undefined;
      return items?.every((i) => typeof i === 'string') ? items.join(self) : unresolved(node.text, 'join');
    }
    default:
      return unresolved(node.text, `str.${method}()`);
  }
}

export function dictMethod(dict: DictValue, method: string, args: PyValue[], node: SyntaxNode): PyValue {
  switch (method) {
    case 'items':
      return [...dict.entries].map(([k, v]) => tuple([k, v]));
    case 'keys':
      return [...dict.entries.keys()];
    case 'values':
      return [...dict.entries.values()];
    case 'get':
      return typeof args[0] === 'string' ? (dict.entries.get(args[0]) ?? args[1] ?? null) : unresolved(node.text, 'dict.get');
    case 'pop':
      if (typeof args[0] === 'string') {
        const value = dict.entries.get(args[0]) ?? args[1] ?? null;
        dict.entries.delete(args[0]);
        return value;
      }
      return unresolved(node.text, 'dict.pop');
    case 'update':
      if (kindOf(args[0]) === 'dict') for (const [k, v] of (args[0] as DictValue).entries) dict.entries.set(k, v);
      return null;
    default:
      return unresolved(node.text, `dict.${method}()`);
  }
}
