/**
 * The text the analyzer parses: the source with comment-only and whitespace-only lines emptied.
 * tree-sitter-python's indentation scanner takes quadratic time over long runs of such lines
 * after an indented block (2,000 trailing comment lines: 7 s), and they carry nothing the
 * analyzer reads. Line numbers and the columns of every other line are unchanged, so ranges
 * found in the result hold for the original. A comment line with a quote is kept: it may be
 * inside a multi-line string, whose end it could hold.
 */
export function parseableSource(source: string): string {
  return source.replace(/^[ \t]*(#[^'"\r\n]*)?(?=\r?$)/gm, '');
}
