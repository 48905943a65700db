import { callParts, dottedName, rangeOf, statementsOf, type CallParts, type SyntaxNode } from '../parsing/syntax';
import type { ImportTable } from './imports';
import type { AnalysisNote, LayerCall, ModelDescription, Value } from './modelDescription';
import { assignmentOf } from './moduleScope';
import { Scope, evaluate } from './values';

const TORCH_NN = 'torch.nn.';
/** Calls that return the model itself and may wrap a construction: `nn.Sequential(...).to(device)`. */
const PASS_THROUGH_METHODS = new Set(['to', 'cuda', 'cpu', 'train', 'eval', 'float', 'half', 'bfloat16', 'double']);

interface ModuleClass {
  readonly name: string;
  readonly node: SyntaxNode;
  readonly init?: SyntaxNode;
}

/**
 * Finds the models a script builds: `nn.Sequential(...)` values and instances of its own
 * `nn.Module` subclasses, with their layers in execution order where the source shows it.
 */
export class ModelFinder {
  readonly notes: AnalysisNote[] = [];
  private readonly classes = new Map<string, ModuleClass>();

  constructor(
    private readonly root: SyntaxNode,
    private readonly imports: ImportTable,
    private readonly scope: Scope,
  ) {
    for (const node of root.descendantsOfType('class_definition')) {
      if (node && this.isModuleClass(node)) {
        const name = node.childForFieldName('name')?.text ?? '';
        this.classes.set(name, { name, node, init: this.initOf(node) });
      }
    }
  }

  findModels(): ModelDescription[] {
    const models: ModelDescription[] = [];
    const constructed = new Set<string>();
    for (const assignment of this.root.descendantsOfType('assignment')) {
      if (!assignment || this.insideClass(assignment)) continue;
      const target = assignment.childForFieldName('left');
      const value = assignment.childForFieldName('right');
      if (target?.type !== 'identifier' || value?.type !== 'call') continue;
      const model = this.modelFromExpression(target.text, value);
      if (model) {
        models.push(model);
        if (model.kind === 'module') constructed.add(model.className);
      }
    }
    // A model class that is defined but never built here is still worth estimating.
    for (const moduleClass of this.classes.values()) {
      if (constructed.has(moduleClass.name) || this.isUsedAsSubmodule(moduleClass.name)) continue;
      const layers = this.classLayers(moduleClass, undefined, '', new Set());
      models.push({ name: moduleClass.name, kind: 'module', range: rangeOf(moduleClass.node), layers, orderFromDeclaration: true });
    }
    return models.map(({ name, kind, range, layers, orderFromDeclaration }) => ({ name, kind, range, layers, orderFromDeclaration }));
  }

  private modelFromExpression(name: string, value: SyntaxNode): (ModelDescription & { className: string }) | undefined {
    const call = this.unwrapPassThrough(value);
    const parts = call && callParts(call);
    if (!call || !parts) return undefined;
    const qualified = this.imports.qualify(parts.callee);
    if (qualified === `${TORCH_NN}Sequential`) {
      return { name, kind: 'sequential', className: '', range: rangeOf(call), layers: this.sequentialLayers(parts, this.scope, ''), orderFromDeclaration: false };
    }
    const moduleClass = this.classes.get(parts.callee);
    if (moduleClass) {
      const layers = this.classLayers(moduleClass, parts, '', new Set());
      return { name, kind: 'module', className: moduleClass.name, range: rangeOf(call), layers, orderFromDeclaration: true };
    }
    return undefined;
  }

  private unwrapPassThrough(node: SyntaxNode): SyntaxNode | undefined {
    let current: SyntaxNode | null = node;
    while (current?.type === 'call') {
      const fn: SyntaxNode | null = current.childForFieldName('function');
      const object: SyntaxNode | null = fn?.type === "attribute" ? fn.childForFieldName("object") : null;
      const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
      if (object?.type === 'call' && method && PASS_THROUGH_METHODS.has(method)) {
        current = object;
      } else {
        return current;
      }
    }
    return undefined;
  }

  /** The layers of `nn.Sequential(a, b, c)`, numbered as PyTorch numbers them. */
  private sequentialLayers(parts: CallParts, scope: Scope, prefix: string): LayerCall[] {
    for (const splat of parts.splats) {
      this.note(splat, `layers passed as \`${splat.text}\` are not expanded yet; the model may be incomplete`);
    }
    return parts.positional.flatMap((argument, index) => this.layersOf(argument, scope, `${prefix}${index}`));
  }

