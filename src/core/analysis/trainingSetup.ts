import { callParts, rangeOf, type CallParts, type SyntaxNode } from '../parsing/syntax';
import type { ImportTable } from './imports';
import type { OptimizerKind, Precision, Sourced, TrainingSetup } from './modelDescription';
import { assignmentOf } from './moduleScope';
import { Scope, asCount, evaluate } from './values';

const BATCH_SIZE_NAMES = /^(batch_size|batchsize|bs|train_batch_size|per_device_train_batch_size)$/i;
const TENSOR_FACTORIES = new Set(['torch.randn', 'torch.rand', 'torch.zeros', 'torch.ones', 'torch.empty', 'torch.randint']);

/** Sample shapes of the datasets people train on, as torchvision delivers them. */
const DATASET_SHAPES: Readonly<Record<string, readonly number[]>> = {
  MNIST: [1, 28, 28],
  FashionMNIST: [1, 28, 28],
  KMNIST: [1, 28, 28],
  EMNIST: [1, 28, 28],
  QMNIST: [1, 28, 28],
  CIFAR10: [3, 32, 32],
  CIFAR100: [3, 32, 32],
  SVHN: [3, 32, 32],
  STL10: [3, 96, 96],
};

const OPTIMIZERS: Readonly<Record<string, OptimizerKind>> = {
  SGD: 'sgd',
  Adam: 'adam',
  AdamW: 'adamw',
  RMSprop: 'rmsprop',
  Adagrad: 'adagrad',
};

interface Found<T> {
  value: T;
  node: SyntaxNode;
  origin: string;
}

const sourced = <T>(found: Found<T> | undefined): Sourced<T> | undefined =>
  found && { value: found.value, range: rangeOf(found.node), origin: found.origin };

/** Reads batch size, input shape, optimizer and precision from the training code around the model. */
export function findTrainingSetup(root: SyntaxNode, imports: ImportTable, scope: Scope): TrainingSetup {
  const calls = root.descendantsOfType('call').flatMap((node) => {
    const parts = node ? callParts(node) : undefined;
    return node && parts ? [{ node, parts, qualified: imports.qualify(parts.callee) }] : [];
  });
  const tensor = explicitInputTensor(calls, scope);
  const batchSize = dataLoaderBatchSize(calls, scope) ?? batchSizeConstant(root, scope) ?? (tensor && { value: tensor.value[0] as number, node: tensor.node, origin: 'first dimension of an example tensor' });
  const inputShape = (tensor && { ...tensor, value: tensor.value.slice(1) }) ?? datasetShape(calls);
  return {
    batchSize: sourced(batchSize),
    inputShape: sourced(inputShape),
    optimizer: sourced(optimizer(calls, scope)),
    precision: sourced(precision(root, calls)),
  };
}

interface Call {
  node: SyntaxNode;
  parts: CallParts;
  qualified: string;
}

function dataLoaderBatchSize(calls: Call[], scope: Scope): Found<number> | undefined {
  for (const { parts, qualified } of calls) {
    if (qualified !== 'torch.utils.data.DataLoader' && parts.callee !== 'DataLoader') continue;
    const node = parts.keywords.get('batch_size') ?? parts.positional[1];
    const value = node && asCount(evaluate(node, scope));
    if (node && value) return { value, node, origin: 'DataLoader(batch_size=...)' };
  }
  return undefined;
}

function batchSizeConstant(root: SyntaxNode, scope: Scope): Found<number> | undefined {
  for (const statement of root.namedChildren) {
    const assignment = assignmentOf(statement);
    const left = assignment?.childForFieldName('left');
    if (left?.type !== 'identifier' || !BATCH_SIZE_NAMES.test(left.text)) continue;
    const value = asCount(scope.get(left.text));
    if (value) return { value, node: assignment!, origin: `constant ${left.text}` };
  }
  return undefined;
}

/** `torch.randn(64, 3, 224, 224)`: the first dimension is the batch, the rest one sample. */
function explicitInputTensor(calls: Call[], scope: Scope): Found<number[]> | undefined {
  for (const { node, parts, qualified } of calls) {
    if (!TENSOR_FACTORIES.has(qualified)) continue;
    // torch.randint(low, high, size) takes its shape third; it makes labels, not inputs, when 1-D.
    const shapeNodes = qualified === 'torch.randint' ? parts.positional.slice(2, 3) : parts.positional;
    const values = shapeNodes.length === 1 ? evaluate(shapeNodes[0]!, scope) : shapeNodes.map((n) => evaluate(n, scope));
    const dims = Array.isArray(values) ? values.map(asCount) : [];
    if (dims.length >= 2 && dims.every((d): d is number => d !== undefined)) {
      return { value: dims, node, origin: `${parts.callee}(...)` };
    }
  }
  return undefined;
}

function datasetShape(calls: Call[]): Found<number[]> | undefined {
  for (const { node, parts, qualified } of calls) {
    const name = qualified.split('.').pop() ?? '';
    const shape = DATASET_SHAPES[name];
    if (shape && (qualified.startsWith('torchvision.datasets.') || parts.callee === name)) {
      return { value: [...shape], node, origin: `${name} samples` };
    }
  }
  return undefined;
}

function optimizer(calls: Call[], scope: Scope): Found<OptimizerKind> | undefined {
  for (const { node, parts, qualified } of calls) {
    if (!qualified.startsWith('torch.optim.')) continue;
    const name = qualified.slice('torch.optim.'.length);
    if (name.includes('.')) continue; // lr_scheduler and friends
    let kind = OPTIMIZERS[name] ?? 'other';
    if (kind === 'sgd') {
      const momentum = parts.keywords.get('momentum');
      const value = momentum ? evaluate(momentum, scope) : 0;
      if (typeof value !== 'number' || value !== 0) kind = 'sgd-momentum';
    }
    return { value: kind, node, origin: `${parts.callee}(...)` };
  }
  return undefined;
}

function precision(root: SyntaxNode, calls: Call[]): Found<Precision> | undefined {
  for (const { node, parts, qualified } of calls) {
    if (!/^torch\.(cuda\.amp\.|amp\.|cpu\.amp\.)?autocast$/.test(qualified)) continue;
    const dtype = parts.keywords.get('dtype')?.text ?? '';
    return { value: dtype.endsWith('bfloat16') ? 'bf16-mixed' : 'fp16-mixed', node, origin: 'autocast' };
  }
  const scaler = calls.find(({ qualified }) => /GradScaler$/.test(qualified));
  if (scaler) return { value: 'fp16-mixed', node: scaler.node, origin: 'GradScaler' };
  for (const attribute of root.descendantsOfType('attribute')) {
    const name = attribute?.childForFieldName('attribute')?.text;
    if (attribute && (name === 'half' || name === 'bfloat16') && attribute.parent?.type === 'call') {
      return { value: name === 'half' ? 'fp16' : 'bf16', node: attribute.parent, origin: `.${name}()` };
    }
  }
  return undefined;
}
