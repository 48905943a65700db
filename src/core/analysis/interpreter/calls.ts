// Calls in the interpreter: arguments, user functions and classes, super(), library calls, and methods of values.
import { rangeOf, type SyntaxNode } from '../../parsing/syntax';
import { catalogCall } from './catalogCalls';
import { checkpointCall } from './checkpointCalls';
import { configCall, configMethod, execConfiguration, readConfigKey } from './configCalls';
import { classAttribute, collectFields, findClassByNode } from './classes';
import { inContext, type CallEvent, type Evaluator } from './evaluator';
import { EINOPS_FUNCTION, callEinops, callTensorFunction, callTensorMethod } from './forwardOps';
import { applyRequiresGrad, unfollowedUnfreeze } from './requiresGrad';
import { decoratedNoGrad } from './gradMode';
import { callBuiltin, callMath } from './pythonBuiltins';
import { asModule, isList, isUnresolvedValue, kindOf, MAPPING_ENTRIES, ModuleObject, tuple, unresolved, type ClassValue, type DictValue, type ExternalValue, type FunctionValue, type InstanceValue, type ModuleValue, type PartialValue, type PyValue, type Scope } from './pyValues';
import { declareArgument, parseCommandLine } from './argparseCommandLine';
import { hydraCall } from './hydraInstantiate';
import { isLightningCli, lightningCli } from './lightningCli';
import { isYacsClass, isYacsNode, newNode, yacsMethod } from './yacsConfig';
import { frameworkMethod, frameworkObject, isFrameworkObject } from './frameworkObjects';
import { fineTuningLibraryCall } from './fineTuningLibraries';
import { HF_ARGUMENT_PARSER, hfArgumentParserMethod, isHfArgumentParser, newHfArgumentParser } from './hfArgumentParser';
import { makePartial, PARTIAL, partialArguments } from './partials';
import { saveHyperparameters } from './lightningHparams';
import { isOptimizerClass, parameterOwners } from './parameterOwners';
import { buildFromCfgCall, createRegisteredModel, isLibraryRegistryObject, libraryRegistryObject, registryMethod } from './libraryRegistries';
import { callByString, importModuleByName } from './namesByString';
import { isRegistry, registryLookup } from './registryLookups';
import { isTensorLike } from './tensorOps';
import { CONTAINERS, EINOPS_LAYER, buildContainer, buildLayer, catalogValue, fillContainer, layerCall, moduleMethod, parameterFrom } from './torchModules';
import { append, dictMethod, listMethod, stringMethod } from './valueMethods';
import { timmDataConfig } from './timmModels';

/** The DataLoader(...) call each loader value came from: a loader a builder returns is named where the script binds it. */
const loaderCalls = new WeakMap<object, CallEvent>();

/** The `DataLoader(...)` call that made a loader value, if it is one. */
/** `get_peft_model(model, config)`, `prepare_model_for_kbit_training(model)`, `PeftModel.from_pretrained(model, path)`. */
const PEFT_WRAPS_MODEL = /^peft(\.\w+)*\.(get_peft_model|prepare_model_for_kbit_training|PeftModel\.from_pretrained|PeftModelFor\w+\.from_pretrained)$/;

export function loaderCallOf(value: PyValue): CallEvent | undefined {
  return typeof value === 'object' && value !== null ? loaderCalls.get(value) : undefined;
}

const MODEL_WRAPPERS = /^torch\.(compile|nn\.(DataParallel|parallel\.DistributedDataParallel|parallel\.DataParallel)|jit\.script|nn\.SyncBatchNorm\.convert_sync_batchnorm|distributed\.fsdp\.(fully_sharded_data_parallel\.)?FullyShardedDataParallel)$|DistributedDataParallel$/;
const MAX_DEPTH = 40;
/** Starting one process per GPU, each running `fn(rank, *args)`. */
const SPAWN = /^torch\.multiprocessing\.(spawn\.)?(spawn|start_processes)$/;

