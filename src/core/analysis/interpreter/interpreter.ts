import { rangeOf, stringValue, type SyntaxNode } from '../../parsing/syntax';
import type { ImportTable } from '../imports';
import type { AnalysisNote } from '../modelDescription';
import { callTensorMethod, tensorAttribute, tensorBinary } from './forwardOps';
import { Budget } from './budget';
import { ModuleObject } from './moduleObject';
import {
  asModule,
  isList,
  isUnresolvedValue,
  kindOf,
  truthy,
  tuple,
  unresolved,
  type ClassValue,
  type DictValue,
  type ExternalValue,
  type FunctionValue,
  type InstanceValue,
  type ModuleValue,
  type ParameterValue,
  type PyList,
  type PyValue,
} from './pyValues';
import { Scope } from './scope';
import type { Evaluator, Flow, FunctionalRowType, InterpreterHooks } from './evaluator';
import { isTensorLike } from './tensorOps';
import { MAX_LIST, append, percentFormat, sliceList, unescape } from './valueMethods';
import { arithmetic, batchArithmetic, compareValues } from './operators';
import { BUILTINS } from './pythonBuiltins';
import { CONTAINERS, catalogPart, moduleAttribute, replaceCatalogPart } from './torchModules';
import { bindParameters, call, callModule, callValue, instantiate, runForward } from './calls';
import { bindMethod, classAttribute } from './classes';

export { BudgetExceeded } from './budget';
export type { CallEvent, FunctionalRowType, InterpreterHooks } from './evaluator';

/** Expressions nested deeper than this (thousands of brackets, `.to()` chains) are not followed. */
const MAX_EXPRESSION_DEPTH = 150;

/**
 * A small, bounded Python interpreter over the syntax tree: enough of the language to build
 * the modules a script constructs (constructors, helpers, loops, comprehensions, configs,
 * argparse defaults) and to follow `forward()` with tensor shapes. It never throws for the
 * script's sake: what it cannot follow becomes `Unresolved` with a reason.
 */
export class Interpreter implements Evaluator {
  readonly notes: AnalysisNote[] = [];
  /** Containers that reached MAX_CHILDREN (noted once each). */
  readonly truncated = new Set<number>();
  depth = 0;
  private expressionDepth = 0;
  /** True while running `forward`: module calls are layers, not objects to build. */
  forwardMode = false;
  /** True while running the script's own code (module body, main(), train()), false inside constructors. */
  scriptLevel = false;

  constructor(
    readonly imports: ImportTable,
    readonly hooks: InterpreterHooks = {},
    private readonly budget: Budget = new Budget(200_000, 1_000),
  ) {}

  note(node: SyntaxNode | undefined, message: string): void {
    if (this.notes.length < 200) this.notes.push({ severity: 'warning', message, range: node ? rangeOf(node) : undefined });
  }

  /** Reports a functional row (`torch.cat`, `torch.stack`) made by forward code. */
  functionalCall(type: FunctionalRowType, output: PyValue, node: SyntaxNode): void {
    if (this.forwardMode) this.hooks.onFunctionalCall?.(type, output, node);
  }

  tick(): void {
    this.budget.tick();
  }

  // ---------------------------------------------------------------- statements

  execBlock(block: SyntaxNode | null, scope: Scope, discovering = false): Flow {
    if (!block) return undefined;
    for (const statement of block.namedChildren) {
      const flow = this.exec(statement, scope, discovering);
      if (flow) return flow;
    }
    return undefined;
  }

