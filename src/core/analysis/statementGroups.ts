import type { SyntaxNode } from '../parsing/syntaxTree';

/**
 * The module's top-level statements, split into groups that share no module-level name. Python
 * statements reach each other's objects only through module-level names (and imports, which the
 * ImportTable holds for everyone), so each group runs the same on its own as in the whole file:
 * after an edit, only the groups whose statements changed need running again. The names a
 * statement touches are read from its syntax, generously (a local `model` inside a function
 * counts as a use of a module-level `model`): too many links cost reuse, never correctness.
 */
export interface StatementGroup {
  /** Positions of the statements among the module's named children, ascending. */
  readonly indices: readonly number[];
  readonly statements: readonly SyntaxNode[];
}

/** Names one top-level statement binds at module level, and the names it mentions. */
interface StatementNames {
  readonly binds: readonly string[];
  readonly mentions: readonly string[];
}

const IMPORTS = new Set(['import_statement', 'import_from_statement', 'future_import_statement']);
/** Statements that bind nothing and run nothing the analyzer follows. */
const INERT = new Set(['comment', 'pass_statement', 'ERROR']);

/** Remembered per statement node: a statement reused from the previous tree keeps its names. */
const namesOf = new WeakMap<SyntaxNode, StatementNames>();

export function statementGroups(root: SyntaxNode): StatementGroup[] {
  const statements = root.namedChildren;
  const names = statements.map(statementNames);
  const moduleNames = new Set(names.flatMap((n) => n.binds));
  // Union-find over statements: two statements touching one module-level name are one group.
  const parent = statements.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const owner = new Map<string, number>();
  names.forEach(({ binds, mentions }, i) => {
    for (const name of [...binds, ...mentions]) {
      if (!moduleNames.has(name)) continue;
      const first = owner.get(name);
      if (first === undefined) owner.set(name, i);
      else parent[find(i)] = find(first);
    }
  });
  // `exec(open("config/train_small.py").read())` and `globals()[key] = value` bind names no syntax shows, and
  // `globals()[args.arch]` and `eval(args.model)` read names no syntax shows: one group with everything.
  const dynamic = statements.findIndex(bindsDynamically);
  if (dynamic >= 0) statements.forEach((_, i) => (parent[find(i)] = find(dynamic)));
  const groups = new Map<number, number[]>();
  statements.forEach((statement, i) => {
    if (IMPORTS.has(statement.type) || INERT.has(statement.type)) return;
    const key = find(i);
    const members = groups.get(key);
    if (members) members.push(i);
    else groups.set(key, [i]);
  });
  return [...groups.values()].map((indices) => ({ indices, statements: indices.map((i) => statements[i]!) }));
}

/** Whether a top-level statement may bind or read module-level names its syntax does not show: it calls exec(), globals() or eval(). */
function bindsDynamically(statement: SyntaxNode): boolean {
  if (IMPORTS.has(statement.type) || INERT.has(statement.type)) return false;
  return statement.descendantsOfType('call').some((call) => {
    const fn = call.childForFieldName('function');
    return fn?.type === 'identifier' && (fn.text === 'exec' || fn.text === 'globals' || fn.text === 'eval');
  });
}

function statementNames(statement: SyntaxNode): StatementNames {
  const known = namesOf.get(statement);
  if (known) return known;
  const binds = new Set<string>();
  collectBindings(statement, binds);
  const names = { binds: [...binds], mentions: [...freeNames(statement)] };
  namesOf.set(statement, names);
  return names;
}

type Scopes = readonly ReadonlySet<string>[];

const COMPREHENSIONS = new Set(['list_comprehension', 'dictionary_comprehension', 'set_comprehension', 'generator_expression']);

/**
 * The names a statement reads or writes that may be module-level: every identifier except those
 * a function (or lambda, or comprehension) around it binds locally, as Python's scoping rules say
 * (parameters and anything assigned in the body, unless declared `global` or `nonlocal`).
 */
function freeNames(statement: SyntaxNode): Set<string> {
  const free = new Set<string>();
  // Two parallel stacks rather than one of pairs: this walk visits every node of the file once.
  const nodes: SyntaxNode[] = [statement];
  const scopesOf: Scopes[] = [[]];
  const push = (node: SyntaxNode, scopes: Scopes) => {
    nodes.push(node);
    scopesOf.push(scopes);
  };
  while (nodes.length) {
    const node = nodes.pop()!;
    const scopes = scopesOf.pop()!;
    if (node.type === 'identifier') {
      if (!isMemberName(node) && !scopes.some((scope) => scope.has(node.text))) free.add(node.text);
      continue;
    }
    if (node.type === 'function_definition' || node.type === 'lambda') {
      const inner = [...scopes, functionLocals(node)];
      const parameters = node.childForFieldName('parameters');
      // Defaults, annotations and decorators are evaluated where the function is defined; the body runs in its own scope.
      for (const parameter of parameters?.namedChildren ?? []) {
        const value = parameter.childForFieldName('value');
        if (value) push(value, scopes);
        const type = parameter.childForFieldName('type');
        if (type) push(type, scopes);
      }
      const returns = node.childForFieldName('return_type');
      if (returns) push(returns, scopes);
      const body = node.childForFieldName('body');
      if (body) push(body, inner);
      continue;
    }
    if (COMPREHENSIONS.has(node.type)) {
      const locals = new Set<string>();
      for (const clause of node.namedChildren) if (clause.type === 'for_in_clause') targetNames(clause.childForFieldName('left'), locals);
      const inner = [...scopes, locals];
      for (const child of node.namedChildren) push(child, inner);
      continue;
    }
    for (const child of node.children) if (child.isNamed) push(child, scopes);
  }
  return free;
}