export function call(interp: Evaluator, node: SyntaxNode, scope: Scope): PyValue {
  const fnNode = node.childForFieldName('function')!;
  const argumentList = node.childForFieldName('arguments');
  // `super().__init__(...)`: run the base class's __init__ on the same object.
  if (fnNode.type === 'attribute' && fnNode.childForFieldName('object')?.type === 'call' && fnNode.childForFieldName('object')?.childForFieldName('function')?.text === 'super') {
    return callSuper(interp, fnNode.childForFieldName('attribute')!.text, node, scope);
  }
  // `exec(open("config/train_small.py").read())`: a configuration file run in the script's own scope.
  if (fnNode.type === 'identifier' && fnNode.text === 'exec' && interp.config && !scope.has('exec')) {
    const ran = execConfiguration(interp, node, scope);
    if (ran) return null;
  }
  // `globals()[args.arch]`, `eval(args.model)`: a name picked by a string.
  if (fnNode.type === 'identifier' && (fnNode.text === 'globals' || fnNode.text === 'eval')) {
    const picked = callByString(interp, fnNode.text, node, scope);
    if (picked !== undefined) return picked;
  }
  const callee = interp.evaluate(fnNode, scope);
  // `p.requires_grad_()` on a parameter the analysis cannot follow: an unfreezing it cannot place (requiresGrad.ts).
  if (isUnresolvedValue(callee) && fnNode.type === 'attribute' && fnNode.childForFieldName('attribute')?.text === 'requires_grad_' && !/^\(\s*(False|requires_grad\s*=\s*False)\s*\)$/.test(argumentList?.text ?? '')) unfollowedUnfreeze(interp, node);
  const { args, kwargs } = evaluateArguments(interp, argumentList, scope, { callee, fnNode });
  // An optimizer remembers whose parameters it was given: each model gets its own (modelSetup.ts).
  if (kindOf(callee) === 'external' && (callee as ExternalValue).self === undefined && isOptimizerClass((callee as ExternalValue).name)) {
    return callExternal(interp, callee as ExternalValue, args, kwargs, node, parameterOwners(interp, argumentList, args, kwargs, scope));
  }
  if (saveHyperparameters(node, args, scope)) return null;
  return callValue(interp, callee, args, kwargs, node);
}

/**
 * A call's positional and keyword arguments, `*args` and `**kwargs` expanded where their values are
 * known. With `reported` (the callee and how the call names it), what cannot be expanded is a note
 * and the keys a config dict gives are recorded as read.
 */
function evaluateArguments(interp: Evaluator, argumentList: SyntaxNode | null, scope: Scope, reported?: { readonly callee: PyValue; readonly fnNode: SyntaxNode }): { args: PyValue[]; kwargs: Map<string, PyValue> } {
  const args: PyValue[] = [];
  const kwargs = new Map<string, PyValue>();
  if (argumentList?.type === 'generator_expression') args.push(interp.evaluate(argumentList, scope));
  for (const argument of argumentList?.type === 'argument_list' ? argumentList.namedChildren : []) {
    if (argument.type === 'comment') continue;
    if (argument.type === 'keyword_argument') {
      kwargs.set(argument.childForFieldName('name')!.text, interp.evaluate(argument.childForFieldName('value')!, scope));
    } else if (argument.type === 'list_splat') {
      const spread = interp.iterate(interp.evaluate(argument.namedChildren[0]!, scope));
      if (spread) append(args, spread);
      else {
        if (reported) interp.note(argument, `\`${argument.text}\` could not be expanded`);
        args.push(unresolved(argument.text, 'unknown *args'));
      }
    } else if (argument.type === 'dictionary_splat') {
      const spread = interp.evaluate(argument.namedChildren[0]!, scope);
      if (kindOf(spread) === 'dict') {
        for (const [k, v] of (spread as DictValue).entries) {
          kwargs.set(k, v);
          if (reported) readConfigKey(interp, spread, k, argument);
        }
      } else if (reported && (kindOf(reported.callee) === 'function' || kindOf(reported.callee) === 'class')) {
        // Without its entries, the function's own defaults stand in for values the dict may override.
        interp.note(argument, `\`${argument.text}\` is not a dict the analysis knows: ${reported.fnNode.text.split('\n')[0]!.slice(0, 40)} is read with its own defaults for the arguments it would set`);
      }
    } else args.push(interp.evaluate(argument, scope));
  }
  return { args, kwargs };
}

