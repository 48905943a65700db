// Names looked up from a string at run time: `globals()[args.arch]`, `eval(args.model)`, the
// simplest registries of all (the module's own names).
import type { SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { unresolved, type DictValue, type PyValue, type Scope } from './pyValues';

/** A dotted name as `eval` may be given it to pick a class or builder (`"ResNet"`, `"models.resnet50"`). */
const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * `globals()` and `eval(...)` when the script has not bound those names itself: undefined for any
 * other call. The caller has already checked the callee is the bare name.
 */
export function callByString(interp: Evaluator, name: string, node: SyntaxNode, scope: Scope): PyValue | undefined {
  if (scope.has(name)) return undefined;
  if (name === 'globals') return { kind: 'dict', entries: new ScopeEntries(scope) } satisfies DictValue;
  if (name !== 'eval') return undefined;
  const argument = node.childForFieldName('arguments')?.namedChildren.find((child) => child.type !== 'comment');
  const text = argument ? interp.evaluate(argument, scope) : null;
  if (typeof text !== 'string' || !DOTTED.test(text.trim())) return unresolved(node.text, 'eval() of an expression that is not a known name');
  // `eval("ResNet")` reads the name as the code around it would: the same scope, then attributes.
  const [head, ...rest] = text.trim().split('.');
  let value = interp.lookupName(head!, scope, node);
  for (const part of rest) value = interp.attribute(value, part, node);
  return value;
}

/**
 * The module's names as a dict (`globals()`): read through the scope where the call is made, so
 * a class or builder defined at the top level is found by its name. What the code stores in it
 * stays in the dict (the analysis does not follow names bound that way).
 */
class ScopeEntries extends Map<string, PyValue> {
  constructor(private readonly scope: Scope) {
    super();
  }

  override get(name: string): PyValue | undefined {
    return super.has(name) ? super.get(name) : this.scope.get(name);
  }

  override has(name: string): boolean {
    return super.has(name) || this.scope.has(name);
  }
}

/**
 * `importlib.import_module("models." + args.arch)` (or with `package=` for a relative name): the
 * project module it names, run as an import is. Undefined for a name the project has no file for
 * (a library module stays a library value).
 */
export function importModuleByName(interp: Evaluator, qualified: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>): PyValue | undefined {
  if (qualified !== 'importlib.import_module' || !interp.place) return undefined;
  const name = kwargs.get('name') ?? args[0];
  const anchor = kwargs.get('package') ?? args[1];
  if (typeof name !== 'string') return undefined;
  const level = /^\.*/.exec(name)![0].length;
  if (level > 0 && typeof anchor !== 'string') return undefined;
  // `.resnet` in package `models.backbones` is `models.backbones.resnet`; each further dot goes up one package.
  const absolute = level === 0 ? name : [...(anchor as string).split('.').slice(0, Math.max(0, (anchor as string).split('.').length - (level - 1))), name.slice(level)].filter((part) => part !== '').join('.');
  return interp.place.project.resolve(absolute, interp.place.file);
}
