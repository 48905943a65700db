import type { SyntaxNode } from '../parsing/syntax';
import type { CallEvent } from './interpreter/interpreter';
import { kindOf, type ExternalValue, type PyValue } from './interpreter/pyValues';
import type { Found, OptimizerKind, Precision } from './modelDescription';
import { argumentNode, HF_ARGUMENTS, LIGHTNING, simpleName } from './callArguments';
import { trainerDefaultOrigin, type TrainerDefaultOptim } from './pinnedVersions';

/**
 * The training set-up the frameworks take as arguments: Lightning's `Trainer(precision=...)` and
 * `Fabric(precision=...)`, Hugging Face's `TrainingArguments(per_device_train_batch_size=...,
 * fp16=True, gradient_checkpointing=True, optim=...)` (and TRL's configs, which extend it), and
 * accelerate's `Accelerator(mixed_precision=...)`. Each value points at the argument it was read
 * from (or the call, for a framework default).
 */

const ACCELERATOR = /^accelerate(\.accelerator)?\.Accelerator$/;
const FSDP_MIXED_PRECISION = /^torch\.distributed\.fsdp(\.fully_sharded_data_parallel|\.api)?\.MixedPrecision$/;
/** transformers' `per_device_train_batch_size` default. */
const HF_DEFAULT_BATCH = 8;

/** `precision=` of Lightning: "16-mixed", "bf16-mixed", 16, "16-true", "bf16-true", 32, "32-true", "64"... */
function lightningPrecision(value: PyValue | undefined): Precision | undefined {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : undefined;
  if (text === undefined) return undefined;
  if (/^(16|16-mixed)$/.test(text)) return 'fp16-mixed';
  if (/^(bf16|bf16-mixed)$/.test(text)) return 'bf16-mixed';
  if (text === '16-true') return 'fp16';
  if (text === 'bf16-true') return 'bf16';
  if (/^(32|32-true)$/.test(text)) return 'fp32';
  return undefined;
}

export function frameworkPrecision(events: readonly CallEvent[]): Found<Precision> | undefined {
  for (const call of events) {
    const name = simpleName(call.qualified);
    if (LIGHTNING.test(call.qualified)) {
      const value = lightningPrecision(call.kwargs.get('precision'));
      if (value) return { value, node: argumentNode(call, 'precision'), origin: `${name}(precision=${JSON.stringify(call.kwargs.get('precision'))})` };
    } else if (HF_ARGUMENTS.test(call.qualified)) {
      if (call.kwargs.get('bf16') === true) return { value: 'bf16-mixed', node: argumentNode(call, 'bf16'), origin: `${name}(bf16=True)` };
      if (call.kwargs.get('fp16') === true) return { value: 'fp16-mixed', node: argumentNode(call, 'fp16'), origin: `${name}(fp16=True)` };
      // `bf16=is_bfloat16_supported(), fp16=not is_bfloat16_supported()` (Unsloth's notebooks): one of the two is on, whichever the GPU has; both keep 16-bit copies.
      const computed = ['bf16', 'fp16'].find((keyword) => call.kwargs.has(keyword) && typeof call.kwargs.get(keyword) !== 'boolean');
      if (computed) return { value: 'bf16-mixed', node: argumentNode(call, computed), origin: `${name}(${computed}=...): computed when it runs; 16-bit mixed precision (bf16 where the GPU has it) assumed` };
    } else if (FSDP_MIXED_PRECISION.test(call.qualified)) {
      // FSDP's MixedPrecision(param_dtype=...): the parameters are cast for the forward and backward, fp32 kept for the optimizer.
      const dtype = call.kwargs.get('param_dtype');
      const name = kindOf(dtype) === 'external' ? (dtype as ExternalValue).name : '';
      if (/bfloat16$/.test(name)) return { value: 'bf16-mixed', node: argumentNode(call, 'param_dtype'), origin: 'MixedPrecision(param_dtype=torch.bfloat16)' };
      if (/(float16|half)$/.test(name)) return { value: 'fp16-mixed', node: argumentNode(call, 'param_dtype'), origin: 'MixedPrecision(param_dtype=torch.float16)' };
    } else if (ACCELERATOR.test(call.qualified)) {
      const mixed = call.kwargs.get('mixed_precision');
      if (mixed === 'fp16' || mixed === 'bf16') return { value: mixed === 'fp16' ? 'fp16-mixed' : 'bf16-mixed', node: argumentNode(call, 'mixed_precision'), origin: `Accelerator(mixed_precision="${mixed}")` };
    }
  }
  return undefined;
}

