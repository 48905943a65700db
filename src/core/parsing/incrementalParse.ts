import { Edit, type Point, type Tree } from 'web-tree-sitter';
import type { PythonParser } from './pythonParser';

/** One replacement in a text: `length` characters at `offset` became `text` (VS Code's content change). */
export interface TextChange {
  readonly offset: number;
  readonly length: number;
  readonly text: string;
}

/** Row and column (UTF-16 units, as web-tree-sitter counts for JavaScript strings) of an offset. */
function pointAt(text: string, offset: number): Point {
  let row = 0;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    row += 1;
    lineStart = i + 1;
  }
  return { row, column: offset - lineStart };
}

function applyChange(text: string, change: TextChange): { text: string; edit: Edit } {
  const next = text.slice(0, change.offset) + change.text + text.slice(change.offset + change.length);
  const edit = new Edit({
    startIndex: change.offset,
    oldEndIndex: change.offset + change.length,
    newEndIndex: change.offset + change.text.length,
    startPosition: pointAt(text, change.offset),
    oldEndPosition: pointAt(text, change.offset + change.length),
    newEndPosition: pointAt(next, change.offset + change.text.length),
  });
  return { text: next, edit };
}

/**
 * Re-parses after edits, reusing the unchanged parts of the previous tree (tree-sitter's
 * incremental parsing). Changes apply in order, each to the text the previous one produced.
 * The previous tree is edited in place and must not be used afterwards; the caller deletes it.
 */
export function reparse(parser: PythonParser, previous: Tree, oldSource: string, changes: readonly TextChange[]): { tree: Tree; source: string } {
  let source = oldSource;
  for (const change of changes) {
    const applied = applyChange(source, change);
    previous.edit(applied.edit);
    source = applied.text;
  }
  return { tree: parser.parse(source, previous), source };
}

/** The one replacement that turns `before` into `after`: their common prefix and suffix stay. */
export function changeBetween(before: string, after: string): TextChange | undefined {
  if (before === after) return undefined;
  const shorter = Math.min(before.length, after.length);
  let prefix = 0;
  while (prefix < shorter && before.charCodeAt(prefix) === after.charCodeAt(prefix)) prefix += 1;
  let suffix = 0;
  while (suffix < shorter - prefix && before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)) suffix += 1;
  return { offset: prefix, length: before.length - prefix - suffix, text: after.slice(prefix, after.length - suffix) };
}
