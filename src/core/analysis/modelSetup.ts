import { rangeOf, type SourceRange, type SyntaxNode } from '../parsing/syntax';
import type { CallEvent } from './interpreter/interpreter';
import type { ModuleObject } from './interpreter/pyValues';
import type { Found, ModelDescription, ModelSetup, OptimizerSource, Sourced, TrainingLoop, TrainingSetup } from './modelDescription';
import { childPath } from '../layerTable/layerTable';
import { LayerArgs } from '../layers/layerArgs';
import { layerSpec } from '../layers/layerSpecs';
import { loopsOf } from './trainingLoops';
import { dataLoaderBatches, optimizerOf, sourcedOptimizer } from './trainingSetup';

/**
 * Each model's own training set-up, by following the data flow rather than taking the file's
 * first optimizer and loader: the optimizer that was given the model's parameters
 * (`Adam(model.parameters())`, parameter groups, `itertools.chain(a.parameters(), b.parameters())`),
 * and the DataLoader whose batches its training loop iterates (`for x, y in train_loader:`
 * around `loss.backward()`). What the data flow does not settle stays the file's (TrainingSetup).
 */
export function modelSetups(models: readonly ModelDescription[], events: readonly CallEvent[], root: SyntaxNode, loops: readonly TrainingLoop[], argumentNodes: ReadonlyMap<string, SyntaxNode>, loaderNames: ReadonlyMap<CallEvent, string> = new Map()): Map<ModelDescription, ModelSetup> {
  const optimizers = events.flatMap((call) => {
    const found = optimizerOf(call);
    return found ? [{ found, owners: call.parameterOwners ?? [] }] : [];
  });
  const loaders = dataLoaderBatches(events, argumentNodes)
    // A loader a builder returns (`train_loader = build_loader(cfg)`) goes by the name the script binds it to.
    .map((found) => ({ found, name: boundName(found.call.node) ?? loaderNames.get(found.call) }))
    .filter((loader): loader is { found: Found<number> & { call: CallEvent }; name: string } => loader.name !== undefined);
  const names = models.map((model) => model.name);
  const setups = new Map<ModelDescription, ModelSetup>();
  for (const model of models) {
    const setup: { optimizer?: OptimizerSource; batchSize?: Sourced<number>; optimizerMissing?: string; optimizedPaths?: readonly string[] } = {};
    const own = optimizers.find(({ owners }) => owners.some((owner) => related(owner, model.root)));
    // Every optimizer given parts of this model (a GAN module's two: the generator's and the discriminator's) holds state.
    const holders = optimizers.flatMap(({ owners }) => owners.filter((owner) => related(owner, model.root)));
    const held = own && heldPaths(holders, model.root);
    if (held) setup.optimizedPaths = held;
    if (own) setup.optimizer = sourcedOptimizer(own.found);
    else if (optimizers.length > 0) {
      // Optimizers whose parameters are unknown may be this model's; those given other models' parameters are not.
      const unknown = optimizers.find(({ owners }) => owners.length === 0);
      if (unknown) setup.optimizer = sourcedOptimizer(unknown.found);
      else {
        setup.optimizer = undefined;
        setup.optimizerMissing = `No optimizer is given ${model.name}'s parameters (${optimizers.map(({ found }) => `${found.origin} on line ${rangeOf(found.node).startLine + 1}`).join(', ')} train${optimizers.length === 1 ? 's' : ''} other models); Adam is assumed.`;
      }
    }
    const loader = loaderOf(model, loaders, loops, names, root);
    if (loader) setup.batchSize = sourced(loader.found);
    if (Object.keys(setup).length) setups.set(model, setup);
  }
  return setups;
}

const sourced = <T>(found: Found<T>): Sourced<T> => ({ value: found.value, range: rangeOf(found.node), origin: found.origin });

/**
 * The paths in the model of the parts whose parameters an optimizer was given (`model.fc`,
 * `model.backbone.layer4` of a standard architecture); undefined where it holds the whole model,
 * or a part the analysis cannot place.
 */
function heldPaths(owners: readonly ModuleObject[], root: ModuleObject): string[] | undefined {
  const paths = new Map<number, string>([[root.id, ''], ...root.namedModules().map(([path, module]): [number, string] => [module.id, path])]);
  const held: string[] = [];
  for (const owner of owners) {
    const own = paths.get(owner.id);
    const part = owner.catalog && owner.catalog.root !== owner ? owner.catalog : undefined;
    const partRoot = part ? paths.get(part.root.id) : undefined;
    const path = own ?? (part && partRoot !== undefined ? childPath(partRoot, part.path) : undefined);
    if (path === undefined || path === '') return undefined;
    held.push(path);
  }
  // Parts that together hold every parameter (a GAN module's generator and discriminator, each with its optimizer) are the whole model.
  const covered = (path: string) => held.some((part) => path === part || path.startsWith(`${part}.`));
  const outside = [['', root] as [string, ModuleObject], ...root.namedModules()].some(([path, module]) => !covered(path) && ownsParameters(module));
  return held.length > 0 && outside ? held : undefined;
}

