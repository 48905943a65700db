import type { Tree } from 'web-tree-sitter';
import { rangeOf, type SourceRange, type SyntaxNode } from '../parsing/syntax';
import { copySyntaxTree } from '../parsing/syntaxTree';
import { ImportTable } from './imports';
import { Budget } from './interpreter/budget';
import { BudgetExceeded, Interpreter, type CallEvent } from './interpreter/interpreter';
import { isLoss } from './interpreter/torchModules';
import { asModule, kindOf, Scope, type ClassValue, type FunctionValue, type ModuleObject, type PyValue } from './interpreter/pyValues';
import type { AnalysisNote, ModelDescription, ModelKind, SourceAnalysis, Sourced } from './modelDescription';
import { shapeOf } from './interpreter/tensorOps';
import { isBatchDim } from '../layers/tensorShape';
import { findTrainingSetup } from './trainingSetup';
import { findTrainingLoops } from './trainingLoops';
import { modelSetups } from './modelSetup';
import { statementGroups, type StatementGroup } from './statementGroups';
import type { ProjectSource } from '../project/projectFiles';
import { ProjectModules, projectUnchanged, type ParseModule } from './projectModules';
import type { InterpreterPlace } from './interpreter/evaluator';
import { ConfigSources, type AssumedValue, type ConfigReading } from './config/configSources';
import { hydraArguments } from './interpreter/configCalls';
import { dirnameOf, isInside, joinPath, normalizePath, relativeTo } from '../project/projectFiles';
import { readDistributed, type LaunchFiles } from './shardingSetup';
import { pinnedVersions, trainerDefaultOptim } from './pinnedVersions';
import { classAttribute } from './interpreter/classes';
import { callersFirst } from './callersFirst';
import { loaderCallOf } from './interpreter/calls';

/** What discovery may spend of a file's budget: enough for thousands of lines, bounded for hostile input. */
const DISCOVERY_STEPS = 200_000;
const DISCOVERY_MILLIS = 150;
/** What one group of statements may spend of that: a runaway loop in one part leaves time for the rest. */
const GROUP_STEPS = 150_000;
const GROUP_MILLIS = 100;
const MAX_EVENTS = 5_000;
const MAX_NOTES = 200;

/**
 * Where a discovered item came from, so items found group by group sort back into the order one
 * run over the file gives: by phase (0: the module body; 1: a top-level function's body; 2: a
 * module class built with its defaults), then by the top-level statement being run, then by
 * position within its group's discovery. One number, compared fast when the groups merge.
 */
type Order = number;

const order = (phase: number, statement: number, sequence: number): Order => phase * 2 ** 42 + Math.min(statement, 2 ** 21 - 1) * 2 ** 21 + Math.min(sequence, 2 ** 21 - 1);

type Ordered<T> = T & { readonly order: Order };

interface Candidate {
  readonly name: string;
  readonly module: ModuleObject;
  readonly node: SyntaxNode;
}

/** What running one group of statements found. Kept between edits while the group's statements are unchanged. */
interface GroupDiscovery {
  readonly candidates: Ordered<Candidate>[];
  readonly unbuilt: Ordered<{ model: ModelDescription }>[];
  readonly events: Ordered<{ event: CallEvent }>[];
  readonly notes: Ordered<{ note: AnalysisNote }>[];
  readonly invocations: Map<number, Sourced<readonly (readonly number[])[]>>;
  readonly arities: Map<number, number>;
  /** Per model object the script calls: whether a call had autograd on, and where the first call without it is. */
  readonly gradModes: Map<number, { withGrad: boolean; withoutGrad?: SourceRange }>;
  /** Unfreezings of parameters the analysis could not follow (requiresGrad.ts). */
  readonly unfollowedUnfreezes: SourceRange[];
  readonly argumentNodes: Ordered<{ name: string; node: SyntaxNode }>[];
  /** The values `parse_args()` gave, wherever it ran: a namespace local to `main()` is no module-level name. */
  readonly parsedArguments: Ordered<{ values: ReadonlyMap<string, PyValue> }>[];
  /** Names the discovered body binds loaders to (`train_loader = build_loader(cfg)`), by the DataLoader(...) call that made each. */
  readonly loaderNames: Ordered<{ call: CallEvent; name: string }>[];
  /** What it read of environment variables, configuration files and the user's assumed values. */
  readonly readings: Ordered<{ reading: ConfigReading }>[];
  readonly scope: Scope;
  /** False when the budget stopped it: such a group runs again next time. */
  readonly complete: boolean;
}

