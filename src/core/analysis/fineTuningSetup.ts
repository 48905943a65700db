import type { CallEvent } from './interpreter/interpreter';
import { kindOf, type DictValue, type ExternalValue, type PyValue } from './interpreter/pyValues';
import type { AdapterSetup, Found, QuantizationSetup, WeightDtype } from './modelDescription';
import { UNSLOTH_LOAD, UNSLOTH_PEFT, unslothName } from './interpreter/fineTuningLibraries';
import { isBnb4bitMirror } from '../catalog/hf/checkpoints';
import { argumentNode, HF_ARGUMENTS, positiveInteger, simpleName } from './callArguments';
import { libraryOptimizerName } from './libraryOptimizers';
import { trainerDefaultOrigin, type TrainerDefaultOptim } from './pinnedVersions';

/**
 * The fine-tuning set-up of a pretrained language model, read from the library calls the script
 * makes: the dtype its weights are loaded in (`from_pretrained(..., torch_dtype=torch.bfloat16)`),
 * bitsandbytes quantization (`BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
 * bnb_4bit_use_double_quant=True)` or `from_pretrained(..., load_in_8bit=True)`), a PEFT adapter
 * (`LoraConfig(r=8, lora_alpha=16, target_modules=[...] | "all-linear", use_dora=True)`, whether
 * `get_peft_model` or TRL's `SFTTrainer(peft_config=...)` applies it), `prepare_model_for_kbit_training`,
 * the Trainer's optimizer by name (`optim="paged_adamw_8bit"`) and TRL's `max_seq_length`.
 * Each value points at the argument it was read from. Values the script computes but the
 * interpreter cannot (a rank from a function it does not follow) are left out, never guessed.
 */

const FROM_PRETRAINED = /^transformers(\.\w+)*\.(AutoModel\w*|\w+For\w+|\w+Model)\.from_pretrained$/;
const BNB_CONFIG = /^transformers(\.\w+)*\.BitsAndBytesConfig$/;
// Every PEFT method's config (LoRA, IA3, HRA, FourierFT, ...): one the estimator does not size is still an adapter over a frozen model, not a full fine-tune.
// LoftQ's, EVA's and CorDA's configs set up LoRA's initialisation (LoraConfig(loftq_config=...)): not adapters of their own.
const PEFT_CONFIG = /^peft(\.\w+)*\.(?!Peft|LoftQ|Eva|Corda)\w+Config$/;
const PEFT_APPLY = /^peft(\.\w+)*\.get_peft_model$/;
const SFT_TRAINER = /^trl(\.\w+)*\.\w+Trainer$/;
const KBIT_PREPARE = /^peft(\.\w+)*\.prepare_model_for_kbit_training$/;
export const LIGHTNING_TRAINER = /^(lightning|pytorch_lightning|lightning\.pytorch)(\.trainer(\.trainer)?)?\.Trainer$/;

/** PEFT's default `r` by method (AdaLoRA's `init_r`); OFT's default is 0, sizing by `oft_block_size` instead. */
const DEFAULT_RANK: Readonly<Record<string, number>> = { lora: 8, adalora: 12, loha: 8, lokr: 8, vera: 256 };
/** Keywords that size OFT, BOFT and LoKr adapters (peftParams.ts). */
const SHAPE_OPTIONS = ['oft_block_size', 'block_share', 'boft_block_size', 'boft_block_num', 'boft_n_butterfly_factor', 'decompose_both', 'decompose_factor'];

/** `torch.bfloat16`, `torch.float16`, `"bfloat16"`, `"auto"` (undefined: the checkpoint decides). */
function dtypeOf(value: PyValue | undefined): WeightDtype | undefined {
  const name = kindOf(value) === 'external' ? (value as ExternalValue).name : typeof value === 'string' ? value : '';
  if (/(^|\.)(bfloat16|bf16)$/.test(name)) return 'bf16';
  if (/(^|\.)(float16|half|fp16)$/.test(name)) return 'fp16';
  if (/(^|\.)(float32|float|fp32)$/.test(name)) return 'fp32';
  if (name === 'auto') return 'auto';
  return undefined;
}

