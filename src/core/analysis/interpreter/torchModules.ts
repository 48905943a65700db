// torch.nn modules as scripts build and use them: layers, containers, parameters, catalog architectures and their parts.
import { rangeOf, type SyntaxNode } from '../../parsing/syntax';
import { layerSpec } from '../../layers/layerSpecs';
import { catalogRows } from './catalogRows';
import { checkpointBlocks } from './checkpointCalls';
import { TIMM_MEMBERS, timmAttribute, timmMethod } from './timmModels';
import { applyRequiresGrad } from './requiresGrad';
import type { CatalogCall } from './catalogCalls';
import { bindMethod, classAttribute } from './classes';
import type { Evaluator } from './evaluator';
import { parametersOf } from './parameterOwners';
import { asModule, isList, isUnresolvedValue, kindOf, ModuleObject, toValue, tuple, unresolved, type ClassValue, type DictValue, type ParameterValue, type PyList, type PyValue, type SliceValue } from './pyValues';
import { sliceList } from './valueMethods';

export const CONTAINERS: Readonly<Record<string, 'sequential' | 'list' | 'dict'>> = {
  'torch.nn.Sequential': 'sequential',
  'torch.nn.ModuleList': 'list',
  'torch.nn.ModuleDict': 'dict',
  'torch.nn.ParameterList': 'list',
};
const MODULE_PASS_THROUGH = new Set(['to', 'cuda', 'cpu', 'train', 'eval', 'float', 'half', 'bfloat16', 'double', 'requires_grad_', 'apply', 'type', 'share_memory', 'zero_grad']);
/** Methods of nn.Module (and of Hugging Face models) that are no sub-module names. */
const MODULE_METHODS = new Set(['parameters', 'named_parameters', 'modules', 'named_modules', 'children', 'named_children', 'buffers', 'named_buffers', 'state_dict', 'load_state_dict', 'forward', 'register_buffer', 'register_parameter', 'add_module', 'register_forward_hook', 'register_forward_pre_hook', 'config', 'generate', 'save_pretrained', 'resize_token_embeddings', 'gradient_checkpointing_enable', 'get_input_embeddings', 'get_output_embeddings', 'num_parameters', 'training', 'weight', 'bias']);
/** Containers with more items than this (no real model has them) stop taking more. */
const MAX_CHILDREN = 10_000;
/** Layer attributes scripts read back (`model.fc.in_features`): constructor argument names by position. */
const LAYER_ARGUMENT_NAMES: Readonly<Record<string, readonly string[]>> = {
  Linear: ['in_features', 'out_features'],
  Conv1d: ['in_channels', 'out_channels', 'kernel_size'],
  Conv2d: ['in_channels', 'out_channels', 'kernel_size'],
  Conv3d: ['in_channels', 'out_channels', 'kernel_size'],
  Embedding: ['num_embeddings', 'embedding_dim'],
  BatchNorm1d: ['num_features'],
  BatchNorm2d: ['num_features'],
  LayerNorm: ['normalized_shape'],
  LSTM: ['input_size', 'hidden_size', 'num_layers'],
  GRU: ['input_size', 'hidden_size', 'num_layers'],
  MultiheadAttention: ['embed_dim', 'num_heads'],
};

/** Loss modules (`nn.CrossEntropyLoss()`) are torch.nn modules but neither models nor layers of one. */
export function isLoss(type: string): boolean {
  return /Loss$/.test(type);
}

