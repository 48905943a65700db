// Statements of the interpreter: blocks, if/for/while/with/try, assignment and binding, function and class definitions.
import type { SyntaxNode } from '../../parsing/syntax';
import { inContext, MAX_EXPRESSION_DEPTH, type Evaluator, type Flow } from './evaluator';
import { asModule, asTensor, isList, isUnresolvedValue, kindOf, mappingOf, ModuleObject, truthy, unresolved, type ClassValue, type DictValue, type ExternalValue, type FunctionValue, type InstanceValue, type ParameterValue, type PyValue, type Scope } from './pyValues';
import { isTensorLike, tensor } from './tensorOps';
import { CONTAINERS, replaceCatalogPart, torchLayerType } from './torchModules';
import { MAX_LIST, append } from './valueMethods';
import { dataDerivedValue } from './configCalls';
import { applyDecorators, runImport } from './definitionTime';
import { isLightningCli } from './lightningCli';
import { isParametersOf } from './parameterOwners';
import { applyRequiresGrad, isParameterHandle, parameterItems, unfollowedUnfreeze, wholeModuleSetting } from './requiresGrad';
import { disablesGrad } from './gradMode';
import { isYacsNode } from './yacsConfig';

/** Right-hand sides that are a setting written out (`batch_size = 12`, `dataset = 'shakespeare'`), which the user's assumed values replace. */
const LITERALS = new Set(['integer', 'float', 'string', 'true', 'false', 'unary_operator']);

export function execBlock(interp: Evaluator, block: SyntaxNode | null, scope: Scope, discovering = false): Flow {
  if (!block) return undefined;
  for (const statement of block.namedChildren) {
    const flow = exec(interp, statement, scope, discovering);
    if (flow) return flow;
  }
  return undefined;
}

export function exec(interp: Evaluator, node: SyntaxNode, scope: Scope, discovering = false): Flow {
  interp.tick();
  if (interp.expressionDepth >= MAX_EXPRESSION_DEPTH) return undefined;
  switch (node.type) {
    case 'expression_statement':
      for (const child of node.namedChildren) {
        if (child.type === 'assignment' || child.type === 'augmented_assignment') assign(interp, child, scope, discovering);
        else if (!(discovering && isDiscoveredCall(child, scope))) interp.evaluate(child, scope);
      }
      return undefined;
    case 'return_statement': {
      const value = node.namedChildren[0];
      return { kind: 'return', value: value ? interp.evaluate(value, scope) : null };
    }
    case 'if_statement':
      return execIf(interp, node, scope, discovering);
    case 'for_statement':
      return execFor(interp, node, scope, discovering);
    case 'while_statement': {
      const condition = truthy(interp.evaluate(node.childForFieldName('condition')!, scope));
      if (condition === false) return undefined;
      // The iteration count is rarely known statically: follow the body once.
      const flow = execBlock(interp, node.childForFieldName('body'), scope, discovering);
      return flow?.kind === 'return' ? flow : undefined;
    }
    case 'with_statement': {
      let noGrad = false;
      for (const item of node.descendantsOfType('with_item')) {
        const value = item.childForFieldName('value');
        const expression = value?.type === 'as_pattern' ? value.namedChildren[0]! : value;
        noGrad ||= expression !== null && disablesGrad(interp, expression, scope);
        const evaluated = expression ? interp.evaluate(expression, scope) : null;
        const alias = value?.type === 'as_pattern' ? value.childForFieldName('alias') : null;
        const target = alias?.namedChildren[0] ?? alias;
        if (target?.type === 'identifier') scope.set(target.text, evaluated);
      }
      return inContext(interp, 'gradDisabled', noGrad, () => execBlock(interp, node.childForFieldName('body'), scope, discovering));
    }
    case 'try_statement':
      return execBlock(interp, node.childForFieldName('body'), scope, discovering);
    case 'function_definition':
      defineFunction(node, scope);
      return undefined;
    case 'class_definition':
      defineClass(interp, node, scope, []);
      return undefined;
    case 'decorated_definition': {
      const definition = node.childForFieldName('definition');
      const decorators = node.namedChildren.filter((c) => c.type === 'decorator');
      const defined = definition?.type === 'class_definition' ? defineClass(interp, definition, scope, decorators) : definition?.type === 'function_definition' ? defineFunction(definition, scope) : undefined;
      if (defined) applyDecorators(interp, decorators, defined, scope);
      return undefined;
    }
    case 'import_statement':
    case 'import_from_statement':
      runImport(interp, node);
      return undefined;
    case 'break_statement':
      return { kind: 'break' };
    case 'continue_statement':
      return { kind: 'continue' };
    default:
      return undefined;
  }
}