export function callValue(interp: Evaluator, callee: PyValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  switch (kindOf(callee)) {
    case 'function':
      return callFunction(interp, callee as FunctionValue, args, kwargs, node);
    case 'class':
      return instantiate(interp, callee as ClassValue, args, kwargs, node);
    case 'module':
      return callModule(interp, (callee as ModuleValue).module, args, kwargs, node);
    case 'external':
      return callExternal(interp, callee as ExternalValue, args, kwargs, node);
    case 'partial': {
      const bound = partialArguments(callee as PartialValue, args, kwargs);
      return withDepth(interp, node, () => callValue(interp, (callee as PartialValue).func, bound.args, bound.kwargs, node), () => unresolved(node.text, 'recursion'));
    }
    default:
      return isUnresolvedValue(callee) ? unresolved(node.text, callee.reason) : unresolved(node.text, 'not callable');
  }
}

function withDepth<T>(interp: Evaluator, node: SyntaxNode, run: () => T, fallback: () => T): T {
  if (interp.depth >= MAX_DEPTH) {
    interp.note(node, 'calls nest too deeply (recursion?); not followed further');
    return fallback();
  }
  interp.depth += 1;
  try {
    return run();
  } finally {
    interp.depth -= 1;
  }
}

function callFunction(interp: Evaluator, fn: FunctionValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  if (interp.depth === 0 && interp.scriptLevel && !interp.forwardMode && fn.self === undefined) interp.hooks.onScriptCall?.(fn, args, kwargs);
  return withDepth(
    interp,
    node,
    () => {
      const scope = fn.closure.child();
      bindParameters(interp, fn, fn.self === undefined ? args : [fn.self, ...args], kwargs, scope);
      const body = fn.node.childForFieldName('body');
      if (fn.node.type === 'lambda') return body ? interp.evaluate(body, scope) : null;
      const flow = inContext(interp, 'gradDisabled', interp.forwardMode && decoratedNoGrad(interp, fn), () => interp.execBlock(fn.node.childForFieldName('body'), scope));
      return flow?.kind === 'return' ? flow.value : null;
    },
    () => unresolved(node.text, 'recursion'),
  );
}

export function bindParameters(interp: Evaluator, fn: FunctionValue, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, scope: Scope): void {
  let position = 0;
  for (const parameter of fn.node.childForFieldName('parameters')?.namedChildren ?? []) {
    if (parameter.type === 'list_splat_pattern') {
      scope.set(parameter.namedChildren[0]?.text ?? 'args', tuple(args.slice(position)));
      position = args.length;
      continue;
    }
    if (parameter.type === 'dictionary_splat_pattern') {
      scope.set(parameter.namedChildren[0]?.text ?? 'kwargs', { kind: 'dict', entries: new Map(kwargs) });
      continue;
    }
    if (parameter.type === 'keyword_separator' || parameter.type === 'positional_separator') continue;
    const name = parameter.type === 'identifier' ? parameter.text : parameter.type === 'typed_parameter' ? parameter.namedChildren[0]?.text : parameter.childForFieldName('name')?.text;
    if (!name) continue;
    const fallback = parameter.childForFieldName('value');
    let value: PyValue | undefined = kwargs.get(name);
    if (value === undefined && position < args.length) value = args[position];
    position += 1;
    if (value === undefined) value = fallback ? interp.evaluate(fallback, fn.closure) : unresolved(name, `argument \`${name}\` was not passed`);
    scope.set(name, value);
  }
}

export function instantiate(interp: Evaluator, classValue: ClassValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  if (classValue.lightningCli) return lightningCli(interp, args, kwargs, node, (target, targetArgs, targetKwargs, at) => callValue(interp, target, targetArgs, targetKwargs, at), classValue);
  const scriptLevel = interp.scriptLevel;
  interp.scriptLevel = false;
  try {
    return construct(interp, classValue, args, kwargs, node);
  } finally {
    interp.scriptLevel = scriptLevel;
  }
}

