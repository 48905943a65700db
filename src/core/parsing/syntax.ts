import type { SyntaxNode } from './syntaxTree';

export type { SyntaxNode };

/** Zero-based, as tree-sitter and VS Code count. */
export interface SourceRange {
  readonly startLine: number;
  readonly startColumn: number;
  readonly endLine: number;
  readonly endColumn: number;
  /** The project file the range is in, when it is not the analysed script (a module it imports). */
  readonly file?: string;
}

/** Roots of imported files' syntax copies, with the file each was parsed from. */
const filesOfRoots = new WeakMap<SyntaxNode, string>();

/** Records that `root` is the syntax of `file`, so ranges of its nodes say which file they are in. */
export function markSyntaxFile(root: SyntaxNode, file: string): void {
  filesOfRoots.set(root, file);
}

/**
 * Zero-based range of a node, the shape editors and the JSON report use. Read when shown, not
 * when found: an analysis kept across edits (analyzeSource's cache) holds nodes of statements
 * that have since moved, and the node knows where it stands now.
 */
class NodeRange implements SourceRange {
  readonly #node: SyntaxNode;

  constructor(node: SyntaxNode) {
    this.#node = node;
  }

  get file(): string | undefined {
    let node = this.#node;
    while (node.parent) node = node.parent;
    return filesOfRoots.get(node);
  }

  get startLine(): number {
    return this.#node.startPosition.row;
  }

  get startColumn(): number {
    return this.#node.startPosition.column;
  }

  get endLine(): number {
    return this.#node.endPosition.row;
  }

  get endColumn(): number {
    return this.#node.endPosition.column;
  }

  toJSON(): SourceRange {
    return { startLine: this.startLine, startColumn: this.startColumn, endLine: this.endLine, endColumn: this.endColumn };
  }
}

export function rangeOf(node: SyntaxNode): SourceRange {
  return new NodeRange(node);
}

/** `a.b.c` for identifiers and attribute chains; undefined for anything else (calls, subscripts). */
export function dottedName(node: SyntaxNode | null): string | undefined {
  if (!node) return undefined;
  if (node.type === 'identifier') return node.text;
  if (node.type === 'attribute') {
    const object = dottedName(node.childForFieldName('object'));
    const attribute = node.childForFieldName('attribute');
    return object && attribute ? `${object}.${attribute.text}` : undefined;
  }
  return undefined;
}

/** The statements directly inside a module or block, skipping comments. */
export function statementsOf(node: SyntaxNode): SyntaxNode[] {
  return node.namedChildren.filter((n): n is SyntaxNode => n !== null && n.type !== 'comment');
}

/** The string value of a plain string literal, without prefixes or interpolation. */
export function stringValue(node: SyntaxNode): string | undefined {
  if (node.type !== 'string') return undefined;
  const parts = node.namedChildren.filter((n) => n?.type === 'string_content');
  if (node.namedChildren.some((n) => n?.type === 'interpolation')) return undefined;
  return parts.map((p) => p?.text ?? '').join('');
}