/**
 * `main()` as a statement of its own, without arguments, calling a top-level function:
 * discovery follows that function's body by itself, so following the call too would only do
 * the work twice. (With arguments, the call carries values the body alone lacks.)
 */
function isDiscoveredCall(node: SyntaxNode, scope: Scope): boolean {
  const fn = node.childForFieldName('function');
  if (node.type !== 'call' || fn?.type !== 'identifier' || (node.childForFieldName('arguments')?.namedChildren.length ?? 1) > 0) return false;
  const callee = scope.get(fn.text);
  if (kindOf(callee) !== 'function') return false;
  const definition = (callee as FunctionValue).node;
  const statement = definition.parent?.type === 'decorated_definition' ? definition.parent : definition;
  return statement.parent?.type === 'module';
}

function execIf(interp: Evaluator, node: SyntaxNode, scope: Scope, discovering: boolean): Flow {
  const condition = truthy(interp.evaluate(node.childForFieldName('condition')!, scope));
  const alternatives = node.childrenForFieldName('alternative');
  if (condition === true) return execBlock(interp, node.childForFieldName('consequence'), scope, discovering);
  if (condition === undefined) {
    // Unknown condition: take the first branch; while discovering, look at every branch.
    return inContext(interp, 'undecidedBranches', true, () => {
      const flow = execBlock(interp, node.childForFieldName('consequence'), scope, discovering);
      if (!discovering) return flow;
      for (const alternative of alternatives) execBlock(interp, alternative.childForFieldName('body'), scope, discovering);
      return flow?.kind === 'return' ? flow : undefined;
    });
  }
  for (const alternative of alternatives) {
    if (alternative.type === 'else_clause') return execBlock(interp, alternative.childForFieldName('body'), scope, discovering);
    const taken = truthy(interp.evaluate(alternative.childForFieldName('condition')!, scope));
    if (taken !== false) return execBlock(interp, alternative.childForFieldName('consequence'), scope, discovering);
  }
  return undefined;
}

function execFor(interp: Evaluator, node: SyntaxNode, scope: Scope, discovering: boolean): Flow {
  const left = node.childForFieldName('left')!;
  const iterable = interp.evaluate(node.childForFieldName('right')!, scope);
  const body = node.childForFieldName('body');
  const setsRequiresGrad = body?.text.includes('requires_grad') === true;
  if (isParametersOf(iterable)) {
    // `for p in model.parameters(): p.requires_grad = False` freezes the module: one setting, not a round per parameter.
    const whole = wholeModuleSetting(interp, left, body, scope);
    // A flag that reads the loop's variables (`p.requires_grad = "head" in name`) is decided per parameter.
    if (whole && typeof whole.flag === 'boolean') {
      applyRequiresGrad(interp, { kind: 'module', module: iterable.parametersOf }, whole.flag, whole.node);
      return undefined;
    }
  }
  const items = iterate(iterable);
  if (!items && isParametersOf(iterable) && setsRequiresGrad) {
    interp.note(node, `${iterable.parametersOf.className} has too many parameter tensors to follow \`${node.text.split('\n')[0]!.slice(0, 60)}\` one by one: the requires_grad settings of this loop are not applied (those parameters are counted as trained)`);
  }
  if (!items) {
    // Unknown iterable (a data loader): follow the body once with unknown loop variables.
    bind(interp, left, unresolved(left.text, 'loop variable'), scope, discovering);
    const flow = execBlock(interp, body, scope, discovering);
    return flow?.kind === 'return' ? flow : undefined;
  }
  // A loop over parameters or modules that sets requires_grad must visit every one of them.
  const overParameters = setsRequiresGrad && items.some((item) => isParameterHandle(item) || asModule(item) !== undefined || (isList(item) && item.some(isParameterHandle)));
  for (const [i, item] of items.entries()) {
    const modulesBefore = ModuleObject.created;
    bind(interp, left, item, scope, discovering);
    const flow = execBlock(interp, body, scope, discovering);
    if (flow?.kind === 'break') break;
    if (flow?.kind === 'return') return flow;
    // In script code (not a constructor), a loop that builds no module, such as a training
    // loop, has shown what it does after two rounds.
    if (interp.scriptLevel && !interp.forwardMode && i >= 1 && ModuleObject.created === modulesBefore && !overParameters) {
      // Gradual unfreezing (`if epoch == 10: backbone.requires_grad_(True)`): the rounds left are one more round with the
      // loop's variable unknown, so a later unfreezing counts (the peak is after it) and a freezing it cannot place does not.
      if (setsRequiresGrad && i < items.length - 1) {
        bind(interp, left, unresolved(left.text, 'a later round of the loop'), scope, discovering);
        inContext(interp, 'undecidedBranches', true, () => execBlock(interp, body, scope, discovering));
      }
      break;
    }
  }
  return undefined;
}