function construct(interp: Evaluator, classValue: ClassValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  if (classValue.isModule) {
    const init = classAttribute(classValue, '__init__');
    const ownInit = kindOf(init) === 'function';
    // A layer subclass is the layer: built with the call's arguments, or, with an __init__ of its own, with those it passes to super().__init__.
    const self: ModuleValue = classValue.layerBase
      ? (buildLayer(interp, classValue.layerBase, ownInit ? [] : args, ownInit ? new Map<string, PyValue>() : kwargs, node, classValue) as ModuleValue)
      : { kind: 'module', module: new ModuleObject(classValue.container ?? 'user', classValue.name, rangeOf(node), undefined, classValue) };
    if (ownInit) callFunction(interp, { ...(init as FunctionValue), self }, args, kwargs, node);
    return self;
  }
  const instance: InstanceValue = { kind: 'instance', className: classValue.name, attrs: new Map(), classValue };
  if (classValue.mapping) instance.attrs.set(MAPPING_ENTRIES, { kind: 'dict', entries: new Map() });
  if (classValue.isDataclass) {
    const fields = collectFields(classValue);
    fields.forEach((field, i) => {
      const given = kwargs.get(field) ?? args[i];
      const fallback = given === undefined ? classAttribute(classValue, field) : undefined;
      const value = given ?? (fallback !== undefined && interp.config ? interp.config.constantDefault(field, fallback, node, `the ${classValue.name}.${field} default`) : fallback);
      instance.attrs.set(field, value === undefined ? unresolved(field, 'no default') : value);
    });
  }
  const init = classAttribute(classValue, '__init__');
  if (kindOf(init) === 'function') callFunction(interp, { ...(init as FunctionValue), self: instance }, args, kwargs, node);
  const post = classAttribute(classValue, '__post_init__');
  if (classValue.isDataclass && kindOf(post) === 'function') callFunction(interp, { ...(post as FunctionValue), self: instance }, [], new Map(), node);
  return instance;
}

function callSuper(interp: Evaluator, method: string, node: SyntaxNode, scope: Scope): PyValue {
  const self = scope.get('self');
  const owner = enclosingClass(node, scope);
  if (!self || !owner) return null;
  // `super().__init__(*args, **kwargs)`, as wrappers of a layer pass theirs on: expanded, without notes.
  const { args, kwargs } = evaluateArguments(interp, node.childForFieldName('arguments'), scope);
  for (const base of owner.bases) {
    const fn = classAttribute(base, method);
    if (kindOf(fn) === 'function') return callFunction(interp, { ...(fn as FunctionValue), self }, args, kwargs, node);
  }
  // nn.Sequential.__init__(*layers) and friends, for subclasses of the containers.
  const module = asModule(self);
  if (method === '__init__' && module && owner.container) fillContainer(interp, module, owner.container, args, node);
  // nn.Conv2d.__init__(...) and friends, for subclasses of the layers: the layer is what these arguments build.
  if (method === '__init__' && module?.kind === 'layer' && owner.layerBase) module.layer = { ...layerCall(interp, owner.layerBase, args, kwargs, node), range: module.range };
  return null;
}

function enclosingClass(node: SyntaxNode, scope: Scope): ClassValue | undefined {
  for (let parent = node.parent; parent; parent = parent.parent) {
    if (parent.type === 'class_definition') {
      const value = scope.get(parent.childForFieldName('name')?.text ?? '');
      if (kindOf(value) === 'class' && (value as ClassValue).node.id === parent.id) return value as ClassValue;
      // The class may be shadowed or nested: find it by node among known classes of the receiver.
      const self = scope.get('self');
      const start = asModule(self)?.classValue ?? (kindOf(self) === 'instance' ? (self as InstanceValue).classValue : undefined);
      return start && findClassByNode(start, parent);
    }
  }
  return undefined;
}

export function callModule(interp: Evaluator, module: ModuleObject, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  if (!interp.forwardMode) {
    interp.hooks.onModelInvocation?.(module, args, node);
    return unresolved(node.text, 'model output');
  }
  const handled = interp.hooks.onModuleCall?.(module, args, kwargs, node);
  return handled === undefined ? unresolved(node.text, 'module call not followed') : handled;
}

