// Which modules' parameters an optimizer is given: the data flow that ties an optimizer to its model.
import type { SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { asModule, isList, isUnresolvedValue, kindOf, unresolved, type DictValue, type ModuleObject, type PyValue, type Scope } from './pyValues';
import type { Unresolved } from '../layerCall';
import { isParameterHandle } from './requiresGrad';

/** Optimizer classes: `torch.optim.Adam`, and the common drop-ins (`bitsandbytes.optim.AdamW8bit`, apex's `FusedAdam`, `transformers.AdamW`). */
const OPTIMIZER_CLASS = /^(torch\.optim\.[A-Z]\w*|bitsandbytes\.optim\.[A-Z]\w*|apex\.optimizers\.[A-Z]\w*|transformers\.(optimization\.)?(AdamW|Adafactor))$/;
const PARAMETER_METHODS = new Set(['parameters', 'named_parameters']);
/** A script's parameter groups are small: more receivers than this are not looked for. */
const MAX_RECEIVERS = 32;

export function isOptimizerClass(qualified: string): boolean {
  return OPTIMIZER_CLASS.test(qualified);
}

/**
 * The modules whose parameters reach an optimizer's constructor: the receivers of the
 * `.parameters()` / `.named_parameters()` calls written in its arguments (`model.parameters()`,
 * `itertools.chain(enc.parameters(), dec.parameters())`, `[{"params": net.head.parameters()}]`,
 * `filter(lambda p: p.requires_grad, model.parameters())`), and modules passed as values (a
 * parameter-group list built beforehand keeps its `.parameters()` receivers in `modulesIn`).
 * Receivers are evaluated again in the caller's scope: attribute reads, no side effects.
 */
export function parameterOwners(interp: Evaluator, argumentList: SyntaxNode | null, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, scope: Scope): ModuleObject[] {
  const owners = new Map<number, ModuleObject>();
  const add = (module: ModuleObject | undefined) => {
    if (module && owners.size < MAX_RECEIVERS) owners.set(module.id, module);
  };
  for (const call of argumentList?.descendantsOfType('call') ?? []) {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'attribute' || !PARAMETER_METHODS.has(fn.childForFieldName('attribute')?.text ?? '')) continue;
    const receiver = fn.childForFieldName('object');
    if (receiver && owners.size < MAX_RECEIVERS) add(asModule(interp.evaluate(receiver, scope)));
  }
  for (const value of [...args, ...kwargs.values()]) for (const module of modulesIn(value, 0)) add(module);
  return [...owners.values()];
}

/** Modules inside a value: a module itself, or within lists and dicts (parameter groups), a few levels deep. */
function modulesIn(value: PyValue | undefined, depth: number): ModuleObject[] {
  if (depth > 3) return [];
  const module = asModule(value);
  if (module) return [module];
  if (isList(value)) return value.slice(0, MAX_RECEIVERS).flatMap((item) => modulesIn(item, depth + 1));
  if (kindOf(value) === 'dict') return [...(value as DictValue).entries.values()].flatMap((item) => modulesIn(item, depth + 1));
  if (isParametersOf(value)) return [value.parametersOf];
  // `list(model.parameters())` made a list of the parameters themselves.
  if (isParameterHandle(value)) return [value.handle.receiver];
  return [];
}

/**
 * What `module.parameters()` evaluates to: unknown tensors, but whose they are is kept (`params = model.parameters()` passed on later);
 * a `for` loop visits them one by one (requiresGrad.ts).
 */
export interface ParametersOf extends Unresolved {
  readonly parametersOf: ModuleObject;
  /** From `named_parameters()`: (name, parameter) pairs. */
  readonly named: boolean;
}

export function parametersOf(module: ModuleObject, text: string, method: string): ParametersOf {
  // Not enumerable: wherever an unresolved value is copied, compared or written out (layer arguments, cache keys), it stays the plain `Unresolved` it was.
  return Object.defineProperties({ ...unresolved(text, `model.${method}()`) }, {
    parametersOf: { value: module, enumerable: false },
    named: { value: method === 'named_parameters', enumerable: false },
  }) as ParametersOf;
}

export function isParametersOf(value: PyValue | undefined): value is ParametersOf {
  return isUnresolvedValue(value) && 'parametersOf' in value;
}