/**
 * What an editor keeps of one document's last analysis: the plain copy of its syntax tree (the
 * next copy reuses unchanged statements) and each statement group's discovery, reused while
 * the group's statements and the file's imports are unchanged.
 */
export interface SyntaxCache {
  root?: SyntaxNode;
  groups?: Map<string, GroupDiscovery>;
  /** What the project's files said when the groups ran (projectModules.ts): a changed imported file runs them again. */
  project?: { readonly key: string; readonly consulted: ReadonlyMap<string, string | boolean | undefined> };
  /** The values the user assumed when the groups ran: other values run them again. */
  assumed?: string;
}

/** The project a script belongs to, and how its other files are parsed (the pipeline keeps parsed files by content). */
export interface ProjectContext {
  readonly source: ProjectSource;
  readonly parse: ParseModule;
}

/**
 * From a syntax tree to the models and training set-up the script describes. Runs the module
 * body and each top-level function body symbolically (see interpreter/), recording the models
 * bound to names and the library calls made (optimizers, data loaders, autocast). Never runs
 * Python. The module's statements run in groups that share no names (statementGroups.ts); with
 * a cache, a group whose statements did not change since the last call is not run again.
 */
export function analyzeSource(
  tree: Tree,
  source: string,
  given?: Budget,
  cache?: SyntaxCache,
  project?: ProjectContext,
  assumed: Readonly<Record<string, AssumedValue>> = {},
  scriptArguments: readonly string[] = [],
): SourceAnalysis {
  const root = copySyntaxTree(tree, source, cache?.root);
  const statementsByGroup = statementGroups(root);
  // The budget bounds following the script; copying the tree and grouping its statements are
  // linear in its size, bounded by the parser's own limits, and must not eat into it.
  const budget = given ?? fileBudget();
  const imports = ImportTable.fromModule(root);
  const importsKey = root
    .descendantsOfType(['import_statement', 'import_from_statement'])
    .map((node) => node.id)
    .join(',');
  const modules = project && new ProjectModules(project.source, root, project.parse, budget);
  const projectKey = project ? `${project.source.root}|${project.source.path}` : '';
  // A group's discovery holds values of the imported modules: it is reused only while every file it read reads the same.
  const kept = cache?.project;
  // The command line is part of what is assumed: other arguments run the groups again.
  const assumedKey = JSON.stringify([Object.entries(assumed).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)), scriptArguments]);
  const projectHolds = (kept?.key ?? '') === projectKey && (!kept || !project || projectUnchanged(kept.consulted, project.source)) && (cache?.assumed ?? '[[],[]]') === assumedKey;
  const config = new ConfigSources(
    assumed,
    modules && {
      read: (path) => modules.readFile(path),
      root: project.source.root,
      scriptDir: dirnameOf(project.source.path),
      shown: (path) => relativeTo(path, project.source.root),
      parse: (path, text) => {
        try {
          return project.parse(path, text);
        } catch {
          return undefined;
        }
      },
    },
    scriptArguments,
  );
  if (modules) modules.config = config;
  const previous = projectHolds ? cache?.groups : undefined;
  const groups = new Map<string, GroupDiscovery>();
  const discoveryBudget = budget.limit(DISCOVERY_STEPS, DISCOVERY_MILLIS);
  const place: InterpreterPlace | undefined = modules && { file: project.source.path, project: modules, imported: false };
  const setUpNotes = modules ? modules.notes.length : 0;
  for (const group of statementsByGroup) {
    const key = `${importsKey}|${group.statements.map((node) => node.id).join(',')}`;
    const known = previous?.get(key);
    groups.set(key, known?.complete ? known : discoveryBudget.spent() ? unexplored() : discoverGroup(group, imports, discoveryBudget, config, place && { place, modules: modules! }));
  }
  if (cache) {
    cache.root = root;
    cache.groups = groups;
    cache.assumed = assumedKey;
    cache.project = modules ? { key: projectKey, consulted: new Map([...(previous ? (cache.project?.consulted ?? []) : []), ...modules.consulted]) } : undefined;
  }
  const found = [...groups.values()];
  const byOrder = <T>(items: Ordered<T>[]): Ordered<T>[] => items.sort((a, b) => a.order - b.order);
  const candidates = byOrder(found.flatMap((group) => group.candidates));
  const invocations = new Map(found.flatMap((group) => [...group.invocations]));
  const arities = new Map(found.flatMap((group) => [...group.arities]));
  const unfollowedUnfreeze = found.flatMap((group) => group.unfollowedUnfreezes)[0];
  const gradModes = new Map<number, { withGrad: boolean; withoutGrad?: SourceRange }>();
  for (const group of found) for (const [id, mode] of group.gradModes) gradModes.set(id, { withGrad: mode.withGrad || gradModes.get(id)?.withGrad === true, withoutGrad: gradModes.get(id)?.withoutGrad ?? mode.withoutGrad });
  const models = [...uniqueModels(candidates), ...byOrder(found.flatMap((group) => group.unbuilt)).map(({ model }) => model)].map((model) => {
    const exampleInputs = invocations.get(model.root.id);
    const invocationArity = arities.get(model.root.id);
    // A model the script only ever calls with autograd off (a distillation teacher under torch.no_grad()) runs inference only.
    const mode = gradModes.get(model.root.id);
    const inferenceOnly = mode && !mode.withGrad ? mode.withoutGrad : undefined;
    return { ...model, ...(exampleInputs ? { exampleInputs } : {}), ...(invocationArity ? { invocationArity } : {}), ...(inferenceOnly ? { inferenceOnly } : {}), ...(unfollowedUnfreeze ? { unfollowedUnfreeze } : {}) };
  });
  const scope = new Scope();
  for (const group of found) for (const name of group.scope.ownNames()) scope.set(name, group.scope.get(name)!);
  const argumentNodes = new Map(byOrder(found.flatMap((group) => group.argumentNodes)).map(({ name, node }) => [name, node]));
  // The first parse of an option counts, as the first declaration's node does.
  const parsedArguments = new Map<string, PyValue>();
  for (const { values } of byOrder(found.flatMap((group) => group.parsedArguments))) for (const [name, value] of values) if (!parsedArguments.has(name)) parsedArguments.set(name, value);
  const events = byOrder(found.flatMap((group) => group.events))
    .slice(0, MAX_EVENTS)
    .map(({ event }) => event);
  const readings = byOrder(found.flatMap((group) => group.readings))
    .map(({ reading }) => reading)
    .filter((reading, i, all) => all.findIndex((r) => r.key === reading.key && r.origin === reading.origin && r.value === reading.value) === i);
  const notes = [...(modules?.notes.slice(0, setUpNotes) ?? []), ...byOrder(found.flatMap((group) => group.notes)).map(({ note }) => note)];
  const firstStop = notes.findIndex((note) => note.message.startsWith('Analysis stopped'));
  const shown = notes.filter((note, i) => !note.message.startsWith('Analysis stopped') || i === firstStop).slice(0, MAX_NOTES);
  if (root.hasError) shown.unshift({ severity: 'warning', message: 'The file has syntax errors; estimates use the parts that parse.' });
  // Where the analysis stopped early, the model may be in what it did not reach: "none in this file" would be wrong.
  if (models.length === 0 && firstStop >= 0) shown.push({ severity: 'info', message: 'No PyTorch model found in the part of the file the analysis reached before it stopped.' });
  else if (models.length === 0) shown.push({ severity: 'info', message: `No PyTorch model found: no nn.Sequential(...) or nn.Module subclass in this file${modules ? notInProject(modules, imports) : ''}.` });
  const trainingLoops = findTrainingLoops(root);
  // The first name a loader is bound to counts (`loader = build_loader(cfg)` before `loader = accelerator.prepare(loader)`).
  const loaderNames = new Map<CallEvent, string>();
  for (const { call, name } of byOrder(found.flatMap((group) => group.loaderNames))) if (!loaderNames.has(call)) loaderNames.set(call, name);
  const own = modelSetups(models, events, root, trainingLoops, argumentNodes, loaderNames);
  const projectFiles = modules && launchFilesOf(modules, project);
  const distributed = readDistributed(events, projectFiles);
  shown.push(...distributed.notes.map((message) => ({ severity: 'warning' as const, message })));
  // The launch scripts and configs read for it are consulted files too: an edit to one re-estimates.
  if (cache?.project && modules) cache.project = { key: projectKey, consulted: new Map([...cache.project.consulted, ...modules.consulted]) };
  return {
    models: models.map((model) => (own.has(model) ? { ...model, setup: own.get(model)! } : model)),
    context: { imports, scope, budget },
    setup: findTrainingSetup(root, events, scope, { nodes: argumentNodes, parsed: parsedArguments, assumed }, imports, distributed, trainerDefaultOptim(pinnedVersions(projectFiles))),
    trainingLoops,
    configReadings: readings,
    notes: shown,
    hasSyntaxErrors: root.hasError,
    ...(cache?.project || modules ? { projectFiles: filesRead(cache?.project?.consulted ?? modules!.consulted) } : {}),
  };
}