/** Runs `module.forward(*args)` of a user module (used by the forward hook). */
export function runForward(interp: Evaluator, module: ModuleObject, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  const forward = module.classValue && classAttribute(module.classValue, 'forward');
  if (kindOf(forward) !== 'function') {
    interp.note(node, `${module.className} has no forward() in this file`);
    return unresolved(node.text, 'no forward()');
  }
  return callFunction(interp, { ...(forward as FunctionValue), self: { kind: 'module', module } }, args, kwargs, node);
}

function callExternal(interp: Evaluator, callee: ExternalValue, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode, parameterOwners?: readonly ModuleObject[]): PyValue {
  const name = callee.name;
  if (callee.self !== undefined) return callMethod(interp, callee.self, name.slice(name.lastIndexOf('.') + 1), args, kwargs, node);
  const event: CallEvent = { qualified: name, node, args, kwargs, ...(parameterOwners ? { parameterOwners } : {}) };
  interp.hooks.onExternalCall?.(event);
  const registered = createRegisteredModel(interp, name, args, kwargs, node) ?? libraryRegistryObject(name, args, kwargs) ?? buildFromCfgCall(interp, name, args, kwargs, node) ?? importModuleByName(interp, name, args, kwargs);
  if (registered !== undefined) return registered;
  const configured = configCall(interp, name, args, kwargs, node);
  if (configured !== undefined) return configured;
  const hydra = hydraCall(interp, name, args, kwargs, node, (target, targetArgs, targetKwargs, at) => callValue(interp, target, targetArgs, targetKwargs, at));
  if (hydra !== undefined) return hydra;
  if (HF_ARGUMENT_PARSER.test(name)) return newHfArgumentParser(args, kwargs);
  if (isLightningCli(name)) return lightningCli(interp, args, kwargs, node, (target, targetArgs, targetKwargs, at) => callValue(interp, target, targetArgs, targetKwargs, at));
  if (name.startsWith('builtins.')) return callBuiltin(interp, name.slice('builtins.'.length), args, kwargs, node);
  const container = CONTAINERS[name];
  if (container) return buildContainer(interp, container, name.slice('torch.nn.'.length), args, node);
  if (name === 'torch.nn.Parameter' || name === 'torch.nn.parameter.Parameter') return parameterFrom(args[0], kwargs);
  // Wrappers that return the model they wrap.
  if (MODEL_WRAPPERS.test(name)) return args[0] ?? null;
  // `copy.deepcopy(model)`: an EMA copy, a teacher, a target network: a model of its own with the same layers.
  if ((name === 'copy.deepcopy' || name === 'copy.copy') && asModule(args[0])) return { kind: 'module', module: asModule(args[0])!.clone(name === 'copy.deepcopy') };
  if (name.startsWith('torch.nn.') && /^[A-Z]/.test(name.slice('torch.nn.'.length)) && !name.slice('torch.nn.'.length).includes('.')) {
    return buildLayer(interp, name.slice('torch.nn.'.length), args, kwargs, node);
  }
  const einopsLayer = EINOPS_LAYER.exec(name)?.[1];
  if (einopsLayer) return buildLayer(interp, einopsLayer, args, kwargs, node);
  if (EINOPS_FUNCTION.test(name)) return callEinops(interp, name, args, kwargs, node);
  if (name === PARTIAL) return makePartial(args, kwargs, node);
  if (name === 'argparse.ArgumentParser') return { kind: 'instance', className: 'ArgumentParser', attrs: new Map(), argparse: true };
  if (name === 'dataclasses.field' || name === 'field') {
    // `field(default=None)` is a None default, not a missing one.
    return kwargs.has('default') ? kwargs.get('default')! : unresolved(node.text, 'field(default_factory=...)');
  }
  if (name === 'types.SimpleNamespace') return { kind: 'instance', className: 'SimpleNamespace', attrs: new Map(kwargs) };
  if (name.startsWith('math.') || name.startsWith('numpy.')) return callMath(name.slice(name.indexOf('.') + 1), args, node);
  if (SPAWN.test(name)) return spawnWorker(interp, args, kwargs, node);
  // The estimate is for one process on one GPU: a global batch split by the GPUs counted
  // (`args.batch_size = int(args.batch_size / ngpus_per_node)`) is that process's batch.
  if (name === 'torch.cuda.device_count') return 1;
  // Gradient checkpointing runs the function on the arguments (and again in backward).
  const checkpointed = checkpointCall(interp, name, args, kwargs, node);
  if (checkpointed !== undefined) return checkpointed;
  if (/(^|\.)TensorDataset$/.test(name)) return { kind: 'instance', className: 'TensorDataset', attrs: new Map([['tensors', tuple(args)]]) };
  if (/(^|\.)DataLoader$/.test(name)) {
    const loader = dataLoader(kwargs.get('dataset') ?? args[0]);
    loaderCalls.set(loader, event);
    return loader;
  }
  if (isYacsClass(name)) return newNode(args[0] ?? kwargs.get('init_dict'));
  const framework = frameworkObject(name, kwargs);
  if (framework) return framework;
  // PEFT wraps the model it is given: its layers are the model's (the adapter is read from the config, fineTuningSetup.ts).
  if (PEFT_WRAPS_MODEL.test(name) && asModule(args[0] ?? kwargs.get('model'))) return (args[0] ?? kwargs.get('model'))!;
  const library = fineTuningLibraryCall(interp, name, args, kwargs, node);
  if (library !== undefined) return library;
  const catalog = catalogCall(name, args, kwargs);
  if (catalog) return catalogValue(interp, catalog, node);
  const dataConfig = timmDataConfig(name, args, kwargs);
  if (dataConfig !== undefined) return dataConfig;
  return callTensorFunction(interp, name, args, kwargs, node);
}