/** `from_pretrained(..., torch_dtype=torch.bfloat16)` (or `dtype=`, its newer name). */
export function weightDtype(events: readonly CallEvent[]): Found<WeightDtype> | undefined {
  for (const call of events) {
    if (UNSLOTH_LOAD.test(call.qualified)) {
      // Unsloth's dtype=None (its default) picks bf16 where the GPU has it, else fp16: 16 bits either way.
      const value = dtypeOf(call.kwargs.get('dtype')) ?? 'bf16';
      const written = argumentNode(call, 'dtype') !== call.node && call.kwargs.get('dtype') !== null;
      return { value, node: written ? argumentNode(call, 'dtype') : call.node, origin: written ? `${unslothName(call.qualified)}(dtype=${value})` : `${unslothName(call.qualified)}(dtype=None): 16-bit, bf16 where the GPU supports it (Unsloth's automatic choice)` };
    }
    if (SFT_TRAINER.test(call.qualified) && typeof (call.kwargs.get('model') ?? call.args[0]) === 'string') return trainerLoadedDtype(events, call);
    if (!FROM_PRETRAINED.test(call.qualified)) continue;
    for (const keyword of ['torch_dtype', 'dtype']) {
      const value = dtypeOf(call.kwargs.get(keyword));
      if (value) return { value, node: argumentNode(call, keyword), origin: `from_pretrained(${keyword}=${value === 'bf16' ? 'torch.bfloat16' : value === 'fp16' ? 'torch.float16' : value === 'auto' ? '"auto"' : 'torch.float32'})` };
    }
  }
  return undefined;
}

/**
 * A TRL trainer given a hub id loads the model itself with its config's `model_init_kwargs`
 * (`SFTConfig(model_init_kwargs={"torch_dtype": torch.bfloat16})`); without a dtype there, recent
 * TRL passes dtype="auto", the checkpoint's own dtype.
 */
function trainerLoadedDtype(events: readonly CallEvent[], trainer: CallEvent): Found<WeightDtype> {
  for (const call of events) {
    if (!HF_ARGUMENTS.test(call.qualified)) continue;
    const kwargs = call.kwargs.get('model_init_kwargs');
    if (kindOf(kwargs) !== 'dict') continue;
    for (const keyword of ['torch_dtype', 'dtype']) {
      const value = dtypeOf((kwargs as DictValue).entries.get(keyword));
      if (value) return { value, node: argumentNode(call, 'model_init_kwargs'), origin: `${simpleName(call.qualified)}(model_init_kwargs={"${keyword}": ${value}})` };
    }
  }
  return { value: 'auto', node: trainer.node, origin: `${simpleName(trainer.qualified)}(model="..."): TRL loads the checkpoint in its own dtype (dtype="auto")` };
}

/** `from_pretrained(..., attn_implementation="eager" | "sdpa" | "flash_attention_2")`. */
export function attentionImplementation(events: readonly CallEvent[]): Found<string> | undefined {
  for (const call of events) {
    if (!FROM_PRETRAINED.test(call.qualified)) continue;
    const value = call.kwargs.get('attn_implementation');
    if (typeof value === 'string') return { value, node: argumentNode(call, 'attn_implementation'), origin: `from_pretrained(attn_implementation="${value}")` };
  }
  return undefined;
}