/**
 * The files a launch command or a DeepSpeed/accelerate config may be in, relative to the script's
 * folder, then the project root. Read only for scripts that use a library that runs on several
 * GPUs, so that a plain script does not look for launch scripts on every edit.
 */
function launchFilesOf(modules: ProjectModules, project: ProjectContext): LaunchFiles {
  const path = project.source.path;
  return {
    scriptName: path.slice(path.lastIndexOf('/') + 1),
    read(relative) {
      for (const dir of new Set([dirnameOf(path), project.source.root])) {
        const file = normalizePath(joinPath(dir, relative));
        if (!isInside(file, project.source.root)) continue;
        const text = modules.readFile(file);
        if (text !== undefined) return { shown: relativeTo(file, project.source.root), text };
      }
      return undefined;
    },
  };
}

/** For a script without a model: the imports the project has no file for, and where they were looked for. */
function notInProject(modules: ProjectModules, imports: ImportTable): string {
  const missing = modules.missingModules([...imports.qualifiedNames, ...imports.wildcardModules]);
  if (missing.length === 0) return '';
  const where = modules.searchFolders.join(', ');
  return ` or in the project modules it imports; ${missing.map((name) => `\`${name}\``).join(', ')} ${missing.length === 1 ? 'is' : 'are'} not a file of the project (looked for ${missing.map((name) => `${name}.py and ${name}/`).join(', ')} in ${where}; the CLI's --root sets the project root)`;
}