/** The items a `for` loop visits, when they are known. */
export function iterate(value: PyValue): PyValue[] | undefined {
  if (isList(value)) return [...value];
  if (isParametersOf(value)) return parameterItems(value.parametersOf, value.named);
  if (typeof value === 'string') return [...value];
  const module = asModule(value);
  if (module && module.kind !== 'layer') return [...module.children.values()].map((m) => ({ kind: 'module', module: m }));
  const mapping = mappingOf(value);
  if (mapping) return [...mapping.entries.keys()];
  // A DataLoader over a TensorDataset: one batch stands for all of them.
  if (kindOf(value) === 'instance' && (value as InstanceValue).className === 'DataLoader') {
    const batch = (value as InstanceValue).attrs.get('batch');
    return batch ? [batch] : undefined;
  }
  return undefined;
}

function assign(interp: Evaluator, node: SyntaxNode, scope: Scope, discovering: boolean): void {
  const left = node.childForFieldName('left')!;
  const right = node.childForFieldName('right');
  if (!right) {
    // `n_embd: int` in a class body: a declaration without a value.
    return;
  }
  if (node.type === 'augmented_assignment') {
    const operator = node.childForFieldName('operator')?.text.slice(0, -1) ?? '+';
    const current = interp.evaluate(left, scope);
    const value = interp.evaluate(right, scope);
    if (isList(current) && operator === '+' && isList(value)) {
      if (current.length + value.length <= MAX_LIST) append(current, value);
      return;
    }
    bind(interp, left, interp.binary(operator, current, value, node), scope, discovering);
    return;
  }
  // a = b = value
  let value = right.type === 'assignment' ? (assign(interp, right, scope, discovering), interp.evaluate(right.childForFieldName('left')!, scope)) : interp.evaluate(right, scope);
  if (interp.config && left.type === 'identifier') {
    // `batch_size = 12` at the script's top level (nanoGPT's style of configuration): the user's value replaces it.
    if (discovering && interp.depth === 0 && node.parent?.parent?.type === 'module' && LITERALS.has(right.type)) value = interp.config.constantDefault(left.text, value, node, `constant ${left.text} =`);
    value = dataDerivedValue(interp, left.text, value, right, node);
  }
  bind(interp, left, value, scope, discovering);
}

/**
 * What `a, b, c = value` unpacks beside a list: a ModuleList or Sequential its modules
 * (`for attn, ff in self.layers:` over ModuleLists of pairs); a tensor its rows along the first
 * dimension when that is a known size (`q, k, v = qkv.permute(2, 0, 3, 1, 4)`).
 */
function unpackedItems(value: PyValue, count: number): PyValue[] | undefined {
  const module = asModule(value);
  if (module?.kind === 'sequential' || module?.kind === 'list') return iterate(value);
  const tensorValue = asTensor(value);
  const shape = tensorValue?.shape;
  if (!shape || shape.length === 0 || shape[0] !== count) return undefined;
  return Array.from({ length: count }, () => tensor(shape.slice(1), tensorValue.dtype));
}

