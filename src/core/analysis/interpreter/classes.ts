// Python classes: attribute lookup through the bases, bound methods, dataclass fields.
import type { SyntaxNode } from '../../parsing/syntax';
import { kindOf, type ClassValue, type FunctionValue, type PyValue } from './pyValues';

/** An attribute of a class, looked up through its bases (method resolution order, simplified). */
export function classAttribute(classValue: ClassValue, name: string): PyValue | undefined {
  if (classValue.attrs.has(name)) return classValue.attrs.get(name);
  for (const base of classValue.bases) {
    const found = classAttribute(base, name);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function bindMethod(value: PyValue, self: PyValue): PyValue {
  if (kindOf(value) !== 'function') return value;
  const fn = value as FunctionValue;
  const decorated = fn.node.parent?.type === 'decorated_definition' ? fn.node.parent.text : '';
  if (/@staticmethod/.test(decorated)) return fn;
  return { ...fn, self };
}

export function collectFields(classValue: ClassValue): string[] {
  const inherited = classValue.bases.flatMap(collectFields);
  return [...inherited, ...classValue.fields.filter((f) => !inherited.includes(f))];
}

export function findClassByNode(start: ClassValue, node: SyntaxNode): ClassValue | undefined {
  if (start.node.id === node.id) return start;
  for (const base of start.bases) {
    const found = findClassByNode(base, node);
    if (found) return found;
  }
  return undefined;
}