  exec(node: SyntaxNode, scope: Scope, discovering = false): Flow {
    this.tick();
    if (this.expressionDepth >= MAX_EXPRESSION_DEPTH) return undefined;
    switch (node.type) {
      case 'expression_statement':
        for (const child of node.namedChildren) {
          if (child.type === 'assignment' || child.type === 'augmented_assignment') this.assign(child, scope, discovering);
          else if (!(discovering && this.isDiscoveredCall(child, scope))) this.evaluate(child, scope);
        }
        return undefined;
      case 'return_statement': {
        const value = node.namedChildren[0];
        return { kind: 'return', value: value ? this.evaluate(value, scope) : null };
      }
      case 'if_statement':
        return this.execIf(node, scope, discovering);
      case 'for_statement':
        return this.execFor(node, scope, discovering);
      case 'while_statement': {
        const condition = truthy(this.evaluate(node.childForFieldName('condition')!, scope));
        if (condition === false) return undefined;
        // The iteration count is rarely known statically: follow the body once.
        const flow = this.execBlock(node.childForFieldName('body'), scope, discovering);
        return flow?.kind === 'return' ? flow : undefined;
      }
      case 'with_statement': {
        for (const item of node.descendantsOfType('with_item')) {
          const value = item.childForFieldName('value');
          const evaluated = value ? this.evaluate(value.type === 'as_pattern' ? value.namedChildren[0]! : value, scope) : null;
          const alias = value?.type === 'as_pattern' ? value.childForFieldName('alias') : null;
          const target = alias?.namedChildren[0] ?? alias;
          if (target?.type === 'identifier') scope.set(target.text, evaluated);
        }
        return this.execBlock(node.childForFieldName('body'), scope, discovering);
      }
      case 'try_statement':
        return this.execBlock(node.childForFieldName('body'), scope, discovering);
      case 'function_definition':
        this.defineFunction(node, scope);
        return undefined;
      case 'class_definition':
        this.defineClass(node, scope, []);
        return undefined;
      case 'decorated_definition': {
        const definition = node.childForFieldName('definition');
        const decorators = node.namedChildren.filter((c) => c.type === 'decorator');
        if (definition?.type === 'class_definition') this.defineClass(definition, scope, decorators);
        else if (definition?.type === 'function_definition') this.defineFunction(definition, scope);
        return undefined;
      }
      case 'break_statement':
        return { kind: 'break' };
      case 'continue_statement':
        return { kind: 'continue' };
      default:
        return undefined;
    }
  }

  /**
   * `main()` as a statement of its own, without arguments, calling a top-level function:
   * discovery follows that function's body by itself, so following the call too would only do
   * the work twice. (With arguments, the call carries values the body alone lacks.)
   */
  private isDiscoveredCall(node: SyntaxNode, scope: Scope): boolean {
    const fn = node.childForFieldName('function');
    if (node.type !== 'call' || fn?.type !== 'identifier' || (node.childForFieldName('arguments')?.namedChildren.length ?? 1) > 0) return false;
    const callee = scope.get(fn.text);
    if (kindOf(callee) !== 'function') return false;
    const definition = (callee as FunctionValue).node;
    const statement = definition.parent?.type === 'decorated_definition' ? definition.parent : definition;
    return statement.parent?.type === 'module';
  }

  private execIf(node: SyntaxNode, scope: Scope, discovering: boolean): Flow {
    const condition = truthy(this.evaluate(node.childForFieldName('condition')!, scope));
    const alternatives = node.childrenForFieldName('alternative');
    if (condition === true) return this.execBlock(node.childForFieldName('consequence'), scope, discovering);
    if (condition === undefined) {
      // Unknown condition: take the first branch; while discovering, look at every branch.
      const flow = this.execBlock(node.childForFieldName('consequence'), scope, discovering);
      if (!discovering) return flow;
      for (const alternative of alternatives) this.execBlock(alternative.childForFieldName('body'), scope, discovering);
      return flow?.kind === 'return' ? flow : undefined;
    }
    for (const alternative of alternatives) {
      if (alternative.type === 'else_clause') return this.execBlock(alternative.childForFieldName('body'), scope, discovering);
      const taken = truthy(this.evaluate(alternative.childForFieldName('condition')!, scope));
      if (taken !== false) return this.execBlock(alternative.childForFieldName('consequence'), scope, discovering);
    }
    return undefined;
  }

  private execFor(node: SyntaxNode, scope: Scope, discovering: boolean): Flow {
    const left = node.childForFieldName('left')!;
    const iterable = this.evaluate(node.childForFieldName('right')!, scope);
    const items = this.iterate(iterable);
    const body = node.childForFieldName('body');
    if (!items) {
      // Unknown iterable (a data loader): follow the body once with unknown loop variables.
      this.bind(left, unresolved(left.text, 'loop variable'), scope, discovering);
      const flow = this.execBlock(body, scope, discovering);
      return flow?.kind === 'return' ? flow : undefined;
    }
    for (const [i, item] of items.entries()) {
      const modulesBefore = ModuleObject.created;
      this.bind(left, item, scope, discovering);
      const flow = this.execBlock(body, scope, discovering);
      if (flow?.kind === 'break') break;
      if (flow?.kind === 'return') return flow;
      // In script code (not a constructor), a loop that builds no module, such as a training
      // loop, has shown what it does after two rounds.
      if (this.scriptLevel && !this.forwardMode && i >= 1 && ModuleObject.created === modulesBefore) break;
    }
    return undefined;
  }