/** `TrainingArguments(per_device_train_batch_size=...)`, or its default of 8 when the script builds TrainingArguments without it. */
export function frameworkBatchSize(events: readonly CallEvent[], origin: (call: CallEvent, keyword: string) => SyntaxNode): Found<number> | undefined {
  for (const call of events) {
    if (!HF_ARGUMENTS.test(call.qualified)) continue;
    const name = simpleName(call.qualified);
    const value = call.kwargs.get('per_device_train_batch_size');
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return { value, node: origin(call, 'per_device_train_batch_size'), origin: `${name}(per_device_train_batch_size=...)` };
    if (value === undefined) return { value: HF_DEFAULT_BATCH, node: call.node, origin: `${name} default per_device_train_batch_size` };
  }
  return undefined;
}

/**
 * `TrainingArguments(optim=...)`: the Trainer makes its own optimizer, AdamW unless told otherwise;
 * which AdamW by default depends on the versions the project pins (pinnedVersions.ts).
 */
export function frameworkOptimizer(events: readonly CallEvent[], trainerDefault?: TrainerDefaultOptim): Found<OptimizerKind> | undefined {
  for (const call of events) {
    if (!HF_ARGUMENTS.test(call.qualified)) continue;
    const name = simpleName(call.qualified);
    const optim = call.kwargs.get('optim');
    if (optim === undefined && trainerDefault) return { value: 'adamw', node: call.node, origin: trainerDefaultOrigin(name, trainerDefault) };
    if (optim === undefined) return { value: 'adamw', node: call.node, origin: `${name} default optim (adamw_torch, whose step makes a temporary the size of one state; with torch 2.8 or later transformers takes adamw_torch_fused, which makes none)` };
    if (typeof optim !== 'string') continue;
    const kind: OptimizerKind = /^(adamw_(torch|hf|apex_fused|torch_fused|torch_xla)|adamw|paged_adamw_32bit)$/.test(optim) ? 'adamw' : optim === 'sgd' ? 'sgd' : optim === 'adagrad' ? 'adagrad' : optim === 'rmsprop' ? 'rmsprop' : 'other';
    return { value: kind, node: argumentNode(call, 'optim'), origin: `${name}(optim="${optim}")` };
  }
  return undefined;
}

/** `TrainingArguments(gradient_checkpointing=True)`. */
export function frameworkCheckpointing(events: readonly CallEvent[]): Found<boolean> | undefined {
  for (const call of events) {
    if (HF_ARGUMENTS.test(call.qualified) && call.kwargs.get('gradient_checkpointing') === true) return { value: true, node: argumentNode(call, 'gradient_checkpointing'), origin: `${simpleName(call.qualified)}(gradient_checkpointing=True)` };
  }
  return undefined;
}

/** `Trainer(accumulate_grad_batches=4)`, `TrainingArguments(gradient_accumulation_steps=4)`, `Accelerator(gradient_accumulation_steps=4)`: steps per optimizer step (more than one). */
export function frameworkAccumulation(events: readonly CallEvent[]): Found<number> | undefined {
  for (const call of events) {
    const keyword = LIGHTNING.test(call.qualified) ? 'accumulate_grad_batches' : HF_ARGUMENTS.test(call.qualified) || ACCELERATOR.test(call.qualified) ? 'gradient_accumulation_steps' : undefined;
    if (keyword === undefined) continue;
    const value = call.kwargs.get(keyword);
    if (typeof value === 'number' && Number.isInteger(value) && value > 1) return { value, node: argumentNode(call, keyword), origin: `${simpleName(call.qualified)}(${keyword}=${value})` };
  }
  return undefined;
}

/**
 * `Trainer(strategy="fsdp")`, `"deepspeed_stage_3"`, `TrainingArguments(fsdp=..., deepspeed=...)`:
 * strategies that shard parameters, gradients or optimizer state across GPUs. The estimate is of
 * one unsharded replica, so it says so.
 */
export function shardingStrategy(events: readonly CallEvent[]): Found<string> | undefined {
  for (const call of events) {
    if (LIGHTNING.test(call.qualified)) {
      const strategy = call.kwargs.get('strategy');
      if (typeof strategy === 'string' && /fsdp|deepspeed/i.test(strategy)) return { value: strategy, node: argumentNode(call, 'strategy'), origin: `${simpleName(call.qualified)}(strategy="${strategy}")` };
    } else if (HF_ARGUMENTS.test(call.qualified)) {
      for (const keyword of ['fsdp', 'deepspeed']) {
        const value = call.kwargs.get(keyword);
        if (value !== undefined && value !== null && value !== false && value !== '') return { value: keyword, node: argumentNode(call, keyword), origin: `${simpleName(call.qualified)}(${keyword}=...)` };
      }
    }
  }
  return undefined;
}