/** `BitsAndBytesConfig(load_in_4bit=True, ...)`, else `from_pretrained(..., load_in_4bit=True | load_in_8bit=True)`. */
export function quantization(events: readonly CallEvent[]): Found<QuantizationSetup> | undefined {
  for (const call of events) {
    if (UNSLOTH_LOAD.test(call.qualified)) {
      // Unsloth loads in 4 bits unless told otherwise (load_in_4bit=True by default), as NF4 with double quantization.
      if (call.kwargs.get('full_finetuning') === true) return undefined;
      if (call.kwargs.get('load_in_8bit') === true) return { value: { bits: 8, doubleQuant: false }, node: argumentNode(call, 'load_in_8bit'), origin: `${unslothName(call.qualified)}(load_in_8bit=True)` };
      if (call.kwargs.get('load_in_4bit') === false) return undefined;
      const written = argumentNode(call, 'load_in_4bit') !== call.node;
      return { value: { bits: 4, quantType: 'nf4', doubleQuant: true }, node: argumentNode(call, 'load_in_4bit'), origin: `${unslothName(call.qualified)}(${written ? 'load_in_4bit=True' : "load_in_4bit's default True"}): nf4 with double quantization` };
    }
    const isConfig = BNB_CONFIG.test(call.qualified);
    if (!isConfig && !FROM_PRETRAINED.test(call.qualified)) continue;
    const bits = call.kwargs.get('load_in_4bit') === true ? 4 : call.kwargs.get('load_in_8bit') === true ? 8 : undefined;
    if (bits === undefined) {
      // A mirror stored in 4 bits (`unsloth/llama-3-8b-bnb-4bit`): its config's quantization_config loads it so, NF4 with double quantization.
      const id = call.kwargs.get('pretrained_model_name_or_path') ?? call.args[0];
      if (!isConfig && typeof id === 'string' && isBnb4bitMirror(id)) return { value: { bits: 4, quantType: 'nf4', doubleQuant: true }, node: call.node, origin: `from_pretrained("${id}"): a checkpoint stored in 4 bits (bitsandbytes NF4 with double quantization)` };
      continue;
    }
    const keyword = bits === 4 ? 'load_in_4bit' : 'load_in_8bit';
    if (bits === 8) return { value: { bits, doubleQuant: false }, node: argumentNode(call, keyword), origin: `${isConfig ? 'BitsAndBytesConfig' : 'from_pretrained'}(load_in_8bit=True)` };
    const quantType = call.kwargs.get('bnb_4bit_quant_type') === 'nf4' ? 'nf4' : 'fp4';
    const doubleQuant = call.kwargs.get('bnb_4bit_use_double_quant') === true;
    const origin = `${isConfig ? 'BitsAndBytesConfig' : 'from_pretrained'}(load_in_4bit=True, ${quantType}${doubleQuant ? ', double quantization' : ''})`;
    return { value: { bits, quantType, doubleQuant }, node: argumentNode(call, keyword), origin };
  }
  return undefined;
}