  /** The items a `for` loop visits, when they are known. */
  iterate(value: PyValue): PyValue[] | undefined {
    if (isList(value)) return [...value];
    if (typeof value === 'string') return [...value];
    const module = asModule(value);
    if (module && module.kind !== 'layer') return [...module.children.values()].map((m) => ({ kind: 'module', module: m }));
    if (kindOf(value) === 'dict') return [...(value as DictValue).entries.keys()];
    // A DataLoader over a TensorDataset: one batch stands for all of them.
    if (kindOf(value) === 'instance' && (value as InstanceValue).className === 'DataLoader') {
      const batch = (value as InstanceValue).attrs.get('batch');
      return batch ? [batch] : undefined;
    }
    return undefined;
  }

  private assign(node: SyntaxNode, scope: Scope, discovering: boolean): void {
    const left = node.childForFieldName('left')!;
    const right = node.childForFieldName('right');
    if (!right) {
      // `n_embd: int` in a class body: a declaration without a value.
      return;
    }
    if (node.type === 'augmented_assignment') {
      const operator = node.childForFieldName('operator')?.text.slice(0, -1) ?? '+';
      const current = this.evaluate(left, scope);
      const value = this.evaluate(right, scope);
      if (isList(current) && operator === '+' && isList(value)) {
        if (current.length + value.length <= MAX_LIST) append(current, value);
        return;
      }
      this.bind(left, this.binary(operator, current, value, node), scope, discovering);
      return;
    }
    // a = b = value
    const value = right.type === 'assignment' ? (this.assign(right, scope, discovering), this.evaluate(right.childForFieldName('left')!, scope)) : this.evaluate(right, scope);
    this.bind(left, value, scope, discovering);
  }

  bind(target: SyntaxNode, value: PyValue, scope: Scope, discovering = false): void {
    switch (target.type) {
      case 'identifier':
        scope.set(target.text, value);
        if (discovering && this.depth === 0) this.hooks.onAssign?.(target.text, value, target);
        return;
      case 'pattern_list':
      case 'tuple_pattern':
      case 'list_pattern':
      case 'tuple':
      case 'list':
      case 'parenthesized_expression': {
        const targets = target.namedChildren.filter((c) => c.type !== 'comment');
        if (target.type === 'parenthesized_expression') {
          if (targets[0]) this.bind(targets[0], value, scope, discovering);
          return;
        }
        const items = isList(value) ? value : undefined;
        targets.forEach((t, i) => {
          if (t.type === 'list_splat_pattern') this.bind(t.namedChildren[0]!, items ? items.slice(i) : unresolved(t.text, 'unpacked'), scope, discovering);
          else this.bind(t, items?.[i] ?? unresolved(t.text, `cannot unpack ${value === null ? 'None' : 'this value'}`), scope, discovering);
        });
        return;
      }
      case 'attribute':
        this.setAttribute(this.evaluate(target.childForFieldName('object')!, scope), target.childForFieldName('attribute')!.text, value, target);
        return;
      case 'subscript': {
        const container = this.evaluate(target.childForFieldName('value')!, scope);
        const key = this.evaluate(target.childForFieldName('subscript')!, scope);
        if (kindOf(container) === 'dict' && typeof key === 'string') (container as DictValue).entries.set(key, value);
        else if (isList(container) && typeof key === 'number') container[key < 0 ? container.length + key : key] = value;
        else {
          const module = asModule(container);
          const child = asModule(value);
          if (module?.kind === 'catalog' && child && (typeof key === 'string' || (typeof key === 'number' && key >= 0))) replaceCatalogPart(module, String(key), child);
          else if (module && child && (typeof key === 'string' || typeof key === 'number')) module.setChild(String(key), child);
        }
        return;
      }
      default:
        return;
    }
  }

