// Gradient checkpointing: `torch.utils.checkpoint.checkpoint(block, x)` and `checkpoint_sequential(layers, segments, x)` in forward, the wrappers that checkpoint a module's calls, and an architecture's own checkpointing.
import type { SyntaxNode } from '../../parsing/syntax';
import type { Evaluator } from './evaluator';
import { asModule, isList, type ModuleObject, type PyValue } from './pyValues';

const CHECKPOINT = /^(torch\.utils\.checkpoint\.checkpoint|deepspeed\.checkpointing\.checkpoint)$/;
const CHECKPOINT_SEQUENTIAL = 'torch.utils.checkpoint.checkpoint_sequential';
/** Wrappers whose module checkpoints each of its calls: torch.distributed's (FSDP recipes) and fairscale's. */
const WRAPPER = /^(torch\.distributed\.algorithms\._checkpoint\.checkpoint_wrapper\.checkpoint_wrapper|fairscale\.nn\.(checkpoint\.)?checkpoint_wrapper)$/;
const APPLY = 'torch.distributed.algorithms._checkpoint.checkpoint_wrapper.apply_activation_checkpointing';

/**
 * The value of a checkpoint call, or undefined for any other function. The function runs on the
 * arguments as it would without checkpointing; its layer calls are marked as one segment
 * (docs/layer-table.md, rule 12) through the interpreter's `onCheckpoint` hook.
 */
export function checkpointCall(interp: Evaluator, name: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode): PyValue | undefined {
  if (CHECKPOINT.test(name)) {
    const fn = args[0] ?? kwargs.get('function') ?? null;
    return segment(interp, () => interp.callValue(fn, args.slice(1), new Map(), node));
  }
  if (WRAPPER.test(name)) {
    const wrapped = asModule(args[0] ?? kwargs.get('module'));
    if (wrapped) wrapped.checkpointWrapped = true;
    return args[0] ?? kwargs.get('module') ?? null;
  }
  if (name === APPLY) return applyActivationCheckpointing(interp, args[0] ?? kwargs.get('model') ?? null, kwargs.get('check_fn'), node);
  if (name !== CHECKPOINT_SEQUENTIAL) return undefined;
  const functions = args[0] ?? kwargs.get('functions') ?? null;
  const segments = args[1] ?? kwargs.get('segments');
  let value: PyValue = args[2] ?? kwargs.get('input') ?? null;
  const layers = sequenceOf(functions);
  const run = (from: number, to: number) => {
    for (let index = from; index < to; index++) value = interp.callValue(layers![index]!, [value], new Map(), node);
    return value;
  };
  if (!layers || typeof segments !== 'number' || !Number.isInteger(segments) || segments < 1) {
    interp.note(node, 'checkpoint_sequential: its functions or number of segments are not known; run without checkpointing');
    return layers ? run(0, layers.length) : interp.callValue(functions, [value], new Map(), node);
  }
  // PyTorch's split: segments - 1 checkpointed runs of len // segments functions, then the rest without checkpointing.
  const size = Math.floor(layers.length / segments);
  let end = 0;
  for (let start = 0; start < size * (segments - 1); start += size) {
    end = start + size;
    segment(interp, () => run(start, end));
  }
  return run(end, layers.length);
}

function segment(interp: Evaluator, run: () => PyValue): PyValue {
  return interp.hooks.onCheckpoint ? interp.hooks.onCheckpoint(run) : run();
}

/** The functions `checkpoint_sequential` runs in order: an nn.Sequential's children or a list's items. */
function sequenceOf(functions: PyValue): PyValue[] | undefined {
  const module = asModule(functions);
  if (module) return module.kind === 'sequential' ? [...module.children.values()].map((child) => ({ kind: 'module' as const, module: child })) : undefined;
  return isList(functions) ? [...functions] : undefined;
}

/**
 * `apply_activation_checkpointing(model, checkpoint_wrapper_fn=..., check_fn=lambda m: isinstance(m, Block))`:
 * the submodules `check_fn` accepts are wrapped, the outermost of them (a wrapped module's calls
 * inside another's are the outer's segment). Without a `check_fn` PyTorch wraps every submodule; a
 * `check_fn` the analysis cannot decide for a module leaves it unwrapped, and a note says so.
 */
function applyActivationCheckpointing(interp: Evaluator, model: PyValue, checkFn: PyValue | undefined, node: SyntaxNode): PyValue {
  const root = asModule(model);
  if (!root) return null;
  let undecided = 0;
  for (const [, module] of root.namedModules()) {
    if (checkFn === undefined) {
      module.checkpointWrapped = true;
      continue;
    }
    const accepted = interp.callValue(checkFn, [{ kind: 'module', module }], new Map(), node);
    if (accepted === true) module.checkpointWrapped = true;
    else if (accepted !== false) undecided += 1;
  }
  if (undecided > 0) interp.note(node, `apply_activation_checkpointing: check_fn could not be decided for ${undecided} module${undecided === 1 ? '' : 's'}; those are counted without checkpointing`);
  return null;
}

/**
 * timm's `model.set_grad_checkpointing(enable)` and transformers' `model.gradient_checkpointing_enable()` /
 * `_disable()` on a standard architecture: its blocks become checkpointed segments (docs/layer-table.md, rule 12).
 */
export function checkpointBlocks(interp: Evaluator, module: ModuleObject, enable: PyValue, node: SyntaxNode): PyValue {
  if (typeof enable !== 'boolean') {
    interp.note(node, `\`${node.text.split('\n')[0]!.slice(0, 60)}\`: whether it turns checkpointing on is not a constant the analysis can read; counted without checkpointing`);
    return null;
  }
  module.catalog!.root.blocksCheckpointed = enable;
  return null;
}
