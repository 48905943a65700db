/**
 * Reads the configuration files training scripts load (`yaml.safe_load`, `json.load`,
 * `tomllib.load`, `OmegaConf.load`) into plain data with the 1-based line of every key, so each
 * value the script reads from one can be shown with its file and line. The subsets are the ones
 * configuration files use: YAML block mappings and sequences, flow `[...]` and `{...}`, plain and
 * quoted scalars, comments; JSON in full; TOML tables, dotted tables and single-line values. What a
 * reader does not take (YAML anchors, block scalars, TOML multi-line arrays) is a problem named in
 * the result, and the rest of the file is still read. No reader throws.
 */

export type ConfigScalar = number | string | boolean | null;

/** One value of a configuration file and the line it is on. */
export interface ConfigNode {
  readonly value: ConfigScalar | readonly ConfigNode[] | ConfigMap;
  readonly line: number;
}

/** A mapping, in file order. */
export type ConfigMap = ReadonlyMap<string, ConfigNode>;

export interface ConfigText {
  /** The file's top level (a mapping for configuration files); undefined when nothing could be read. */
  readonly root?: ConfigNode;
  /** What could not be read, with its line ("line 4: YAML anchors are not read"). */
  readonly problems: readonly string[];
}

export type ConfigFormat = 'yaml' | 'json' | 'toml';

/** Files past this size are not read: no configuration file is this large, and a hostile one could be. */
export const MAX_CONFIG_BYTES = 256 * 1024;
/** Keys and list items read from one file, at most. */
const MAX_NODES = 20_000;
/** How deeply mappings and lists may nest. */
const MAX_NESTING = 64;

export function isConfigMap(value: ConfigNode['value'] | undefined): value is ConfigMap {
  return value instanceof Map;
}

export function readConfigText(text: string, format: ConfigFormat): ConfigText {
  if (text.length > MAX_CONFIG_BYTES) return { problems: [`the file is larger than ${MAX_CONFIG_BYTES / 1024} KiB; it is not read`] };
  if (format === 'json') return readJson(text);
  if (format === 'toml') return readToml(text);
  return readYaml(text);
}

/** The format a file's name suggests, for loaders that take any (`OmegaConf.load`); YAML otherwise. */
export function formatOfPath(path: string): ConfigFormat {
  if (/\.json$/i.test(path)) return 'json';
  if (/\.toml$/i.test(path)) return 'toml';
  return 'yaml';
}

// ------------------------------------------------------------------------------------ scalars

const INTEGER = /^[-+]?(0|[1-9][0-9_]*)$/;
const FLOAT = /^[-+]?([0-9][0-9_]*)?\.?[0-9_]*([eE][-+]?[0-9]+)?$/;

function plainScalar(text: string): ConfigScalar {
  const t = text.trim();
  if (t === '' || t === '~' || t === 'null' || t === 'Null' || t === 'NULL') return null;
  if (/^(true|True|TRUE)$/.test(t)) return true;
  if (/^(false|False|FALSE)$/.test(t)) return false;
  if (INTEGER.test(t)) return Number(t.replace(/_/g, ''));
  if (/[0-9]/.test(t) && FLOAT.test(t)) {
    const n = Number(t.replace(/_/g, ''));
    if (Number.isFinite(n)) return n;
  }
  return t;
}

function unquote(text: string): string | undefined {
  const t = text.trim();
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) {
    try {
      return JSON.parse(t) as string;
    } catch {
      return t.slice(1, -1);
    }
  }
  if (t.length >= 2 && t.startsWith("'") && t.endsWith("'")) return t.slice(1, -1).replace(/''/g, "'");
  return undefined;
}

/** The text before a ` #` comment that is outside quotes. */
function withoutComment(text: string): string {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) return text.slice(0, i);
  }
  return text;
}

// ------------------------------------------------------------------------------------ YAML

interface YamlLine {
  readonly indent: number;
  readonly text: string;
  readonly line: number;
}