/** The PEFT config the script builds, when `get_peft_model` or a TRL trainer (`peft_config=`) applies one; else a config it builds and never applies is still its adapter. */
export function adapter(events: readonly CallEvent[]): Found<AdapterSetup> | undefined {
  // Unsloth's get_peft_model takes LoRA's settings itself and applies them.
  const configs = events.filter((call) => PEFT_CONFIG.test(call.qualified) || UNSLOTH_PEFT.test(call.qualified));
  if (configs.length === 0) return undefined;
  const call = configs[0]!;
  const unsloth = UNSLOTH_PEFT.test(call.qualified);
  const applied = unsloth || events.some((c) => PEFT_APPLY.test(c.qualified) || (SFT_TRAINER.test(c.qualified) && c.kwargs.get('peft_config') !== undefined));
  const kind = unsloth ? 'Lora' : simpleName(call.qualified).replace(/Config$/, '');
  const method = kind === 'Lora' ? 'lora' : kind === 'AdaLora' ? 'adalora' : kind.toLowerCase();
  // PEFT's default rank when `r` is not written (8; VeRA's 256; OFT sizes by block instead); a rank written but not readable stays unknown.
  // AdaLoRA ignores `r`: its matrices are built at `init_r` (12 by default) and pruned by masking, not shrunk.
  const rankKeyword = method === 'adalora' ? 'init_r' : 'r';
  const written = argumentNode(call, rankKeyword) !== call.node;
  const rank = positive(call.kwargs.get(rankKeyword)) ?? (written ? undefined : unsloth ? UNSLOTH_DEFAULTS.rank : DEFAULT_RANK[method]);
  const shapeOptions = Object.fromEntries(SHAPE_OPTIONS.filter((name) => argumentNode(call, name) !== call.node).map((name) => {
    const value = call.kwargs.get(name);
    return [name, typeof value === 'number' || typeof value === 'boolean' ? value : null];
  }));
  const alpha = positive(call.kwargs.get('lora_alpha'));
  const targetModules = moduleNames(call.kwargs.get('target_modules')) ?? (unsloth && argumentNode(call, 'target_modules') === call.node ? UNSLOTH_DEFAULTS.targets : undefined);
  const dora = call.kwargs.get('use_dora') === true;
  const dropout = positive(call.kwargs.get('lora_dropout'));
  // Prompt and prefix tuning: PEFT requires num_virtual_tokens; IA3 names the modules it scales on their input.
  const virtualTokens = positive(call.kwargs.get('num_virtual_tokens'));
  const feedforward = moduleNames(call.kwargs.get('feedforward_modules'));
  const saved = moduleNames(call.kwargs.get('modules_to_save'));
  const modulesToSave = typeof saved === 'string' ? [saved] : saved;
  const projection = call.kwargs.get('prefix_projection') === true ? { ...(positive(call.kwargs.get('encoder_hidden_size')) === undefined ? {} : { hidden: positive(call.kwargs.get('encoder_hidden_size')) }) } : undefined;
  const task = taskTypeOf(call.kwargs.get('task_type'));
  const isLora = method === 'lora' || method === 'adalora';
  const parts = [
    ...(isLora || rank !== undefined ? [`${rankKeyword}=${rank ?? '?'}`] : []),
    ...(alpha === undefined ? [] : [`lora_alpha=${alpha}`]),
    ...(targetModules === undefined ? [] : [`target_modules=${typeof targetModules === 'string' ? JSON.stringify(targetModules) : `[${targetModules.join(', ')}]`}`]),
    ...(dora ? ['use_dora=True'] : []),
    ...(dropout === undefined ? [] : [`lora_dropout=${dropout}`]),
    ...(virtualTokens === undefined ? [] : [`num_virtual_tokens=${virtualTokens}`]),
    ...(projection ? ['prefix_projection=True'] : []),
  ];
  const value: AdapterSetup = {
    method,
    ...(rank === undefined ? {} : { rank }),
    ...(alpha === undefined ? {} : { alpha }),
    ...(targetModules === undefined ? {} : { targetModules }),
    dora,
    applied,
    ...(dropout === undefined ? {} : { dropout }),
    ...(virtualTokens === undefined ? {} : { virtualTokens }),
    ...(feedforward === undefined ? {} : { feedforwardModules: feedforward }),
    ...(modulesToSave === undefined ? {} : { modulesToSave }),
    ...(projection ? { prefixProjection: projection } : {}),
    ...(task === undefined ? {} : { taskType: task }),
    ...(Object.keys(shapeOptions).length > 0 ? { shapeOptions } : {}),
  };
  return { value, node: call.node, origin: `${unsloth ? unslothName(call.qualified) : simpleName(call.qualified)}(${parts.join(', ')})` };
}

/**
 * A loss that never holds the fp32 logits: Unsloth's fused cross-entropy (any script that loads
 * its model with Unsloth), or Liger's fused linear cross-entropy (`TrainingArguments(use_liger_kernel=True)`).
 */
export function fusedLoss(events: readonly CallEvent[]): Found<'inPlace' | 'linear'> | undefined {
  const liger = events.find((c) => HF_ARGUMENTS.test(c.qualified) && c.kwargs.get('use_liger_kernel') === true);
  if (liger) return { value: 'linear', node: argumentNode(liger, 'use_liger_kernel'), origin: `${simpleName(liger.qualified)}(use_liger_kernel=True): Liger's fused linear cross-entropy computes the logits a chunk at a time` };
  const unsloth = events.find((c) => UNSLOTH_LOAD.test(c.qualified));
  if (unsloth) return { value: 'inPlace', node: unsloth.node, origin: `${unslothName(unsloth.qualified)}: Unsloth's fused cross-entropy keeps the 16-bit logits and writes their gradient over them` };
  return undefined;
}

/** Unsloth's get_peft_model defaults: r=16 on every projection of the attention and the MLP. */
const UNSLOTH_DEFAULTS = { rank: 16, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] } as const;

/**
 * Unsloth's `get_peft_model(use_gradient_checkpointing=...)`: True checkpoints each layer; "unsloth"
 * (its default) also moves the layers' saved inputs to the CPU, so the GPU holds about one layer's.
 */