  /** `self.fc = nn.Linear(...)` registers a child, `self.pos = nn.Parameter(...)` a parameter; `head.weight = emb.weight` ties them. */
  setAttribute(object: PyValue, name: string, value: PyValue, node: SyntaxNode): void {
    const module = asModule(object);
    if (module) {
      const child = asModule(value);
      if (child && module.kind === 'catalog') replaceCatalogPart(module, name, child);
      else if (child && module.kind !== 'layer') module.setChild(name, child);
      else if (kindOf(value) === 'parameter') module.parameters.set(name, value as ParameterValue);
      else if (module.kind === 'layer' && name === 'weight' && kindOf(value) === 'external' && (value as ExternalValue).name === 'weight-of') {
        const owner = asModule((value as ExternalValue).self);
        if (owner) module.tiedWeightOf = owner.tiedWeightOf ?? owner;
      } else module.attrs.set(name, value);
      return;
    }
    if (kindOf(object) === 'instance') (object as InstanceValue).attrs.set(name, value);
    else if (kindOf(object) === 'class') (object as ClassValue).attrs.set(name, value);
    else if (!isUnresolvedValue(object) && !isTensorLike(object)) this.note(node, `cannot follow the assignment to \`${node.text}\``);
  }

  // ---------------------------------------------------------------- definitions

  defineFunction(node: SyntaxNode, scope: Scope, classValue?: ClassValue): FunctionValue {
    const name = node.childForFieldName('name')?.text ?? '<lambda>';
    const fn: FunctionValue = { kind: 'function', name, node, closure: scope, classValue };
    if (!classValue) scope.set(name, fn);
    return fn;
  }

  defineClass(node: SyntaxNode, scope: Scope, decorators: readonly SyntaxNode[]): ClassValue {
    const name = node.childForFieldName('name')?.text ?? '<class>';
    const bases: ClassValue[] = [];
    let isModule = false;
    let container: ClassValue['container'];
    for (const base of node.childForFieldName('superclasses')?.namedChildren ?? []) {
      if (base.type === 'keyword_argument') continue;
      const value = this.evaluate(base, scope);
      if (kindOf(value) === 'class') {
        bases.push(value as ClassValue);
        isModule ||= (value as ClassValue).isModule;
        container ??= (value as ClassValue).container;
      } else if (kindOf(value) === 'external') {
        const name = (value as ExternalValue).name;
        if (/^torch\.nn\.(modules\.module\.)?Module$/.test(name)) isModule = true;
        if (CONTAINERS[name]) {
          isModule = true;
          container ??= CONTAINERS[name];
        }
      }
    }
    const isDataclass = decorators.some((d) => /\bdataclass\b/.test(d.text));
    const attrs = new Map<string, PyValue>();
    const fields: string[] = [];
    const classValue: ClassValue = { kind: 'class', name, node, attrs, bases, isModule, isDataclass, fields, container };
    const classScope = scope.child();
    for (const statement of node.childForFieldName('body')?.namedChildren ?? []) {
      const inner = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
      if (inner?.type === 'function_definition') {
        attrs.set(inner.childForFieldName('name')?.text ?? '', this.defineFunction(inner, scope, classValue));
      } else if (statement.type === 'expression_statement' && statement.namedChildren[0]?.type === 'assignment') {
        const assignment = statement.namedChildren[0];
        const left = assignment.childForFieldName('left');
        const right = assignment.childForFieldName('right');
        if (left?.type !== 'identifier') continue;
        if (assignment.childForFieldName('type')) fields.push(left.text);
        const value = right ? this.evaluate(right, classScope) : unresolved(left.text, 'declared without a default');
        classScope.set(left.text, value);
        attrs.set(left.text, value);
      }
    }
    scope.set(name, classValue);
    return classValue;
  }

  /** An attribute of a class, looked up through its bases (method resolution order, simplified). */
  classAttribute(classValue: ClassValue, name: string): PyValue | undefined {
    return classAttribute(classValue, name);
  }

  // ---------------------------------------------------------------- expressions