/** The project files an analysis read (not the paths it only looked for). */
function filesRead(consulted: ReadonlyMap<string, string | boolean | undefined>): string[] {
  return [...consulted].filter(([key, text]) => key.startsWith('read:') && text !== undefined).map(([key]) => key.slice('read:'.length)).sort();
}

/** The one note a file gets when discovery's budget cuts it short (later ones are dropped when the groups merge). */
function stopped(reason: string): AnalysisNote {
  return { severity: 'warning', message: `Analysis stopped early (${reason}); the file is too large or loops too much to follow completely.` };
}

/** A group left unrun because discovery's budget is spent: it runs next time. */
function unexplored(): GroupDiscovery {
  return { candidates: [], unbuilt: [], events: [], notes: [{ note: stopped('out of time or steps'), order: 0 }], invocations: new Map(), arities: new Map(), gradModes: new Map(), unfollowedUnfreezes: [], argumentNodes: [], parsedArguments: [], loaderNames: [], readings: [], scope: new Scope(), complete: false };
}

/** Runs one group's statements as the module body, then its top-level functions, then builds its unbuilt module classes. */
function discoverGroup(group: StatementGroup, imports: ImportTable, discoveryBudget: Budget, config: ConfigSources, project?: { place: InterpreterPlace; modules: ProjectModules }): GroupDiscovery {
  let phase = 0;
  let statementIndex = 0;
  let sequence = 0;
  const at = (): Order => order(phase, statementIndex, sequence++);
  const found: GroupDiscovery = {
    candidates: [],
    unbuilt: [],
    events: [],
    notes: [],
    invocations: new Map(),
    arities: new Map(),
    gradModes: new Map(),
    unfollowedUnfreezes: [],
    argumentNodes: [],
    parsedArguments: [],
    loaderNames: [],
    readings: [],
    scope: new Scope(),
    complete: true,
  };
  const readingsBefore = config.readings.length;
  const configNotesBefore = config.notes.length;
  const groupBudget = discoveryBudget.limit(GROUP_STEPS, GROUP_MILLIS);
  /** Top-level functions the module body calls with arguments, and the first such call's arguments. */
  const scriptCalls = new Map<number, { args: readonly PyValue[]; kwargs: ReadonlyMap<string, PyValue> }>();
  if (project) project.modules.payer = groupBudget;
  const interpreter = new Interpreter(
    imports,
    {
      onExternalCall: (event) => {
        if (found.events.length < MAX_EVENTS) found.events.push({ event, order: at() });
      },
      onModelInvocation: (module, inputs, node) => {
        if (!found.arities.has(module.id)) found.arities.set(module.id, inputs.length);
        const mode = found.gradModes.get(module.id) ?? { withGrad: false };
        found.gradModes.set(module.id, interpreter.gradDisabled > 0 ? { ...mode, withoutGrad: mode.withoutGrad ?? rangeOf(node) } : { ...mode, withGrad: true });
        const samples = exampleSamples(inputs);
        if (samples && !found.invocations.has(module.id)) found.invocations.set(module.id, { value: samples, range: rangeOf(node), origin: `the tensors passed in ${node.text.split('\n')[0]}` });
      },
      onAssign: (name, value, node) => {
        const module = asModule(value);
        if (module) found.candidates.push({ name, module, node: constructionNode(node), order: at() });
        const loader = loaderCallOf(value);
        if (loader) found.loaderNames.push({ call: loader, name, order: at() });
      },
      onArgument: (name, node) => found.argumentNodes.push({ name, node, order: at() }),
      onParsedArguments: (values) => found.parsedArguments.push({ values: new Map(values), order: at() }),
      onUnfollowedUnfreeze: (node) => found.unfollowedUnfreezes.push(rangeOf(node)),
      onScriptCall: (fn, args, kwargs) => {
        // The first call with arguments counts: `main(**config)` under `if __name__ == "__main__":`.
        if ((args.length || kwargs.size) && !scriptCalls.has(fn.node.id)) scriptCalls.set(fn.node.id, { args, kwargs });
      },
    },
    groupBudget,
    project?.place,
    config,
  );
  // What the project's modules note while this group runs (a missing module, a cycle) is this group's: kept with it between edits.
  const projectNotesBefore = project?.modules.notes.length ?? 0;
  // Before the script's first statement, as in Python: its imports' modules have run (once per analysis).
  project?.modules.runScriptImports();
  const { scope } = found;
  let complete = true;
  const discover = (run: () => void): void => {
    try {
      run();
    } catch (error) {
      if (!(error instanceof BudgetExceeded)) throw error;
      if (complete) found.notes.push({ note: stopped(error.message), order: at() });
      complete = false;
    }
  };
  const noteCount = () => interpreter.notes.length;
  const keepNotes = (from: number) => {
    for (const note of interpreter.notes.slice(from)) if (!isNoise(note)) found.notes.push({ note, order: at() });
  };
  interpreter.scriptLevel = true;
  discover(() => {
    for (const [i, statement] of group.statements.entries()) {
      statementIndex = group.indices[i]!;
      const before = noteCount();
      try {
        if (interpreter.exec(statement, scope, true)) break;
      } finally {
        keepNotes(before);
      }
    }
  });
  for (const { fn, index } of callersFirst(topLevelFunctions(group, scope))) {
    phase = 1;
    statementIndex = index;
    const before = noteCount();
    // Discovered with the arguments the module body calls it with (`main(**config)`: dict-driven,
    // the config's values rather than the function's defaults), or, for `@hydra.main(...)`, the composed configuration.
    const called = scriptCalls.get(fn.node.id);
    const given = called ? [...called.args] : hydraArguments(interpreter, fn.node);
    discover(() => {
      const local = scope.child();
      interpreter.bindParameters(fn, given, called?.kwargs ?? new Map(), local);
      interpreter.execBlock(fn.node.childForFieldName('body'), local, true);
    });
    // A helper nothing in the body calls with arguments (LLaMA's `apply_rotary_emb(xq, xk, freqs)`,
    // followed again where forward calls it) ran on unknown parameters: what it could not follow says
    // nothing about the script.
    if (called || given.length > 0 || !hasRequiredParameters(fn.node)) keepNotes(before);
  }
  phase = 2;
  const before = noteCount();
  for (const { model, index } of unbuiltModuleClasses(interpreter, group, scope, found.candidates, discover)) {
    found.unbuilt.push({ model, order: order(2, index, sequence++) });
  }
  keepNotes(before);
  // A LightningModule makes its optimizers in configure_optimizers(), which Lightning calls: so does discovery, on each one built.
  phase = 3;
  const lightningBefore = noteCount();
  for (const module of lightningModules([...found.candidates.map(({ module }) => module), ...found.unbuilt.map(({ model }) => model.root)])) {
    const configure = module.classValue && classAttribute(module.classValue, 'configure_optimizers');
    if (kindOf(configure) !== 'function') continue;
    discover(() => interpreter.callValue({ ...(configure as FunctionValue), self: { kind: 'module', module } }, [], new Map(), (configure as FunctionValue).node));
  }
  keepNotes(lightningBefore);
  for (const note of project?.modules.notes.slice(projectNotesBefore) ?? []) found.notes.push({ note, order: order(0, 0, 0) });
  for (const note of config.notes.slice(configNotesBefore)) found.notes.push({ note, order: at() });
  for (const reading of config.readings.slice(readingsBefore)) found.readings.push({ reading, order: at() });
  return { ...found, complete };
}

