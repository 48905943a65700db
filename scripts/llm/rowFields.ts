/**
 * The fields of a published fine-tuning measurement (../shared/data/published-llm/measurements.csv's
 * schema) read as the estimator's settings. Tables written from other sources phrase the same
 * facts in many ways (`yes`, `✓`, `QLoRA (4-bit)`, `paged_adamw_8bit`, `4 (×8 accum)`, `2k`,
 * `A100-SXM4-80GB`); each reader here knows those phrasings, returns `undefined` for a field the
 * row leaves unstated (the caller decides, by a documented rule, what that means), and an
 * `Unread` naming the field and the text when the text says something it does not understand or
 * the estimator does not model, so that a row is skipped for a stated reason rather than misread.
 * The rules are listed in docs/fine-tuning.md, "Reading published rows".
 */
import type { OptimizerState } from '../../src/core/estimators/fineTuning';

/** A field whose text was not understood, or names something the estimator does not model. */
export interface Unread {
  readonly unread: string;
}
/** A reading: the value, `undefined` when the row does not state it, or why it cannot be read. */
export type Reading<T> = T | undefined | Unread;

export const isUnread = (reading: unknown): reading is Unread => typeof reading === 'object' && reading !== null && 'unread' in reading;
const unread = (field: string, text: string, why = 'not understood'): Unread => ({ unread: `${field} "${text.trim()}": ${why}` });

/** Whether a cell says nothing: empty, "not stated", "unknown", "n/a", "?", a dash. */
export function notStated(text: string | undefined): boolean {
  return /^\s*(|not (stated|given|reported|published)\b.*|unstated|unknown|n\/?a|\?|-|–|—)\s*$/i.test(text ?? '');
}

/** "2,048" as 2048 (a thousands separator, not a list). */
const withoutThousands = (text: string) => text.replace(/(\d),(?=\d{3}\b)/g, '$1');

/** A number with an optional k (×1024, as sequence lengths are written: `2k`, `4K`, `1.5k`). */
const SIZE = String.raw`(\d+(?:\.\d+)?)\s*(k)?\b`;
const sized = (digits: string, k: string | undefined) => Math.round(Number(digits) * (k ? 1024 : 1));

/** The upper end of a range `512-2048`, `512–2k`, `1 to 8`, or the bound of `up to 1024`, `max 512`, `≤ 512`; undefined if the text is neither. */
function upperBound(text: string): number | undefined {
  const range = new RegExp(`(?<![\\w.])${SIZE}\\s*(?:-|–|—|to|\\.\\.)\\s*${SIZE}`, 'i').exec(text);
  // A range rises (`512-2048`); a falling pair is something else (a date, a model's version).
  if (range && sized(range[3]!, range[4]) > sized(range[1]!, range[2])) return sized(range[3]!, range[4]);
  const bound = new RegExp(`(?:up to|max(?:imum)?\\.?|at most|<=|≤|<)\\s*[:=]?\\s*${SIZE}`, 'i').exec(text);
  return bound ? sized(bound[1]!, bound[2]) : undefined;
}

export interface Checkpointing {
  readonly on: boolean;
  /** The checkpointed activations are moved to the CPU (torchtune's activation offloading, Unsloth's "unsloth" checkpointing). */
  readonly offload: boolean;
}

const CHECKPOINT_ON = /^(on|yes|y|true|enabled?|used|1|✓|✔|☑|✅)$/;
const CHECKPOINT_OFF = /^(off|no|n|false|disabled?|none|0|✗|✘|×|❌|without)$/;

/**
 * Activation (gradient) checkpointing: `on`, `yes`, `true`, `enabled`, `✓`, `on (config default)`,
 * `gradient checkpointing`, `on + activation offload`, `unsloth` (Unsloth's offloaded checkpointing);
 * `off`, `no`, `false`, `✗`, `gradient checkpointing off`.
 */
