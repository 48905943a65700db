import { lastStatementBoundary } from '../parsing/statementBoundary';

/** Beyond this many characters a file is not a training script worth parsing while typing. */
export const MAX_SOURCE_CHARS = 2_000_000;

/**
 * The part of a source that is analysed: all of it up to MAX_SOURCE_CHARS, else its whole
 * top-level statements before that point (a partial result beats none), with a warning that
 * says what was skipped.
 */
export function withinLimit(source: string): { analysed: string; warning?: string } {
  if (source.length <= MAX_SOURCE_CHARS) return { analysed: source };
  const cut = lastStatementBoundary(source, MAX_SOURCE_CHARS);
  const analysed = source.slice(0, cut);
  const size = `The file has ${source.length} characters, more than the ${MAX_SOURCE_CHARS} analysed`;
  if (cut === 0) return { analysed, warning: `${size}, and no top-level statement ends within them (its first one is longer); nothing was analysed.` };
  const lines = analysed.split('\n').length - 1;
  const column = cut - (analysed.lastIndexOf('\n') + 1);
  const warning =
    column === 0
      ? `${size}; only its first ${lines} lines (${cut} characters of whole statements) were analysed, the rest from line ${lines + 1} on was skipped.`
      : `${size}; only its first ${cut} characters (whole statements, up to line ${lines + 1}, column ${column}) were analysed, the rest from line ${lines + 1}, column ${column + 1} on was skipped.`;
  return { analysed, warning };
}