export function unslothCheckpointing(events: readonly CallEvent[]): Found<{ readonly checkpointing: boolean; readonly offloaded: boolean }> | undefined {
  const call = events.find((c) => UNSLOTH_PEFT.test(c.qualified));
  if (!call) return undefined;
  const value = call.kwargs.get('use_gradient_checkpointing');
  if (value === false) return { value: { checkpointing: false, offloaded: false }, node: argumentNode(call, 'use_gradient_checkpointing'), origin: `${unslothName(call.qualified)}(use_gradient_checkpointing=False)` };
  if (value === true) return { value: { checkpointing: true, offloaded: false }, node: argumentNode(call, 'use_gradient_checkpointing'), origin: `${unslothName(call.qualified)}(use_gradient_checkpointing=True)` };
  const written = argumentNode(call, 'use_gradient_checkpointing') !== call.node;
  return { value: { checkpointing: true, offloaded: true }, node: argumentNode(call, 'use_gradient_checkpointing'), origin: `${unslothName(call.qualified)}(${written ? 'use_gradient_checkpointing="unsloth"' : 'use_gradient_checkpointing\'s default "unsloth"'}): checkpointed, the layers' inputs offloaded to the CPU` };
}

/** `prepare_model_for_kbit_training(model)`: casts the non-quantized parameters to fp32 and, by default, turns gradient checkpointing on. */
export function kbitPrepared(events: readonly CallEvent[]): Found<{ checkpointing: boolean }> | undefined {
  const call = events.find((c) => KBIT_PREPARE.test(c.qualified));
  if (!call) return undefined;
  const checkpointing = call.kwargs.get('use_gradient_checkpointing') !== false;
  return { value: { checkpointing }, node: call.node, origin: `prepare_model_for_kbit_training(...)${checkpointing ? ' (turns gradient checkpointing on)' : ''}` };
}

/**
 * The optimizer's name, which says how many bytes its state takes: a library optimizer the script
 * builds (`bnb.optim.Lion8bit(...)`: it is the one that runs, handed to the Trainer or stepped by hand),
 * else `TrainingArguments(optim="paged_adamw_8bit")` as written.
 */
export function optimizerName(events: readonly CallEvent[], trainerDefault?: TrainerDefaultOptim): Found<string> | undefined {
  for (const call of events) {
    const library = libraryOptimizerName(call);
    if (library) return { value: library.name, node: call.node, origin: `${library.qualified}(...)` };
  }
  // A Trainer given its optimizer (`Trainer(optimizers=(optimizer, scheduler))`) runs that one and ignores `optim`.
  const given = events.some((call) => isHfTrainer(call.qualified) && call.kwargs.has('optimizers') && call.kwargs.get('optimizers') !== null);
  if (given) return undefined;
  for (const call of events) {
    if (!HF_ARGUMENTS.test(call.qualified)) continue;
    const optim = call.kwargs.get('optim');
    if (typeof optim === 'string') return { value: optim, node: argumentNode(call, 'optim'), origin: `${simpleName(call.qualified)}(optim="${optim}")` };
    // The default the pinned versions decide (adamw_torch_fused, adamw_hf): its step's temporaries differ.
    if (optim === undefined && trainerDefault) return { value: trainerDefault.name, node: call.node, origin: trainerDefaultOrigin(simpleName(call.qualified), trainerDefault) };
  }
  return undefined;
}

/** TRL's SFTConfig max_length default (transformers' TRL documentation: "defaults to 1024"), also its older max_seq_length's cap. */
export const TRL_DEFAULT_MAX_LENGTH = 1024;

/**
 * TRL's `SFTConfig(max_seq_length=2048)` (`max_length=` in newer TRL): the tokens per sample it
 * truncates or packs to. With `packing=True` every sample is that long; without, batches are padded
 * to their longest sample and the length is the most a batch can be (which the estimate takes).
 */
export function frameworkSequenceLength(events: readonly CallEvent[]): Found<number> | undefined {
  const packed = events.some((call) => (/^trl(\.\w+)*\.\w+Config$/.test(call.qualified) || SFT_TRAINER.test(call.qualified)) && call.kwargs.get('packing') === true);
  for (const call of events) {
    if (!/^trl(\.\w+)*\.\w+Config$/.test(call.qualified) && !SFT_TRAINER.test(call.qualified)) continue;
    for (const keyword of ['max_seq_length', 'max_length']) {
      const value = positive(call.kwargs.get(keyword));
      if (value === undefined || !Number.isInteger(value)) continue;
      const how = packed ? `, packing=True): every sample packed to ${value} tokens` : `): batches padded to their longest sample, at most ${value} tokens (the estimate takes ${value}: the figure is for a batch that long; batches of shorter samples hold less)`;
      return { value, node: argumentNode(call, keyword), origin: `${simpleName(call.qualified)}(${keyword}=${value}${how}` };
    }
  }
  return undefined;
}