export function checkpointingOf(text: string | undefined): Reading<Checkpointing> {
  if (notStated(text)) return undefined;
  const t = text!.trim().toLowerCase();
  if (/selective|partial|every \d|some layers/.test(t)) return unread('grad_ckpt', text!, 'checkpointing of some layers only is not modelled');
  const word = t.split(/[\s(,;:+/=]+/).find((w) => w !== '') ?? '';
  const offload = /offload|unsloth/.test(t.replace(/\b(no|without)\s+(activation |cpu )?offload\w*/g, ''));
  if (CHECKPOINT_OFF.test(word)) return { on: false, offload: false };
  if (CHECKPOINT_ON.test(word)) return { on: true, offload };
  if (/checkpoint|\bgc\b|unsloth|offload/.test(t)) {
    const off = /\b(off|false|disabled|not used)\b|\b(no|without)\s+(gradient |activation )?checkpoint/.test(t);
    return off ? { on: false, offload: false } : { on: true, offload };
  }
  return unread('grad_ckpt', text!);
}

/** The frozen base weights' storage when quantized. */
export interface Quantized {
  readonly bits: 4 | 8;
  readonly doubleQuant: boolean;
}

/**
 * Quantization of the base weights, from the `quant` cell, or where it says nothing from the method
 * and precision (`QLoRA`, `QDoRA`: 4-bit; `LoRA 8-bit`) or a pre-quantized model's name. NF4 is read
 * with double quantization (the QLoRA recipe's and torchao's NF4), other 4-bit texts without (the
 * larger storage of the two).
 * 'none': 16- or 32-bit weights, which the precision decides.
 */
export function quantization(quant: string | undefined, method = '', precision = '', model = ''): Reading<Quantized | 'none'> {
  const stated = !notStated(quant);
  // A pre-quantized checkpoint's name (`unsloth/llama-3-8b-bnb-4bit`, `TheBloke/Llama-2-7B-GPTQ`) says it too.
  const text = stated ? quant! : `${method} ${precision} ${/bnb|gptq|awq|\d[-_]?bit/i.test(model) ? model : ''}`.trim();
  const t = text.toLowerCase();
  const qloraMethod = /\bq-?(lora|dora)\b/i.test(method);
  const noDouble = /(no|without) double|double[_ ]?quant\w*\s*[=:]\s*false/.test(t);
  const doubleQuant = (/nf4/.test(t) || /double[- _]?quant|nested/.test(t)) && !noDouble;
  if (/fp8|float8|hqq|gguf|eetq|\b[1-3][- ]?bits?\b|int[23]\b/.test(t)) return unread(stated ? 'quant' : 'method, precision and model', text, 'this quantization is not modelled (4- and 8-bit only)');
  const bits = /(\d+)[- ]?bits?\b/.exec(t)?.[1] ?? /\bint(4|8)\b/.exec(t)?.[1] ?? (stated ? /^\s*(4|8|16|32)\s*$/.exec(t)?.[1] : undefined);
  if (bits === '4' || (bits === undefined && /nf4|fp4|gptq|awq|bnb[- _]?4|\bq-?lora\b/.test(t))) return { bits: 4, doubleQuant };
  if (bits === '8' || (bits === undefined && /llm\.int8|bnb[- _]?8/.test(t))) return { bits: 8, doubleQuant: false };
  if (!stated) return qloraMethod ? { bits: 4, doubleQuant: false } : undefined;
  const word = t.split(/[\s(,;:/]+/).find((w) => w !== '') ?? '';
  if (bits === '16' || bits === '32' || /^(none|no|not|off|false|unquantized|native|full|(b?f|fp|bfloat|float)(16|32))$/.test(word)) {
    return qloraMethod ? unread('quant', text, `contradicts the method "${method}" (4-bit)`) : 'none';
  }
  return unread('quant', text);
}

export interface Optimizer {
  readonly state: OptimizerState;
  readonly paged: boolean;
  /** torchtune's optimizer_in_bwd: each gradient is applied and freed as it is made. */
  readonly inBackward: boolean;
  /** How AdamW steps where the text says (optimizerState.ts's OptimizerStep): fused (`adamw_torch_fused`, `AdamW (fused)`, FusedAdam, bitsandbytes'), or per tensor (`adamw_hf`, transformers' own AdamW). */
  readonly step?: 'fused' | 'per-tensor';
  /** GaLore's optimizers (`galore_adamw_8bit`, `GaLore AdamW (rank 128)`): the state is over the projected gradients. */
  readonly galore?: { readonly rank?: number; readonly layerwise: boolean };
}

/**
 * The optimizer as tools name it: `AdamW`, `adamw_torch_fused`, `FusedAdam`, `paged_adamw_8bit`,
 * `adamw_bnb_8bit`, `8-bit Adam`, `bnb PagedAdamW`, `Adafactor`, `SGD`, `SGD (momentum 0.9)`, `Lion`,
 * `RMSprop`, GaLore's (`galore_adamw_8bit`, `GaLore AdamW layerwise`), `Lion 8-bit`, `LOMO`, `AdaLomo`,
 * `AdEMAMix`, `Adam-mini`, `Sophia`, `schedule-free AdamW`, torchao's `AdamW 4-bit`. Optimizers whose
 * state the estimator does not size (Shampoo, SOAP, CAME, APOLLO, Q-GaLore) are unread.
 */
export function optimizerOf(text: string | undefined): Reading<Optimizer> {
  if (notStated(text)) return undefined;
  const t = text!.toLowerCase();
  const paged = /paged/.test(t);
  const inBackward = /optimizer[_ -]in[_ -](bwd|backward)|in_bwd/.test(t);
  // transformers' galore_adamw, galore_adamw_8bit, galore_adafactor (each also _layerwise): AdamW's, 8-bit AdamW's or Adafactor's state over the projections.
  if (/galore/.test(t) && !/q-?galore/.test(t)) {
    const rank = /\b(?:r|rank)\s*[=:]?\s*(\d+)/.exec(t)?.[1];
    const layerwise = /layer-?wise|per-?layer/.test(t);
    const state = /adafactor/.test(t) ? 'adafactor' : /8[- _]?bit/.test(t) ? 'adamw-8bit' : 'adamw';
    return { state, paged, inBackward: inBackward || layerwise, galore: { ...(rank ? { rank: Number(rank) } : {}), layerwise } };
  }
  const notModelled = /shampoo|soap|\bcame\b|apollo/.exec(t);
  if (notModelled) return unread('optimizer', text!, `${notModelled[0]}'s state is not modelled`);
  const eightBit = /8[- _]?bit/.test(t);
  // LOMO fuses each update into the backward and keeps no state; AdaLomo keeps Adafactor's factored moments.
  if (/adalomo/.test(t)) return { state: 'adafactor', paged, inBackward: true };
  if (/\blomo\b/.test(t)) return { state: 'sgd', paged, inBackward: true };
  // Three full states: AdEMAMix's two averages and second moment, GrokAdamW's.
  if (/ademamix|grok[_ -]?adamw/.test(t)) return { state: eightBit ? 'ademamix-8bit' : 'ademamix', paged, inBackward };
  // One state the parameter's size: Lion's, SGD's and Muon's momentum, RMSprop's square average, Adagrad's sum, Adam-mini's first moment (its second is one a block), schedule-free SGD's z.
  if (/(?<![a-z])lion|rmsprop|adagrad|muon|adam[_ -]?mini|schedule[_ -]?free[_ -]?sgd/.test(t)) return { state: eightBit ? 'momentum-8bit' : 'momentum', paged, inBackward };
  // Two full states: Sophia's momentum and Hessian estimate, Adadelta's two averages, schedule-free AdamW's z and second moment.
  if (/sophia|adadelta|schedule[_ -]?free/.test(t)) return { state: 'adamw', paged, inBackward };
  // torchao's 4-bit AdamW: two 4-bit states with a scale per 128.
  if (/4[- _]?bit/.test(t) && /adam|optim/.test(t)) return { state: 'adamw-4bit', paged, inBackward };
  if (/\bsgd\b/.test(t)) {
    const momentum = /momentum|nesterov/.test(t) && !/(no|without) momentum|momentum\s*[=:]?\s*0(?:\.0+)?(?![\d.])/.test(t);
    return { state: momentum ? 'momentum' : 'sgd', paged, inBackward };
  }
  if (/adafactor/.test(t)) {
    // With beta1 Adafactor also keeps a full first moment, which the estimator's Adafactor does not.
    if (/momentum|beta1\s*[=:]?\s*0?\.\d*[1-9]/.test(t)) return unread('optimizer', text!, "Adafactor with momentum (beta1) keeps a full state that is not modelled");
    return { state: 'adafactor', paged, inBackward };
  }
  // LoRA-FA's optimizer (PEFT's create_lorafa_optimizer) is AdamW over the trainable B matrices.
  if (/adam|lora-?fa/.test(t)) {
    if (/8[- _]?bit/.test(t)) return { state: 'adamw-8bit', paged, inBackward };
    const step = /fused|bnb|bitsandbytes|paged|32[- _]?bit/.test(t) ? 'fused' : /adamw_hf|transformers'? adamw/.test(t) ? 'per-tensor' : undefined;
    return { state: 'adamw', paged, inBackward, ...(step ? { step } : {}) };
  }
  return unread('optimizer', text!);
}

export interface Precision {
  /** The weights' storage when not quantized: fp32 (also under autocast) or 16-bit. */
  readonly weights: 'fp32' | '16-bit';
  /** Autocast mixed precision: fp32 weights, 16-bit compute. */
  readonly autocast: boolean;
}

/**
 * Training precision: `bf16`, `fp16`, `pure bf16`, `bf16 weights (no AMP)` (16-bit weights);
 * `bf16 mixed`, `amp fp16`, `mixed precision`, `fp16 mixed (AMP)` (autocast over fp32 weights);
 * `fp32`, `fp32 (no AMP)`, `tf32`, `full precision` (fp32). FP8 is unread.
 */
export function precisionOf(text: string | undefined): Reading<Precision> {
  if (notStated(text)) return undefined;
  const t = text!.toLowerCase();
  if (/fp8|float8|\bte\b|transformer engine/.test(t)) return unread('precision', text!, 'FP8 training is not modelled');
  // "no AMP", "without bf16", "AMP off", "fp16=False": what the row says it did not use.
  const used = t.replace(/\b(no|without|not)\s+[\w-]+/g, ' ').replace(/\b[\w-]+\s*(=\s*false|\s(off|disabled))\b/g, ' ');
  if (/mixed|\bamp\b|autocast|master/.test(used)) return { weights: 'fp32', autocast: true };
  if (/bf16|bfloat16|fp16|float16|\bhalf\b|16[- ]?bits?\b|^\s*16\s*$/.test(used)) return { weights: '16-bit', autocast: false };
  if (/fp32|float32|tf32|32[- ]?bits?\b|full precision|single precision|^\s*32\s*$/.test(used)) return { weights: 'fp32', autocast: false };
  // A quantization written in the precision cell (`nf4`, `4-bit`, `int8`) gives no compute dtype: unstated here, read by quantization().
  if (/nf4|fp4|\b[48][- ]?bits?\b|\bint[48]\b/.test(used)) return undefined;
  return unread('precision', text!);
}

export interface Batch {
  readonly batch: number;
  /** Micro-batches per optimizer step, when the cell gives them. */
  readonly accumulation?: number;
}

/**
 * The per-GPU (micro-)batch: `4`, `bs=4`, `4 (×8 accum)`, `4x8` (4 per step, 8 accumulated: an
 * unlabelled second factor is read as accumulation, the larger estimate), `global 64, 8 per GPU`,
 * `1-8` (the upper end). A batch in tokens, or only a global batch, is unread.
 */
export function batchOf(text: string | undefined): Reading<Batch> {
  if (notStated(text) || /^\s*auto/i.test(text!)) return undefined;
  // A global batch given beside the per-GPU one (`16 (global 128)`) is set aside.
  const t = withoutThousands(text!).toLowerCase().replace(/\([^)]*\b(global|total|effective)\b[^)]*\)/g, ' ');
  if (/tokens?\b/.test(t)) return unread('batch_per_gpu', text!, 'a batch in tokens is not a number of samples');
  const perGpu = /(\d+)\s*(?:per|\/|a)\s*(?:gpu|device)/.exec(t);
  const accumulation = /(?:accum\w*|grad(?:ient)?[_ ]?acc\w*|\bga|\bgas)\s*(?:steps?)?\s*[=:]?\s*(\d+)/.exec(t) ?? /[×x*]\s*(\d+)\s*(?:accum|ga\b|grad)/.exec(t) ?? /(\d+)\s*(?:accum|ga\b|grad)/.exec(t);
  // `4x8`: 8 accumulation steps, unless the 8 are GPUs or nodes (`4 × 8 GPUs`).
  const product = /^\s*(\d+)\s*\(?\s*[×x*]\s*(\d+)(?!\d|\s*(gpus?|devices?|nodes?|cards?|ranks?)\b)/.exec(t);
  const withAccumulation = (batch: number, steps: string | undefined): Batch => (steps && Number(steps) > 1 ? { batch, accumulation: Number(steps) } : { batch });
  if (perGpu) return withAccumulation(Number(perGpu[1]), accumulation?.[1]);
  if (/global|total|effective/.test(t)) return unread('batch_per_gpu', text!, 'only a global batch is given');
  if (product) return withAccumulation(Number(product[1]), accumulation?.[1] ?? product[2]);
  const bound = upperBound(t);
  const first = /(\d+)/.exec(t);
  if (bound === undefined && !first) return unread('batch_per_gpu', text!);
  return withAccumulation(bound ?? Number(first![1]), accumulation?.[1]);
}

/**
 * Tokens per sample: `2048`, `2,048`, `2k`, `4K`, `2048 (packed)`, `up to 1024`, `max 512`, and the
 * upper end of a range (`512-2048`: samples are padded to the longest of the batch, at most the
 * upper end, so it bounds the peak). An average alone is unread.
 */
export function sequenceOf(text: string | undefined): Reading<number> {
  if (notStated(text)) return undefined;
  const t = withoutThousands(text!);
  const bound = upperBound(t);
  if (bound !== undefined) return bound;
  if (/\b(avg|average|mean|median)\b/i.test(t)) return unread('seq_len', text!, 'an average length does not bound the padded batch');
  if (/\d\s*[/+]\s*\d/.test(t)) return unread('seq_len', text!, 'two lengths (prompt and answer, or source and target)');
  const first = new RegExp(`(?<![\\w.-])${SIZE}`, 'i').exec(t);
  if (first) return sized(first[1]!, first[2]);
  return /variable|dynamic/i.test(t) ? undefined : unread('seq_len', text!);
}

/** LoRA's rank: `16`, `r=16`, `rank 16`, `64 (alpha 128)`. */
export function rankOf(text: string | undefined): Reading<number> {
  if (notStated(text)) return undefined;
  const match = /(?:^|\b(?:r|rank)\s*[=:]?\s*)(\d+)/i.exec(text!.trim());
  return match ? Number(match[1]) : unread('lora_rank', text!);
}

/** The PEFT methods the evaluation reads by name, as PEFT's PeftType spells them. */
export type PeftName = 'prompttuning' | 'prefixtuning' | 'ptuning' | 'ia3';

/** TRL's preference trainers the fine-tuning model counts (fineTuning.ts's `preference`); SimPO is CPO's loss. */
export type PreferenceName = 'dpo' | 'kto' | 'orpo' | 'cpo';

export type Method = (
  /**
   * Every parameter trained, or with `galore` GaLore's projected gradients (`rank` when the method
   * names it), or with `trainedLayers` only the last layers (freeze tuning: `Freeze (last 2 layers)`).
   */
  | { readonly kind: 'full'; readonly galore?: { readonly rank?: number; readonly layerwise: boolean }; readonly trainedLayers?: number }
  /** LoRA and its variants that train the same A and B (LoRA+, rsLoRA, PiSSA, OLoRA) or add DoRA's magnitude; `rank` when the method names it (`LoRA r=16`). */
  | { readonly kind: 'lora'; readonly dora: boolean; readonly rank?: number }
  /** Another adapter, sized by the trainable parameters the row publishes (`peft` when known by name). */
  | { readonly kind: 'adapter'; readonly name: string; readonly peft?: PeftName }
) & {
  /** Preference training (`DPO (LoRA)`, `ORPO full`): what it trains is the rest of the name, full where nothing else is named. */
  readonly preference?: PreferenceName;
};

const LORA_NAMES = /^(q-?)?(lora|dora)(\+|\+dora|-?plus)?$|^(rs|pi|o)?lora$|^pissa$/;
const FULL_NAMES = /^(full|fft|full-?ft|full-?param\w*|full-?fine-?tun\w*|full_finetun\w*)$/;
const PEFT_NAMES: ReadonlyArray<[RegExp, PeftName]> = [
  [/^(prompt[-_ ]?tuning|prompt|soft[-_ ]?prompt\w*)$/, 'prompttuning'],
  // P-Tuning v2 is deep prompt tuning: PEFT's prefix tuning.
  [/^(prefix[-_ ]?tuning|prefix|p-?tuning[-_ ]?v2)$/, 'prefixtuning'],
  [/^p[-_]?tuning$/, 'ptuning'],
  [/^ia3$/, 'ia3'],
];

/**
 * The fine-tuning method a row names: `full`, `Full FT`, `full-parameter`, `FFT`; `LoRA`, `LoRA r=16`,
 * `QLoRA (4-bit)`, `LoRA+`, `DoRA`, `QDoRA`, `LoRA+DoRA`; `PROMPT_TUNING`, `prefix tuning`, `(IA)^3`,
 * other adapters by name; preference training over any of them (`DPO (LoRA)`, `ORPO`, `SimPO full`).
 * GaLore (`GaLore r=128`, `GaLore layerwise`) and freeze tuning of the last layers (`Freeze (last 2 layers)`)
 * train a model fully in their own ways. Methods whose memory differs in ways not modelled (freeze tuning
 * with an unstated count, LISA, BAdam, Q-GaLore; GaLore or freezing under a preference trainer; PPO and
 * GRPO, whose generation lengths rows do not give) are unread.
 */
export function methodOf(method: string | undefined): Reading<Method> {
  if (notStated(method)) return undefined;
  const m = method!
    .toLowerCase()
    .replace(/\(ia\)\s*(\^\s*3|³|3)|ia³/g, 'ia3')
    .replace(/\bfull\s+(ft|fine[- ]?tun\w*|param\w*)/, 'full')
    .replace(/\b(prompt|prefix)\s+tuning/, '$1-tuning')
    .replace(/\bp-?tuning\s*v2\b/, 'p-tuning-v2')
    .replace(/\blora\s*\+\s*dora\b/, 'lora+dora')
    .replace(/^sft\b[\s:(-]*/, '')
    .trim();
  const name = m.split(/[\s(),;:]+/).find((w) => w !== '') ?? '';
  // GaLore (and its layerwise variant) trains every parameter with the targeted matrices' gradients projected; Q-GaLore's quantized weights are not modelled.
  if (/\bgalore\b/.test(m) && !/\bq-?galore\b/.test(m) && !/\b(dpo|kto|orpo|cpo|simpo|ppo|grpo)\b/.test(m)) {
    const rank = /\b(?:r|rank)\s*[=:]?\s*(\d+)/.exec(m)?.[1];
    return { kind: 'full', galore: { ...(rank ? { rank: Number(rank) } : {}), layerwise: /layer-?wise|per-?layer/.test(m) } };
  }
  // Freeze tuning trains the last layers only (LLaMA-Factory's freeze_trainable_layers); the count must be stated.
  if (/^(freeze|freezing|frozen|partial)\b|freeze[- _]tun|last \d+ layers/.test(m) && !/\b(dpo|kto|orpo|cpo|simpo|ppo|grpo)\b/.test(m)) {
    const layers = Number(/(?:last|top)\s+(\d+)\s+(?:transformer\s+|decoder\s+)?(?:layers|blocks)\b/.exec(m)?.[1] ?? /freeze_trainable_layers\s*[=:]\s*(\d+)/.exec(m)?.[1]);
    return layers > 0 ? { kind: 'full', trainedLayers: layers } : unread('method', method!, 'freeze tuning without the number of layers it trains');
  }
  if (/^(freeze|freezing|frozen|partial)\b|freeze[- _]tun|\b(lisa|badam|galore)\b/.test(m)) return unread('method', method!, 'training a subset of layers or a projected optimizer state is not modelled');
  if (/\b(ppo|rlhf|grpo|rloo)\b/.test(m)) return unread('method', method!, 'RL training generates completions and holds other models (reward, value), not modelled from a row');
  const preference = /\b(dpo|kto|orpo|cpo|simpo)\b/.exec(m)?.[1];
  if (preference) {
    const trainer: PreferenceName = preference === 'simpo' ? 'cpo' : (preference as PreferenceName);
    // What it trains is the rest of the name; `SFT + DPO` trains the model fully.
    const rest = method!.replace(new RegExp(`\\b(${preference}|sft)\\b`, 'gi'), ' ').replace(/[()+,;:]/g, ' ').trim();
    const base = rest === '' ? { kind: 'full' as const } : methodOf(rest);
    if (isUnread(base)) return unread('method', method!, base.unread.replace(/^method "[^"]*":?\s*/, ''));
    return base === undefined ? base : { ...base, preference: trainer };
  }
  if (FULL_NAMES.test(name)) return { kind: 'full' };
  if (LORA_NAMES.test(name)) {
    const rank = /\b(?:r|rank)\s*[=:]?\s*(\d+)/.exec(m)?.[1];
    return { kind: 'lora', dora: /dora/.test(m), ...(rank ? { rank: Number(rank) } : {}) };
  }
  const peft = PEFT_NAMES.find(([pattern]) => pattern.test(name))?.[1];
  return { kind: 'adapter', name: method!.trim(), ...(peft ? { peft } : {}) };
}

/** The trainable parameters a row's notes publish: `trainable params 9175040`, `trainable params: 4,194,304`, `trainable params 4.19M`. */
export function trainableParamsOf(notes: string | undefined): number | undefined {
  const match = /trainable param(?:eter)?s?\s*[:=]?\s*([\d.]+)\s*([kmb])?\b/i.exec(withoutThousands(notes ?? ''));
  if (!match) return undefined;
  const scale = { k: 1e3, m: 1e6, b: 1e9 }[(match[2] ?? '').toLowerCase() as 'k' | 'm' | 'b'] ?? 1;
  return Math.round(Number(match[1]) * scale);
}

/**
 * A fused loss kernel a row's text names, read as the analysis reads a script (fineTuningSetup.ts's
 * `fusedLoss`): Unsloth's cross-entropy (`inPlace`) where the training ran with Unsloth, Liger's fused
 * linear cross-entropy (`linear`). A model published under Unsloth's name (`unsloth/llama-3-8b-bnb-4bit`)
 * says nothing of how it was trained; "no Liger" and "without Unsloth" say not.
 */
export function fusedLossOf(text: string | undefined): 'inPlace' | 'linear' | undefined {
  const t = (text ?? '').toLowerCase().replace(/unsloth\/[\w.-]+/g, '').replace(/\b(no|without|w\/o)\s+(unsloth|liger)\w*/g, '');
  return /unsloth/.test(t) ? 'inPlace' : /liger/.test(t) ? 'linear' : undefined;
}

/** Prompt and prefix tuning's virtual tokens when the notes give them: `num_virtual_tokens=20`, `20 virtual tokens`. */
export function virtualTokensOf(notes: string | undefined): number | undefined {
  const match = /num_virtual_tokens\s*[=:]?\s*(\d+)/i.exec(notes ?? '') ?? /(\d+)\s+virtual tokens/i.exec(notes ?? '');
  return match ? Number(match[1]) : undefined;
}

/** Memory of cards a text may name without their size: one size, or the sizes a card is sold in (A100: 40 or 80 GB). */
const CARD_GIB: ReadonlyArray<[RegExp, readonly number[]]> = [
  [/h100\s*nvl/i, [94]],
  [/h200/i, [141]],
  [/h100|h800/i, [80]],
  [/l40s?\b|a40\b|a6000|rtx\s*6000\s*ada/i, [48]],
  [/(rtx\s*)?(3090|4090)|a10g?\b|a5000|\bl4\b/i, [24]],
  [/\bt4\b|4080|a4000/i, [16]],
  [/a100|a800/i, [40, 80]],
  [/v100/i, [16, 32]],
];

/** The sizes a `gpu` text allows: its stated size (`A100 80GB`, `A100-SXM4-80GB`, `H100 80G`, `24GB GPUs`), or its card's (`RTX 3090`; `A100`: 40 and 80). */
function gpuSizes(text: string | undefined): readonly number[] {
  // Laptop parts have less memory than the desktop card of the same name.
  if (/laptop|mobile|max-q/i.test(text ?? '') && !/\d\s*G/i.test(text ?? '')) return [];
  const stated = /(?<![a-z\d.])(\d+(?:\.\d+)?)\s*G(?:i?B)?\b/i.exec(text ?? '');
  if (stated) return [Number(stated[1])];
  return CARD_GIB.find(([pattern]) => pattern.test(text ?? ''))?.[1] ?? [];
}

/** The GPU's memory in GiB when the text fixes it: a stated size or a card sold in one size; undefined for `A100`, `V100`, `not stated`. */
export function gpuMemory(text: string | undefined): number | undefined {
  const sizes = gpuSizes(text);
  return sizes.length === 1 ? sizes[0] : undefined;
}

/** The largest memory the GPU text allows (`A100`: 80): a published out-of-memory run is estimated out of memory only above it. */
export function largestGpuMemory(text: string | undefined): number | undefined {
  const sizes = gpuSizes(text);
  return sizes.length ? Math.max(...sizes) : undefined;
}

/** GPUs the run used: `8`, `8 (FSDP)`, or from the gpu text (`8x A100`, `2 × RTX 3090`); one when neither says. */
export function gpuCount(numGpus: string | undefined, gpu?: string): Reading<number> {
  if (!notStated(numGpus)) {
    const nodes = /(\d+)\s*(?:nodes?\s*)?[x×*]\s*(\d+)\s*(?:gpus?)?\s*$/i.exec(numGpus!.replace(/\s*\([^)]*\)\s*$/, ''));
    if (nodes) return Number(nodes[1]) * Number(nodes[2]);
    if (/^\s*single\b/i.test(numGpus!)) return 1;
    const first = /^\s*(\d+)/.exec(numGpus!);
    return first && Number(first[1]) > 0 ? Number(first[1]) : unread('num_gpus', numGpus!);
  }
  const many = /(\d+)\s*[x×*]\s*[a-z]/i.exec(gpu ?? '');
  return many ? Number(many[1]) : 1;
}

/** A measured figure in GiB (`14.6`, `~14.6 GB`, `14,950 MiB`, `72-80`: the upper end), 'oom' for a published out-of-memory result, undefined when empty. */
export function measuredOf(text: string | undefined): Reading<number | 'oom'> {
  if (notStated(text)) return undefined;
  const t = withoutThousands(text!);
  if (/^\s*(\bOOM\b|out of memory)/i.test(t)) return 'oom';
  if (/\bOOM\b|out of memory/i.test(t)) return unread('measured_gb', text!, 'a figure and an out-of-memory result');
  if (/^\s*(>|≥|<|≤|more than|less than|at least|at most)|\d\s*\+/i.test(t)) return unread('measured_gb', text!, 'a bound is not a figure');
  if (/\d\s*\/\s*\d/.test(t)) return unread('measured_gb', text!, 'two figures');
  const range = /(\d+(?:\.\d+)?)\s*(?:-|–|to)\s*(\d+(?:\.\d+)?)/.exec(t);
  const value = range ? range[2] : /(\d+(?:\.\d+)?)/.exec(t)?.[1];
  if (value === undefined) return unread('measured_gb', text!);
  return /\bMi?B\b/i.test(t) ? Number(value) / 1024 : Number(value);
}

/**
 * A figure in decimal gigabytes (10^9 bytes): where the row says so (`/1e9`, `1000**3`, `decimal GB`), and
 * torchtune's before its GiB logging (v0.2, June 2024): its recipes' memory_stats_log printed
 * `torch.cuda.max_memory_allocated() / 1000**3` as "GB" (its April 2024 tutorials, its May 2024 README table).
 */
export function decimalGigabytes(row: Readonly<Record<string, string>>): boolean {
  const said = `${row.measure_kind ?? ''} ${row.notes ?? ''}`;
  if (/\/\s*1e9|1000\s*\*\*\s*3|10\^9|decimal (GB|gigabytes)/i.test(said)) return true;
  return /torchtune/i.test(row.source ?? '') && /\(May 2024|docs tutorials/.test(row.source ?? '');
}

/** The row's measured figure in GiB (decimal gigabytes converted), 'oom', undefined or why it is unread. */
export function measuredGiB(row: Readonly<Record<string, string>>): Reading<number | 'oom'> {
  const measured = measuredOf(row.measured_gb);
  return typeof measured === 'number' && decimalGigabytes(row) ? (measured * 1e9) / 1024 ** 3 : measured;
}