export function bind(interp: Evaluator, target: SyntaxNode, value: PyValue, scope: Scope, discovering = false): void {
  switch (target.type) {
    case 'identifier':
      scope.set(target.text, value);
      if (discovering && interp.depth === 0) interp.hooks.onAssign?.(target.text, value, target);
      return;
    case 'pattern_list':
    case 'tuple_pattern':
    case 'list_pattern':
    case 'tuple':
    case 'list':
    case 'parenthesized_expression': {
      const targets = target.namedChildren.filter((c) => c.type !== 'comment');
      if (target.type === 'parenthesized_expression') {
        if (targets[0]) bind(interp, targets[0], value, scope, discovering);
        return;
      }
      const items = isList(value) ? value : unpackedItems(value, targets.length);
      targets.forEach((t, i) => {
        if (t.type === 'list_splat_pattern') bind(interp, t.namedChildren[0]!, items ? items.slice(i) : unresolved(t.text, 'unpacked'), scope, discovering);
        else bind(interp, t, items?.[i] ?? unresolved(t.text, `cannot unpack ${value === null ? 'None' : 'this value'}`), scope, discovering);
      });
      return;
    }
    case 'attribute':
      setAttribute(interp, interp.evaluate(target.childForFieldName('object')!, scope), target.childForFieldName('attribute')!.text, value, target);
      return;
    case 'subscript': {
      const container = interp.evaluate(target.childForFieldName('value')!, scope);
      const key = interp.evaluate(target.childForFieldName('subscript')!, scope);
      const mapping = mappingOf(container);
      if (mapping && typeof key === 'string') {
        mapping.entries.set(key, value);
        // `cfg["batch_size"] = 64`: the value is the script's now, not the file's.
        interp.config?.overwritten(container, key);
      }
      else if (isYacsNode(container) && typeof key === 'string') (container as InstanceValue).attrs.set(key, value);
      else if (isList(container) && typeof key === 'number') container[key < 0 ? container.length + key : key] = value;
      else {
        const module = asModule(container);
        const child = asModule(value);
        if (module?.kind === 'catalog' && child && (typeof key === 'string' || (typeof key === 'number' && key >= 0))) replaceCatalogPart(module, String(key), child);
        else if (module && child && (typeof key === 'string' || typeof key === 'number')) module.setChild(String(key), child);
      }
      return;
    }
    default:
      return;
  }
}

/** `self.fc = nn.Linear(...)` registers a child, `self.pos = nn.Parameter(...)` a parameter; `head.weight = emb.weight` ties them. */
function setAttribute(interp: Evaluator, object: PyValue, name: string, value: PyValue, node: SyntaxNode): void {
  if (name === 'requires_grad' && applyRequiresGrad(interp, object, value, node)) return;
  if (name === 'requires_grad' && value !== false && isUnresolvedValue(object)) unfollowedUnfreeze(interp, node);
  const module = asModule(object);
  if (module) {
    const child = asModule(value);
    if (child && module.kind === 'catalog') replaceCatalogPart(module, name, child);
    else if (child && (module.kind !== 'layer' || module.classValue)) module.setChild(name, child);
    else if (kindOf(value) === 'parameter') module.parameters.set(name, value as ParameterValue);
    else if (module.kind === 'layer' && name === 'weight' && kindOf(value) === 'external' && (value as ExternalValue).name === 'weight-of') {
      const owner = asModule((value as ExternalValue).self);
      if (owner) module.tiedWeightOf = owner.tiedWeightOf ?? owner;
    } else module.attrs.set(name, value);
    return;
  }
  if (kindOf(object) === 'instance') (object as InstanceValue).attrs.set(name, value);
  else if (kindOf(object) === 'dict') {
    // `cfg.model.n_layer = 4` on an OmegaConf mapping (or one merged into a yacs node): the script's value now, not the file's.
    (object as DictValue).entries.set(name, value);
    interp.config?.overwritten(object, name);
  }
  else if (kindOf(object) === 'class') (object as ClassValue).attrs.set(name, value);
  // A library object's attribute (`tokenizer.pad_token = ...`, `model.config.use_cache = False`) sizes nothing the analysis models.
  else if (!isUnresolvedValue(object) && !isTensorLike(object) && kindOf(object) !== 'external') interp.note(node, `cannot follow the assignment to \`${node.text}\``);
}

