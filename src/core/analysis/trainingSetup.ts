import { dottedName, rangeOf, type SyntaxNode } from '../parsing/syntax';
import { frameworkAccumulation, frameworkBatchSize, frameworkCheckpointing, frameworkOptimizer, frameworkPrecision, shardingStrategy } from './frameworkSetup';
import type { ImportTable } from './imports';
import { adapter, attentionImplementation, frameworkSequenceLength, hfTrainer, kbitPrepared, optimizerName, quantization, trainerCompile, trlDefaultSequenceLength, unslothCheckpointing, unslothSequenceLength, weightDtype, fusedLoss } from './fineTuningSetup';
import { grpoSequenceLength, preferenceTraining } from './preferenceSetup';
import { manualUpdate } from './manualUpdate';
import { modelOutputsHeld, useCacheOff } from './modelOutputs';
import { cudnnBenchmark } from './cudnnBenchmark';
import { galoreSetup } from './galoreSetup';
import { libraryOptimizerName } from './libraryOptimizers';
import { timmImageSide, timmLoaderBatch, timmOptimizer } from './timmTraining';
import type { DistributedReading } from './shardingSetup';
import type { TrainerDefaultOptim } from './pinnedVersions';
import type { CallEvent } from './interpreter/interpreter';
import { isList, kindOf, type ExternalValue, type InstanceValue, type PyValue, type Scope } from './interpreter/pyValues';
import { shapeOf, sizeArguments } from './interpreter/tensorOps';
import type { Found, OptimizerKind, OptimizerSource, Precision, Sourced, TrainingSetup } from './modelDescription';
import { argumentNode, positiveInteger, simpleName } from './callArguments';
import type { AssumedValue } from './config/assumedValues';

/**
 * What one process feeds the model per step, by the names scripts give it: a micro-batch or a
 * per-device batch (`micro_batch = int(os.environ.get("MICRO_BATCH", 8))`, DeepSpeed's
 * `train_micro_batch_size_per_gpu`) is preferred to a plain batch size, which may be the global one.
 */
const PER_STEP_BATCH_NAMES = /^(micro_?batch(_?size)?|micro_?bsz?|mbs|(per_(device|gpu)_(train_)?|local_)batch_?size|(train_)?batch_size_per_(gpu|device)|train_micro_batch_size_per_gpu)$/i;
const PLAIN_BATCH_NAMES = /^(batch_size|batchsize|bs|train_batch_size)$/i;
const BATCH_SIZE_NAMES = [PER_STEP_BATCH_NAMES, PLAIN_BATCH_NAMES];
/** Names a script gives the tokens per sample (nanoGPT's block_size, a tokenizer's max_length, an RNN's bptt). */
export const SEQUENCE_NAMES = /^(seq_len|seq_length|sequence_length|max_len|max_length|max_seq_len|max_seq_length|block_size|context_length|context_len|ctx_len|n_ctx|bptt)$/i;
/** Names a script gives the side of its square images (timm's img_size, YOLO's imgsz, a crop size). */
export const IMAGE_NAMES = /^(img_size|image_size|imgsz|img_res|image_res|image_resolution|resolution|crop_size|input_resolution)$/i;
const TENSOR_FACTORIES = /^torch\.(randn|rand|zeros|ones|empty|randint|full)$/;

/** Sample shapes of the datasets people train on, as torchvision delivers them (before transforms). */
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
  Omniglot: [1, 105, 105],
  USPS: [1, 16, 16],
  GTSRB: [3, 32, 32],
};
/** Datasets of arbitrary image sizes: the sample shape comes from the crop or resize transform. */
const FOLDER_DATASETS = new Set(['ImageFolder', 'ImageNet', 'DatasetFolder', 'Places365', 'CelebA', 'VOCDetection', 'Caltech101', 'Food101', 'Flowers102', 'OxfordIIITPet']);
const SIZE_TRANSFORMS = ['RandomResizedCrop', 'CenterCrop', 'RandomCrop', 'Resize'];

const OPTIMIZERS: Readonly<Record<string, OptimizerKind>> = { SGD: 'sgd', Adam: 'adam', AdamW: 'adamw', RMSprop: 'rmsprop', Adagrad: 'adagrad' };