  /** The layers an expression builds: a single layer, a nested Sequential or a user module. */
  private layersOf(node: SyntaxNode, scope: Scope, path: string): LayerCall[] {
    const parts = node.type === 'call' ? callParts(node) : undefined;
    if (!parts) {
      this.note(node, `\`${abbreviate(node.text)}\` is not a layer the analyzer can follow`);
      return [];
    }
    const qualified = this.imports.qualify(parts.callee);
    if (qualified === `${TORCH_NN}Sequential`) return this.sequentialLayers(parts, scope, `${path}.`);
    const moduleClass = this.classes.get(parts.callee);
    if (moduleClass) return this.classLayers(moduleClass, parts, `${path}.`, new Set(), scope);
    if (qualified.startsWith(TORCH_NN)) {
      const type = qualified.slice(TORCH_NN.length);
      return [{ type, path, args: parts.positional.map((arg) => evaluate(arg, scope)), kwargs: this.keywordValues(parts, scope), range: rangeOf(node) }];
    }
    this.note(node, `\`${parts.callee}(...)\` is not a torch.nn layer or a model defined in this file`);
    return [];
  }

  /** Layers a module class creates in `__init__`, in declaration order. */
  private classLayers(moduleClass: ModuleClass, call: CallParts | undefined, prefix: string, visiting: Set<string>, outer: Scope = this.scope): LayerCall[] {
    if (visiting.has(moduleClass.name) || !moduleClass.init) return [];
    visiting.add(moduleClass.name);
    const scope = this.bindArguments(moduleClass.init, call, outer);
    const layers: LayerCall[] = [];
    const body = moduleClass.init.childForFieldName('body');
    for (const statement of body ? statementsOf(body) : []) {
      const assignment = assignmentOf(statement);
      const target = assignment?.childForFieldName('left');
      const value = assignment?.childForFieldName('right');
      if (!target || !value) continue;
      if (target.type === 'identifier') {
        scope.set(target.text, evaluate(value, scope));
        continue;
      }
      const attribute = dottedName(target);
      if (!attribute?.startsWith('self.') || value.type !== 'call') continue;
      const field = attribute.slice('self.'.length);
      const parts = callParts(value);
      const isModule = parts && (this.imports.qualify(parts.callee).startsWith(TORCH_NN) || this.classes.has(parts.callee));
      if (isModule) layers.push(...this.layersOf(value, scope, `${prefix}${field}`));
    }
    visiting.delete(moduleClass.name);
    return layers;
  }

  /** Binds call-site arguments to `__init__`'s parameters, falling back to their defaults. */
  private bindArguments(init: SyntaxNode, call: CallParts | undefined, outer: Scope): Scope {
    const scope = this.scope.child();
    const parameters = init.childForFieldName('parameters')?.namedChildren ?? [];
    let position = 0;
    for (const parameter of parameters) {
      const name = parameterName(parameter);
      if (!name || name === 'self') continue;
      const passed = call?.keywords.get(name) ?? call?.positional[position];
      position += 1;
      const fallback = parameter.childForFieldName('value');
      const node = passed ?? fallback;
      if (node) scope.set(name, evaluate(node, passed ? outer : scope));
    }
    return scope;
  }

  private keywordValues(parts: CallParts, scope: Scope): Record<string, Value> {
    const values: Record<string, Value> = {};
    for (const [name, node] of parts.keywords) values[name] = evaluate(node, scope);
    return values;
  }

  private isModuleClass(node: SyntaxNode): boolean {
    const bases = node.childForFieldName('superclasses')?.namedChildren ?? [];
    return bases.some((base) => {
      const name = dottedName(base);
      return name !== undefined && this.imports.qualify(name) === `${TORCH_NN}Module`;
    });
  }

  private initOf(classNode: SyntaxNode): SyntaxNode | undefined {
    const body = classNode.childForFieldName('body');
    return body?.namedChildren.find((child) => child.type === 'function_definition' && child.childForFieldName('name')?.text === '__init__');
  }

  private insideClass(node: SyntaxNode): boolean {
    for (let parent = node.parent; parent; parent = parent.parent) {
      if (parent.type === 'class_definition') return true;
    }
    return false;
  }

  private isUsedAsSubmodule(className: string): boolean {
    for (const other of this.classes.values()) {
      if (other.name === className || !other.init) continue;
      if (other.init.descendantsOfType('call').some((call) => call?.childForFieldName('function')?.text === className)) return true;
    }
    return false;
  }

  private note(node: SyntaxNode, message: string): void {
    this.notes.push({ severity: 'warning', message, range: rangeOf(node) });
  }
}

function parameterName(parameter: SyntaxNode): string | undefined {
  if (parameter.type === 'identifier') return parameter.text;
  if (parameter.type === 'default_parameter' || parameter.type === 'typed_default_parameter') {
    return parameter.childForFieldName('name')?.text;
  }
  if (parameter.type === 'typed_parameter') return parameter.namedChildren[0]?.text;
  return undefined;
}

function abbreviate(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 40 ? `${line.slice(0, 37)}...` : line;
}