export function moduleAttribute(module: ModuleObject, name: string, self: PyValue): PyValue {
  const timm = module.kind === 'catalog' ? timmAttribute(module, name) : undefined;
  if (timm !== undefined) return timm;
  const part = module.kind === 'catalog' && catalogPart(module, name);
  if (part) return part;
  const child = module.children.get(name);
  if (child) return { kind: 'module', module: child };
  if (module.parameters.has(name)) return module.parameters.get(name)!;
  if (module.attrs.has(name)) return module.attrs.get(name)!;
  if (name === 'training') return true;
  // DDP, DataParallel, FSDP and torch.compile give back the model they wrap (calls.ts), so the wrapped model is the model itself.
  if (name === 'module' || name === '_orig_mod') return self;
  if (module.classValue) {
    const found = classAttribute(module.classValue, name);
    if (found !== undefined) return bindMethod(found, self);
  }
  if (module.layer) {
    if (name === 'weight' || name === 'bias') return { kind: 'external', name: 'weight-of', self };
    const names = LAYER_ARGUMENT_NAMES[module.layer.type] ?? [];
    const position = names.indexOf(name);
    const value = name in module.layer.kwargs ? (module.layer.kwargs[name] as PyValue) : position >= 0 ? (module.layer.args[position] as PyValue | undefined) : undefined;
    // Convolutions store kernel_size, stride, padding and dilation as tuples.
    const convolution = /^Conv(Transpose)?([123])d$/.exec(module.layer.type);
    if (convolution && typeof value === 'number' && ['kernel_size', 'stride', 'padding', 'dilation'].includes(name)) return tuple(Array.from({ length: Number(convolution[2]) }, () => value));
    if (value !== undefined) return value;
  }
  return { kind: 'external', name: `module.${name}`, self };
}

/** A standard architecture as a module the script can use, read and change (`model.fc = ...`); a config as an instance. */
export function catalogValue(interp: Evaluator, call: CatalogCall, node: SyntaxNode): PyValue {
  if ('config' in call) return call.config;
  if ('library' in call) return call.library;
  if ('miss' in call) {
    interp.note(node, call.miss);
    return unresolved(node.text, call.miss);
  }
  const module = new ModuleObject('catalog', call.architecture.className, rangeOf(node));
  module.catalog = { architecture: call.architecture, root: module, path: '' };
  for (const name of call.unread) interp.note(node, `\`${name}\` of ${call.architecture.name} is not a constant the analysis can read; the architecture's default is assumed`);
  return { kind: 'module', module };
}

/** `model.fc` or `model.classifier[6]` on a catalog architecture: the script's replacement, the layer there, or a part to go on from. */
export function catalogPart(module: ModuleObject, name: string): PyValue | undefined {
  const part = module.catalog!;
  const path = part.path ? `${part.path}.${name}` : name;
  const replaced = part.root.children.get(path);
  if (replaced) return { kind: 'module', module: replaced };
  // timm's `backbone.forward_features(x)`: the model run up to its head, called like a module.
  if (name === 'forward_features' && part.path === '' && part.architecture.library === 'timm') {
    const features = new ModuleObject('catalog', `${part.architecture.className}.forward_features`, module.range);
    features.catalog = { ...part, featuresOnly: true };
    return { kind: 'module', module: features };
  }
  // `self.bert.config.hidden_size`: the config the catalog resolved, as the library's model holds it.
  const hf = part.architecture.hfConfig;
  if (name === 'config' && part.path === '' && hf?.configClass) {
    const attrs = new Map<string, PyValue>(Object.entries(hf.config).map(([key, value]) => [key, configValue(value)]));
    return { kind: 'instance', className: hf.configClass, attrs };
  }
  if (MODULE_METHODS.has(name) || MODULE_PASS_THROUGH.has(name)) return undefined;
  if (part.architecture.library === 'timm' && TIMM_MEMBERS.has(name)) return undefined;
  const layer = part.architecture.layerAt?.(path);
  if (layer) {
    const range = module.range;
    return {
      kind: 'module',
      module: partObject(part.root, path, () => new ModuleObject('layer', layer.type, range, { type: layer.type, path, args: [...layer.args], kwargs: { ...layer.kwargs }, range })),
    };
  }
  if (!/^[A-Za-z_]\w*$|^\d+$/.test(name)) return undefined;
  return { kind: 'module', module: partObject(part.root, path, () => new ModuleObject('catalog', name, module.range)) };
}

/** One object per part of an architecture, as PyTorch has one module: `model.layer1` read twice is the same module (counted once, frozen once). */
const innerParts = new WeakMap<ModuleObject, Map<string, ModuleObject>>();

