/**
 * `torch.backends.cudnn.benchmark = True` (or `cudnn.benchmark = True` after
 * `from torch.backends import cudnn`, or Lightning's `Trainer(benchmark=True)`): PyTorch then times
 * every cuDNN algorithm for each new convolution shape, with a workspace up to the GPU's free
 * memory, and its allocator keeps the largest reserved. The last assignment in the file wins.
 */
import type { CallEvent } from './interpreter/interpreter';
import { LIGHTNING_TRAINER } from './fineTuningSetup';
import type { Found } from './modelDescription';
import type { SyntaxNode } from '../parsing/syntax';

export function cudnnBenchmark(root: SyntaxNode, events: readonly CallEvent[]): Found<boolean> | undefined {
  let found: Found<boolean> | undefined;
  for (const assignment of root.descendantsOfType('assignment')) {
    const left = assignment.childForFieldName('left')?.text.replace(/\s+/g, '');
    if (left !== 'cudnn.benchmark' && !left?.endsWith('backends.cudnn.benchmark')) continue;
    const right = assignment.childForFieldName('right')?.text;
    if (right === 'True' || right === 'False') found = { value: right === 'True', node: assignment, origin: `${left} = ${right}` };
  }
  if (found) return found;
  for (const call of events) {
    if (LIGHTNING_TRAINER.test(call.qualified) && call.kwargs.get('benchmark') === true) return { value: true, node: call.node, origin: 'Trainer(benchmark=True)' };
  }
  return undefined;
}
