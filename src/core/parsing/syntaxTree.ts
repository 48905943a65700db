import type { Point, Tree } from 'web-tree-sitter';

/**
 * A plain JavaScript copy of a tree-sitter syntax tree. web-tree-sitter builds a new object
 * through WebAssembly on every property access; the analyzer visits nodes many times (a loop
 * body once per iteration), so it copies the tree once with a cursor and reads plain objects.
 * The API is the subset of web-tree-sitter's Node that the analyzer uses.
 */
export class SyntaxNode {
  readonly children: SyntaxNode[] = [];
  /** The field name of each child (`function`, `arguments`...), parallel to `children`. */
  readonly fieldNames: (string | null)[] = [];
  parent: SyntaxNode | null = null;
  private named: SyntaxNode[] | undefined;

  constructor(
    private readonly source: string,
    readonly id: number,
    readonly type: string,
    readonly isNamed: boolean,
    readonly isMissing: boolean,
    readonly startIndex: number,
    readonly endIndex: number,
    readonly startPosition: Point,
    readonly endPosition: Point,
    /** True on the root when the file has syntax errors. */
    readonly hasError = false,
  ) {}

  get text(): string {
    return this.source.slice(this.startIndex, this.endIndex);
  }

  get namedChildren(): SyntaxNode[] {
    this.named ??= this.children.filter((child) => child.isNamed);
    return this.named;
  }

  childForFieldName(name: string): SyntaxNode | null {
    const index = this.fieldNames.indexOf(name);
    return index === -1 ? null : this.children[index]!;
  }

  childrenForFieldName(name: string): SyntaxNode[] {
    return this.children.filter((_, i) => this.fieldNames[i] === name);
  }

  /** Every descendant of the given types, in source order. */
  descendantsOfType(types: string | readonly string[]): SyntaxNode[] {
    const wanted = typeof types === 'string' ? [types] : types;
    const found: SyntaxNode[] = [];
    const stack: SyntaxNode[] = [...this.children].reverse();
    while (stack.length) {
      const node = stack.pop()!;
      if (wanted.includes(node.type)) found.push(node);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    }
    return found;
  }
}

/** Copies a parsed tree into plain objects, iteratively (deeply nested input must not overflow the stack). */
export function copySyntaxTree(tree: Tree, source: string): SyntaxNode {
  const cursor = tree.walk();
  try {
    const make = (hasError = false) =>
      new SyntaxNode(source, cursor.nodeId, cursor.nodeType, cursor.nodeIsNamed, cursor.nodeIsMissing, cursor.startIndex, cursor.endIndex, cursor.startPosition, cursor.endPosition, hasError);
    const root = make(tree.rootNode.hasError);
    let current = root;
    if (!cursor.gotoFirstChild()) return root;
    for (;;) {
      const node = make();
      node.parent = current;
      current.children.push(node);
      current.fieldNames.push(cursor.currentFieldName);
      if (cursor.gotoFirstChild()) {
        current = node;
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent() || current === root) return root;
        current = current.parent!;
      }
    }
  } finally {
    cursor.delete();
  }
}
