import { markSyntaxFile, type SyntaxNode } from '../parsing/syntax';
import { copySyntaxTree } from '../parsing/syntaxTree';
import type { PythonParser } from '../parsing/pythonParser';

/** Imported files larger than this are not parsed (the analysed script itself stops at 2 MB too, sourceLimit.ts). */
const MAX_MODULE_BYTES = 2 * 1024 * 1024;
/** How many parsed files are kept; the least recently used go first. */
const MAX_KEPT = 256;

/**
 * The project's other files, parsed once per content: an estimate after an edit to the script
 * re-reads its imports but parses only the files whose text changed. Keeps the analyzer's plain
 * syntax copy, so no tree-sitter tree stays alive.
 */
export class ParsedModules {
  private readonly kept = new Map<string, { readonly text: string; readonly root: SyntaxNode }>();

  constructor(private readonly parser: PythonParser) {}

  /** The syntax of `path` with text `text`; throws when it is too large or cannot be parsed in time. */
  parse(path: string, text: string): SyntaxNode {
    const known = this.kept.get(path);
    if (known?.text === text) {
      this.kept.delete(path);
      this.kept.set(path, known);
      return known.root;
    }
    if (text.length > MAX_MODULE_BYTES) throw new Error(`the file is larger than ${MAX_MODULE_BYTES / 1024 / 1024} MB`);
    const tree = this.parser.parse(text);
    let root: SyntaxNode;
    try {
      root = copySyntaxTree(tree, text);
    } finally {
      tree.delete();
    }
    markSyntaxFile(root, path);
    this.kept.delete(path);
    this.kept.set(path, { text, root });
    if (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    return root;
  }
}