/**
 * Unsloth's `from_pretrained(max_seq_length=2048)`: the length its patched TRL trainers train at when
 * their config gives none (they take the model's), batches padded to their longest sample.
 */
export function unslothSequenceLength(events: readonly CallEvent[]): Found<number> | undefined {
  const call = events.find((c) => UNSLOTH_LOAD.test(c.qualified));
  const value = call ? positiveInteger(call.kwargs.get('max_seq_length')) : undefined;
  if (!call || value === undefined) return undefined;
  return { value, node: argumentNode(call, 'max_seq_length'), origin: `${unslothName(call.qualified)}(max_seq_length=${value}): Unsloth's trainers take the model's length; batches padded to their longest sample, at most ${value} tokens (the estimate takes ${value})` };
}

/** A TRL SFT or preference trainer or config that gives no length: TRL's default (DPOConfig's, KTOConfig's, ORPOConfig's and CPOConfig's too), after the tokenizer's own max_length and the script's constants. */
export function trlDefaultSequenceLength(events: readonly CallEvent[]): Found<number> | undefined {
  const trl = events.find((call) => /^trl(\.\w+)*\.(SFT|DPO|KTO|ORPO|CPO)(Config|Trainer)$/.test(call.qualified));
  if (!trl) return undefined;
  const packed = events.some((call) => /^trl(\.\w+)*\.SFT(Config|Trainer)$/.test(call.qualified) && call.kwargs.get('packing') === true);
  return { value: TRL_DEFAULT_MAX_LENGTH, node: trl.node, origin: `${simpleName(trl.qualified)}: TRL's default max_length=${TRL_DEFAULT_MAX_LENGTH}${packed ? ', every sample packed to it' : ' (the estimate takes it: batches are padded to their longest sample, so the figure is for a batch that long; batches of shorter samples hold less)'}` };
}

/** transformers' Trainers and TRL's. */
const isHfTrainer = (qualified: string): boolean => /^transformers(\.\w+)*\.(Seq2Seq)?Trainer$/.test(qualified) || SFT_TRAINER.test(qualified);

/**
 * `Trainer(...)`, `Seq2SeqTrainer(...)`, a TRL trainer or Lightning's `Trainer`: its training step computes
 * the loss and lets the outputs go before the backward (Lightning calls backward on what training_step
 * returns, when that method's locals are gone).
 */
export function hfTrainer(events: readonly CallEvent[]): Found<string> | undefined {
  const call = events.find((c) => isHfTrainer(c.qualified) || LIGHTNING_TRAINER.test(c.qualified));
  return call ? { value: simpleName(call.qualified), node: call.node, origin: `${simpleName(call.qualified)}(...)` } : undefined;
}

/** `TrainingArguments(torch_compile=True)`: the Trainer compiles the model. */
export function trainerCompile(events: readonly CallEvent[]): Found<boolean> | undefined {
  const call = events.find((c) => HF_ARGUMENTS.test(c.qualified) && c.kwargs.get('torch_compile') === true);
  return call ? { value: true, node: argumentNode(call, 'torch_compile'), origin: `${simpleName(call.qualified)}(torch_compile=True)` } : undefined;
}

/** A module name, `"all-linear"`, or a list of names written as literals. */
function moduleNames(value: PyValue | undefined): string | readonly string[] | undefined {
  return typeof value === 'string' ? value : Array.isArray(value) && value.every((t) => typeof t === 'string') ? (value) : undefined;
}

/** `task_type="SEQ_2_SEQ_LM"` or `TaskType.SEQ_2_SEQ_LM`. */
function taskTypeOf(value: PyValue | undefined): string | undefined {
  const name = kindOf(value) === 'external' ? (value as ExternalValue).name : typeof value === 'string' ? value : '';
  const match = /(?:^|\.)([A-Z_0-9]+)$/.exec(name);
  return match ? match[1] : undefined;
}

function positive(value: PyValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}
