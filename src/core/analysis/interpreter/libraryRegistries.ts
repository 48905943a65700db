// timm's model registry as projects use it: their own builders registered with timm's
// `@register_model`, then built by name with `timm.create_model(args.model, ...)` (ConvNeXt's,
// PoolFormer's and many research repositories' layout).
import type { SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { kindOf, type ExternalValue, type FunctionValue, type PyValue } from './pyValues';
import { noteRegistryLookup } from './registryLookups';

const TIMM_REGISTER = /^timm\.models(\._?registry)?\.register_model$/;
const TIMM_CREATE = /^timm(\.models(\._?factory)?)?\.create_model$/;
/** Arguments of `create_model` that it keeps for itself rather than passing to the builder. */
const CREATE_ONLY = new Set(['model_name', 'pretrained', 'pretrained_cfg', 'pretrained_cfg_overlay', 'checkpoint_path', 'cache_dir', 'scriptable', 'exportable', 'no_jit']);

/** Whether a decorator is a library's registering one (timm's `register_model`). */
export function isLibraryRegistration(decorator: PyValue): boolean {
  return kindOf(decorator) === 'external' && (decorator as ExternalValue).self === undefined && TIMM_REGISTER.test((decorator as ExternalValue).name);
}

/** `@register_model` from timm on a project's builder: timm's registry holds it under its name, for the whole analysis. */
export function registerInLibrary(interp: Evaluator, defined: PyValue): void {
  if (kindOf(defined) === 'function' && interp.place) interp.place.project.libraryRegistry('timm').entries.set((defined as FunctionValue).name, defined);
}

/**
 * `timm.create_model(name, pretrained=False, num_classes=10, drop_path_rate=None)` where the
 * project registered `name`: its builder, called as timm calls it (with `pretrained`, and the
 * keywords that are not None). Undefined for a name the project did not register: timm's own
 * architectures are the catalog's. A name the analysis cannot read is noted with what is registered.
 */
export function createRegisteredModel(interp: Evaluator, qualified: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode): PyValue | undefined {
  if (!TIMM_CREATE.test(qualified) || !interp.place) return undefined;
  const registry = interp.place.project.libraryRegistry('timm');
  if (registry.entries.size === 0) return undefined;
  const name = kwargs.get('model_name') ?? args[0] ?? null;
  const builder = typeof name === 'string' ? registry.entries.get(name) : undefined;
  if (!builder) {
    if (typeof name !== 'string') noteRegistryLookup(interp, registry, name, { registry: "timm's registry (the project's @register_model builders)", key: node.childForFieldName('arguments')?.namedChildren[0]?.text ?? 'model_name' });
    return undefined;
  }
  const passed = new Map<string, PyValue>([['pretrained', kwargs.get('pretrained') ?? args[1] ?? false]]);
  for (const [key, value] of kwargs) if (!CREATE_ONLY.has(key) && value !== null) passed.set(key, value);
  return interp.callValue(builder, [], passed, node);
}
