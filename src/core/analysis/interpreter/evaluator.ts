import type { SyntaxNode } from '../../parsing/syntax';
import type { ImportTable } from '../imports';
import type { ConfigSources } from '../config/configSources';
import type { ClassValue, DictValue, FunctionValue, ModuleObject, PyValue, Scope } from './pyValues';

/**
 * The project's own modules, as the interpreter asks for them (projectModules.ts implements it):
 * a name imported from `model` or `.layers` is the class or function that file defines. Declared
 * here so that the interpreter's parts need not import the loader, which runs an interpreter.
 */
export interface ProjectImports {
  /** The value behind a qualified import name (`model.GPT`, `.layers.Block`, `models`) as `fromFile` imports it; undefined when no project file provides it. */
  resolve(qualified: string, fromFile: string): PyValue | undefined;
  /** A name bound by `from M import *` of one of the project's modules (honouring `__all__`). */
  fromWildcards(modules: readonly string[], name: string, fromFile: string): PyValue | undefined;
  /**
   * An import statement being run (`import a.b`, `from .resnet import *`, `from . import convnext`):
   * the project modules it names run now, as Python runs them, so that what their top levels do
   * to shared state (a decorator filling a model registry) has happened. Quiet: a module that
   * cannot be found is noted when one of its names is read, not here.
   */
  importNow(module: string, names: readonly string[], fromFile: string): void;
  /** The registry a library keeps for the whole process (`timm`: the builders `@register_model` registered), shared by the project's modules. */
  libraryRegistry(library: string): DictValue;
}

/** Which file an interpreter runs and the project it belongs to; absent for a lone script. */
export interface InterpreterPlace {
  readonly file: string;
  readonly project: ProjectImports;
  /** True for a module the script imports (its classes remember their file), false for the script itself. */
  readonly imported: boolean;
}

/** An external call seen while running the script: the training set-up is read from these. */
export interface CallEvent {
  readonly qualified: string;
  readonly node: SyntaxNode;
  readonly args: readonly PyValue[];
  readonly kwargs: ReadonlyMap<string, PyValue>;
  /** For an optimizer: the modules whose `.parameters()` it was given (parameterOwners.ts), when any are known. */
  readonly parameterOwners?: readonly ModuleObject[];
}

export interface InterpreterHooks {
  /** Every call of a library function or class (torch.optim.Adam, DataLoader, autocast...). */
  onExternalCall?(event: CallEvent): void;
  /** `name = value` in the body being discovered (not inside the functions it calls). */
  onAssign?(name: string, value: PyValue, node: SyntaxNode): void;
  /** `model(x)` in script code: what the script feeds its model. */
  onModelInvocation?(module: ModuleObject, inputs: readonly PyValue[], node: SyntaxNode): void;
  /** A function of the script called from the module body itself (`main(**config)`), with the arguments it gets. */
  onScriptCall?(fn: FunctionValue, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>): void;
  /** `parser.add_argument("--name", ...)`: where the option `name` is declared. */
  onArgument?(name: string, node: SyntaxNode): void;
  /** `parser.parse_args()` wherever it runs (a `parse_args()` helper, `main()`): the options' values, defaults and command line applied. */
  onParsedArguments?(values: ReadonlyMap<string, PyValue>): void;
  /** `p.requires_grad = True` (or `requires_grad_()`) on parameters the analysis cannot follow (`model.get_classifier().parameters()`). */
  onUnfollowedUnfreeze?(node: SyntaxNode): void;
  /** `module(*inputs)` in forward mode; undefined means "not handled". */
  onModuleCall?(module: ModuleObject, inputs: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode): PyValue | undefined;
  /**
   * A functional call that is a row of the layer table (`torch.cat`, `torch.stack`), made in
   * forward mode, with the tensor it returns; only called when the result's shape is known.
   */
  onFunctionalCall?(type: FunctionalRowType, output: PyValue, node: SyntaxNode): void;
  /** `run` is the body of a `torch.utils.checkpoint` call in forward mode (checkpointCalls.ts): the layer calls it makes are one checkpointed segment. */
  onCheckpoint?(run: () => PyValue): PyValue;
}

