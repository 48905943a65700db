import { dottedName, stringValue, type SyntaxNode } from '../parsing/syntax';
import { dirnameOf, joinPath } from '../project/projectFiles';

/** How many module-level names one path expression may go through (`ROOT = ...; sys.path.append(ROOT)`). */
const MAX_NAME_DEPTH = 4;

/**
 * The folders a script adds to `sys.path` (`sys.path.append(...)`, `sys.path.insert(0, ...)`),
 * read from its syntax when the path is simple: a literal, `__file__` and what os.path and pathlib
 * make of it (`os.path.dirname(os.path.abspath(__file__))`, `os.path.join(HERE, '..')`,
 * `Path(__file__).resolve().parent / 'src'`), directly or through a module-level name. A relative
 * literal is taken from the script's folder, where such scripts are usually run from. Paths it
 * cannot read are left out: the import then falls back to the project root and the script's folder.
 */
export function sysPathEntries(root: SyntaxNode, file: string): string[] {
  const calls = root.namedChildren.flatMap(sysPathCalls);
  if (calls.length === 0) return [];
  const assignments = new Map<string, SyntaxNode>();
  for (const statement of root.namedChildren) {
    const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    const left = assignment?.type === 'assignment' ? assignment.childForFieldName('left') : undefined;
    const right = assignment?.childForFieldName('right');
    if (left?.type === 'identifier' && right) assignments.set(left.text, right);
  }
  const entries: string[] = [];
  for (const { call, callee } of calls) {
    const args = call.childForFieldName('arguments')?.namedChildren.filter((n) => n.type !== 'comment') ?? [];
    const argument = callee === 'sys.path.append' ? args[0] : args[1];
    const folder = argument && pathOf(argument, file, assignments, 0);
    if (folder !== undefined && !entries.includes(folder)) entries.push(folder);
  }
  return entries;
}

/** The `sys.path` calls of each top-level statement, kept per statement node: an edit re-reads only the statements it changed. */
const callsOf = new WeakMap<SyntaxNode, { call: SyntaxNode; callee: string }[]>();

function sysPathCalls(statement: SyntaxNode): { call: SyntaxNode; callee: string }[] {
  let calls = callsOf.get(statement);
  if (!calls) {
    calls = [];
    if (statement.text.includes('sys.path')) {
      for (const call of statement.descendantsOfType('call')) {
        const callee = call && dottedName(call.childForFieldName('function'));
        if (call && (callee === 'sys.path.append' || callee === 'sys.path.insert')) calls.push({ call, callee });
      }
    }
    callsOf.set(statement, calls);
  }
  return calls;
}

function pathOf(node: SyntaxNode, file: string, names: ReadonlyMap<string, SyntaxNode>, depth: number): string | undefined {
  const recurse = (inner: SyntaxNode | null | undefined): string | undefined => (inner ? pathOf(inner, file, names, depth) : undefined);
  switch (node.type) {
    case 'string': {
      const text = stringValue(node);
      if (text === undefined) return undefined;
      return text.startsWith('/') || /^[A-Za-z]:[\\/]/.test(text) ? joinPath(text) : joinPath(dirnameOf(file), text);
    }
    case 'identifier': {
      if (node.text === '__file__') return file;
      const bound = names.get(node.text);
      return bound && depth < MAX_NAME_DEPTH ? pathOf(bound, file, names, depth + 1) : undefined;
    }
    case 'parenthesized_expression':
      return recurse(node.namedChildren[0]);
    case 'attribute': {
      const attribute = node.childForFieldName('attribute')?.text;
      const object = recurse(node.childForFieldName('object'));
      if (object === undefined) return undefined;
      return attribute === 'parent' ? dirnameOf(object) : undefined;
    }
    case 'subscript': {
      // `Path(__file__).parents[1]` is the folder two levels up.
      const value = node.childForFieldName('value');
      const index = node.childForFieldName('subscript');
      if (value?.type !== 'attribute' || value.childForFieldName('attribute')?.text !== 'parents' || index?.type !== 'integer') return undefined;
      let folder = recurse(value.childForFieldName('object'));
      for (let i = 0; folder !== undefined && i <= Number(index.text); i++) folder = dirnameOf(folder);
      return folder;
    }
    case 'binary_operator': {
      if (node.childForFieldName('operator')?.text !== '/') return undefined;
      const left = recurse(node.childForFieldName('left'));
      const right = node.childForFieldName('right');
      const part = right?.type === 'string' ? stringValue(right) : undefined;
      return left !== undefined && part !== undefined ? joinPath(left, part) : undefined;
    }
    case 'call':
      return callPath(node, recurse);
    default:
      return undefined;
  }
}

function callPath(node: SyntaxNode, recurse: (inner: SyntaxNode | null | undefined) => string | undefined): string | undefined {
  const fn = node.childForFieldName('function');
  const args = node.childForFieldName('arguments')?.namedChildren.filter((n) => n.type !== 'comment') ?? [];
  // `Path(__file__).resolve()`: a method of a path keeps the path.
  if (fn?.type === 'attribute' && ['resolve', 'absolute', 'expanduser'].includes(fn.childForFieldName('attribute')?.text ?? '')) return recurse(fn.childForFieldName('object'));
  const name = dottedName(fn);
  switch (name) {
    case 'os.path.dirname':
    case 'path.dirname':
    case 'osp.dirname': {
      const inner = recurse(args[0]);
      return inner === undefined ? undefined : dirnameOf(inner);
    }
    case 'os.path.abspath':
    case 'os.path.realpath':
    case 'os.path.normpath':
    case 'osp.abspath':
    case 'osp.realpath':
    case 'str':
    case 'Path':
    case 'pathlib.Path':
      return args.length === 1 ? recurse(args[0]) : undefined;
    case 'os.path.join':
    case 'osp.join': {
      const [first, ...rest] = args;
      let folder = recurse(first);
      for (const part of rest) {
        const text = part.type === 'string' ? stringValue(part) : undefined;
        folder = folder !== undefined && text !== undefined ? joinPath(folder, text) : undefined;
      }
      return folder;
    }
    default:
      return undefined;
  }
}