  evaluate(node: SyntaxNode, scope: Scope): PyValue {
    this.tick();
    if (this.expressionDepth >= MAX_EXPRESSION_DEPTH) return unresolved(node.text, 'the expression nests too deeply to follow');
    this.expressionDepth += 1;
    try {
      return this.evaluateNode(node, scope);
    } finally {
      this.expressionDepth -= 1;
    }
  }

  private evaluateNode(node: SyntaxNode, scope: Scope): PyValue {
    switch (node.type) {
      case 'integer':
        return this.exactNumber(Number(node.text.replace(/_/g, '').replace(/[lL]$/, '')), node);
      case 'float':
        return Number(node.text.replace(/_/g, ''));
      case 'true':
        return true;
      case 'false':
        return false;
      case 'none':
        return null;
      case 'string':
        return this.stringLiteral(node, scope);
      case 'concatenated_string': {
        const parts = node.namedChildren.map((part) => this.stringLiteral(part, scope));
        return parts.every((p): p is string => typeof p === 'string') ? parts.join('') : unresolved(node.text, 'formatted string');
      }
      case 'ellipsis':
        return { kind: 'external', name: '...' };
      case 'identifier':
        return this.lookup(node.text, scope, node);
      case 'parenthesized_expression': {
        const inner = node.namedChildren.find((c) => c.type !== 'comment');
        return inner ? this.evaluate(inner, scope) : tuple([]);
      }
      case 'tuple':
      case 'expression_list':
        return tuple(this.evaluateItems(node, scope));
      case 'list':
        return this.evaluateItems(node, scope);
      case 'set':
        return this.evaluateItems(node, scope);
      case 'dictionary':
        return this.evaluateDict(node, scope);
      case 'list_comprehension':
      case 'generator_expression':
      case 'set_comprehension':
        return this.comprehension(node, scope);
      case 'dictionary_comprehension': {
        const pairs = this.comprehension(node, scope);
        if (!isList(pairs)) return pairs;
        const entries = new Map<string, PyValue>();
        for (const pair of pairs) if (isList(pair) && (typeof pair[0] === 'string' || typeof pair[0] === 'number')) entries.set(String(pair[0]), pair[1]!);
        return { kind: 'dict', entries };
      }
      case 'attribute':
        return this.attribute(this.evaluate(node.childForFieldName('object')!, scope), node.childForFieldName('attribute')!.text, node);
      case 'subscript':
        return this.subscript(node, scope);
      case 'slice': {
        const parts: (SyntaxNode | null)[] = [null, null, null];
        let index = 0;
        for (const child of node.children) {
          if (child.type === ':') index += 1;
          else if (child.isNamed) parts[index] = child;
        }
        const value = (n: SyntaxNode | null) => (n ? this.evaluate(n, scope) : null);
        return { kind: 'slice', start: value(parts[0]!), stop: value(parts[1]!), step: value(parts[2]!) };
      }
      case 'call':
        return this.exactNumber(call(this, node, scope), node);
      case 'unary_operator': {
        const value = this.evaluate(node.childForFieldName('argument')!, scope);
        const operator = node.childForFieldName('operator')?.text;
        if (typeof value === 'number' && operator === '~') return Number.isInteger(value) ? -value - 1 : unresolved(node.text, 'not an integer');
        if (typeof value === 'number') return operator === '-' ? -value : value;
        if (isTensorLike(value)) return value;
        return unresolved(node.text, 'not a number');
      }
      case 'binary_operator':
        return this.binary(node.childForFieldName('operator')?.text ?? '', this.evaluate(node.childForFieldName('left')!, scope), this.evaluate(node.childForFieldName('right')!, scope), node);
      case 'not_operator': {
        const value = truthy(this.evaluate(node.childForFieldName('argument')!, scope));
        return value === undefined ? unresolved(node.text, 'unknown condition') : !value;
      }
      case 'boolean_operator': {
        const left = this.evaluate(node.childForFieldName('left')!, scope);
        const test = truthy(left);
        if (test === undefined) return unresolved(node.text, 'unknown condition');
        const isAnd = node.childForFieldName('operator')?.text === 'and';
        if (isAnd ? !test : test) return left;
        return this.evaluate(node.childForFieldName('right')!, scope);
      }
      case 'comparison_operator':
        return this.compare(node, scope);
      case 'conditional_expression': {
        const [consequence, condition, alternative] = node.namedChildren;
        const test = condition ? truthy(this.evaluate(condition, scope)) : undefined;
        return test === false && alternative ? this.evaluate(alternative, scope) : consequence ? this.evaluate(consequence, scope) : null;
      }
      case 'lambda':
        return unresolved(node.text, 'lambda');
      case 'await':
      case 'named_expression':
        return unresolved(node.text, node.type.replace(/_/g, ' '));
      default:
        return unresolved(node.text, `${node.type.replace(/_/g, ' ')} is not followed`);
    }
  }