function partObject(root: ModuleObject, path: string, make: () => ModuleObject): ModuleObject {
  let parts = innerParts.get(root);
  if (!parts) innerParts.set(root, (parts = new Map<string, ModuleObject>()));
  let part = parts.get(path);
  if (!part) {
    part = make();
    part.catalog = { architecture: root.catalog!.architecture, root, path };
    parts.set(path, part);
  }
  return part;
}

/**
 * The names of a catalog architecture's (or part's) children: as `named_children()` lists them
 * where the library's data records the module tree (torchvision), else in the order its rows
 * list them (`layer.0`, `layer.1`, ... under `bert.encoder`).
 */
export function catalogChildNames(module: ModuleObject): string[] {
  const part = module.catalog!;
  const listed = part.architecture.childNames?.(part.path);
  if (listed) return [...listed];
  const prefix = part.path ? `${part.path}.` : '';
  const names = new Set<string>();
  for (const row of catalogRows(part.architecture) ?? []) if (row.path.startsWith(prefix) && row.path.length > prefix.length) names.add(row.path.slice(prefix.length).split('.')[0]!);
  return [...names];
}

/** `model.bert.encoder.layer[:8]`: the parts in that slice of a catalog container, as a Sequential holding them. */
export function catalogSlice(module: ModuleObject, slice: SliceValue, node: SyntaxNode): PyValue {
  const container = new ModuleObject('sequential', 'Sequential', rangeOf(node));
  const picked = sliceList(catalogChildNames(module), slice) as string[];
  for (const name of picked) {
    const child = asModule(catalogPart(module, name));
    if (child) container.setChild(name, child);
  }
  return { kind: 'module', module: container };
}

/** `model.fc = nn.Linear(2048, 10)` on a catalog architecture: the script's layer replaces the architecture's at that path. */
export function replaceCatalogPart(module: ModuleObject, name: string, child: ModuleObject): void {
  const part = module.catalog!;
  part.root.setChild(part.path ? `${part.path}.${name}` : name, child);
}

export function buildContainer(interp: Evaluator, kind: 'sequential' | 'list' | 'dict', className: string, args: PyValue[], node: SyntaxNode): PyValue {
  const module = new ModuleObject(kind, className, rangeOf(node));
  fillContainer(interp, module, kind, args, node);
  return { kind: 'module', module };
}

export function fillContainer(interp: Evaluator, module: ModuleObject, kind: 'sequential' | 'list' | 'dict', args: PyValue[], node: SyntaxNode): void {
  const items: PyValue[] = kind === 'sequential' && !(args.length === 1 && kindOf(args[0]) === 'external') ? args : (args[0] === undefined ? [] : (interp.iterate(args[0]) ?? []));
  if (kind === 'dict' || (kind === 'sequential' && args.length === 1 && kindOf(args[0]) === 'dict')) {
    const dict = args[0];
    if (kindOf(dict) === 'dict') for (const [key, value] of (dict as DictValue).entries) addChild(interp, module, key, value, node);
    else if (isOrderedDictPairs(dict)) for (const pair of dict as PyList) addChild(interp, module, (pair as PyList)[0] as string, (pair as PyList)[1]!, node);
    return;
  }
  if (kind === 'sequential' && args.length === 1 && isOrderedDictPairs(args[0])) {
    for (const pair of args[0] as PyList) addChild(interp, module, (pair as PyList)[0] as string, (pair as PyList)[1]!, node);
    return;
  }
  items.forEach((item, i) => addChild(interp, module, String(i), item, node));
}