/** Functional calls that are layer-table rows (docs/layer-table.md, rule 2): concatenations, and the norms, attention, products and softmax a script writes as functions. */
export type FunctionalRowType =
  | 'torch.cat'
  | 'torch.stack'
  | 'torch.layer_norm'
  | 'torch.group_norm'
  | 'torch.batch_norm'
  | 'torch.rms_norm'
  | 'torch.scaled_dot_product_attention'
  | 'torch.matmul'
  | 'torch.softmax';

/** Expressions nested deeper than this (thousands of brackets, `.to()` chains) are not followed. */
export const MAX_EXPRESSION_DEPTH = 150;

/** Runs `run` with one of the interpreter's context counters raised (when `on`), lowered again however it ends. */
export function inContext<T>(interp: Evaluator, counter: 'undecidedBranches' | 'gradDisabled', on: boolean, run: () => T): T {
  if (on) interp[counter] += 1;
  try {
    return run();
  } finally {
    if (on) interp[counter] -= 1;
  }
}

/** How a statement or block ends: returning a value, breaking or continuing a loop, or running on (undefined). */
export type Flow = { kind: 'return'; value: PyValue } | { kind: 'break' } | { kind: 'continue' } | undefined;

/**
 * What the interpreter's parts (statements, expressions, calls, forward ops...) ask of the
 * interpreter. They are given it through this interface rather than importing the Interpreter
 * class, which imports them: so no module of the interpreter imports another in a circle.
 */
export interface Evaluator {
  readonly imports: ImportTable;
  /** The file this interpreter runs and its project's modules, when the analysis knows the project. */
  readonly place?: InterpreterPlace;
  /** Environment variables, configuration files and the values the user assumes (absent: none are read). */
  readonly config?: ConfigSources;
  readonly hooks: InterpreterHooks;
  /** Containers that reached MAX_CHILDREN (noted once each). */
  readonly truncated: Set<number>;
  /** Classes registered beside one the code picked from a registry: alternatives to it, not models of their own. */
  readonly registryAlternatives: Set<ClassValue>;
  /** How deeply calls nest (bounded, against recursion). */
  depth: number;
  /** How deeply expressions nest (bounded by MAX_EXPRESSION_DEPTH). */
  expressionDepth: number;
  /** True while running `forward`: module calls are layers, not objects to build. */
  readonly forwardMode: boolean;
  /** True while running the script's own code (module body, main(), train()), false inside constructors. */
  scriptLevel: boolean;
  /** How many `if` branches taken on a condition the analysis cannot decide enclose the code running now. */
  undecidedBranches: number;
  /** How many contexts that turn autograd off (`with torch.no_grad():`, gradMode.ts) enclose the code running now. */
  gradDisabled: number;
  tick(): void;
  note(node: SyntaxNode | undefined, message: string): void;
  /** Reports a functional row (`torch.cat`, `torch.stack`) made by forward code. */
  functionalCall(type: FunctionalRowType, output: PyValue, node: SyntaxNode): void;
  execBlock(block: SyntaxNode | null, scope: Scope, discovering?: boolean): Flow;
  evaluate(node: SyntaxNode, scope: Scope): PyValue;
  /** A bare name as the code at `node` reads it: the scope, then the imports, then the builtins. */
  lookupName(name: string, scope: Scope, node: SyntaxNode): PyValue;
  bind(target: SyntaxNode, value: PyValue, scope: Scope, discovering?: boolean): void;
  /** The items a `for` loop visits, when they are known. */
  iterate(value: PyValue): PyValue[] | undefined;
  attribute(object: PyValue, name: string, node: SyntaxNode): PyValue;
  binary(operator: string, a: PyValue, b: PyValue, node: SyntaxNode): PyValue;
  callModule(module: ModuleObject, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue;
  /** Calls a function, class, module or library value with arguments already evaluated. */
  callValue(callee: PyValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue;
}
