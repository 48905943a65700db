// Autograd switched off: `with torch.no_grad():` and its kin, as contexts and as decorators.
import type { SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { kindOf, type ExternalValue, type FunctionValue, type PyValue, type Scope } from './pyValues';

const NO_GRAD = /^torch\.(autograd\.(grad_mode\.)?)?(no_grad|inference_mode)$/;
const SET_GRAD_ENABLED = /^torch\.(autograd\.(grad_mode\.)?)?set_grad_enabled$/;

/**
 * Whether `expression` (a `with` item or a decorator) turns autograd off: `torch.no_grad()`,
 * `torch.inference_mode()` (unless given False), `torch.set_grad_enabled(False)`, and
 * `@torch.no_grad` without parentheses. Anything the analysis cannot read leaves autograd on.
 */
export function disablesGrad(interp: Evaluator, expression: SyntaxNode, scope: Scope): boolean {
  const call = expression.type === 'call' ? expression : undefined;
  const name = externalName(interp.evaluate(call ? call.childForFieldName('function')! : expression, scope));
  if (!name) return false;
  const first = call?.childForFieldName('arguments')?.namedChildren.find((argument) => argument.type !== 'comment');
  const flag = first ? interp.evaluate(first.type === 'keyword_argument' ? first.childForFieldName('value')! : first, scope) : undefined;
  if (NO_GRAD.test(name)) return !(name.endsWith('inference_mode') && flag === false);
  return call !== undefined && SET_GRAD_ENABLED.test(name) && flag === false;
}

/** A function decorated to run without autograd (`@torch.no_grad()` on a feature extractor's method). */
export function decoratedNoGrad(interp: Evaluator, fn: FunctionValue): boolean {
  const definition = fn.node.parent;
  if (definition?.type !== 'decorated_definition') return false;
  return definition.namedChildren.some((child) => child.type === 'decorator' && child.namedChildren[0] !== undefined && disablesGrad(interp, child.namedChildren[0], fn.closure));
}

function externalName(value: PyValue): string | undefined {
  return kindOf(value) === 'external' && (value as ExternalValue).self === undefined ? (value as ExternalValue).name : undefined;
}