function addChild(interp: Evaluator, module: ModuleObject, name: string, value: PyValue, node: SyntaxNode): void {
  if (module.children.size >= MAX_CHILDREN) {
    if (!interp.truncated.has(module.id)) interp.note(node, `${module.className} has more than ${MAX_CHILDREN} items; the rest are not counted`);
    interp.truncated.add(module.id);
    return;
  }
  const child = asModule(value);
  if (child) module.setChild(name, child);
  else if (kindOf(value) === 'parameter') module.parameters.set(name, value as ParameterValue);
  else {
    const placeholder = new ModuleObject('layer', 'Unknown', rangeOf(node), { type: '?', path: '', args: [], kwargs: {}, range: rangeOf(node) });
    placeholder.attrs.set('reason', isUnresolvedValue(value) ? value.reason : 'not a module');
    module.setChild(name, placeholder);
    interp.note(node, `item ${name} of ${module.className} is not a module the analysis can follow${isUnresolvedValue(value) ? ` (${value.reason})` : ''}`);
  }
}

export function buildLayer(interp: Evaluator, type: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode, classValue?: ClassValue): PyValue {
  const layer = layerCall(interp, type, args, kwargs, node);
  // A layer subclass's instance keeps the layer's type as its class name: the layer rules go by it.
  return { kind: 'module', module: new ModuleObject('layer', type, layer.range, layer, classValue) };
}

/** The torch.nn layer `type` built with these arguments at `node` (a constructor call, or a layer subclass's `super().__init__(...)`). */
export function layerCall(interp: Evaluator, type: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): NonNullable<ModuleObject['layer']> {
  if (!layerSpec(type) && !isLoss(type)) interp.note(node, `nn.${type} is not understood yet; its parameters and activations are not counted`);
  return {
    type,
    path: '',
    args: args.map((a, i) => toValue(a, node.childForFieldName('arguments')?.namedChildren[i]?.text ?? node.text)),
    kwargs: Object.fromEntries([...kwargs].map(([k, v]) => [k, toValue(v, k)])),
    range: rangeOf(node),
  };
}

/** einops' layers, sized by their patterns (layers/einops.ts): layer types of their own, as Flatten is. */
export const EINOPS_LAYER = /^einops\.layers\.torch\.(Rearrange|Reduce)$/;

/** `torch.nn.Conv2d` and the like (and einops' layers): a layer class a script may derive from (not Module, not a container). */
export function torchLayerType(qualified: string): string | undefined {
  const einops = EINOPS_LAYER.exec(qualified)?.[1];
  if (einops) return einops;
  const type = /^torch\.nn\.([A-Z]\w*)$/.exec(qualified)?.[1];
  return type === undefined || type === 'Module' || CONTAINERS[qualified] ? undefined : type;
}