  /** A string literal, f-strings included where every interpolated value is known. */
  private stringLiteral(node: SyntaxNode, scope: Scope): PyValue {
    if (!node.namedChildren.some((c) => c.type === 'interpolation')) return stringValue(node) ?? unresolved(node.text, 'string');
    let text = '';
    for (const child of node.namedChildren) {
      if (child.type === 'string_content') text += child.text;
      else if (child.type === 'escape_sequence') text += unescape(child.text);
      else if (child.type === 'interpolation') {
        const expression = child.namedChildren.find((c) => c.type !== 'format_specifier' && c.type !== 'type_conversion');
        const value = expression ? this.evaluate(expression, scope) : null;
        if (typeof value !== 'number' && typeof value !== 'string') return unresolved(node.text, 'formatted string with unknown values');
        text += String(value);
      }
    }
    return text;
  }

  private evaluateItems(node: SyntaxNode, scope: Scope): PyList {
    const items: PyList = [];
    for (const child of node.namedChildren) {
      if (child.type === 'comment') continue;
      if (child.type === 'list_splat') {
        const spread = this.iterate(this.evaluate(child.namedChildren[0]!, scope));
        if (spread) append(items, spread);
        else items.push(unresolved(child.text, 'unpacked value is unknown'));
      } else items.push(this.evaluate(child, scope));
    }
    return items;
  }

  private evaluateDict(node: SyntaxNode, scope: Scope): DictValue {
    const entries = new Map<string, PyValue>();
    for (const pair of node.namedChildren) {
      if (pair.type !== 'pair') continue;
      const key = this.evaluate(pair.childForFieldName('key')!, scope);
      if (typeof key === 'string' || typeof key === 'number') entries.set(String(key), this.evaluate(pair.childForFieldName('value')!, scope));
    }
    return { kind: 'dict', entries };
  }

  private comprehension(node: SyntaxNode, scope: Scope): PyValue {
    const body = node.childForFieldName('body');
    const clauses = node.namedChildren.filter((c) => c.type === 'for_in_clause' || c.type === 'if_clause');
    if (!body) return unresolved(node.text, 'comprehension');
    const results: PyList = [];
    const run = (index: number, inner: Scope): boolean => {
      const clause = clauses[index];
      if (!clause) {
        // A dict comprehension's body is a `key: value` pair.
        results.push(body.type === 'pair' ? tuple([this.evaluate(body.childForFieldName('key')!, inner), this.evaluate(body.childForFieldName('value')!, inner)]) : this.evaluate(body, inner));
        return true;
      }
      if (clause.type === 'if_clause') {
        const test = truthy(this.evaluate(clause.namedChildren[0]!, inner));
        return test === false ? true : run(index + 1, inner);
      }
      const items = this.iterate(this.evaluate(clause.childForFieldName('right')!, inner));
      if (!items) return false;
      for (const item of items) {
        this.bind(clause.childForFieldName('left')!, item, inner);
        if (!run(index + 1, inner)) return false;
      }
      return true;
    };
    return run(0, scope.child()) ? results : unresolved(node.text, 'comprehension over an unknown sequence');
  }

  lookup(name: string, scope: Scope, node: SyntaxNode): PyValue {
    const value = scope.get(name);
    if (value !== undefined) return value;
    const qualified = this.imports.resolve(name);
    if (qualified) return { kind: 'external', name: qualified };
    if (BUILTINS.has(name)) return { kind: 'external', name: `builtins.${name}` };
    return unresolved(node.text, `\`${name}\` has no value known to the analysis`);
  }

