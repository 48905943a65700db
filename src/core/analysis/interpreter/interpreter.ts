import { rangeOf, type SyntaxNode } from '../../parsing/syntax';
import type { ImportTable } from '../imports';
import type { AnalysisNote } from '../modelDescription';
import type { ConfigSources } from '../config/configSources';
import { Budget } from './budget';
import { bindParameters, callModule, callValue, instantiate, runForward } from './calls';
import { classAttribute } from './classes';
import type { Evaluator, Flow, FunctionalRowType, InterpreterHooks, InterpreterPlace } from './evaluator';
import { attribute, binary, evaluate, lookup } from './expressions';
import type { ClassValue, FunctionValue, ModuleObject, PyValue, Scope } from './pyValues';
import { bind, exec, execBlock, iterate } from './statements';

export { BudgetExceeded } from './budget';
export type { CallEvent, FunctionalRowType, InterpreterHooks, InterpreterPlace, ProjectImports } from './evaluator';

/**
 * A small, bounded Python interpreter over the syntax tree: enough of the language to build
 * the modules a script constructs (constructors, helpers, loops, comprehensions, configs,
 * argparse defaults) and to follow `forward()` with tensor shapes. It never throws for the
 * script's sake: what it cannot follow becomes `Unresolved` with a reason.
 *
 * The class holds the state (notes, budget, depths, modes) and the entry points; the language
 * itself is in statements.ts, expressions.ts and calls.ts, which get the interpreter as an
 * `Evaluator` (evaluator.ts) instead of importing this class.
 */
export class Interpreter implements Evaluator {
  readonly notes: AnalysisNote[] = [];
  /** Containers that reached MAX_CHILDREN (noted once each). */
  readonly truncated = new Set<number>();
  /** Classes registered beside one the code picked from a registry: alternatives to it, not models of their own. */
  readonly registryAlternatives = new Set<ClassValue>();
  depth = 0;
  expressionDepth = 0;
  /** True while running `forward`: module calls are layers, not objects to build. */
  forwardMode = false;
  /** True while running the script's own code (module body, main(), train()), false inside constructors. */
  scriptLevel = false;
  undecidedBranches = 0;
  gradDisabled = 0;

  constructor(
    readonly imports: ImportTable,
    readonly hooks: InterpreterHooks = {},
    private readonly budget: Budget = new Budget(200_000, 1_000),
    readonly place?: InterpreterPlace,
    readonly config?: ConfigSources,
  ) {}

  note(node: SyntaxNode | undefined, message: string): void {
    // A note without a place is about the analysis as a whole: once is enough (a lookup in a loop repeats it).
    if (!node && this.notes.some((note) => !note.range && note.message === message)) return;
    if (this.notes.length < 200) this.notes.push({ severity: 'warning', message, range: node ? rangeOf(node) : undefined });
  }

  /** Reports a functional row (`torch.cat`, `torch.stack`) made by forward code. */
  functionalCall(type: FunctionalRowType, output: PyValue, node: SyntaxNode): void {
    if (this.forwardMode) this.hooks.onFunctionalCall?.(type, output, node);
  }

  tick(): void {
    this.budget.tick();
  }

  // ---------------------------------------------------------------- statements (statements.ts)

  execBlock(block: SyntaxNode | null, scope: Scope, discovering = false): Flow {
    return execBlock(this, block, scope, discovering);
  }

  exec(node: SyntaxNode, scope: Scope, discovering = false): Flow {
    return exec(this, node, scope, discovering);
  }

  /** The items a `for` loop visits, when they are known. */
  iterate(value: PyValue): PyValue[] | undefined {
    return iterate(value);
  }

  bind(target: SyntaxNode, value: PyValue, scope: Scope, discovering = false): void {
    bind(this, target, value, scope, discovering);
  }

  /** An attribute of a class, looked up through its bases (method resolution order, simplified). */
  classAttribute(classValue: ClassValue, name: string): PyValue | undefined {
    return classAttribute(classValue, name);
  }

  // ---------------------------------------------------------------- expressions (expressions.ts)

  evaluate(node: SyntaxNode, scope: Scope): PyValue {
    return evaluate(this, node, scope);
  }

  lookupName(name: string, scope: Scope, node: SyntaxNode): PyValue {
    return lookup(this, name, scope, node);
  }

  attribute(object: PyValue, name: string, node: SyntaxNode): PyValue {
    return attribute(object, name, node);
  }

  binary(operator: string, a: PyValue, b: PyValue, node: SyntaxNode): PyValue {
    return binary(this, operator, a, b, node);
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