/** Names local to a function: its parameters and what its body binds, less `global` and `nonlocal` names. */
function functionLocals(fn: SyntaxNode): Set<string> {
  const locals = new Set<string>();
  for (const parameter of fn.childForFieldName('parameters')?.namedChildren ?? []) {
    const name = parameter.type === 'identifier' ? parameter : (parameter.childForFieldName('name') ?? parameter.namedChildren.find((child) => child.type === 'identifier'));
    if (name?.type === 'identifier') locals.add(name.text);
  }
  const declared = new Set<string>();
  const body = fn.childForFieldName('body');
  const stack: SyntaxNode[] = body ? [body] : [];
  while (stack.length) {
    const node = stack.pop()!;
    switch (node.type) {
      case 'function_definition':
      case 'class_definition': {
        const name = node.childForFieldName('name');
        if (name) locals.add(name.text);
        continue;
      }
      case 'lambda':
        continue;
      case 'global_statement':
      case 'nonlocal_statement':
        for (const identifier of node.namedChildren) if (identifier.type === 'identifier') declared.add(identifier.text);
        continue;
      case 'import_statement':
      case 'import_from_statement':
        for (const item of node.namedChildren) {
          if (item === node.childForFieldName('module_name')) continue;
          const bound = item.type === 'aliased_import' ? item.childForFieldName('alias') : item;
          if (bound) locals.add(bound.text.split('.')[0]!);
        }
        continue;
      default:
        if (COMPREHENSIONS.has(node.type)) continue;
        targetNames(bindingTarget(node), locals);
        break;
    }
    for (const child of node.namedChildren) stack.push(child);
  }
  for (const name of declared) locals.delete(name);
  return locals;
}

/** `b` in `a.b` and `k` in `f(k=1)` are not names in any scope. */
function isMemberName(identifier: SyntaxNode): boolean {
  const parent = identifier.parent;
  if (!parent) return false;
  if (parent.type === 'attribute') return parent.childForFieldName('attribute') === identifier;
  if (parent.type === 'keyword_argument') return parent.childForFieldName('name') === identifier;
  return false;
}

/**
 * The module-level names a top-level statement binds: definitions, assignment, loop and `with`
 * targets anywhere outside function and class bodies, and names declared `global` inside them.
 */
function collectBindings(statement: SyntaxNode, binds: Set<string>): void {
  const stack: SyntaxNode[] = [statement];
  while (stack.length) {
    const node = stack.pop()!;
    switch (node.type) {
      case 'function_definition':
      case 'class_definition': {
        const name = node.childForFieldName('name');
        if (name) binds.add(name.text);
        for (const declaration of node.descendantsOfType('global_statement')) {
          for (const identifier of declaration.namedChildren) if (identifier.type === 'identifier') binds.add(identifier.text);
        }
        continue;
      }
      case 'lambda':
        continue;
      default:
        // Comprehension variables are their own (Python 3), and they bind nothing outside.
        if (COMPREHENSIONS.has(node.type)) continue;
        targetNames(bindingTarget(node), binds);
        break;
    }
    for (const child of node.namedChildren) stack.push(child);
  }
}

/** Which child of a node is bound: `x` in `x = ...`, `x += ...`, `for x in ...`, `(x := ...)`, `... as x`. */
const BINDING_FIELDS: Readonly<Record<string, string>> = { assignment: 'left', augmented_assignment: 'left', for_statement: 'left', named_expression: 'name', as_pattern: 'alias' };

function bindingTarget(node: SyntaxNode): SyntaxNode | null {
  const field = BINDING_FIELDS[node.type];
  return field ? node.childForFieldName(field) : null;
}

function targetNames(target: SyntaxNode | null, binds: Set<string>): void {
  if (!target) return;
  if (target.type === 'identifier') {
    binds.add(target.text);
    return;
  }
  // Tuple and list targets (`a, b = ...`, `for i, (x, y) in ...`); `a.b` and `a[i]` bind nothing new.
  if (target.type === 'attribute' || target.type === 'subscript') return;
  for (const child of target.namedChildren) targetNames(child, binds);
}