  attribute(object: PyValue, name: string, node: SyntaxNode): PyValue {
    const kind = kindOf(object);
    if (kind === 'external') {
      const external = object as ExternalValue;
      if (external.self !== undefined) return unresolved(node.text, 'attribute of a library value');
      if (external.name === 'math' && (name === 'pi' || name === 'e' || name === 'inf')) return name === 'pi' ? Math.PI : name === 'e' ? Math.E : Infinity;
      return { kind: 'external', name: `${external.name}.${name}` };
    }
    if (kind === "module") return moduleAttribute((object as ModuleValue).module, name, object);
    if (kind === 'instance') {
      const instance = object as InstanceValue;
      if (instance.argparse) return { kind: 'external', name: `argparse.${name}`, self: object };
      if (instance.attrs.has(name)) return instance.attrs.get(name)!;
      const fromClass = instance.classValue && classAttribute(instance.classValue, name);
      if (fromClass !== undefined) return bindMethod(fromClass, object);
      return unresolved(node.text, `\`${name}\` is not set on ${instance.className}`);
    }
    if (kind === 'class') {
      const found = classAttribute(object as ClassValue, name);
      return found ?? unresolved(node.text, `class ${(object as ClassValue).name} has no \`${name}\``);
    }
    if (kind === 'tensor' || kind === 'parameter') return tensorAttribute(object, name, node);
    if (kind === 'dict' || isList(object) || typeof object === 'string') return { kind: 'external', name: `method.${name}`, self: object };
    if (isUnresolvedValue(object)) return object;
    return unresolved(node.text, `cannot read \`${name}\` here`);
  }

  private subscript(node: SyntaxNode, scope: Scope): PyValue {
    const container = this.evaluate(node.childForFieldName('value')!, scope);
    const indexNodes = node.childrenForFieldName('subscript');
    const indices = indexNodes.map((n) => this.evaluate(n, scope));
    const key = indices.length === 1 ? indices[0]! : tuple(indices);
    if (isTensorLike(container)) return callTensorMethod(this, container, '__getitem__', isList(key) && key.tuple ? [...key] : [key], new Map(), node);
    if (isList(container)) {
      if (typeof key === 'number') {
        const item = container[key < 0 ? container.length + key : key];
        return item === undefined ? unresolved(node.text, 'index out of range') : item;
      }
      if (kindOf(key) === 'slice') return sliceList(container, key as { start: PyValue; stop: PyValue; step: PyValue });
    }
    if (kindOf(container) === 'dict' && (typeof key === 'string' || typeof key === 'number')) {
      return (container as DictValue).entries.get(String(key)) ?? unresolved(node.text, `no key ${String(key)}`);
    }
    // `models.__dict__[args.arch]`: a library's namespace looked up by name.
    if (kindOf(container) === 'external' && (container as ExternalValue).name.endsWith('.__dict__') && (container as ExternalValue).self === undefined && typeof key === 'string') {
      return { kind: 'external', name: `${(container as ExternalValue).name.slice(0, -'.__dict__'.length)}.${key}` };
    }
    const module = asModule(container);
    if (module?.kind === 'catalog' && (typeof key === 'string' || (typeof key === 'number' && key >= 0))) {
      return catalogPart(module, String(key)) ?? unresolved(node.text, `no module ${String(key)} in ${module.catalog!.architecture.name}`);
    }
    if (module && module.kind !== 'layer') {
      const children = [...module.children.entries()];
      if (typeof key === 'number') {
        const entry = children[key < 0 ? children.length + key : key];
        return entry ? { kind: 'module', module: entry[1] } : unresolved(node.text, 'index out of range');
      }
      if (typeof key === 'string') {
        const child = module.children.get(key);
        return child ? { kind: 'module', module: child } : unresolved(node.text, `no module named ${key}`);
      }
      if (kindOf(key) === 'slice') {
        const slice = new ModuleObject('sequential', 'Sequential', rangeOf(node));
        for (const [name, child] of sliceList(children as unknown as PyValue[], key as never) as unknown as [string, ModuleObject][]) slice.setChild(name, child);
        return { kind: 'module', module: slice };
      }
    }
    if (isUnresolvedValue(container)) return container;
    return unresolved(node.text, 'cannot index this value');
  }