/** A module with parameters of its own: a layer that has some, a standard architecture, or a module registering nn.Parameter. */
function ownsParameters(module: ModuleObject): boolean {
  if (module.parameters.size > 0 || module.kind === 'catalog') return true;
  if (module.kind !== 'layer' || !module.layer) return false;
  try {
    return (layerSpec(module.layer.type)?.params(new LayerArgs(module.layer)) ?? 1) > 0;
  } catch {
    // Arguments the analysis cannot read: it may hold parameters.
    return true;
  }
}

/** One module holds the other (a model and the part of it an optimizer was given, or the wrapper it is inside). */
function related(owner: ModuleObject, model: ModuleObject): boolean {
  if (owner === model) return true;
  return model.namedModules().some(([, part]) => part === owner) || owner.namedModules().some(([, part]) => part === model);
}

/** The name a call's result is bound to: `train_loader = DataLoader(...)`, `self.train_loader = ...` (its last part). */
function boundName(call: SyntaxNode): string | undefined {
  const assignment = call.parent?.type === 'assignment' && call.parent.childForFieldName('right')?.id === call.id ? call.parent : undefined;
  const left = assignment?.childForFieldName('left');
  if (left?.type === 'identifier') return left.text;
  if (left?.type === 'attribute') return left.childForFieldName('attribute')?.text;
  return undefined;
}

/**
 * The loader whose batches reach the model: among those its training loops mention, one a `for`
 * loop iterates around a training step (`for x, y in train_loader: ... loss.backward()`), else
 * one named for training (`train_loader` beside `val_loader`). When its loops in this file mention
 * none (the loop is a trainer class's in another file, `for batch in self.train_loader:`), the one
 * loader of several named for training; else undefined.
 */
function loaderOf<L extends { found: Found<number>; name: string }>(model: ModelDescription, loaders: readonly L[], loops: readonly TrainingLoop[], names: readonly string[], root: SyntaxNode): L | undefined {
  const own = loopsOf(model.name, loops, names);
  const mentioned = loaders.filter((loader) => own.some((loop) => loop.names.has(loader.name)));
  if (mentioned.length === 0) {
    const training = loaders.filter((loader) => /train/i.test(loader.name));
    return loaders.length > 1 && training.length === 1 ? training[0] : undefined;
  }
  const iterated = new Set(own.flatMap((loop) => steppedLoopIterables(root, loop.range)));
  return mentioned.find((loader) => iterated.has(loader.name)) ?? mentioned.find((loader) => /train/i.test(loader.name));
}

const STEP = /\.(backward|step)\s*\(/;

/** The names in the iterables of `for` loops within a range whose bodies make a training step. */
function steppedLoopIterables(root: SyntaxNode, range: SourceRange): string[] {
  const names: string[] = [];
  for (const statement of root.children) {
    if (statement.endPosition.row < range.startLine || statement.startPosition.row > range.endLine) continue;
    for (const loop of forLoops(statement)) {
      if (loop.startPosition.row < range.startLine || loop.endPosition.row > range.endLine) continue;
      const body = loop.childForFieldName('body');
      if (!body || !STEP.test(body.text)) continue;
      for (const identifier of loop.childForFieldName('right')?.descendantsOfType('identifier') ?? []) names.push(identifier.text);
      const right = loop.childForFieldName('right');
      if (right?.type === 'identifier') names.push(right.text);
    }
  }
  return names;
}

const forLoopsByStatement = new WeakMap<SyntaxNode, SyntaxNode[]>();

function forLoops(statement: SyntaxNode): SyntaxNode[] {
  let loops = forLoopsByStatement.get(statement);
  if (!loops) forLoopsByStatement.set(statement, (loops = statement.type === 'for_statement' ? [statement, ...statement.descendantsOfType('for_statement')] : statement.descendantsOfType('for_statement')));
  return loops;
}

/** The file's set-up with a model's own values over it. */
export function setupOf(file: TrainingSetup, model: ModelDescription): TrainingSetup {
  return model.setup ? { ...file, ...model.setup } : file;
}