/** `prepare_model_for_kbit_training(model)` turns gradient checkpointing on unless told `use_gradient_checkpointing=False`. */
function kbitCheckpointing(events: readonly CallEvent[]): Found<boolean> | undefined {
  const found = kbitPrepared(events);
  return found?.value.checkpointing ? { value: true, node: found.node, origin: 'prepare_model_for_kbit_training(...)' } : undefined;
}

const sourced = <T>(found: Found<T> | undefined): Sourced<T> | undefined => found && { value: found.value, range: rangeOf(found.node), origin: found.origin };
/** An optimizer found in the source as the set-up keeps it, with its extra state where it has some. */
export function sourcedOptimizer(found: OptimizerFound): OptimizerSource;
export function sourcedOptimizer(found: OptimizerFound | undefined): OptimizerSource | undefined;
export function sourcedOptimizer(found: OptimizerFound | undefined): OptimizerSource | undefined {
  return found && { ...sourced(found)!, ...(found.extraStateCopies ? { extraStateCopies: found.extraStateCopies } : {}) };
}

/**
 * Batch size, input shape, optimizer, precision and the rest, read from the library calls the
 * script makes (recorded while it was followed) and its module-level names.
 */
/** The script's command-line options: where each is declared, the values `parse_args()` gave, and what the user assumes by name. */
export interface ScriptArguments {
  readonly nodes: ReadonlyMap<string, SyntaxNode>;
  readonly parsed?: ReadonlyMap<string, PyValue>;
  readonly assumed?: Readonly<Record<string, AssumedValue>>;
}

export function findTrainingSetup(root: SyntaxNode, events: readonly CallEvent[], scope: Scope, script: ScriptArguments, imports: ImportTable, distributed: DistributedReading = {}, trainerDefault?: TrainerDefaultOptim): TrainingSetup {
  const argumentNodes = script.nodes;
  const batchSize = frameworkBatchSize(events, (call, keyword) => originNode(call, keyword, argumentNodes)) ?? dataLoaderBatchSize(events, argumentNodes) ?? batchSizeName(scope, root, script);
  const tensors = exampleTensors(events, batchSize?.value);
  const inputs = [...tensors, ...datasetShapes(events)];
  if (!batchSize && tensors[0]) {
    // With no loader and no constant, the example tensor's first dimension is the batch.
    const first = tensors[0];
    const size = first.batch;
    if (size) return build({ value: size, node: first.node, origin: 'first dimension of an example tensor' });
  }
  return build(batchSize);

  function build(batch: Found<number> | undefined): TrainingSetup {
    const candidates = inputs.map((input) => sourced(input)!);
    // Unsloth's get_peft_model(use_gradient_checkpointing=...) turns checkpointing on or off; its "unsloth" mode also keeps the layers' saved inputs on the CPU.
    const unsloth = unslothCheckpointing(events);
    const loss = fusedLoss(events);
    return {
      batchSize: sourced(batch),
      inputShape: candidates[0],
      inputCandidates: candidates,
      datasetSamples: sourced(tensorDatasetSamples(events)),
      sequenceLength: sourced(grpoSequenceLength(events) ?? frameworkSequenceLength(events) ?? unslothSequenceLength(events) ?? sequenceLength(events, scope, root, script) ?? trlDefaultSequenceLength(events)),
      imageSize: sourced(transformSize(events) ?? namedSize(IMAGE_NAMES, scope, root, script)),
      optimizer: sourcedOptimizer(optimizer(events) ?? frameworkOptimizer(events, trainerDefault) ?? manualUpdate(root)),
      precision: sourced(frameworkPrecision(events) ?? distributed.launchPrecision ?? precision(root, events)),
      gradientCheckpointing: sourced(checkpointing(root, imports) ?? frameworkCheckpointing(events) ?? (unsloth && { value: unsloth.value.checkpointing, node: unsloth.node, origin: unsloth.origin }) ?? kbitCheckpointing(events)),
      ...(unsloth?.value.offloaded ? { activationOffload: sourced({ value: true, node: unsloth.node, origin: unsloth.origin }) } : {}),
      ...(loss ? { fusedLoss: sourced(loss) } : {}),
      compiled: sourced(event(events, /^torch\.compile$/, true, 'torch.compile(...)') ?? trainerCompile(events)),
      gradientAccumulation: sourced(frameworkAccumulation(events)),
      sharding: sourced(shardingStrategy(events)),
      weightDtype: sourced(weightDtype(events)),
      quantization: sourced(quantization(events)),
      adapter: sourced(adapter(events)),
      kbitPrepared: sourced(kbitPrepared(events)),
      optimizerName: sourced(optimizerName(events, trainerDefault)),
      optimizerStep: sourced(optimizerStepOf(events)),
      galore: sourced(galoreSetup(events)),
      attentionImplementation: sourced(attentionImplementation(events)),
      hfTrainer: sourced(hfTrainer(events)),
      modelOutputs: sourced(modelOutputsHeld(root)),
      useCache: sourced(useCacheOff(root)),
      cudnnBenchmark: sourced(cudnnBenchmark(root, events)),
      targetSequenceLength: sourced(targetSequenceLength(root, scope)),
      preference: sourced(preferenceTraining(events)),
      ...(distributed.distributed ? { distributed: sourced(distributed.distributed) } : {}),
      ...(distributed.gpuCount ? { gpuCount: sourced(distributed.gpuCount) } : {}),
    };
  }
}