  private compare(node: SyntaxNode, scope: Scope): PyValue {
    const operands = node.namedChildren.filter((c) => c.type !== 'comment');
    const operators = node.children.filter((c) => !c.isNamed).map((c) => c.text);
    // `is not` and `not in` come as two tokens.
    const ops: string[] = [];
    for (let i = 0; i < operators.length; i++) {
      const op = operators[i]!;
      if ((op === 'is' && operators[i + 1] === 'not') || (op === 'not' && operators[i + 1] === 'in')) {
        ops.push(`${op} ${operators[i + 1]}`);
        i++;
      } else ops.push(op);
    }
    let left = this.evaluate(operands[0]!, scope);
    for (let i = 0; i < ops.length; i++) {
      const right = this.evaluate(operands[i + 1]!, scope);
      const result = compareValues(ops[i]!, left, right);
      if (result === undefined) return unresolved(node.text, 'unknown comparison');
      if (!result) return false;
      left = right;
    }
    return true;
  }

  binary(operator: string, a: PyValue, b: PyValue, node: SyntaxNode): PyValue {
    if (isTensorLike(a) || isTensorLike(b)) return tensorBinary(this, operator, a, b, node);
    if (typeof a === 'number' && typeof b === 'number') {
      const result = arithmetic(operator, a, b);
      return result === undefined ? unresolved(node.text, `cannot compute \`${operator}\``) : this.exactNumber(result, node, Number.isFinite(a) && Number.isFinite(b));
    }
    if (kindOf(a) === 'batch' || kindOf(b) === 'batch') return batchArithmetic(operator, a, b, node);
    if ((operator === '+' && isList(a) && isList(b) && a.length + b.length > MAX_LIST) || (operator === '*' && isList(a) && typeof b === 'number' && (b > MAX_LIST || a.length * b > MAX_LIST))) {
      return unresolved(node.text, `a list of more than ${MAX_LIST} items`);
    }
    if (operator === '+' && isList(a) && isList(b)) return Object.assign([...a, ...b], { tuple: a.tuple });
    if (operator === '*' && isList(a) && typeof b === 'number') return Object.assign(Array.from({ length: Math.max(0, Math.trunc(b)) }, () => a).flat(), { tuple: a.tuple });
    if (operator === '+' && typeof a === 'string' && typeof b === 'string') return a + b;
    if (operator === '%' && typeof a === 'string') return percentFormat(a, isList(b) ? b : [b]) ?? unresolved(node.text, 'formatted string');
    if (isUnresolvedValue(a)) return a;
    if (isUnresolvedValue(b)) return b;
    return unresolved(node.text, `cannot compute \`${operator}\` here`);
  }

  /**
   * A whole number past 2**53 - 1 has no exact JavaScript number (2**64 would print as
   * 18446744073709552000), and no layer or batch is that large: it becomes unknown, with a note.
   * So does arithmetic on finite numbers that overflows to infinity (`2 ** 2000`).
   */
  private exactNumber(value: PyValue, node: SyntaxNode, fromFinite = false): PyValue {
    if (typeof value !== 'number') return value;
    const tooLarge = Number.isInteger(value) ? !Number.isSafeInteger(value) : fromFinite && (value === Infinity || value === -Infinity);
    if (!tooLarge) return value;
    const unknown = unresolved(node.text, `larger than ${Number.MAX_SAFE_INTEGER}`);
    this.note(node, `\`${unknown.unresolved}\` is larger than ${Number.MAX_SAFE_INTEGER} (2**53 - 1), beyond what can be estimated exactly; it is taken as unknown`);
    return unknown;
  }

  // ---------------------------------------------------------------- calls (calls.ts)

  callValue(callee: PyValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
    return callValue(this, callee, args, kwargs, node);
  }

  bindParameters(fn: FunctionValue, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, scope: Scope): void {
    bindParameters(this, fn, args, kwargs, scope);
  }

  instantiate(classValue: ClassValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
    return instantiate(this, classValue, args, kwargs, node);
  }

  callModule(module: ModuleObject, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
    return callModule(this, module, args, kwargs, node);
  }

  /** Runs `module.forward(*args)` of a user module (used by the forward hook). */
  runForward(module: ModuleObject, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
    return runForward(this, module, args, kwargs, node);
  }
}
