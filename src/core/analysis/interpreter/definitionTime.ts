// What Python does when it runs an import statement or a decorated definition: the side effects
// model registries are built from (a module's decorators filling a dict when the module is imported).
import type { SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { isLibraryRegistration, isRegistryDecorator, registerInLibrary } from './libraryRegistries';
import { kindOf, type PyValue, type Scope } from './pyValues';

/**
 * `import models.resnet`, `from .convnext import *`, `from . import resnet`: the project modules
 * the statement names run now rather than when one of their names is first read, because a
 * package's `__init__.py` often imports its architectures only so that their `@register_model`
 * decorators fill the registry `create_model(name)` reads. Library modules are not touched.
 */
export function runImport(interp: Evaluator, node: SyntaxNode): void {
  const place = interp.place;
  if (!place) return;
  for (const { module, names } of importedModules(node)) place.project.importNow(module, names, place.file);
}

/** The modules an import statement names, each with the names taken from it (`*` for a star import). */
export function importedModules(node: SyntaxNode): { module: string; names: string[] }[] {
  if (node.type === 'import_statement') {
    return node.namedChildren.flatMap((item) => {
      const name = item.type === 'aliased_import' ? item.childForFieldName('name') : item;
      return name?.type === 'dotted_name' ? [{ module: name.text, names: [] }] : [];
    });
  }
  if (node.type !== 'import_from_statement') return [];
  const module = node.childForFieldName('module_name')?.text.replace(/\s+/g, '');
  if (!module) return [];
  const names = node.namedChildren.some((child) => child.type === 'wildcard_import')
    ? ['*']
    : node.childrenForFieldName('name').flatMap((item) => {
        const name = item?.type === 'aliased_import' ? item.childForFieldName('name') : item;
        return name ? [name.text] : [];
      });
  return [{ module, names }];
}

/**
 * Runs a definition's decorators that are the project's own functions, innermost first, as
 * Python does when it runs the definition: `@register_model` on a builder function and
 * `@BACKBONES.register_module()` or `@register("resnet")` on a class store it in a registry (a
 * module-level dict, or a dict held by a registry object) under its name. Library decorators
 * (`@torch.no_grad()`, `@dataclass`, `@hydra.main(...)`) are not called (the analysis knows what
 * they do, or they change nothing it measures), except timm's `@register_model`, whose registry
 * `timm.create_model(name)` reads (libraryRegistries.ts).
 *
 * The name keeps the definition itself rather than what the decorator returns. A registering
 * decorator returns its argument anyway; a wrapping one (timing, logging, rank-zero-only) returns
 * a function that calls it, and following the original is what the analysis wants: its body is
 * discovered, and a model it builds is named where it is built.
 */
export function applyDecorators(interp: Evaluator, decorators: readonly SyntaxNode[], defined: PyValue, scope: Scope): void {
  for (const decorator of [...decorators].reverse()) {
    const expression = decorator.namedChildren.find((child) => child.type !== 'comment');
    if (!expression) continue;
    if (expression.type !== 'call' && isLibraryRegistration(interp.evaluate(expression, scope))) {
      registerInLibrary(interp, defined);
      continue;
    }
    const decorate = projectDecorator(interp, expression, scope);
    if (decorate) interp.callValue(decorate, [defined], new Map(), decorator);
  }
}

/**
 * The decorator an expression gives when it is the project's own function (the name itself, or
 * what a call of a project function returns) or a library registry object's (`@BACKBONES.register()`).
 */
function projectDecorator(interp: Evaluator, expression: SyntaxNode, scope: Scope): PyValue | undefined {
  const head = expression.type === 'call' ? expression.childForFieldName('function') : expression;
  if (!head || (head.type !== 'identifier' && head.type !== 'attribute')) return undefined;
  // The callee is looked up first, so a library's decorator factory is never called.
  if (!followed(interp.evaluate(head, scope))) return undefined;
  const decorate = expression.type === 'call' ? interp.evaluate(expression, scope) : interp.evaluate(head, scope);
  return followed(decorate) ? decorate : undefined;
}

const followed = (value: PyValue): boolean => kindOf(value) === 'function' || isRegistryDecorator(value);