/** Each LightningModule among the modules built, once. */
function lightningModules(modules: readonly ModuleObject[]): ModuleObject[] {
  const seen = new Map<number, ModuleObject>();
  for (const module of modules) if (module.classValue?.lightning && !seen.has(module.id)) seen.set(module.id, module);
  return [...seen.values()];
}

/** Sample shapes of example tensors, `torch.randn(B, ...)`: the first dimension is the batch. */
function exampleSamples(inputs: readonly PyValue[]): number[][] | undefined {
  const samples: number[][] = [];
  for (const input of inputs) {
    const shape = shapeOf(input);
    const sample = shape?.slice(1);
    const batchFirst = shape && shape.length >= 2 && (typeof shape[0] === 'number' || (isBatchDim(shape[0]) && shape[0].batch === 1));
    if (!batchFirst || !sample!.every((d): d is number => typeof d === 'number')) return undefined;
    samples.push(sample);
  }
  return samples.length ? samples : undefined;
}

/** Everything one file's analysis may spend, discovery and every model's forward() together. */
export function fileBudget(): Budget {
  return new Budget(600_000, 400);
}

function topLevelFunctions(group: StatementGroup, scope: Scope): { fn: FunctionValue; index: number; node: SyntaxNode; name: string }[] {
  const functions: { fn: FunctionValue; index: number; node: SyntaxNode; name: string }[] = [];
  for (const [i, statement] of group.statements.entries()) {
    const definition = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (definition?.type !== 'function_definition') continue;
    const value = scope.get(definition.childForFieldName('name')?.text ?? '');
    if (kindOf(value) === 'function' && (value as FunctionValue).node.id === definition.id) functions.push({ fn: value as FunctionValue, index: group.indices[i]!, node: definition, name: (value as FunctionValue).name });
  }
  return functions;
}