function callMethod(interp: Evaluator, self: PyValue, method: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  if (isList(self)) return listMethod(self, method, args, node);
  if (typeof self === 'string') return stringMethod(self, method, args, kwargs, node);
  if (kindOf(self) === 'instance' && (self as InstanceValue).argparse) return argparseMethod(interp, self as InstanceValue, method, args, kwargs, node);
  if (isLibraryRegistryObject(self)) return registryMethod(interp, self as InstanceValue, method, args, kwargs, node);
  if (isYacsNode(self)) return yacsMethod(interp, self as InstanceValue, method, args, kwargs, node);
  if (isHfArgumentParser(self)) {
    const parsed = hfArgumentParserMethod(interp, self as InstanceValue, method, args, kwargs, node, (callee, a, k, at) => callValue(interp, callee, a, k, at));
    if (parsed !== undefined) return parsed;
  }
  if (isFrameworkObject(self)) return frameworkMethod(self as InstanceValue, method, args, kwargs, (fn, receiver) => callFunction(interp, { ...fn, self: receiver }, [], new Map(), node));
  if (kindOf(self) === 'dict') {
    if ((method === 'get' || method === 'pop') && typeof args[0] === 'string') readConfigKey(interp, self, args[0], node);
    // `registry.get(name)` with a fallback of its own is the script's choice, not a missing model.
    if (method === 'get' && args.length === 1 && isRegistry(self)) registryLookup(interp, self, args[0]!, { registry: methodReceiverText(node), key: node.childForFieldName('arguments')?.namedChildren[0]?.text ?? '' });
    if (method === 'copy') {
      const copy: DictValue = { kind: 'dict', entries: new Map((self as DictValue).entries) };
      interp.config?.copied(self, copy);
      return copy;
    }
    return dictMethod(self as DictValue, method, args, node);
  }
  const configured = configMethod(interp, self, method, node);
  if (configured !== undefined) return configured;
  // `backbone.requires_grad_(False)`, `p.requires_grad_(False)`: freezing, in place; the receiver is returned, as PyTorch does.
  if (method === 'requires_grad_' && applyRequiresGrad(interp, self, args[0] ?? kwargs.get('requires_grad') ?? true, node)) return self;
  const module = asModule(self);
  if (module) return moduleMethod(interp, module, self, method, args, kwargs, node);
  if (isTensorLike(self)) return callTensorMethod(interp, self, method, args, kwargs, node);
  return unresolved(node.text, `\`.${method}()\` is not followed`);
}