function defineFunction(node: SyntaxNode, scope: Scope, classValue?: ClassValue): FunctionValue {
  const name = node.childForFieldName('name')?.text ?? '<lambda>';
  const fn: FunctionValue = { kind: 'function', name, node, closure: scope, classValue };
  if (!classValue) scope.set(name, fn);
  return fn;
}

/** `dict` and the standard mappings deriving from it: a subclass's instances hold entries (`class Registry(dict)`). */
const MAPPING_BASES = /^(builtins\.dict|collections\.(OrderedDict|defaultdict|UserDict)|typing\.Dict)$/;

const LIGHTNING_MODULE = /^(lightning|pytorch_lightning|lightning\.pytorch)(\.core(\.module)?)?\.LightningModule$/;

function defineClass(interp: Evaluator, node: SyntaxNode, scope: Scope, decorators: readonly SyntaxNode[]): ClassValue {
  const name = node.childForFieldName('name')?.text ?? '<class>';
  const bases: ClassValue[] = [];
  let isModule = false;
  let lightning = false;
  let lightningCli = false;
  let container: ClassValue['container'];
  let mapping = false;
  let layerBase: string | undefined;
  for (const base of node.childForFieldName('superclasses')?.namedChildren ?? []) {
    if (base.type === 'keyword_argument') continue;
    const value = interp.evaluate(base, scope);
    if (kindOf(value) === 'class') {
      bases.push(value as ClassValue);
      isModule ||= (value as ClassValue).isModule;
      lightning ||= (value as ClassValue).lightning === true;
      mapping ||= (value as ClassValue).mapping === true;
      lightningCli ||= (value as ClassValue).lightningCli === true;
      container ??= (value as ClassValue).container;
      layerBase ??= (value as ClassValue).layerBase;
    } else if (kindOf(value) === 'external') {
      const name = (value as ExternalValue).name;
      const layer = torchLayerType(name);
      if (layer) {
        isModule = true;
        layerBase ??= layer;
      }
      if (/^torch\.nn\.(modules\.module\.)?Module$/.test(name)) isModule = true;
      // A LightningModule is an nn.Module whose training step, optimizers and loaders are its methods (lightningModules.ts).
      if (LIGHTNING_MODULE.test(name)) isModule = lightning = true;
      // `class MyCLI(LightningCLI)`: its parser additions aside, it builds what LightningCLI builds.
      if (isLightningCli(name)) lightningCli = true;
      if (CONTAINERS[name]) {
        isModule = true;
        container ??= CONTAINERS[name];
      }
      if (MAPPING_BASES.test(name)) mapping = true;
    }
  }
  const isDataclass = decorators.some((d) => /\bdataclass\b/.test(d.text));
  const attrs = new Map<string, PyValue>();
  const fields: string[] = [];
  const classValue: ClassValue = { kind: 'class', name, node, attrs, bases, isModule, isDataclass, fields, container, ...(layerBase ? { layerBase } : {}), ...(lightning ? { lightning } : {}), ...(mapping ? { mapping } : {}), ...(lightningCli ? { lightningCli } : {}), ...(interp.place?.imported ? { file: interp.place.file } : {}) };
  const classScope = scope.child();
  for (const statement of node.childForFieldName('body')?.namedChildren ?? []) {
    const inner = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (inner?.type === 'function_definition') {
      attrs.set(inner.childForFieldName('name')?.text ?? '', defineFunction(inner, scope, classValue));
    } else if (statement.type === 'expression_statement' && statement.namedChildren[0]?.type === 'assignment') {
      const assignment = statement.namedChildren[0];
      const left = assignment.childForFieldName('left');
      const right = assignment.childForFieldName('right');
      if (left?.type !== 'identifier') continue;
      if (assignment.childForFieldName('type')) fields.push(left.text);
      const value = right ? interp.evaluate(right, classScope) : unresolved(left.text, 'declared without a default');
      classScope.set(left.text, value);
      attrs.set(left.text, value);
    }
  }
  scope.set(name, classValue);
  return classValue;
}