/** The call on the right of `name = ...`, so the model's range is its construction. */
function constructionNode(target: SyntaxNode): SyntaxNode {
  const assignment = target.parent?.type === 'assignment' ? target.parent : undefined;
  return assignment?.childForFieldName('right') ?? target;
}

function kindOfModel(module: ModuleObject): ModelKind {
  return module.kind === 'user' ? 'module' : module.kind === 'sequential' ? 'sequential' : module.kind === 'catalog' ? 'catalog' : 'layer';
}

/** One model per module object: `model = Net()` then `model = model.to(device)` is one model, named once. */
function uniqueModels(candidates: readonly Candidate[]): ModelDescription[] {
  const seen = new Set<number>();
  const inside = new Set<number>();
  for (const { module } of candidates) for (const [, child] of module.namedModules()) inside.add(child.id);
  // A model whose parts another model was built from (`nn.Sequential(*list(backbone.children())[:-1])`) is that model's donor, not a model.
  const donors = new Set<number>();
  const built = new Map<number, number>();
  candidates.forEach(({ module }, i) => built.set(module.id, built.get(module.id) ?? i));
  for (const { module } of candidates) {
    const parts = [...module.children.values()];
    if (parts.length < 2) continue;
    // Only a model built later can be made of this one's parts.
    const reused = candidates.find(({ module: other }) => {
      if (built.get(other.id)! <= built.get(module.id)! || other.namedModules().some(([, m]) => m === module)) return false;
      const held = new Set(other.children.values());
      return parts.filter((part) => held.has(part)).length * 2 > parts.length;
    });
    if (reused) donors.add(module.id);
  }
  // A builder function (`def build_model(): model = Net(); ...; return model`) is discovered on its own and run again for its
  // caller: the caller's object (`model = build_model(...)`) is the model, not the one the builder made alone.
  const builtForCaller = (candidate: Candidate): boolean => {
    let fn = candidate.node.parent;
    while (fn && fn.type !== 'function_definition') fn = fn.parent;
    const builder = fn?.childForFieldName('name')?.text;
    if (!fn || !builder) return false;
    const returned = fn.descendantsOfType('return_statement').some((statement) => /^[\w.]+/.exec(statement.namedChildren[0]?.text ?? '')?.[0].split('.')[0] === candidate.name);
    return returned && candidates.some(({ module, node }) => module.id !== candidate.module.id && [node, ...node.descendantsOfType('call')].some((call) => call.type === 'call' && call.childForFieldName('function')?.text === builder));
  };
  const models: ModelDescription[] = [];
  // A model built in a loop is one model: the first object built at each place counts.
  const places = new Set<string>();
  for (const candidate of candidates) {
    const { name, module, node } = candidate;
    const place = `${name}@${node.startIndex}`;
    if (builtForCaller(candidate)) continue;
    // A part of a standard architecture (`head = model.fc`) belongs to that model.
    if (module.catalog && module.catalog.path !== '') continue;
    if (seen.has(module.id) || places.has(place) || inside.has(module.id) || donors.has(module.id) || module.kind === 'list' || module.kind === 'dict' || isLoss(module.className)) continue;
    seen.add(module.id);
    places.add(place);
    models.push({ name, kind: kindOfModel(module), range: rangeOf(node), root: module, node });
  }
  return models;
}

