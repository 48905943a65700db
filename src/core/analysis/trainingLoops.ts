import { rangeOf, type SyntaxNode } from '../parsing/syntax';
import type { TrainingLoop } from './modelDescription';

const LOOPS = ['for_statement', 'while_statement'];
const SCOPES = new Set(['function_definition', 'class_definition', 'lambda']);
/** Bounds following `train()` called from `run()` called from a loop: deeper chains are rare. */
const CALL_DEPTH = 4;

/** Per top-level statement, what does not change while its text does not: the step calls and the calls by simple name. */
const byStatement = new WeakMap<SyntaxNode, { steps: SyntaxNode[]; named: { name: string; call: SyntaxNode }[] }>();

/**
 * The outermost loops that run a training step: those around `loss.backward()` or
 * `optimizer.step()`, and those that call a function that does (`for epoch in ...: train(model)`).
 * Read from the syntax alone, so it holds for code the interpreter did not follow. Ranges are read
 * from the nodes when shown, so loops of statements reused after an edit stand where they are now.
 */
export function findTrainingLoops(root: SyntaxNode): TrainingLoop[] {
  const steps: SyntaxNode[] = [];
  const named: { name: string; call: SyntaxNode }[] = [];
  for (const statement of root.children) {
    let found = byStatement.get(statement);
    if (!found) {
      found = { steps: [], named: [] };
      for (const call of statement.descendantsOfType('call')) {
        if (isStepCall(call)) found.steps.push(call);
        const name = calleeName(call);
        if (name) found.named.push({ name, call });
      }
      byStatement.set(statement, found);
    }
    for (const call of found.steps) steps.push(call);
    for (const call of found.named) named.push(call);
  }
  const loops = new Set<SyntaxNode>();
  const trainers = new Set<string>();
  const follow = (call: SyntaxNode): void => {
    const { loop, fn } = enclosing(call);
    if (loop) loops.add(loop);
    const name = fn?.childForFieldName('name')?.text;
    if (name) trainers.add(name);
  };
  for (const call of steps) follow(call);
  for (let depth = 0, known = -1; depth < CALL_DEPTH && trainers.size !== known; depth++) {
    known = trainers.size;
    for (const { name, call } of named) if (trainers.has(name)) follow(call);
  }
  const outermost = [...loops].filter((loop) => ![...loops].some((other) => other !== loop && other.startIndex <= loop.startIndex && loop.endIndex <= other.endIndex));
  return outermost
    .sort((a, b) => a.startIndex - b.startIndex)
    .map((loop) => ({ range: rangeOf(loop), names: namesIn(loop) }));
}

/** The names a loop mentions; kept per node, which an edit elsewhere leaves as it is. */
const loopNames = new WeakMap<SyntaxNode, ReadonlySet<string>>();

function namesIn(loop: SyntaxNode): ReadonlySet<string> {
  let names = loopNames.get(loop);
  if (!names) loopNames.set(loop, (names = new Set(loop.descendantsOfType('identifier').map((node) => node.text))));
  return names;
}

/** `loss.backward()`, `accelerator.backward(loss)`, `optimizer.step()`, `scaler.step(opt)`; not `scheduler.step()`. */
function isStepCall(call: SyntaxNode): boolean {
  const fn = call.childForFieldName('function');
  if (fn?.type !== 'attribute') return false;
  const method = fn.childForFieldName('attribute')?.text;
  return method === 'backward' || (method === 'step' && /opt|scaler/i.test(fn.childForFieldName('object')?.text ?? ''));
}

/** `train(...)` and `self.train_step(...)`: calls that may reach a function of the script. */
function calleeName(call: SyntaxNode): string | undefined {
  const fn = call.childForFieldName('function');
  if (fn?.type === 'identifier') return fn.text;
  if (fn?.type === 'attribute' && fn.childForFieldName('object')?.text === 'self') return fn.childForFieldName('attribute')?.text;
  return undefined;
}

/** The outermost loop around a node within its function, and that function (none at module level). */
function enclosing(node: SyntaxNode): { loop?: SyntaxNode; fn?: SyntaxNode } {
  let loop: SyntaxNode | undefined;
  for (let at = node.parent; at; at = at.parent) {
    if (LOOPS.includes(at.type)) loop = at;
    else if (SCOPES.has(at.type)) return { loop, fn: at.type === 'function_definition' ? at : undefined };
  }
  return { loop };
}

/**
 * The loops that train a model: those that mention its name; for a model no loop names, the
 * loops that name no model at all (`def train(net, ...)` called with it).
 */
export function loopsOf(name: string, loops: readonly TrainingLoop[], modelNames: readonly string[]): TrainingLoop[] {
  const own = loops.filter((loop) => loop.names.has(name));
  return own.length ? own : loops.filter((loop) => !modelNames.some((other) => loop.names.has(other)));
}
