const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const FORM_FEED = 0x0c;
const HASH = 0x23;
const AT = 0x40;
const BACKSLASH = 0x5c;
const SEMICOLON = 0x3b;
const SINGLE_QUOTE = 0x27;
const DOUBLE_QUOTE = 0x22;
const OPENING = new Set([0x28, 0x5b, 0x7b]);
const CLOSING = new Set([0x29, 0x5d, 0x7d]);

const isBlank = (code: number) => code === SPACE || code === TAB || code === FORM_FEED || code === CARRIAGE_RETURN;

/** A clause that goes on with the compound statement above it (`if:` ... `else:`), not a new statement. */
const CONTINUING_CLAUSE = /^(?:else|elif|except|finally)(?![\w])/;
const continuesStatement = (source: string, at: number) => CONTINUING_CLAUSE.test(source.slice(at, at + 9));

/**
 * The largest offset, at most `limit`, at which `source` can be cut so that the part before it
 * holds only whole top-level statements: the start of a line that starts a statement at column 0
 * (not the `def` of a decorator, nor an `else:`, `elif`, `except` or `finally:` that goes on with
 * the statement above it), or just after a `;` on such a statement's line. 0 when there is
 * none. A lexical scan, far cheaper than a parse: it follows strings (triple-quoted too), comments,
 * brackets and backslash continuations, so a cut never lands inside a literal or an open bracket.
 */
export function lastStatementBoundary(source: string, limit: number): number {
  if (source.length <= limit) return source.length;
  const end = limit;
  let boundary = 0;
  let depth = 0;
  /** Quote of the string being read (0: none), and whether it is triple-quoted. */
  let quote = 0;
  let triple = false;
  /** At the first character of a line that starts a new logical line. */
  let lineStart = true;
  /** The current logical line starts at column 0, so its `;` separate top-level statements. */
  let topLevel = false;
  /** The last top-level line was a decorator: the statement it belongs to has not started. */
  let decorator = false;
  for (let i = 0; i <= end; ) {
    const code = source.charCodeAt(i);
    if (lineStart) {
      lineStart = false;
      if (!isBlank(code) && code !== NEWLINE && code !== HASH) {
        if (!decorator && !continuesStatement(source, i)) boundary = i;
        decorator = code === AT;
        topLevel = true;
      } else {
        topLevel = false;
      }
    }
    if (i === end) break;
    if (quote !== 0) {
      if (code === BACKSLASH) i += 2;
      else if (code === quote && (!triple || (source.charCodeAt(i + 1) === quote && source.charCodeAt(i + 2) === quote))) {
        i += triple ? 3 : 1;
        quote = 0;
      } else {
        // An unclosed one-line string ends at its line, as Python reports it.
        if (code === NEWLINE && !triple) quote = 0;
        i += 1;
      }
      continue;
    }
    if (code === SINGLE_QUOTE || code === DOUBLE_QUOTE) {
      quote = code;
      triple = source.charCodeAt(i + 1) === code && source.charCodeAt(i + 2) === code;
      i += triple ? 3 : 1;
      continue;
    }
    if (code === HASH) {
      const next = source.indexOf('\n', i);
      i = next === -1 ? end : Math.min(next, end);
      continue;
    }
    if (code === BACKSLASH) {
      // A continuation joins the next line to this one; any other backslash is a syntax error, skipped.
      i += source.charCodeAt(i + 1) === CARRIAGE_RETURN ? 3 : 2;
      continue;
    }
    if (OPENING.has(code)) depth += 1;
    else if (CLOSING.has(code)) depth = Math.max(0, depth - 1);
    else if (code === SEMICOLON && depth === 0 && topLevel) boundary = i + 1;
    else if (code === NEWLINE && depth === 0) lineStart = true;
    i += 1;
  }
  return boundary;
}
