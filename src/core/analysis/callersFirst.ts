/**
 * The order discovery follows a script's top-level functions in. A function is discovered with the
 * arguments of the first call to it that discovery sees (`main_worker(gpu, ngpus, args)` inside
 * `main()`, or `mp.spawn(main_worker, args=(ngpus, args))`); such a call is only seen while its
 * caller runs. So callers go first: a function that another function's body names runs after it,
 * whatever their order in the file. Source order otherwise, and where functions name each other.
 */
import type { SyntaxNode } from '../parsing/syntax';

export function callersFirst<T extends { readonly node: SyntaxNode; readonly name: string }>(functions: readonly T[]): T[] {
  const names = new Set(functions.map((f) => f.name));
  // The other top-level functions each body names.
  const named = functions.map((f) => {
    const body = f.node.childForFieldName('body');
    const found = new Set<string>();
    for (const identifier of body?.descendantsOfType('identifier') ?? []) if (names.has(identifier.text) && identifier.text !== f.name) found.add(identifier.text);
    return found;
  });
  const left = functions.map((_, i) => i);
  const ordered: T[] = [];
  while (left.length) {
    // The first function no remaining one names; on a cycle, the first remaining.
    const position = left.findIndex((i) => !left.some((j) => j !== i && named[j]!.has(functions[i]!.name)));
    const [next] = left.splice(Math.max(0, position), 1);
    ordered.push(functions[next!]!);
  }
  return ordered;
}
