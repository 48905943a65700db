// Libraries' model registries as projects use them: their own builders registered with timm's
// `@register_model`, then built by name with `timm.create_model(args.model, ...)` (ConvNeXt's,
// PoolFormer's and many research repositories' layout), and fvcore's, mmengine's and mmcv's
// `Registry` objects holding the project's classes (detectron2's and OpenMMLab's layout).
import type { SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { kindOf, unresolved, type DictValue, type ExternalValue, type FunctionValue, type InstanceValue, type PyValue } from './pyValues';
import { isRegistry, registryLookup } from './registryLookups';

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
    if (typeof name !== 'string') registryLookup(interp, registry, name, { registry: "timm's registry (the project's @register_model builders)", key: node.childForFieldName('arguments')?.namedChildren[0]?.text ?? 'model_name' });
    return undefined;
  }
  const passed = new Map<string, PyValue>([['pretrained', kwargs.get('pretrained') ?? args[1] ?? false]]);
  for (const [key, value] of kwargs) if (!CREATE_ONLY.has(key) && value !== null) passed.set(key, value);
  return interp.callValue(builder, [], passed, node);
}

/**
 * The `Registry` classes of fvcore (detectron2's), mmengine and mmcv, which projects instantiate
 * for their own architectures: `BACKBONES = Registry("backbone")`, `@BACKBONES.register()` or
 * `@BACKBONES.register_module(name=...)` on a class, then `BACKBONES.get(cfg.MODEL.BACKBONE.NAME)(cfg)`
 * or `BACKBONES.build(dict(type="ResNet", depth=50))`. The object holds its entries as a dict.
 */
const REGISTRY_CLASS = /^(fvcore\.common\.registry|detectron2\.utils\.registry|mmengine|mmengine\.registry(\.registry)?|mmcv|mmcv\.utils(\.registry)?)\.Registry$/;
const BUILD_FROM_CFG = /^(mmengine\.registry(\.build_functions)?|mmcv|mmcv\.utils(\.registry)?)\.build_from_cfg$/;
const REGISTRY = 'library Registry';
/** A decorator `register()` / `register_module()` returned, remembering its registry and the name it was given. */
const REGISTRATION = 'library Registry registration';
/** Where a registry object keeps its entries, under the names fvcore and mmengine use for them. */
const ENTRIES = ['_obj_map', '_module_dict', 'module_dict'];

export function libraryRegistryObject(qualified: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>): InstanceValue | undefined {
  if (!REGISTRY_CLASS.test(qualified)) return undefined;
  const entries: DictValue = { kind: 'dict', entries: new Map() };
  return { kind: 'instance', className: REGISTRY, attrs: new Map<string, PyValue>([['name', kwargs.get('name') ?? args[0] ?? null], ...ENTRIES.map((key): [string, PyValue] => [key, entries])]) };
}

/** A library registry object, or a registration decorator one of them returned. */
export function isLibraryRegistryObject(value: PyValue | undefined): boolean {
  return kindOf(value) === 'instance' && ((value as InstanceValue).className === REGISTRY || (value as InstanceValue).className === REGISTRATION);
}

/** Whether a decorator is one a library registry object gives (`@BACKBONES.register()`, `@MODELS.register_module`). */
export function isRegistryDecorator(value: PyValue): boolean {
  return kindOf(value) === 'external' && isLibraryRegistryObject((value as ExternalValue).self);
}

/** `registry.register(...)`, `.register_module(...)`, `.get(name)`, `.build(cfg)`, and applying a registration decorator. */
export function registryMethod(interp: Evaluator, self: InstanceValue, method: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  if (self.className === REGISTRATION) {
    const registry = self.attrs.get('registry') as InstanceValue;
    register(registry, self.attrs.get('name') ?? null, args[0] ?? null);
    return args[0] ?? null;
  }
  const name = self.attrs.get('name');
  const entries = self.attrs.get(ENTRIES[0]!) as DictValue;
  const written = { registry: typeof name === 'string' ? `Registry("${name}")` : 'a Registry', key: node.childForFieldName('arguments')?.namedChildren[0]?.text ?? '' };
  switch (method) {
    case 'register':
    case 'register_module': {
      // fvcore: register(obj=None); mmengine: register_module(name=None, force=False, module=None).
      const given = method === 'register' ? (kwargs.get('obj') ?? args[0]) : (kwargs.get('module') ?? args[2]);
      const key = method === 'register' ? null : (kwargs.get('name') ?? args[0] ?? null);
      if (given !== undefined && given !== null) {
        register(self, key, given);
        return given;
      }
      return { kind: 'external', name: `${REGISTRATION}.apply`, self: { kind: 'instance', className: REGISTRATION, attrs: new Map<string, PyValue>([['registry', self], ['name', key]]) } };
    }
    case 'get': {
      const key = args[0] ?? null;
      if (isRegistry(entries)) registryLookup(interp, entries, key, written);
      return typeof key === 'string' && entries.entries.has(key) ? entries.entries.get(key)! : unresolved(node.text, 'not registered');
    }
    case 'build':
      return buildFromConfig(interp, self, args[0] ?? null, kwargs.get('default_args') ?? args[1] ?? null, node);
    default:
      return unresolved(node.text, `Registry.${method}() is not followed`);
  }
}

/** `build_from_cfg(cfg, MODELS, default_args)`: the registry's build. */
export function buildFromCfgCall(interp: Evaluator, qualified: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode): PyValue | undefined {
  if (!BUILD_FROM_CFG.test(qualified)) return undefined;
  const registry = kwargs.get('registry') ?? args[1];
  if (kindOf(registry) !== 'instance' || (registry as InstanceValue).className !== REGISTRY) return undefined;
  return buildFromConfig(interp, registry as InstanceValue, kwargs.get('cfg') ?? args[0] ?? null, kwargs.get('default_args') ?? args[2] ?? null, node);
}

/** Registers a class or function under a name (or names), else under its own `__name__`. */
function register(registry: InstanceValue, key: PyValue, value: PyValue): void {
  const entries = registry.attrs.get(ENTRIES[0]!) as DictValue;
  const own = kindOf(value) === 'class' || kindOf(value) === 'function' ? (value as { name: string }).name : undefined;
  const keys = typeof key === 'string' ? [key] : Array.isArray(key) ? key.filter((k): k is string => typeof k === 'string') : own ? [own] : [];
  for (const name of keys) entries.entries.set(name, value);
}

/** mmengine's `build(cfg)`: the entry `cfg["type"]` names (or is), called with the rest of `cfg` over `default_args`. */
function buildFromConfig(interp: Evaluator, registry: InstanceValue, cfg: PyValue, defaults: PyValue, node: SyntaxNode): PyValue {
  if (kindOf(cfg) !== 'dict') return unresolved(node.text, 'the config to build from is not a dict the analysis knows');
  const kwargs = new Map<string, PyValue>(kindOf(defaults) === 'dict' ? (defaults as DictValue).entries : []);
  for (const [key, value] of (cfg as DictValue).entries) if (key !== 'type') kwargs.set(key, value);
  const type = (cfg as DictValue).entries.get('type') ?? null;
  const built = typeof type === 'string' ? registryMethod(interp, registry, 'get', [type], new Map(), node) : type;
  return kindOf(built) === 'class' || kindOf(built) === 'function' ? interp.callValue(built, [], kwargs, node) : unresolved(node.text, 'the type to build is not registered');
}
