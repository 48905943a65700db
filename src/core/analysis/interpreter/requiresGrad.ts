// Frozen parameters: what the script sets `requires_grad` on, and which layer-table rows that leaves trainable.
import { rangeOf, type SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { catalogRows } from './catalogRows';
import type { LayerRow } from '../../layerTable/layerTable';
import { childPath, isUnderPath } from '../../layerTable/layerTable';
import { asModule, kindOf, tuple, type ExternalValue, type GradSetting, type Scope, type ModuleObject, type ParameterValue, type PyList, type PyValue } from './pyValues';

/**
 * One parameter of a module as `for p in model.parameters()` visits it: its name (for
 * `named_parameters()` and the conditions scripts write on it) and where a `requires_grad` set on
 * it is recorded: the module `.parameters()` was called on and the owning module's path below it.
 */
export interface ParameterHandle extends ParameterValue {
  /** `receiver`: whose `.parameters()` listed it; `owner` and `path`: the module holding it and the parameters under it a setting covers. */
  readonly handle: { readonly receiver: ModuleObject; readonly owner: ModuleObject; readonly path: string; readonly name: string; readonly ownRow?: boolean };
}

/**
 * Beyond this many parameter tensors a loop over them is not followed one by one (an 8B decoder
 * lists about 580 names, a 70B one about 1,450): each round runs the loop's body, and the file's
 * analysis has a time budget. A loop whose body only sets requires_grad is applied whole instead.
 */
const MAX_HANDLES = 1024;

/** Layers whose parameters PyTorch names `weight` and `bias` (the bias is assumed present: a name test on it is rare). */
const WEIGHT_AND_BIAS = /^(Linear|LazyLinear|Bilinear|Conv[123]d|ConvTranspose[123]d|BatchNorm[123]d|SyncBatchNorm|LayerNorm|GroupNorm|InstanceNorm[123]d)$/;

export function isParameterHandle(value: PyValue | undefined): value is ParameterHandle {
  return kindOf(value) === 'parameter' && 'handle' in (value as object);
}

/**
 * `for p in model.parameters(): p.requires_grad = False` (or `p.requires_grad_(False)`, or over
 * `named_parameters()` with the name unused): one setting for the whole module, without a round per
 * parameter. Undefined where the loop's body does anything else.
 */
export function wholeModuleSetting(interp: Evaluator, target: SyntaxNode, body: SyntaxNode | null, scope: Scope): { readonly flag: PyValue; readonly node: SyntaxNode } | undefined {
  const parameter = target.type === 'identifier' ? target.text : target.type === 'pattern_list' || target.type === 'tuple_pattern' ? target.namedChildren[1]?.text : undefined;
  const statements = body?.namedChildren.filter((child) => child.type !== 'comment') ?? [];
  const expression = statements.length === 1 && statements[0]!.type === 'expression_statement' ? statements[0]!.namedChildren[0] : undefined;
  if (!parameter || !expression) return undefined;
  // A flag that reads the loop's variables (`p.requires_grad = "head" in name`) is decided per parameter, even where a name is bound already.
  const loopNames = new Set([target, ...target.descendantsOfType('identifier')].filter((n) => n.type === 'identifier').map((n) => n.text));
  const readsLoop = (node: SyntaxNode) => [node, ...node.descendantsOfType('identifier')].some((n) => n.type === 'identifier' && loopNames.has(n.text));
  if (expression.type === 'assignment') {
    const left = expression.childForFieldName('left');
    const right = expression.childForFieldName('right');
    if (left?.type === 'attribute' && left.childForFieldName('object')?.text === parameter && left.childForFieldName('attribute')?.text === 'requires_grad' && right && !readsLoop(right)) return { flag: interp.evaluate(right, scope), node: left };
  }
  if (expression.type === 'call') {
    const fn = expression.childForFieldName('function');
    const args = expression.childForFieldName('arguments')?.namedChildren.filter((child) => child.type !== 'comment') ?? [];
    if (fn?.type === 'attribute' && fn.childForFieldName('object')?.text === parameter && fn.childForFieldName('attribute')?.text === 'requires_grad_' && args.length <= 1) {
      const value = args[0]?.type === 'keyword_argument' ? args[0].childForFieldName('value') : args[0];
      if (value && readsLoop(value)) return undefined;
      return { flag: value ? interp.evaluate(value, scope) : true, node: expression };
    }
  }
  return undefined;
}

/**
 * An unfreezing of parameters the analysis cannot name (`for p in model.get_classifier().parameters(): p.requires_grad = True`):
 * applying what the script froze without it would count trained parameters as frozen, the under-estimate. So the model's
 * freezing is not applied (analyzeSource.ts), and the note says why.
 */
export function unfollowedUnfreeze(interp: Evaluator, node: SyntaxNode): void {
  interp.note(node, `\`${statementText(node)}\`: unfreezes parameters the analysis cannot follow, so what the script freezes is not applied (every parameter counted as trained)`);
  interp.hooks.onUnfollowedUnfreeze?.(node);
}

/** The items of `module.parameters()` (handles) or `module.named_parameters()` ((name, handle) pairs), in registration order; undefined past MAX_HANDLES. */
export function parameterItems(module: ModuleObject, named: boolean): PyList | undefined {
  const handles = parameterHandles(module);
  if (!handles) return undefined;
  return handles.map((handle) => (named ? tuple([handle.handle.name, handle]) : handle));
}

function parameterHandles(receiver: ModuleObject): ParameterHandle[] | undefined {
  const handles: ParameterHandle[] = [];
  const modules: [string, ModuleObject][] = [['', receiver], ...receiver.namedModules()];
  for (const [path, module] of modules) {
    const add = (within: string, name: string, numel: number | null, ownRow = false): boolean => {
      if (handles.length >= MAX_HANDLES) return false;
      handles.push({ kind: 'parameter', numel, shape: null, trainable: true, handle: { receiver, owner: module, path: within, name: childPath(path, name), ...(ownRow ? { ownRow } : {}) } });
      return true;
    };
    for (const [name, parameter] of module.parameters) if (!add(name, name, parameter.numel)) return undefined;
    if (module.kind === 'layer') {
      const names = module.layer && WEIGHT_AND_BIAS.test(module.layer.type) && module.layer.kwargs.bias !== false ? ['weight', 'bias'] : ['weight'];
      for (const name of names) if (!add('', name, null, true)) return undefined;
    }
    if (module.kind === 'catalog' && !catalogHandles(module, add)) return undefined;
  }
  return handles;
}

/** A catalog architecture's (or part's) parameters, from its layer table at its usual input, leaving out what the script replaced. */
function catalogHandles(module: ModuleObject, add: (within: string, name: string, numel: number | null) => boolean): boolean {
  const part = module.catalog!;
  const rows = catalogParameterRows(part.architecture);
  if (!rows) return true;
  const replaced = [...part.root.children.keys()];
  for (const row of rows) {
    if (!isUnderPath(row, part.path) || replaced.some((path) => isUnderPath(row, path))) continue;
    const within = part.path === '' ? row.path : row.path.slice(part.path.length + 1);
    const names = row.type === 'Parameter' ? [within] : WEIGHT_AND_BIAS.test(row.type) ? [`${within}.weight`, `${within}.bias`] : [`${within}.weight`];
    for (const name of names) if (!add(within, name, row.params)) return false;
  }
  return true;
}

/** The rows with parameters of an architecture, each path once. */
function catalogParameterRows(architecture: NonNullable<ModuleObject['catalog']>['architecture']): LayerRow[] | null {
  const rows = catalogRows(architecture);
  if (!rows) return null;
  const seen = new Set<string>();
  return rows.filter((row) => (row.params ?? 0) > 0 && !seen.has(row.path) && seen.add(row.path));
}

/**
 * `p.requires_grad = flag`, `p.requires_grad_(flag)` on a parameter a loop visits (its owning
 * module's parameters), `model.fc.weight.requires_grad = flag` (the layer's), or
 * `module.requires_grad_(flag)` (every parameter under it). False where `target` is none of these.
 * A flag the analysis cannot read changes nothing, and says so.
 */
export function applyRequiresGrad(interp: Evaluator, target: PyValue, flag: PyValue, node: SyntaxNode): boolean {
  const weightOf = kindOf(target) === 'external' && (target as ExternalValue).name === 'weight-of' ? asModule((target as ExternalValue).self) : undefined;
  const module = asModule(target);
  if (!isParameterHandle(target) && !weightOf && !module) return false;
  const statement = statementText(node);
  if (typeof flag !== 'boolean') {
    interp.note(node, `\`${statement}\`: requires_grad is set to a value the analysis cannot read; those parameters are counted as trained`);
    return true;
  }
  // Freezing under a condition the analysis cannot decide would under-estimate if the condition is false: counted as trained.
  if (!flag && interp.undecidedBranches > 0) {
    interp.note(node, `\`${statement}\`: runs under a condition the analysis cannot decide; those parameters are counted as trained`);
    return true;
  }
  const range = rangeOf(node);
  if (isParameterHandle(target)) target.handle.owner.setRequiresGrad(target.handle.path, flag, range, target.handle.ownRow);
  else if (weightOf) weightOf.setRequiresGrad('', flag, range, true);
  else module!.setRequiresGrad('', flag, range);
  return true;
}

/** The statement that sets requires_grad, for a note: the assignment around `p.requires_grad`, or the call; its first line. */
function statementText(node: SyntaxNode): string {
  return (node.parent?.type === 'assignment' ? node.parent : node).text.split('\n')[0]!.slice(0, 60);
}

/** Every setting made on `root` and the modules under it, with paths relative to `root`, in the order the script made them. */
export function gradSettingsOf(root: ModuleObject): GradSetting[] {
  const settings: GradSetting[] = [];
  for (const [path, module] of [['', root] as [string, ModuleObject], ...root.namedModules()]) {
    for (const setting of module.gradSettings) settings.push({ ...setting, path: childPath(path, setting.path) });
    // A part of a standard architecture (`list(backbone.children())[4]`) keeps the settings its architecture got, under its own path here.
    const part = module.catalog;
    if (!part || part.root === module) continue;
    for (const setting of part.root.gradSettings) {
      if (setting.path === '' || part.path === setting.path || part.path.startsWith(`${setting.path}.`)) settings.push({ ...setting, path });
      else if (setting.path.startsWith(`${part.path}.`)) settings.push({ ...setting, path: childPath(path, setting.path.slice(part.path.length + 1)) });
    }
  }
  return settings.sort((a, b) => a.order - b.order);
}

/** The rows with `trainable` as the settings leave it: the last setting covering a row's path decides; rows no setting covers keep theirs. */
export function applyGradSettings(rows: readonly LayerRow[], settings: readonly GradSetting[]): LayerRow[] {
  if (settings.length === 0) return [...rows];
  return rows.map((row) => {
    if ((row.params ?? 0) <= 0 && row.params !== null) return row;
    let trainable: boolean | undefined;
    for (const setting of settings) if (setting.ownRow ? row.path === setting.path : isUnderPath(row, setting.path)) trainable = setting.trainable;
    return trainable === undefined || trainable === row.trainable ? row : { ...row, trainable };
  });
}
