/**
 * What a hand-written training loop keeps of the model's output while `loss.backward()` runs, read
 * from the syntax. `outputs = model(**batch); loss = outputs.loss` keeps the whole output object:
 * its logits and, for a transformers decoder with `use_cache` on (the configs' default), every
 * layer's keys and values (`past_key_values`), until the name is rebound next step.
 * `loss = model(**batch).loss` keeps neither once the loss is computed. The Trainer's own loop
 * drops the outputs itself; it is read elsewhere (`hfTrainer`).
 */
import type { SyntaxNode } from '../parsing/syntax';
import type { Found, OutputsHeld } from './modelDescription';

/** Calls whose first argument is the loss they run the backward of (`accelerator.backward(loss)`, Lightning Fabric's, DeepSpeed's engine). */
const BACKWARD_OF_ARGUMENT = /(^|\.)(accelerator|fabric|engine|model_engine)$/i;
/** Wrappers a loss passes through on its way to `.backward()`: `scaler.scale(loss)`. */
const LOSS_WRAPPERS = new Set(['scale']);
const MAX_HOPS = 4;

export function modelOutputsHeld(root: SyntaxNode): Found<OutputsHeld> | undefined {
  for (const call of root.descendantsOfType('call')) {
    const loss = backwardOperand(call);
    if (!loss) continue;
    const held = heldBy(loss, call, 0);
    if (!held) continue;
    const written = held.node.text.split('\n')[0]!.slice(0, 50);
    return { ...held, origin: `${written}: ${held.value === 'output' ? 'the output is kept through the backward' : 'only the loss is kept'}` };
  }
  return undefined;
}

/**
 * `use_cache=False` passed anywhere (`from_pretrained`, a config, the model's call) or set on a
 * config (`model.config.use_cache = False`): transformers then returns no keys and values.
 */
export function useCacheOff(root: SyntaxNode): Found<false> | undefined {
  for (const argument of root.descendantsOfType('keyword_argument')) {
    if (argument.childForFieldName('name')?.text === 'use_cache' && argument.childForFieldName('value')?.text === 'False') return { value: false, node: argument, origin: 'use_cache=False' };
  }
  for (const assignment of root.descendantsOfType('assignment')) {
    const left = assignment.childForFieldName('left');
    if (left?.type === 'attribute' && left.childForFieldName('attribute')?.text === 'use_cache' && assignment.childForFieldName('right')?.text === 'False') return { value: false, node: assignment, origin: `${left.text} = False` };
  }
  return undefined;
}

/** The loss a call runs the backward of: `X.backward()`, `accelerator.backward(X)`. */
function backwardOperand(call: SyntaxNode): SyntaxNode | undefined {
  const fn = call.childForFieldName('function');
  if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'backward') return undefined;
  const object = fn.childForFieldName('object');
  if (!object) return undefined;
  if (BACKWARD_OF_ARGUMENT.test(object.text)) return call.childForFieldName('arguments')?.namedChildren.find((a) => a?.type !== 'keyword_argument' && a?.type !== 'comment') ?? undefined;
  return object;
}

/** Follows the loss expression back through names, arithmetic and wrappers to the model's call or the name that holds its output. */
function heldBy(expression: SyntaxNode, at: SyntaxNode, hops: number): { value: OutputsHeld; node: SyntaxNode } | undefined {
  if (hops > MAX_HOPS) return undefined;
  switch (expression.type) {
    case 'parenthesized_expression':
      return expression.namedChildren[0] ? heldBy(expression.namedChildren[0], at, hops + 1) : undefined;
    case 'binary_operator':
      return expression.childForFieldName('left') ? heldBy(expression.childForFieldName('left')!, at, hops + 1) : undefined;
    case 'call': {
      const fn = expression.childForFieldName('function');
      if (fn?.type === 'attribute' && LOSS_WRAPPERS.has(fn.childForFieldName('attribute')?.text ?? '')) {
        const first = expression.childForFieldName('arguments')?.namedChildren[0];
        return first ? heldBy(first, at, hops + 1) : undefined;
      }
      // `loss.mean()`, `loss.sum()`: a method of the loss itself.
      if (fn?.type === 'attribute' && fn.childForFieldName('object')) return heldBy(fn.childForFieldName('object')!, at, hops + 1);
      return undefined;
    }
    case 'attribute':
    case 'subscript': {
      // `outputs.loss`, `outputs["loss"]`, `outputs[0]`: the loss read out of the model's output.
      const object = expression.childForFieldName(expression.type === 'attribute' ? 'object' : 'value');
      if (!object) return undefined;
      if (object.type === 'call') return { value: 'none', node: expression };
      if (object.type === 'identifier') {
        const bound = lastAssignment(object.text, at);
        if (bound?.childForFieldName('right')?.type === 'call') return { value: 'output', node: bound };
      }
      return undefined;
    }
    case 'identifier': {
      const bound = lastAssignment(expression.text, at);
      const right = bound?.childForFieldName('right');
      return right ? heldBy(right, bound!, hops + 1) : undefined;
    }
    default:
      return undefined;
  }
}

/** The last `name = ...` before `at` in the function (or module) that holds `at`. */
function lastAssignment(name: string, at: SyntaxNode): SyntaxNode | undefined {
  let scope: SyntaxNode | null = at.parent;
  while (scope && scope.type !== 'function_definition' && scope.type !== 'module') scope = scope.parent;
  if (!scope) return undefined;
  let last: SyntaxNode | undefined;
  for (const assignment of scope.descendantsOfType('assignment')) {
    if (assignment.startIndex >= at.startIndex) break;
    if (assignment.childForFieldName('left')?.text === name) last = assignment;
  }
  return last;
}
