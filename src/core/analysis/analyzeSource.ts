import type { Tree } from 'web-tree-sitter';
import { rangeOf, type SyntaxNode } from '../parsing/syntax';
import { copySyntaxTree } from '../parsing/syntaxTree';
import { ImportTable } from './imports';
import { Budget } from './interpreter/budget';
import { BudgetExceeded, Interpreter, isLoss, type CallEvent } from './interpreter/interpreter';
import type { ModuleObject } from './interpreter/moduleObject';
import { asModule, kindOf, type ClassValue, type FunctionValue, type PyValue } from './interpreter/pyValues';
import { Scope } from './interpreter/scope';
import type { AnalysisNote, ModelDescription, ModelKind, SourceAnalysis, Sourced } from './modelDescription';
import { shapeOf } from './interpreter/tensorOps';
import { isBatchDim } from '../layers/tensorShape';
import { findTrainingSetup } from './trainingSetup';

/** What discovery may spend of a file's budget: enough for thousands of lines, bounded for hostile input. */
const DISCOVERY_STEPS = 200_000;
const DISCOVERY_MILLIS = 150;
const MAX_EVENTS = 5_000;

interface Candidate {
  readonly name: string;
  readonly module: ModuleObject;
  readonly node: SyntaxNode;
}

/**
 * From a syntax tree to the models and training set-up the script describes. Runs the module
 * body and each top-level function body symbolically (see interpreter/), recording the models
 * bound to names and the library calls made (optimizers, data loaders, autocast). Never runs Python.
 */
/** The plain copy of the last tree analysed, kept by an editor so the next copy can reuse it. */
export interface SyntaxCache {
  root?: SyntaxNode;
}

export function analyzeSource(tree: Tree, source = tree.rootNode.text, budget = fileBudget(), cache?: SyntaxCache): SourceAnalysis {
  const root = copySyntaxTree(tree, source, cache?.root);
  if (cache) cache.root = root;
  const imports = ImportTable.fromModule(root);
  const events: CallEvent[] = [];
  const candidates: Candidate[] = [];
  const invocations = new Map<number, Sourced<readonly (readonly number[])[]>>();
  const arities = new Map<number, number>();
  const interpreter = new Interpreter(
    imports,
    {
      onExternalCall: (event) => {
        if (events.length < MAX_EVENTS) events.push(event);
      },
      onModelInvocation: (module, inputs, node) => {
        if (!arities.has(module.id)) arities.set(module.id, inputs.length);
        const samples = exampleSamples(inputs);
        if (samples && !invocations.has(module.id)) invocations.set(module.id, { value: samples, range: rangeOf(node), origin: `the tensors passed in ${node.text.split('\n')[0]}` });
      },
      onAssign: (name, value, node) => {
        const module = asModule(value);
        if (module) candidates.push({ name, module, node: constructionNode(node) });
      },
    },
    budget.limit(DISCOVERY_STEPS, DISCOVERY_MILLIS),
  );
  const scope = new Scope();
  const notes: AnalysisNote[] = [];
  interpreter.scriptLevel = true;
  discover(() => interpreter.execBlock(root, scope, true), notes);
  for (const fn of topLevelFunctions(root, scope)) {
    discover(
      () => {
        const local = scope.child();
        interpreter.bindParameters(fn, [], new Map(), local);
        interpreter.execBlock(fn.node.childForFieldName('body'), local, true);
      },
      notes,
    );
  }
  const models = [...uniqueModels(candidates), ...unbuiltModuleClasses(interpreter, scope, candidates, notes)].map((model) => {
    const exampleInputs = invocations.get(model.root.id);
    const invocationArity = arities.get(model.root.id);
    return { ...model, ...(exampleInputs ? { exampleInputs } : {}), ...(invocationArity ? { invocationArity } : {}) };
  });
  notes.push(...interpreter.notes.filter((note) => !isNoise(note)));
  if (root.hasError) notes.unshift({ severity: 'warning', message: 'The file has syntax errors; estimates use the parts that parse.' });
  if (models.length === 0) notes.push({ severity: 'info', message: 'No PyTorch model found: no nn.Sequential(...) or nn.Module subclass in this file.' });
  return {
    models,
    context: { imports, scope, budget },
    setup: findTrainingSetup(root, events, scope, interpreter.argumentNodes, imports),
    notes,
    hasSyntaxErrors: root.hasError,
  };
}

