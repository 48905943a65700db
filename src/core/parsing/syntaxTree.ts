import type { Point, Tree, TreeCursor } from 'web-tree-sitter';

/**
 * A plain JavaScript copy of a tree-sitter syntax tree. web-tree-sitter builds a new object
 * through WebAssembly on every property access; the analyzer visits nodes many times (a loop
 * body once per iteration), so it copies the tree once with a cursor and reads plain objects.
 * The API is the subset of web-tree-sitter's Node that the analyzer uses.
 */
/** Row and column of an offset, from the offsets where lines start (binary search). */
class LineIndex {
  private readonly starts: number[] = [0];

  constructor(source: string) {
    for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }

  point(offset: number): Point {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return { row: low, column: offset - this.starts[low]! };
  }
}

/** Node ids are unique across trees, so nodes reused from an earlier tree keep theirs. */
let nextNodeId = 0;

/**
 * The text a subtree's offsets refer to, shared by every node of one top-level statement:
 * moving a reused statement to its place in a new version of the text updates this one object
 * instead of every node below it.
 */
interface Anchor {
  source: string;
  lines: LineIndex;
  /** Added to every stored offset of the subtree. */
  delta: number;
}

export class SyntaxNode {
  readonly children: SyntaxNode[] = [];
  /** The field name of each child (`function`, `arguments`...), parallel to `children`. */
  readonly fieldNames: (string | null)[] = [];
  parent: SyntaxNode | null = null;
  readonly id = nextNodeId++;
  private named: SyntaxNode[] | undefined;

  constructor(
    private readonly anchor: Anchor,
    readonly type: string,
    readonly isNamed: boolean,
    private readonly start: number,
    private readonly end: number,
    /** True on the root when the file has syntax errors. */
    readonly hasError = false,
  ) {}

  get startIndex(): number {
    return this.start + this.anchor.delta;
  }

  get endIndex(): number {
    return this.end + this.anchor.delta;
  }

  /** Moves this top-level statement into a new version of the text where it stands `delta` characters later. */
  rebase(source: string, lines: LineIndex, delta: number): void {
    this.anchor.source = source;
    this.anchor.lines = lines;
    this.anchor.delta += delta;
  }

  get text(): string {
    return this.anchor.source.slice(this.startIndex, this.endIndex);
  }

  /** Computed on demand: few nodes are ever asked for their position. */
  get startPosition(): Point {
    return this.anchor.lines.point(this.startIndex);
  }

  get endPosition(): Point {
    return this.anchor.lines.point(this.endIndex);
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

  private descendants: Map<string, SyntaxNode[]> | undefined;

  /** Every descendant of the given types, in source order (remembered: the structure never changes). */
  descendantsOfType(types: string | readonly string[]): SyntaxNode[] {
    const wanted = typeof types === 'string' ? [types] : types;
    const key = wanted.join(',');
    this.descendants ??= new Map();
    const known = this.descendants.get(key);
    if (known) return known;
    const found: SyntaxNode[] = [];
    this.descendants.set(key, found);
    if (this.parent === null) {
      // The root gathers from its statements, whose lists are remembered: after an edit only
      // the statements it touched are walked again.
      for (const statement of this.children) {
        if (wanted.includes(statement.type)) found.push(statement);
        for (const node of statement.descendantsOfType(wanted)) found.push(node);
      }
      return found;
    }
    const stack: SyntaxNode[] = [...this.children].reverse();
    while (stack.length) {
      const node = stack.pop()!;
      if (wanted.includes(node.type)) found.push(node);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    }
    return found;
  }
}

/**
 * Copies a parsed tree into plain objects, iteratively (deeply nested input must not overflow the
 * stack). Reads only numbers through the cursor (type and field ids, offsets): each read crosses
 * into WebAssembly, and strings and points cost more to bring back. With the copy of the previous
 * version of the text, top-level statements whose text did not change are moved over instead of
 * copied again, which is most of them after an edit.
 */
export function copySyntaxTree(tree: Tree, source: string, previous?: SyntaxNode): SyntaxNode {
  const language = tree.language;
  const types = language.types;
  const fields = language.fields;
  const lines = new LineIndex(source);
  // Candidates by type and length; the text itself is compared only against these (no hashing of the whole file).
  const reusable = new Map<string, SyntaxNode[]>();
  for (const statement of previous?.children ?? []) {
    const key = `${statement.type}:${statement.endIndex - statement.startIndex}`;
    const same = reusable.get(key);
    if (same) same.push(statement);
    else reusable.set(key, [statement]);
  }
  const take = (type: string, start: number, end: number): SyntaxNode | undefined => {
    const same = reusable.get(`${type}:${end - start}`);
    if (!same) return undefined;
    for (let i = 0; i < same.length; i++) {
      const candidate = same[i]!;
      if (source.startsWith(candidate.text, start)) return same.splice(i, 1)[0];
    }
    return undefined;
  };
  const cursor = tree.walk();
  try {
    let anchor: Anchor = { source, lines, delta: 0 };
    const make = (hasError = false) => new SyntaxNode(anchor, types[cursor.nodeTypeId] ?? cursor.nodeType, cursor.nodeIsNamed, cursor.startIndex, cursor.endIndex, hasError);
    const root = make(tree.rootNode.hasError);
    if (!cursor.gotoFirstChild()) return root;
    do {
      const field = cursor.currentFieldId;
      const start = cursor.startIndex;
      const type = types[cursor.nodeTypeId] ?? cursor.nodeType;
      const old = take(type, start, cursor.endIndex);
      let statement: SyntaxNode;
      if (old) {
        old.rebase(source, lines, start - old.startIndex);
        statement = old;
      } else {
        anchor = { source, lines, delta: 0 };
        statement = copySubtree(cursor, make, fields);
      }
      statement.parent = root;
      root.children.push(statement);
      root.fieldNames.push(field ? (fields[field] ?? null) : null);
    } while (cursor.gotoNextSibling());
    return root;
  } finally {
    cursor.delete();
  }
}

/** The subtree at the cursor; leaves the cursor where it started. */
function copySubtree(cursor: TreeCursor, make: () => SyntaxNode, fields: readonly (string | null)[]): SyntaxNode {
  const top = make();
  let current = top;
  if (!cursor.gotoFirstChild()) return top;
  for (;;) {
    const node = make();
    node.parent = current;
    current.children.push(node);
    const field = cursor.currentFieldId;
    current.fieldNames.push(field ? (fields[field] ?? null) : null);
    if (cursor.gotoFirstChild()) {
      current = node;
      continue;
    }
    while (!cursor.gotoNextSibling()) {
      cursor.gotoParent();
      if (current === top) return top;
      current = current.parent!;
    }
  }
}