function readYaml(source: string): ConfigText {
  const problems: string[] = [];
  const lines: YamlLine[] = [];
  source.split(/\r?\n/).forEach((raw, i) => {
    const text = withoutComment(raw).replace(/\s+$/, '');
    if (text.trim() === '' || /^(---|\.\.\.)(\s|$)/.test(text) || text.startsWith('%')) return;
    if (/\t/.test(/^\s*/.exec(text)![0])) problems.push(`line ${i + 1}: a tab in the indentation (YAML forbids it)`);
    lines.push({ indent: /^ */.exec(text)![0].length, text: text.trim(), line: i + 1 });
  });
  let index = 0;
  let nodes = 0;
  const problem = (line: number, message: string) => {
    if (problems.length < 20) problems.push(`line ${line}: ${message}`);
  };

  const scalarOrFlow = (text: string, line: number, depth: number): ConfigNode['value'] => {
    const quoted = unquote(text);
    if (quoted !== undefined) return quoted;
    if (text.startsWith('[') || text.startsWith('{')) {
      const flow = parseFlow(text, line, depth);
      if (flow !== undefined) return flow;
      problem(line, `a flow collection that is not read: ${text.slice(0, 40)}`);
      return null;
    }
    if (/^[*!]/.test(text)) {
      problem(line, 'YAML aliases and tags are not read');
      return null;
    }
    if (/^[|>][-+0-9]*$/.test(text)) {
      problem(line, 'block scalars (| and >) are not read');
      return null;
    }
    return plainScalar(text);
  };

  const parseFlow = (text: string, line: number, depth: number): ConfigNode['value'] | undefined => {
    // Flow collections written as JSON-like text on one line: quote plain words so JSON reads them.
    let position = 0;
    const value = (nesting: number): ConfigNode['value'] | undefined => {
      if (nesting > MAX_NESTING) return undefined;
      skip();
      const c = text[position];
      if (c === '[' || c === '{') {
        const closing = c === '[' ? ']' : '}';
        position += 1;
        const items: ConfigNode[] = [];
        const map = new Map<string, ConfigNode>();
        for (;;) {
          skip();
          if (text[position] === closing) {
            position += 1;
            return c === '[' ? items : map;
          }
          if (c === '[') {
            const item = value(nesting + 1);
            if (item === undefined) return undefined;
            items.push({ value: item, line });
          } else {
            const key = token(':');
            if (key === undefined || text[position] !== ':') return undefined;
            position += 1;
            const item = value(nesting + 1);
            if (item === undefined) return undefined;
            map.set(String(key), { value: item, line });
          }
          if ((nodes += 1) > MAX_NODES) return undefined;
          skip();
          if (text[position] === ',') position += 1;
          else if (text[position] !== closing) return undefined;
        }
      }
      return token(',]}');
    };
    const skip = () => {
      while (position < text.length && /\s/.test(text[position]!)) position += 1;
    };
    const token = (stops: string): ConfigScalar | undefined => {
      skip();
      const c = text[position];
      if (c === '"' || c === "'") {
        let end = position + 1;
        while (end < text.length && (text[end] !== c || (c === '"' && text[end - 1] === '\\'))) end += 1;
        if (end >= text.length) return undefined;
        const quoted = unquote(text.slice(position, end + 1));
        position = end + 1;
        return quoted;
      }
      let end = position;
      while (end < text.length && !stops.includes(text[end]!)) end += 1;
      const word = text.slice(position, end);
      position = end;
      return plainScalar(word);
    };
    const result = value(depth);
    skip();
    return result !== undefined && position === text.length ? result : undefined;
  };

  /** The block at `indent` starting at lines[index]: a sequence or a mapping. */
  const block = (indent: number, depth: number): ConfigNode['value'] => {
    const first = lines[index]!;
    if (depth > MAX_NESTING) {
      problem(first.line, `nesting deeper than ${MAX_NESTING}; not read`);
      while (index < lines.length && lines[index]!.indent >= indent) index += 1;
      return null;
    }
    if (first.text === '-' || first.text.startsWith('- ')) return sequence(indent, depth);
    return mapping(indent, depth);
  };

  /** After `key:` or `-` with nothing else on the line: the nested block, or null. */
  const nested = (parentIndent: number, depth: number, sequenceItem: boolean): ConfigNode['value'] => {
    const next = lines[index];
    // A sequence may sit at its key's own indentation (`key:\n- a`).
    if (next && (next.indent > parentIndent || (!sequenceItem && next.indent === parentIndent && (next.text === '-' || next.text.startsWith('- '))))) return block(next.indent, depth + 1);
    return null;
  };

  const sequence = (indent: number, depth: number): ConfigNode[] => {
    const items: ConfigNode[] = [];
    while (index < lines.length && lines[index]!.indent === indent && (lines[index]!.text === '-' || lines[index]!.text.startsWith('- '))) {
      const current = lines[index]!;
      if ((nodes += 1) > MAX_NODES) break;
      const rest = current.text.slice(1).trim();
      index += 1;
      if (rest === '') {
        items.push({ value: nested(indent, depth, true), line: current.line });
      } else if (keyValue(rest)) {
        // `- name: x` starts a mapping whose keys line up after the dash.
        const inner = indent + (current.text.length - current.text.slice(1).trimStart().length);
        index -= 1;
        lines[index] = { indent: inner, text: rest, line: current.line };
        items.push({ value: mapping(inner, depth + 1), line: current.line });
      } else items.push({ value: scalarOrFlow(rest, current.line, depth), line: current.line });
    }
    return items;
  };

  const mapping = (indent: number, depth: number): ConfigMap => {
    const map = new Map<string, ConfigNode>();
    while (index < lines.length && lines[index]!.indent === indent) {
      const current = lines[index]!;
      const pair = keyValue(current.text);
      index += 1;
      if (!pair) {
        problem(current.line, `not a \`key: value\` line: ${current.text.slice(0, 40)}`);
        while (index < lines.length && lines[index]!.indent > indent) index += 1;
        continue;
      }
      if ((nodes += 1) > MAX_NODES) {
        problem(current.line, `more than ${MAX_NODES} keys and items; the rest is not read`);
        index = lines.length;
        break;
      }
      // An anchor (`base: &base`) names the value for aliases, which are not read; the value itself is.
      const text = pair.value.replace(/^&[^\s]+\s*/, '');
      const value = text === '' ? nested(indent, depth, false) : scalarOrFlow(text, current.line, depth);
      // What a value that is not read leaves indented below it (a block scalar's text) belongs to it.
      while (text !== '' && index < lines.length && lines[index]!.indent > indent) index += 1;
      map.set(pair.key, { value, line: current.line });
    }
    return map;
  };

  if (lines.length === 0) return { root: { value: new Map(), line: 1 }, problems };
  const root = { value: block(lines[0]!.indent, 0), line: lines[0]!.line };
  if (index < lines.length) problem(lines[index]!.line, 'indentation that does not match the lines above; the rest of the file is not read');
  return { root, problems };
}