/** Sample shapes of example tensors, `torch.randn(B, ...)`: the first dimension is the batch. */
function exampleSamples(inputs: readonly PyValue[]): number[][] | undefined {
  const samples: number[][] = [];
  for (const input of inputs) {
    const shape = shapeOf(input);
    const sample = shape?.slice(1);
    const batchFirst = shape && shape.length >= 2 && (typeof shape[0] === 'number' || (isBatchDim(shape[0]) && shape[0].batch === 1));
    if (!batchFirst || !sample!.every((d): d is number => typeof d === 'number')) return undefined;
    samples.push(sample as number[]);
  }
  return samples.length ? samples : undefined;
}

/** Everything one file's analysis may spend, discovery and every model's forward() together. */
export function fileBudget(): Budget {
  return new Budget(600_000, 400);
}

function discover(run: () => void, notes: AnalysisNote[]): void {
  try {
    run();
  } catch (error) {
    if (!(error instanceof BudgetExceeded)) throw error;
    if (!notes.some((n) => n.message.startsWith('Analysis stopped'))) {
      notes.push({ severity: 'warning', message: `Analysis stopped early (${error.message}); the file is too large or loops too much to follow completely.` });
    }
  }
}

function topLevelFunctions(root: SyntaxNode, scope: Scope): FunctionValue[] {
  const functions: FunctionValue[] = [];
  for (const statement of root.namedChildren) {
    const definition = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (definition?.type !== 'function_definition') continue;
    const value = scope.get(definition.childForFieldName('name')?.text ?? '');
    if (kindOf(value) === 'function' && (value as FunctionValue).node.id === definition.id) functions.push(value as FunctionValue);
  }
  return functions;
}

/** The call on the right of `name = ...`, so the model's range is its construction. */
function constructionNode(target: SyntaxNode): SyntaxNode {
  const assignment = target.parent?.type === 'assignment' ? target.parent : undefined;
  return assignment?.childForFieldName('right') ?? target;
}

function kindOfModel(module: ModuleObject): ModelKind {
  return module.kind === 'user' ? 'module' : module.kind === 'sequential' ? 'sequential' : 'layer';
}

/** One model per module object: `model = Net()` then `model = model.to(device)` is one model, named once. */
function uniqueModels(candidates: readonly Candidate[]): ModelDescription[] {
  const seen = new Set<number>();
  const inside = new Set<number>();
  for (const { module } of candidates) for (const [, child] of module.namedModules()) inside.add(child.id);
  const models: ModelDescription[] = [];
  // A model built in a loop is one model: the first object built at each place counts.
  const places = new Set<string>();
  for (const { name, module, node } of candidates) {
    const place = `${name}@${node.startIndex}`;
    if (seen.has(module.id) || places.has(place) || inside.has(module.id) || module.kind === 'list' || module.kind === 'dict' || isLoss(module.className)) continue;
    seen.add(module.id);
    places.add(place);
    models.push({ name, kind: kindOfModel(module), range: rangeOf(node), root: module, node });
  }
  return models;
}

/**
 * `nn.Module` classes the file defines but never builds, and that no other such class uses:
 * built with their default arguments and named after the class.
 */
function unbuiltModuleClasses(interpreter: Interpreter, scope: Scope, candidates: readonly Candidate[], notes: AnalysisNote[]): ModelDescription[] {
  const built = new Set<string>();
  for (const { module } of candidates) {
    built.add(module.className);
    for (const [, child] of module.namedModules()) built.add(child.className);
  }
  const classes = scope
    .ownNames()
    .map((name) => scope.get(name))
    .filter((value): value is ClassValue => kindOf(value) === 'class' && (value as ClassValue).isModule && !built.has((value as ClassValue).name));
  const instances: { classValue: ClassValue; module: ModuleObject }[] = [];
  for (const classValue of classes) {
    let value: PyValue = null;
    discover(() => (value = interpreter.instantiate(classValue, [], new Map(), classValue.node)), notes);
    const module = asModule(value);
    if (module) instances.push({ classValue, module });
  }
  const used = new Set<string>();
  for (const { module } of instances) for (const [, child] of module.namedModules()) used.add(child.className);
  return instances
    .filter(({ classValue }) => !used.has(classValue.name))
    .map(({ classValue, module }) => ({ name: classValue.name, kind: 'module' as const, range: rangeOf(classValue.node), root: module, node: classValue.node }));
}

/** Notes about code that is not part of any model (loss.item(), prints) are not worth showing. */
function isNoise(note: AnalysisNote): boolean {
  return /is not followed|no value known|not callable/.test(note.message);
}