/** The node behind an argument: the argparse option it reads (`args.batch_size`), else the argument itself. */
function originNode(call: CallEvent, keyword: string, argumentNodes: ReadonlyMap<string, SyntaxNode>): SyntaxNode {
  const argument = call.node.childForFieldName('arguments')?.namedChildren.find((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === keyword);
  const value = argument?.childForFieldName('value');
  const option = value?.type === 'attribute' ? argumentNodes.get(value.childForFieldName('attribute')?.text ?? '') : undefined;
  return option ?? argument ?? call.node;
}

function dataLoaderBatchSize(events: readonly CallEvent[], argumentNodes: ReadonlyMap<string, SyntaxNode>): Found<number> | undefined {
  return dataLoaderBatches(events, argumentNodes)[0];
}

/** Every DataLoader with a known batch size, in source order, with its call. */
export function dataLoaderBatches(events: readonly CallEvent[], argumentNodes: ReadonlyMap<string, SyntaxNode>): (Found<number> & { call: CallEvent })[] {
  const found: (Found<number> & { call: CallEvent })[] = [];
  for (const call of events) {
    const timm = timmLoaderBatch(call);
    if (timm) found.push({ value: timm, node: originNode(call, 'batch_size', argumentNodes), origin: 'create_loader(batch_size=...)', call });
    if (!/(^|\.)DataLoader$/.test(call.qualified)) continue;
    const value = positiveInteger(call.kwargs.get('batch_size') ?? call.args[1]);
    if (value) found.push({ value, node: originNode(call, 'batch_size', argumentNodes), origin: 'DataLoader(batch_size=...)', call });
  }
  return found;
}

/** `BATCH_SIZE = 128`, `args.batch_size` (an argparse default), `config.batch_size`. */
function batchSizeName(scope: Scope, root: SyntaxNode, script: ScriptArguments): Found<number> | undefined {
  for (const names of BATCH_SIZE_NAMES) {
    const found = batchSizeNamed(names, scope, root, script);
    if (found) return found;
  }
  return undefined;
}

function batchSizeNamed(names: RegExp, scope: Scope, root: SyntaxNode, script: ScriptArguments): Found<number> | undefined {
  const named = constantOrOption(names, scope, root, script);
  if (named) return named;
  for (const name of scope.ownNames()) {
    const value = scope.get(name);
    if (kindOf(value) !== 'instance') continue;
    for (const [field, fieldValue] of (value as InstanceValue).attrs) {
      if (names.test(field) && positiveInteger(fieldValue)) return { value: fieldValue as number, node: assignmentNode(root, name) ?? root, origin: `${name}.${field}` };
    }
  }
  return undefined;
}

/** An option's value: from the module-level namespace (`args = parser.parse_args()`), else from a parse made elsewhere (`def main(): args = ...`). */
function namespaceValue(scope: Scope, field: string, parsed?: ReadonlyMap<string, PyValue>): number | undefined {
  for (const name of scope.ownNames()) {
    const value = scope.get(name);
    if (kindOf(value) === 'instance' && (value as InstanceValue).className === 'Namespace') return positiveInteger((value as InstanceValue).attrs.get(field));
  }
  return positiveInteger(parsed?.get(field));
}

function assignmentNode(root: SyntaxNode, name: string): SyntaxNode | undefined {
  for (const statement of root.namedChildren) {
    const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    if (assignment?.type === 'assignment' && assignment.childForFieldName('left')?.text === name) return assignment;
  }
  // Bound inside a block (`if __name__ == "__main__":`, `def main():`): the first such assignment.
  return root.descendantsOfType('assignment').find((assignment) => assignment.childForFieldName('left')?.text === name);
}

interface ExampleTensor extends Found<number[]> {
  batch?: number;
}

/** `torch.randn(64, 3, 224, 224)`: at least two dimensions, the first the batch. Labels (1-D) are skipped. */
function exampleTensors(events: readonly CallEvent[], batchSize: number | undefined): ExampleTensor[] {
  const found: ExampleTensor[] = [];
  for (const call of events) {
    if (!TENSOR_FACTORIES.test(call.qualified) || heldByModule(call.node)) continue;
    const isRandint = call.qualified.endsWith('randint');
    const sizeArgument = isRandint ? (call.kwargs.get('size') ?? call.args[call.args.length - 1]) : undefined;
    const dims = isRandint ? (sizeArgument === undefined ? undefined : sizeArguments([sizeArgument])) : sizeArguments(call.qualified.endsWith('full') ? call.args.slice(0, 1) : call.args);
    if (!dims || dims.length < 2 || !dims.every((d): d is number => typeof d === 'number' && d > 0)) continue;
    const [first, ...sample] = dims;
    if (batchSize !== undefined && first !== batchSize) continue;
    found.push({ value: sample, node: call.node, origin: `${simpleName(call.qualified)}(...)`, batch: first });
  }
  return found;
}

/** `nn.Parameter(torch.zeros(1, patches, dim))`, `self.register_buffer("mask", torch.ones(n, n))`: a module's own tensor, no example input. */
function heldByModule(node: SyntaxNode): boolean {
  let argument = node;
  if (argument.parent?.type === 'keyword_argument') argument = argument.parent;
  const call = argument.parent?.type === 'argument_list' ? argument.parent.parent : null;
  return call?.type === 'call' && /(^|\.)(Parameter|register_buffer|register_parameter)$/.test(call.childForFieldName('function')?.text ?? '');
}

/** `TensorDataset(src, trg, labels)`: one sample is a row of each tensor; the multi-dimensional ones feed the model. */
function tensorDatasetSamples(events: readonly CallEvent[]): Found<number[][]> | undefined {
  for (const call of events) {
    if (!/(^|\.)TensorDataset$/.test(call.qualified)) continue;
    const samples = call.args.map((arg) => shapeOf(arg)).filter((shape): shape is number[] => !!shape && shape.length >= 2 && shape.every((d) => typeof d === 'number')).map((shape) => shape.slice(1));
    if (samples.length) return { value: samples, node: call.node, origin: 'TensorDataset rows' };
  }
  return undefined;
}

function datasetShapes(events: readonly CallEvent[]): Found<number[]>[] {
  const found: Found<number[]>[] = [];
  const size = transformSize(events);
  for (const call of events) {
    const name = simpleName(call.qualified);
    const shape = DATASET_SHAPES[name];
    if (shape) {
      const [channels, ...spatial] = shape;
      found.push({ value: size ? [channels!, size.value, size.value] : [channels!, ...spatial], node: size?.node ?? call.node, origin: size ? `${name} samples after ${size.origin}` : `${name} samples` });
    } else if (FOLDER_DATASETS.has(name) && size) {
      found.push({ value: [3, size.value, size.value], node: size.node, origin: `${name} images after ${size.origin}` });
    }
  }
  return found;
}

/**
 * The image size a transform pipeline produces: the last resize or crop of the first
 * `Compose([...])` that has one (the training pipeline comes first in most scripts).
 */
function transformSize(events: readonly CallEvent[]): Found<number> | undefined {
  const groups = new Map<number, CallEvent[]>();
  const sideOf = (call: CallEvent) => {
    // timm's pipeline in one call: `create_transform(**resolve_data_config({}, model=m))`, `create_loader(input_size=...)`.
    const timm = timmImageSide(call);
    if (timm) return timm;
    // albumentations: `A.Resize(height=256, width=256)`, `A.RandomCrop(224, 224)`.
    const height = positiveInteger(call.kwargs.get('height'));
    if (height && height === positiveInteger(call.kwargs.get('width'))) return height;
    const value = call.kwargs.get('size') ?? call.args[0];
    return positiveInteger(value) ?? (isList(value) && positiveInteger(value[0]) === positiveInteger(value[1]) ? positiveInteger(value[0]) : undefined);
  };
  for (const call of events) {
    // A helper building the pipeline is also followed on its own, with unknown sizes: skip those.
    if ((!SIZE_TRANSFORMS.includes(simpleName(call.qualified)) && !timmImageSide(call)) || sideOf(call) === undefined) continue;
    let compose = call.node.parent;
    while (compose && !(compose.type === 'call' && /Compose$/.test(compose.childForFieldName('function')?.text ?? ''))) compose = compose.parent;
    const key = compose?.id ?? -call.node.id;
    groups.set(key, [...(groups.get(key) ?? []), call]);
  }
  for (const calls of groups.values()) {
    const last = [...calls].sort((a, b) => b.node.startIndex - a.node.startIndex)[0]!;
    const side = sideOf(last)!;
    return { value: side, node: last.node, origin: `${simpleName(last.qualified)}(${side})` };
  }
  return undefined;
}

function sequenceLength(events: readonly CallEvent[], scope: Scope, root: SyntaxNode, script: ScriptArguments): Found<number> | undefined {
  for (const call of events) {
    const value = positiveInteger(call.kwargs.get('max_length'));
    if (value && /tokeniz|encode|batch_encode/i.test(call.node.text.split('(')[0] ?? '') && !tokenizesTargets(call.node)) return { value, node: call.node, origin: tokenizerLengthOrigin(value, call.kwargs.get('padding'), events) };
  }
  const unexecuted = unexecutedTokenizerLength(root, scope, events);
  if (unexecuted) return unexecuted;
  return namedSize(SEQUENCE_NAMES, scope, root, script);
}

/**
 * A size the script names (a sequence length, an image side): a module-level constant, an argparse
 * option (parsed at the top level or inside `main()`), a keyword it passes to its own classes, or
 * the user's `--set` of such a name.
 */
function namedSize(names: RegExp, scope: Scope, root: SyntaxNode, script: ScriptArguments): Found<number> | undefined {
  return constantOrOption(names, scope, root, script) ?? sizeKeyword(names, root, scope) ?? assumedSize(names, root, script.assumed);
}

/** A positive int bound to one of `names` at the top level (`BATCH_SIZE = 128`), else an argparse option's value. */
function constantOrOption(names: RegExp, scope: Scope, root: SyntaxNode, script: ScriptArguments): Found<number> | undefined {
  for (const name of scope.ownNames()) {
    const value = positiveInteger(scope.get(name));
    if (value && names.test(name)) return { value, node: assignmentNode(root, name) ?? root, origin: `constant ${name}` };
  }
  for (const [name, node] of script.nodes) {
    const value = names.test(name) ? namespaceValue(scope, name, script.parsed) : undefined;
    if (value) return { value, node, origin: `--${name.replace(/_/g, '-')} default` };
  }
  return undefined;
}

/**
 * A size the script passes by name to its own classes and functions (`GPT(block_size=512)`,
 * `TokenDataModule(block_size=512, batch_size=32)`), written as a number or a module-level constant:
 * the model and its data are built for it, though neither binds it at the top level.
 */
function sizeKeyword(names: RegExp, root: SyntaxNode, scope: Scope): Found<number> | undefined {
  for (const argument of root.descendantsOfType('keyword_argument')) {
    const name = argument.childForFieldName('name')?.text ?? '';
    if (!names.test(name)) continue;
    const call = argument.parent?.parent;
    if (call?.type !== 'call' || /tokeniz/i.test(call.childForFieldName('function')?.text ?? '')) continue;
    const written = argument.childForFieldName('value');
    const value = written?.type === 'integer' ? positiveInteger(Number(written.text)) : written?.type === 'identifier' ? positiveInteger(scope.get(written.text)) : undefined;
    if (value) return { value, node: argument, origin: `${name}=${written!.text} in ${call.childForFieldName('function')?.text ?? 'a call'}(...)` };
  }
  return undefined;
}

/** How a size the user set for a script that names none begins its origin: it has no line of its own (the node is the file's). */
export const SET_BY_THE_USER = 'set by the user';

/** `--set seq_len=256` (or any name of the size) for a script that binds none: the user's size. */
function assumedSize(names: RegExp, root: SyntaxNode, assumed: ScriptArguments['assumed']): Found<number> | undefined {
  for (const [name, value] of Object.entries(assumed ?? {})) {
    const size = positiveInteger(value);
    if (size && names.test(name.replace(/-/g, '_'))) return { value: size, node: root, origin: `${SET_BY_THE_USER} (${name}=${size})` };
  }
  return undefined;
}

/**
 * A tokenizer call the analysis never ran, in a lambda or a function `datasets.map` calls
 * (`raw.map(lambda b: tokenizer(b["text"], truncation=True, max_length=1024))`): its max_length
 * written as a number or a module-level constant.
 */
function unexecutedTokenizerLength(root: SyntaxNode, scope: Scope, events: readonly CallEvent[]): Found<number> | undefined {
  for (const call of root.descendantsOfType('call')) {
    if (!/tokeniz/i.test(call.childForFieldName('function')?.text ?? '') || tokenizesTargets(call)) continue;
    const value = writtenMaxLength(call, scope);
    if (!value) continue;
    const padding = keywordValue(call, 'padding');
    const paddingValue: PyValue | undefined = padding?.type === 'true' ? true : padding?.type === 'string' ? padding.text.replace(/^[rbuf]*["']|["']$/g, '') : undefined;
    return { value, node: call, origin: tokenizerLengthOrigin(value, paddingValue, events) };
  }
  return undefined;
}

const keywordValue = (call: SyntaxNode, name: string) => call.childForFieldName('arguments')?.namedChildren.find((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === name)?.childForFieldName('value');

/** A call's `max_length=` written as a number or a name the script binds to one. */
function writtenMaxLength(call: SyntaxNode, scope: Scope): number | undefined {
  const written = keywordValue(call, 'max_length');
  return written?.type === 'integer' ? positiveInteger(Number(written.text)) : written?.type === 'identifier' ? positiveInteger(scope.get(written.text)) : undefined;
}

/** A tokenizer call that makes the labels of a sequence-to-sequence model: `text_target=`, or its text named as targets or labels. */
function tokenizesTargets(call: SyntaxNode): boolean {
  if (keywordValue(call, 'text_target')) return true;
  const first = call.childForFieldName('arguments')?.namedChildren[0];
  return first !== undefined && first.type !== 'keyword_argument' && /target|label|summar|answer/i.test(first.text);
}

/**
 * Tokens per sample on the decoder's side of an encoder-decoder (T5, BART): the max_length of the
 * tokenizer call that makes the labels (`tokenizer(text_target=..., max_length=128)`,
 * `tokenizer(targets, max_length=target_max_length)`).
 */
export function targetSequenceLength(root: SyntaxNode, scope: Scope): Found<number> | undefined {
  for (const call of root.descendantsOfType('call')) {
    if (!/tokeniz/i.test(call.childForFieldName('function')?.text ?? '') || !tokenizesTargets(call)) continue;
    const value = writtenMaxLength(call, scope);
    if (value) return { value, node: call, origin: `labels tokenized with max_length=${value}` };
  }
  return undefined;
}

/**
 * What a tokenizer's max_length means for the batches: `padding="max_length"` makes every sample that
 * long; otherwise it truncates, and the batch is padded to its longest sample (by the call's
 * padding=True or a DataCollatorWithPadding), so max_length is the longest a batch can be, which the
 * estimate takes.
 */
function tokenizerLengthOrigin(length: number, padding: PyValue | undefined, events: readonly CallEvent[]): string {
  if (padding === 'max_length') return `tokenizer(max_length=${length}, padding="max_length"): every sample ${length} tokens`;
  const collator = events.find((call) => /(^|\.)(DataCollatorWithPadding|DataCollatorForSeq2Seq|DataCollatorForLanguageModeling)$/.test(call.qualified));
  const padder = collator ? simpleName(collator.qualified) : padding === true || padding === 'longest' ? 'padding="longest"' : 'the collator';
  return `tokenizer max_length=${length}: samples truncated to ${length} tokens, ${padder} pads each batch to its longest (the estimate takes ${length}: the figure is for a batch as long as the longest sample can be; batches of shorter samples hold less)`;
}

function optimizer(events: readonly CallEvent[]): OptimizerFound | undefined {
  for (const call of events) {
    const found = optimizerOf(call);
    if (found) return found;
  }
  return undefined;
}

/**
 * How `torch.optim.AdamW` (also Adam) steps when the script says (optimizerState.ts's OptimizerStep):
 * `fused=True` updates each tensor in one kernel, `foreach=False` one tensor at a time; otherwise
 * torch takes foreach, whose temporary is one state's size.
 */
export function optimizerStepOf(events: readonly CallEvent[]): Found<'fused' | 'per-tensor'> | undefined {
  for (const call of events) {
    if (!/^torch\.optim\.(Adam|AdamW)$/.test(call.qualified)) continue;
    const name = simpleName(call.qualified);
    if (call.kwargs.get('fused') === true) return { value: 'fused', node: argumentNode(call, 'fused'), origin: `${name}(fused=True): one kernel a tensor, no temporary at the step` };
    if (call.kwargs.get('foreach') === false) return { value: 'per-tensor', node: argumentNode(call, 'foreach'), origin: `${name}(foreach=False): one tensor at a time, temporaries of the largest` };
  }
  return undefined;
}

/** An optimizer found in the source, with the state it keeps beyond its kind's (OptimizerSource). */
export type OptimizerFound = Found<OptimizerKind> & { readonly extraStateCopies?: number };

/** The optimizer a `torch.optim.*` construction makes, if the call is one. */
export function optimizerOf(call: CallEvent): OptimizerFound | undefined {
  // bitsandbytes', torchao's and the others' optimizers: their state is read from the class name (optimizerName).
  const library = libraryOptimizerName(call);
  if (library) return { value: library.name === 'adamw_hf' ? 'adamw' : 'other', node: call.node, origin: `${library.qualified}(...)` };
  const timm = timmOptimizer(call);
  if (timm) return { value: timm.kind, node: call.node, origin: `${simpleName(call.qualified)}(opt="${timm.name}")` };
  if (!call.qualified.startsWith('torch.optim.')) return undefined;
  const name = call.qualified.slice('torch.optim.'.length);
  if (name.includes('.') || !/^[A-Z]/.test(name)) return undefined;
  let kind = OPTIMIZERS[name] ?? 'other';
  if (kind === 'sgd') {
    const momentum = call.kwargs.get('momentum') ?? call.args[2];
    if (momentum !== undefined && momentum !== 0) kind = 'sgd-momentum';
  }
  const extra = extraState(name, call);
  const origin = `${simpleName(call.qualified)}(${extra.map((part) => part.argument).join(', ') || '...'})${extra.length ? `: ${extra.map((part) => part.keeps).join(' and ')} beside its own state` : ''}`;
  return { value: kind, node: call.node, origin, ...(extra.length ? { extraStateCopies: extra.length } : {}) };
}

/**
 * State a `torch.optim` optimizer keeps per parameter beyond its kind's (OPTIMIZER_COPIES): RMSprop's
 * momentum buffer and average gradient, Adam's and AdamW's running maximum of the second moment.
 * Positional arguments as torch's signatures order them.
 */
function extraState(name: string, call: CallEvent): { argument: string; keeps: string }[] {
  const given = (keyword: string, position: number): PyValue | undefined => call.kwargs.get(keyword) ?? call.args[position];
  // Values the analysis knows: an option it cannot read is taken as torch's default (off).
  const on = (value: PyValue | undefined) => value === true || (typeof value === 'number' && value !== 0);
  const parts: { argument: string; keeps: string }[] = [];
  if (name === 'RMSprop') {
    const momentum = given('momentum', 5);
    if (typeof momentum === 'number' && momentum !== 0) parts.push({ argument: `momentum=${momentum}`, keeps: 'a momentum buffer' });
    if (on(given('centered', 6))) parts.push({ argument: 'centered=True', keeps: 'an average gradient' });
  } else if ((name === 'Adam' || name === 'AdamW') && on(given('amsgrad', 5))) {
    parts.push({ argument: 'amsgrad=True', keeps: "the second moment's running maximum" });
  }
  return parts;
}

function dtypeName(value: PyValue | undefined): string {
  return kindOf(value) === 'external' ? (value as ExternalValue).name : typeof value === 'string' ? value : '';
}

const CAST_METHODS = new Set(['half', 'bfloat16', 'to']);
const CHECKPOINT_CALLS = new Set(['checkpoint', 'checkpoint_sequential', 'gradient_checkpointing_enable', 'set_grad_checkpointing', 'apply_activation_checkpointing', 'checkpoint_wrapper']);

/** Per top-level statement and set of names: statements reused after an edit keep their lists. */
const callsByStatement = new WeakMap<SyntaxNode, Map<ReadonlySet<string>, SyntaxNode[]>>();

/** Calls whose function is named (last part of `a.b.name`) one of `names`, in source order. */
function namedCalls(root: SyntaxNode, names: ReadonlySet<string>): SyntaxNode[] {
  const found: SyntaxNode[] = [];
  for (const statement of root.children) {
    let known = callsByStatement.get(statement);
    if (!known) callsByStatement.set(statement, (known = new Map<ReadonlySet<string>, SyntaxNode[]>()));
    let calls = known.get(names);
    if (!calls) {
      calls = statement.descendantsOfType('call').filter((call) => {
        const fn = call.childForFieldName('function');
        const last = fn?.type === 'attribute' ? fn.childForFieldName('attribute') : fn;
        return last !== null && last !== undefined && last.endIndex - last.startIndex <= 30 && names.has(last.text);
      });
      known.set(names, calls);
    }
    for (const call of calls) found.push(call);
  }
  return found;
}

function precision(root: SyntaxNode, events: readonly CallEvent[]): Found<Precision> | undefined {
  // `enabled=flag` whose value is known to be False (a default the script reads) turns them off.
  const disabled = (call: CallEvent) => call.kwargs.get('enabled') === false;
  for (const call of events) {
    if (!/^torch\.(cuda\.amp\.|amp\.|cpu\.amp\.)?autocast$/.test(call.qualified) || disabled(call)) continue;
    const dtype = dtypeName(call.kwargs.get('dtype'));
    return { value: /bfloat16|bf16/.test(dtype) ? 'bf16-mixed' : 'fp16-mixed', node: call.node, origin: 'autocast' };
  }
  const scaler = events.find((call) => /GradScaler$/.test(call.qualified) && !disabled(call));
  if (scaler) return { value: 'fp16-mixed', node: scaler.node, origin: 'GradScaler' };
  // A model cast to half precision: `.half()`, `.bfloat16()`, `.to(torch.bfloat16)`.
  for (const call of namedCalls(root, CAST_METHODS)) {
    const fn = call.childForFieldName('function');
    const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
    if (method === 'half' || method === 'bfloat16') return { value: method === 'half' ? 'fp16' : 'bf16', node: call, origin: `.${method}()` };
    if (method === 'to') {
      const text = call.childForFieldName('arguments')?.text ?? '';
      if (/\b(torch\.)?(bfloat16)\b/.test(text)) return { value: 'bf16', node: call, origin: '.to(torch.bfloat16)' };
      if (/\b(torch\.)?(float16|half)\b/.test(text)) return { value: 'fp16', node: call, origin: '.to(torch.float16)' };
    }
  }
  return undefined;
}

/** Checkpointing usually happens inside forward(), which discovery does not run: look for the call itself. */
function checkpointing(root: SyntaxNode, imports: ImportTable): Found<boolean> | undefined {
  for (const call of namedCalls(root, CHECKPOINT_CALLS)) {
    const callee = dottedName(call.childForFieldName('function'));
    if (!callee) continue;
    if (/^torch\.utils\.checkpoint\.checkpoint(_sequential)?$/.test(imports.qualify(callee))) return { value: true, node: call, origin: 'torch.utils.checkpoint' };
    if (callee.endsWith('gradient_checkpointing_enable')) return { value: true, node: call, origin: 'gradient_checkpointing_enable()' };
    // torch.distributed's wrappers (FSDP recipes): apply_activation_checkpointing(model, ...), checkpoint_wrapper(block).
    const wrapper = /(^|\.)(apply_activation_checkpointing|checkpoint_wrapper)$/.exec(callee)?.[2];
    if (wrapper) return { value: true, node: call, origin: `${wrapper}()` };
    // timm's model.set_grad_checkpointing(enable=True); a literal False turns it off.
    if (callee.endsWith('.set_grad_checkpointing') && !/^\(\s*(enable\s*=\s*)?False\s*\)$/.test(call.childForFieldName('arguments')?.text ?? '')) {
      return { value: true, node: call, origin: 'set_grad_checkpointing()' };
    }
  }
  return undefined;
}

function event<T>(events: readonly CallEvent[], pattern: RegExp, value: T, origin: string): Found<T> | undefined {
  const call = events.find((e) => pattern.test(e.qualified));
  return call ? { value, node: call.node, origin } : undefined;
}