/** `add_argument('--batch-size', type=int, default=64)` records the default under `batch_size`; parse_args() returns them. */
function argparseMethod(interp: Evaluator, parser: InstanceValue, method: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  if (method === 'add_argument') {
    const flags = args.filter((a): a is string => typeof a === 'string');
    const long = flags.find((f) => f.startsWith('--')) ?? flags[0];
    const dest = kwargs.get('dest');
    const name = typeof dest === 'string' ? dest : long?.replace(/^-+/, '').replace(/-/g, '_');
    if (!name) return null;
    const action = kwargs.get('action');
    const fallback = action === 'store_true' ? false : action === 'store_false' ? true : null;
    const given = kwargs.has('default') ? kwargs.get('default')! : fallback;
    parser.attrs.set(name, interp.config ? interp.config.argumentDefault(name, given, node) : given);
    declareArgument(parser, flags, name, kwargs);
    interp.hooks.onArgument?.(name, node);
    return null;
  }
  if (method === 'add_argument_group' || method === 'add_mutually_exclusive_group') return parser;
  if (method === 'parse_args' || method === 'parse_known_args') {
    const namespace: InstanceValue = { kind: 'instance', className: 'Namespace', attrs: new Map(parser.attrs) };
    // `parse_args(["--lr", "0.1"])` reads its own words; `parse_args()` the command line the script is run with.
    const given = args[0] ?? kwargs.get('args');
    const words = isList(given) && given.every((w) => typeof w === 'string') ? given : (interp.config?.scriptArguments ?? []);
    for (const [name, value] of parseCommandLine(parser, words, parser.attrs)) {
      // The user's --set value still wins over the command line's.
      if (interp.config?.assumed(name) !== undefined) continue;
      namespace.attrs.set(name, value);
      interp.config?.commandLineValue(name, value, node);
    }
    interp.hooks.onParsedArguments?.(namespace.attrs);
    return method === 'parse_args' ? namespace : tuple([namespace, []]);
  }
  return null;
}

/**
 * `mp.spawn(main_worker, nprocs=ngpus, args=(ngpus, args))`: each process runs
 * `main_worker(rank, ngpus, args)`. The estimate is per process, so the worker is discovered as the
 * first process's call, with the arguments spawn passes (the worker's model and batch read them).
 */
function spawnWorker(interp: Evaluator, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  const fn = kwargs.get('fn') ?? args[0];
  const passed = kwargs.get('args') ?? args[1] ?? tuple([]);
  if (fn === undefined || isUnresolvedValue(fn) || !isList(passed)) {
    interp.note(node, `${node.text.split('\n')[0]!.slice(0, 60)}: the function spawned or its arguments are not known to the analysis; the worker is not followed with them`);
    return null;
  }
  // Recorded as the call discovery follows the worker with, from wherever spawn is called (often inside main()).
  if (kindOf(fn) === 'function' && (fn as FunctionValue).self === undefined && interp.scriptLevel && !interp.forwardMode) interp.hooks.onScriptCall?.(fn as FunctionValue, [0, ...passed], new Map());
  else callValue(interp, fn, [0, ...passed], new Map(), node);
  return null;
}

/** A loader whose batches are known: `DataLoader(TensorDataset(x, y), ...)` yields (x batch, y batch). */
function dataLoader(dataset: PyValue | undefined): InstanceValue {
  const tensors = kindOf(dataset) === 'instance' && (dataset as InstanceValue).className === 'TensorDataset' ? (dataset as InstanceValue).attrs.get('tensors') : undefined;
  const attrs = new Map<string, PyValue>();
  if (isList(tensors)) {
    const batch = tensors.map((t) => {
      const shape = kindOf(t) === 'tensor' ? (t as { shape: readonly unknown[] | null }).shape : null;
      return shape && shape.length >= 1 ? ({ kind: 'tensor', shape: [{ batch: 1 }, ...shape.slice(1)] } as PyValue) : unresolved('batch', 'unknown tensor');
    });
    attrs.set('batch', tuple(batch));
  }
  return { kind: 'instance', className: 'DataLoader', attrs };
}

/** `MODELS` in `MODELS.get(name)`: the receiver as written. */
function methodReceiverText(call: SyntaxNode): string {
  const fn = call.childForFieldName('function');
  return (fn?.type === 'attribute' ? fn.childForFieldName('object')?.text : undefined) ?? call.text;
}