/** `key: value` (the value may be empty); quoted keys included. */
function keyValue(text: string): { key: string; value: string } | undefined {
  const quoted = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*')\s*:(\s+|$)(.*)$/.exec(text);
  if (quoted) return { key: unquote(quoted[1]!)!, value: quoted[3]!.trim() };
  const plain = /^([^\s:#\-[{][^:]*?|-[^\s:][^:]*?)\s*:(\s+|$)(.*)$/.exec(text);
  return plain ? { key: plain[1]!.trim(), value: plain[3]!.trim() } : undefined;
}

// ------------------------------------------------------------------------------------ JSON

function readJson(text: string): ConfigText {
  let position = 0;
  let line = 1;
  let nodes = 0;
  const fail = (message: string): never => {
    throw new JsonProblem(`line ${line}: ${message}`);
  };
  const skip = () => {
    while (position < text.length && /\s/.test(text[position]!)) {
      if (text[position] === '\n') line += 1;
      position += 1;
    }
  };
  const value = (depth: number): ConfigNode => {
    if (depth > MAX_NESTING) fail(`nesting deeper than ${MAX_NESTING}`);
    if ((nodes += 1) > MAX_NODES) fail(`more than ${MAX_NODES} keys and items`);
    skip();
    const at = line;
    const c = text[position];
    if (c === '{') {
      position += 1;
      const map = new Map<string, ConfigNode>();
      skip();
      if (text[position] === '}') {
        position += 1;
        return { value: map, line: at };
      }
      for (;;) {
        skip();
        const keyLine = line;
        if (text[position] !== '"') fail('expected a "key"');
        const key = string();
        skip();
        if (text[position] !== ':') fail('expected `:`');
        position += 1;
        const item = value(depth + 1);
        map.set(key, { value: item.value, line: keyLine });
        skip();
        if (text[position] === ',') position += 1;
        else if (text[position] === '}') {
          position += 1;
          return { value: map, line: at };
        } else fail('expected `,` or `}`');
      }
    }
    if (c === '[') {
      position += 1;
      const items: ConfigNode[] = [];
      skip();
      if (text[position] === ']') {
        position += 1;
        return { value: items, line: at };
      }
      for (;;) {
        items.push(value(depth + 1));
        skip();
        if (text[position] === ',') position += 1;
        else if (text[position] === ']') {
          position += 1;
          return { value: items, line: at };
        } else fail('expected `,` or `]`');
      }
    }
    if (c === '"') return { value: string(), line: at };
    const word = /^(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?|true|false|null)/.exec(text.slice(position, position + 64));
    if (!word) fail(`unexpected ${c === undefined ? 'end of file' : `\`${c}\``}`);
    position += word![0].length;
    return { value: word![0] === 'true' ? true : word![0] === 'false' ? false : word![0] === 'null' ? null : Number(word![0]), line: at };
  };
  const string = (): string => {
    const start = position;
    position += 1;
    while (position < text.length && text[position] !== '"') {
      if (text[position] === '\n') fail('a line break inside a string');
      position += text[position] === '\\' ? 2 : 1;
    }
    if (position >= text.length) fail('a string that does not end');
    position += 1;
    try {
      return JSON.parse(text.slice(start, position)) as string;
    } catch {
      return fail('a string with a bad escape');
    }
  };
  try {
    const root = value(0);
    skip();
    if (position < text.length) fail('more text after the value');
    return { root, problems: [] };
  } catch (error) {
    if (error instanceof JsonProblem) return { problems: [`not valid JSON (${error.message})`] };
    throw error;
  }
}

class JsonProblem extends Error {}

// ------------------------------------------------------------------------------------ TOML

function readToml(text: string): ConfigText {
  const problems: string[] = [];
  const root = new Map<string, ConfigNode>();
  let table = root;
  let nodes = 0;
  const tableAt = (path: string[], line: number, base = root): Map<string, ConfigNode> | undefined => {
    let map = base;
    for (const part of path) {
      const existing = map.get(part);
      if (existing && isConfigMap(existing.value)) map = existing.value as Map<string, ConfigNode>;
      else if (existing) return undefined;
      else {
        const created = new Map<string, ConfigNode>();
        map.set(part, { value: created, line });
        map = created;
      }
    }
    return map;
  };
  const keyPath = (key: string): string[] => key.split('.').map((part) => unquote(part) ?? part.trim());
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    const t = withoutComment(raw).trim();
    if (t === '' || (nodes += 1) > MAX_NODES) return;
    const header = /^\[([^[\]]+)\]$/.exec(t);
    if (header) {
      const found = tableAt(keyPath(header[1]!), line);
      if (found) table = found;
      else problems.push(`line ${line}: [${header[1]}] redefines a value`);
      return;
    }
    if (/^\[\[/.test(t)) {
      problems.push(`line ${line}: arrays of tables ([[...]]) are not read`);
      table = new Map();
      return;
    }
    const pair = /^("[^"]*"|'[^']*'|[A-Za-z0-9_.\-"' ]+?)\s*=\s*(.+)$/.exec(t);
    if (!pair) {
      problems.push(`line ${line}: not a \`key = value\` line`);
      return;
    }
    const path = keyPath(pair[1]!);
    const owner = tableAt(path.slice(0, -1), line, table);
    const value = tomlValue(pair[2]!.trim(), line);
    if (!owner || value === undefined) {
      problems.push(`line ${line}: a value that is not read: ${pair[2]!.trim().slice(0, 40)}`);
      return;
    }
    owner.set(path[path.length - 1]!, { value, line });
  });
  return { root: { value: root, line: 1 }, problems: problems.slice(0, 20) };
}

/** A single-line TOML value: a string, number, boolean or an array of those. */
function tomlValue(text: string, line: number): ConfigNode['value'] | undefined {
  if (text.startsWith("'''") || text.startsWith('"""')) return undefined;
  const quoted = unquote(text);
  if (quoted !== undefined) return quoted;
  if (text.startsWith('[')) {
    if (!text.endsWith(']') || /[[{]/.test(text.slice(1, -1))) return undefined;
    const inner = text.slice(1, -1).trim();
    const items = inner === '' ? [] : inner.split(',').map((item) => item.trim()).filter((item) => item !== '');
    const values = items.map((item) => unquote(item) ?? plainScalar(item));
    return values.every((value) => typeof value !== 'string' || items.some((item) => unquote(item) === value)) ? values.map((value) => ({ value, line })) : undefined;
  }
  if (/^(true|false)$/.test(text)) return text === 'true';
  const value = plainScalar(text);
  return typeof value === 'number' ? value : undefined;
}