/**
 * `nn.Module` classes the group defines but never builds, and that no other such class uses:
 * built with their default arguments and named after the class.
 */
function unbuiltModuleClasses(interpreter: Interpreter, group: StatementGroup, scope: Scope, candidates: readonly Candidate[], discover: (run: () => void) => void): { model: ModelDescription; index: number }[] {
  const built = new Set<string>();
  for (const { module } of candidates) {
    built.add(module.className);
    for (const [, child] of module.namedModules()) built.add(child.className);
  }
  const classes: { classValue: ClassValue; index: number }[] = [];
  for (const [i, statement] of group.statements.entries()) {
    const definition = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (definition?.type !== 'class_definition') continue;
    const value = scope.get(definition.childForFieldName('name')?.text ?? '');
    // A class registered beside the one the script picked from the registry is the user's other choice, not a model.
    // A subclass of a torch layer (`class StdConv2d(nn.Conv2d)`) is a part of models, not one.
    if (kindOf(value) === 'class' && (value as ClassValue).isModule && !(value as ClassValue).layerBase && (value as ClassValue).node.id === definition.id && !built.has((value as ClassValue).name) && !interpreter.registryAlternatives.has(value as ClassValue)) {
      classes.push({ classValue: value as ClassValue, index: group.indices[i]! });
    }
  }
  const instances: { classValue: ClassValue; module: ModuleObject; index: number }[] = [];
  for (const { classValue, index } of classes) {
    let value: PyValue = null;
    discover(() => (value = interpreter.instantiate(classValue, [], new Map(), classValue.node)));
    const module = asModule(value);
    if (module) instances.push({ classValue, module, index });
  }
  const used = new Set<string>();
  for (const { module } of instances) for (const [, child] of module.namedModules()) used.add(child.className);
  return instances
    .filter(({ classValue }) => !used.has(classValue.name))
    .map(({ classValue, module, index }) => ({ model: { name: classValue.name, kind: 'module' as const, range: rangeOf(classValue.node), root: module, node: classValue.node }, index }));
}

/** `def f(a, b=1)`: a parameter without a default (not `*args` or `**kwargs`). */
function hasRequiredParameters(fn: SyntaxNode): boolean {
  return (fn.childForFieldName('parameters')?.namedChildren ?? []).some((parameter) => parameter.type === 'identifier' || parameter.type === 'typed_parameter');
}

/** Notes about code that is not part of any model (loss.item(), prints) are not worth showing. */
function isNoise(note: AnalysisNote): boolean {
  return /is not followed|no value known|not callable/.test(note.message);
}