export function moduleMethod(interp: Evaluator, module: ModuleObject, self: PyValue, method: string, args: PyValue[], kwargs: Map<string, PyValue>, node: SyntaxNode): PyValue {
  if (MODULE_PASS_THROUGH.has(method)) return self;
  // LightningModule.freeze() / unfreeze(): requires_grad of every parameter (and eval / train mode, which holds no memory).
  if ((method === 'freeze' || method === 'unfreeze') && module.classValue?.lightning && args.length === 0) {
    applyRequiresGrad(interp, self, method === 'unfreeze', node);
    return null;
  }
  if (module.kind === 'catalog') {
    const timm = timmMethod(interp, module, method, args, kwargs, node, {
      part: (name) => catalogPart(module, name),
      replace: (path, layer) => {
        const child = asModule(layer);
        if (child) replaceCatalogPart(module, path, child);
      },
      layer: (type, layerArgs) => buildLayer(interp, type, layerArgs, new Map(), node),
    });
    if (timm !== undefined) return timm;
    if ((method === 'gradient_checkpointing_enable' || method === 'gradient_checkpointing_disable') && module.catalog?.path === '' && module.catalog.architecture.library === 'transformers') {
      return checkpointBlocks(interp, module, method === 'gradient_checkpointing_enable', node);
    }
  }
  if (method === 'add_module' || method === 'register_module') {
    const child = asModule(args[1]);
    if (typeof args[0] === 'string' && child) module.setChild(args[0], child);
    return null;
  }
  if (method === 'register_parameter') {
    if (typeof args[0] === 'string' && kindOf(args[1]) === 'parameter') module.parameters.set(args[0], args[1] as ParameterValue);
    return null;
  }
  if (method === 'register_buffer') {
    if (typeof args[0] === 'string') module.attrs.set(args[0], args[1] ?? null);
    return null;
  }
  if (module.kind === 'list' && (method === 'append' || method === 'extend' || method === 'insert')) {
    const items = method === 'extend' ? (interp.iterate(args[0] ?? null) ?? []) : [method === 'insert' ? args[1]! : args[0]!];
    for (const item of items) addChild(interp, module, String(module.children.size), item, node);
    return null;
  }
  if (module.kind === 'dict' && method === 'items') return [...module.children].map(([k, m]) => tuple([k, { kind: 'module', module: m }]));
  if (module.kind === 'dict' && (method === 'values' || method === 'keys')) return [...module.children].map(([k, m]) => (method === 'keys' ? k : { kind: 'module', module: m }));
  if (method === 'forward' && interp.forwardMode) return interp.callModule(module, args, kwargs, node);
  if (method === 'parameters' || method === 'named_parameters') return parametersOf(module, node.text, method);
  // `nn.Sequential(*list(backbone.children())[:-1])`: the children in registration order, as PyTorch lists them.
  if ((method === 'children' || method === 'named_children') && module.kind !== 'catalog') {
    return [...module.children].map(([name, child]): PyValue => (method === 'children' ? { kind: 'module', module: child } : tuple([name, { kind: 'module', module: child }])));
  }
  if (method === 'children' || method === 'named_children') return catalogChildren(module, method, node);
  // Every module, the model first, as PyTorch lists them; not through a standard architecture, whose own layers are no objects here.
  if ((method === 'modules' || method === 'named_modules') && module.kind !== 'catalog') {
    const all: [string, ModuleObject][] = [['', module], ...module.namedModules()];
    if (all.some(([, m]) => m.kind === 'catalog')) return unresolved(node.text, `model.${method}() through a standard architecture`);
    return all.map(([name, m]): PyValue => (method === 'modules' ? { kind: 'module', module: m } : tuple([name, { kind: 'module', module: m }])));
  }
  if (method === 'modules') return unresolved(node.text, `model.${method}()`);
  return unresolved(node.text, `\`.${method}()\` of a module is not followed`);
}

/** `list(backbone.children())[:-1]` of a standard architecture: its parts (and the script's replacements) in PyTorch's order. */
function catalogChildren(module: ModuleObject, method: 'children' | 'named_children', node: SyntaxNode): PyValue {
  const names = catalogChildNames(module);
  if (names.length === 0) return unresolved(node.text, `the children of ${module.className} (${module.catalog!.architecture.name}) are not known: it cannot be sized at its usual input`);
  return names.map((name): PyValue => {
    const child = catalogPart(module, name) ?? unresolved(node.text, `no module ${name} in ${module.catalog!.architecture.name}`);
    return method === 'children' ? child : tuple([name, child]);
  });
}

function isOrderedDictPairs(value: PyValue | undefined): boolean {
  return isList(value) && value.length > 0 && value.every((p) => isList(p) && p.length === 2 && typeof p[0] === 'string');
}

export function parameterFrom(data: PyValue | undefined, kwargs: Map<string, PyValue>): ParameterValue {
  const shape = asShape(data);
  const trainable = kwargs.get('requires_grad') !== false;
  return { kind: 'parameter', numel: shape ? shape.reduce((a, b) => a * b, 1) : null, shape, trainable };
}

function asShape(value: PyValue | undefined): number[] | null {
  const t = value && kindOf(value) === 'tensor' ? (value as { shape: readonly unknown[] | null }).shape : null;
  if (!t || !t.every((d) => typeof d === 'number')) return null;
  return t as number[];
}

/** A resolved config value as the script reads it: lists (Swin's depths) as lists. */
function configValue(value: unknown): PyValue {
  if (Array.isArray(value)) return value.map(configValue);
  return value === null || typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean' ? value : unresolved('config', 'a config value the analysis does not read');
}
