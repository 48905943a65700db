/**
 * Training without torch.optim: the PyTorch word language model example, and many tutorials,
 * update the parameters by hand after backward (`for p in model.parameters(): p.data.add_(p.grad,
 * alpha=-lr)`, `p -= lr * p.grad` under no_grad). That is plain SGD: no optimizer state. Read from
 * the syntax: a `for` loop whose body changes its loop variable (or its `.data`) in place by an
 * amount that reads the variable's `.grad`. Changing the gradient itself (`p.grad.data.clamp_`) or
 * the weights without it (`p.data.clamp_(-c, c)`, WGAN's clipping) is no update.
 */
import type { SyntaxNode } from '../parsing/syntax';
import type { Found, OptimizerKind } from './modelDescription';

const IN_PLACE = new Set(['add_', 'sub_', 'copy_']);
const ESCAPE = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function manualUpdate(root: SyntaxNode): Found<OptimizerKind> | undefined {
  for (const loop of root.descendantsOfType('for_statement')) {
    const variable = loopVariable(loop.childForFieldName('left'));
    const body = loop.childForFieldName('body');
    if (!variable || !body || !body.text.includes(`${variable}.grad`)) continue;
    const update = updateOf(body, variable);
    if (update) return { value: 'sgd', node: update, origin: `parameters updated by hand (${update.text.split('\n')[0]!.slice(0, 40)}): plain SGD` };
  }
  return undefined;
}

/** `p` of `for p in ...`, and of `for name, p in model.named_parameters()`. */
function loopVariable(left: SyntaxNode | null): string | undefined {
  if (left?.type === 'identifier') return left.text;
  if (left?.type === 'pattern_list' || left?.type === 'tuple_pattern') {
    const last = left.namedChildren[left.namedChildren.length - 1];
    return last?.type === 'identifier' ? last.text : undefined;
  }
  return undefined;
}

/** The statement that changes `variable` by its gradient, if the body has one. */
function updateOf(body: SyntaxNode, variable: string): SyntaxNode | undefined {
  const target = (node: SyntaxNode | null) => node?.text === variable || node?.text === `${variable}.data`;
  const readsGrad = new RegExp(`\\b${ESCAPE(variable)}\\.grad\\b`);
  for (const call of body.descendantsOfType('call')) {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'attribute' || !IN_PLACE.has(fn.childForFieldName('attribute')?.text ?? '')) continue;
    if (target(fn.childForFieldName('object')) && readsGrad.test(call.childForFieldName('arguments')?.text ?? '')) return call;
  }
  for (const assignment of body.descendantsOfType('augmented_assignment')) {
    const operator = assignment.childForFieldName('operator')?.text;
    if ((operator === '-=' || operator === '+=') && target(assignment.childForFieldName('left')) && readsGrad.test(assignment.childForFieldName('right')?.text ?? '')) return assignment;
  }
  return undefined;
}
