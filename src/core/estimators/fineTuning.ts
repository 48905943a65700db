import { crossAttentionBytes, savedBytesPerTokenLayer, type LayerActivationOptions } from './savedActivations';
import { moeLinears, type MoeShape } from './moe';
import { moeBlockBytesPerToken } from './moeActivations';
import { optimizerBytes, type OptimizerState, type OptimizerStep } from './optimizerState';
import { galoreRefreshBytes, galoreStateBytes, galoreTargeted, layerModulePaths, type GaloreJob } from './galore';

/**
 * What fine-tuning a pretrained Transformer holds on one GPU, as a physical model of its tensors
 * (docs/fine-tuning.md): the frozen base weights at the precision they are stored in, the trainable
 * parameters (all of them, or a PEFT adapter's) with their gradients and optimizer state, the
 * activations the backward pass needs (with or without gradient checkpointing), the logits over the
 * vocabulary with the loss's fp32 copies, the CUDA context and the caching allocator's reserve.
 *
 * Nothing here is fitted to a measurement: every term is a count of elements times bytes, with the
 * library behaviour it follows written beside it. It never throws; a shape it cannot use gives a note.
 */

/** The shape of a Transformer as its config.json gives it. */
export interface TransformerShape {
  readonly hidden: number;
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly intermediate: number;
  readonly vocab: number;
  /** The input embedding is also the output projection. */
  readonly tiedEmbeddings: boolean;
  /** SwiGLU-style MLP (gate, up, down) rather than two linears. */
  readonly gatedMlp: boolean;
  /** Linear layers carry biases (BERT, GPT-2). */
  readonly bias: boolean;
  /** Learned position embeddings (BERT): rows of width `hidden`. */
  readonly positions: number;
  /** What the output head predicts: every token over the vocabulary (a causal LM), or `labels` classes from the first token. */
  /** What the model puts on its last layer: vocabulary logits, a pooled classifier, or nothing that holds memory (a base model's hidden states, a per-token classifier's few logits). */
  readonly head: { readonly kind: 'lm' } | { readonly kind: 'classifier'; readonly labels: number } | { readonly kind: 'none' };
  /** Dropout after attention and MLP (BERT's 0.1) keeps a 1-byte mask per element; Llama has none. */
  readonly dropout: boolean;
  /** RMSNorm that upcasts its input to fp32 (Llama, T5) rather than LayerNorm. */
  readonly rmsNorm?: boolean;
  /** Encoder-decoder (T5): `layers` is the encoder's count, this the decoder's (each with a cross-attention). */
  readonly decoderLayers?: number;
  /** One fused query-key-value linear (BLOOM's query_key_value). */
  readonly fusedQkv?: boolean;
  /** Attention that transformers implements only eagerly (T5's position bias, BLOOM's ALiBi): the probabilities are kept. */
  readonly eagerOnly?: boolean;
  /** Module names as T5 gives them (q, k, v, o, wi_0, wi_1, wo). */
  readonly t5Names?: boolean;
  /** A LayerNorm right after the embeddings (BLOOM's word_embeddings_layernorm). */
  readonly embeddingNorm?: boolean;
  /** Biases on the query, key and value projections only (Qwen2-MoE's attention). */
  readonly qkvBias?: boolean;
  /** Mixture of experts (moe.ts): every layer's MLP is routed experts (and a shared one) instead of one dense MLP. */
  readonly moe?: MoeShape;
  /** Attention and MLP side by side on the layer's input (Falcon, GPT-NeoX's parallel residual), behind one shared norm or two (savedActivations.ts). */
  readonly parallelNorms?: 1 | 2;
  /** One fused gate-and-up linear (Phi-3's gate_up_proj, 2 x intermediate wide). */
  readonly fusedGateUp?: boolean;
  /** Norms on the attention's and the MLP's outputs, beside the two before them (Gemma-2: four a layer) or instead of them (OLMo-2). */
  readonly postNorms?: 'extra' | 'instead';
  /** RMS norms over the projected queries and keys: OLMo-2's q_norm and k_norm over q and k's widths, Qwen3's over one head's (`perHead`). */
  readonly qkNorms?: boolean | 'perHead';
  /** Gemma's RMSNorm: (1 + weight) applied in fp32, so a trained weight keeps the fp32 normalized tensor. */
  readonly normWeightFp32?: boolean;
  /** Norms without weight or bias (OLMo's LayerNorm): no norm parameters at all. */
  readonly parameterFreeNorms?: boolean;
  /** The MLP's GELU is transformers' tanh formula in Python operations (savedActivations.ts, LayerShape.tanhGelu). */
  readonly tanhGelu?: 'new' | 'fast';
  /** The logits are soft-capped (Gemma-2's final_logit_softcapping: tanh between two scalings): tanh keeps its output, one more logits-sized tensor. */
  readonly logitSoftcap?: boolean;
  /**
   * Parameters the model holds that a text batch never runs (Gemma-3's vision tower and multimodal
   * projector): loaded with the weights, but no gradient reaches them, so no optimizer state either.
   */
  readonly heldParams?: number;
}

/** One parameter tensor of the architecture: a linear (`in` -> `out`), an embedding, a vector, or parameters held but never run. */
export interface ParameterTensor {
  readonly name: string;
  readonly rows: number;
  readonly cols: number;
  readonly kind: 'linear' | 'embedding' | 'vector' | 'held';
  /** Repeated once per layer. */
  readonly perLayer: boolean;
  /** Repeated once per decoder layer of an encoder-decoder. */
  readonly decoder?: boolean;
  /** One per expert of a mixture-of-experts layer: this many per layer. */
  readonly experts?: number;
}

export type AdapterMethod = 'lora' | 'ia3' | 'other';

export interface FineTuningAdapter {
  readonly method: AdapterMethod;
  readonly rank?: number;
  /** Module names (`q_proj`), `"all-linear"`, or undefined for PEFT's default (the attention's query and value). */
  readonly targetModules?: string | readonly string[];
  readonly dora?: boolean;
  /** For methods whose parameters are not computed here (IA3, prompt tuning...): how many there are. */
  readonly trainableParams?: number;
  /** IA3's feedforward modules (scaled on their input); undefined: PEFT's default for the architecture. */
  readonly feedforwardModules?: string | readonly string[];
}

/** PEFT's IA3 defaults (TRANSFORMERS_MODELS_TO_IA3_TARGET_MODULES_MAPPING and its feedforward twin), by the architecture's names. */
export function ia3Defaults(shape: TransformerShape): { readonly targets: readonly string[]; readonly feedforward: readonly string[] } {
  if (shape.t5Names) return { targets: ['k', 'v', 'wo'], feedforward: ['wo'] };
  if (shape.fusedQkv) return { targets: ['query_key_value', 'dense_4h_to_h'], feedforward: ['dense_4h_to_h'] };
  if (shape.bias && shape.positions > 0) return { targets: ['key', 'value', 'output.dense'], feedforward: ['output.dense'] };
  return { targets: ['k_proj', 'v_proj', 'down_proj'], feedforward: ['down_proj'] };
}

export type { OptimizerState } from './optimizerState';

export interface FineTuningJob {
  readonly shape: TransformerShape;
  readonly batch: number;
  readonly seq: number;
  /** Undefined: full fine-tuning. */
  readonly adapter?: FineTuningAdapter;
  /** Bits of the stored base weights: 4 (bitsandbytes/torchao NF4 or FP4), 8 (LLM.int8), 16 (bf16/fp16) or 32. */
  readonly weightBits: 4 | 8 | 16 | 32;
  readonly doubleQuant?: boolean;
  /** The dtype the forward computes in: 2 (bf16/fp16, as weights or under autocast) or 4 (fp32). */
  readonly computeBytes: 2 | 4;
  /** Autocast (bf16/fp16 mixed precision): over fp32 weights it keeps a 16-bit copy of each weight it casts until the backward used it, and the residual stream is fp32. */
  readonly autocast?: boolean;
  readonly optimizer: OptimizerState;
  /** bitsandbytes' paged optimizers: their state is in managed memory the torch allocator does not see. */
  readonly paged?: boolean;
  /** How AdamW's step runs (optimizerState.ts): `foreach` (the default) makes a temporary of one state, `per-tensor` two of the largest tensor, `fused` none. */
  readonly optimizerStep?: OptimizerStep;
  readonly checkpointing: boolean;
  /** `attn_implementation="eager"`: the attention probabilities (heads x seq per token) are kept; SDPA and flash keep none. */
  readonly eagerAttention?: boolean;
  /** More than one micro-batch per optimizer step: the gradients live through the next forward. */
  readonly accumulation?: number;
  /** `prepare_model_for_kbit_training`: the 16-bit parameters that are not quantized (embeddings, head, norms) become fp32. */
  readonly kbitPrepared?: boolean;
  /** torchtune's optimizer_in_bwd: each gradient is applied and freed as soon as it is made. */
  readonly optimizerInBackward?: boolean;
  /** Activations saved for the backward are moved to the CPU (one layer's stay on the GPU). */
  readonly activationOffload?: boolean;
  /** The loss is computed over chunks of the sequence (torchtune's CEWithChunkedOutputLoss): one chunk's fp32 copies at a time. */
  readonly chunkedLoss?: number;
  /**
   * A fused loss kernel: `inPlace` (Unsloth's cross-entropy) keeps the 16-bit logits and writes their
   * gradient over them; `linear` (Liger's fused linear cross-entropy) computes the logits a chunk of
   * tokens at a time inside the head, about vocabulary / hidden chunks, and never holds them all.
   */
  readonly fusedLoss?: 'inPlace' | 'linear';
  /** The CUDA context's bytes when the measurement's source states them; else CUDA_CONTEXT_BYTES. */
  readonly contextBytes?: number;
  /** Encoder-decoder: tokens per sample on the decoder's side (the labels'); `seq` is the encoder's. */
  readonly targetSeq?: number;
  /** Bytes of the adapter's weights: 4 for PEFT (autocast_adapter_dtype keeps them fp32), the model's 2 for torchtune. */
  readonly adapterBytes?: 2 | 4;
  /** `attn_implementation="flash_attention_2"`: grouped keys and values are not expanded to every head. */
  readonly flashAttention?: boolean;
  /** False where the loop drops the model's outputs before the backward (the Trainer, torchtune); a loop that keeps `outputs` keeps the logits. */
  readonly logitsHeld?: boolean;
  /**
   * The loop keeps the model's whole output through the backward and the model is a transformers
   * decoder with use_cache on: every layer's keys and values (`past_key_values`) stay with it.
   * Transformers turns the cache off under gradient checkpointing.
   */
  readonly keyValueCacheHeld?: boolean;
  /** The model's forward returns its logits upcast to fp32 (torchtune's TransformerDecoder, transformers' Llama before 4.45): held logits take 4 bytes. */
  readonly logitsFp32?: boolean;
  /** The allocator's reserve as a share of what each step allocates and frees; RESERVE_SHARE unless given (calibration). */
  readonly reserveShare?: number;
  /** torch.compile of the model (TrainingArguments(torch_compile=True), torchtune's compile: True): fused pointwise chains keep less (savedActivations.ts). */
  readonly compiled?: boolean;
  /** PEFT's lora_dropout > 0: a dropped-out copy of each adapted module's input. */
  readonly adapterDropout?: boolean;
  /** `zero_grad()` that zeroes the gradients in place (torch before 2.0, set_to_none=False): they live through the forward. */
  readonly gradientsZeroedInPlace?: boolean;
  /**
   * Without an adapter, parameters the script froze (requires_grad=False: the encoder, the lower
   * layers): only `trainableParams` get gradients and optimizer state, and autograd records only the
   * last `recordedLayers` layers (frozen layers before the first trained one keep nothing).
   */
  readonly frozen?: { readonly trainableParams: number; readonly recordedLayers: number };
  /**
   * TRL's preference training: `batch` prompts, each with a chosen and a rejected answer run
   * together (twice the sequences). DPO's reference: a `separate` model of the same checkpoint (its
   * weights again), TRL's `default` (a frozen copy of the model without an adapter; with one, the
   * model itself with the adapter disabled: a forward without gradients), or `none` (precomputed;
   * ORPO and CPO have none, and add an NLL loss over the chosen answers). KTO: DPO's step over single
   * answers (its KL term's forward runs without gradients). GRPO: `batch` generated
   * completions, each `seq` tokens with its prompt, the logits over `completionTokens` only; its
   * reference runs before the step (only its copy, without an adapter, counts here).
   */
  readonly preference?: { readonly trainer: 'dpo' | 'kto' | 'orpo' | 'cpo' | 'grpo'; readonly reference: 'separate' | 'default' | 'none'; readonly completionTokens?: number };
  /** GaLore (galore.ts), with full fine-tuning: the targeted matrices' optimizer state is over their projected gradients. Its layerwise variant is `optimizerInBackward`. */
  readonly galore?: GaloreJob;
}

export interface FineTuningEstimate {
  /** Bytes by part; `total` is what the caching allocator has reserved at the peak, `driver` what nvidia-smi shows. */
  readonly baseWeights: number;
  readonly trainableWeights: number;
  readonly gradients: number;
  /** The gradients alive together at the step: none where each is applied in the backward (optimizer_in_bwd, LOMO, GaLore's layerwise). */
  readonly heldGradients: number;
  readonly optimizerState: number;
  /** The part of `optimizerState` in managed (paged) memory: counted by the driver, not by torch's allocator. */
  readonly pagedOptimizerState: number;
  readonly activations: number;
  readonly logits: number;
  readonly context: number;
  /** Short-lived buffers: autocast's weight copies, the optimizer step's temporaries, one layer recomputed and the backward's working set. */
  readonly transient: number;
  /** What the forward and backward allocate and free each step (activations, the layer recomputed, the backward's working set, a dequantized weight, logits), without autocast's copies: what sharding (sharding.ts) leaves per GPU as it is. */
  readonly stepWorking: number;
  /** Autocast's 16-bit copies of the weights, kept from the forward to the backward. */
  readonly autocastCopies: number;
  /** The optimizer step's temporary (torch's foreach AdamW: about one state's size). */
  readonly stepTemporary: number;
  /** Peak of the tensors the torch allocator holds (`torch.cuda.max_memory_allocated`). */
  readonly allocated: number;
  /** Peak the allocator has reserved (`max_memory_reserved`): allocated plus its reserve. */
  readonly reserved: number;
  /** What the driver shows: reserved, paged optimizer state and the CUDA context. */
  readonly driver: number;
  /** FITTED_MARGIN of the driver's figure: what the estimate adds for what the physical model does not count. */
  readonly fittedMargin: number;
  readonly trainableParams: number;
  readonly totalParams: number;
  readonly notes: readonly string[];
}

const GiB = 1024 ** 3;
/** The CUDA context and the kernels PyTorch, cuBLAS and cuDNN load: 0.3-1.3 GB on the driver's figure (README of the measurements); the middle of that range. */
export const CUDA_CONTEXT_BYTES = 0.8 * GiB;
/**
 * The caching allocator's reserve over the peak of live tensors: blocks are rounded (to 512 B, large
 * ones to 2 MiB segments) and freed blocks of one size do not always serve the next request. Weights
 * and optimizer state are allocated once, at their exact sizes; what fragments is what each step
 * allocates and frees (activations, logits, temporaries), so the reserve is a share of those.
 */
export const RESERVE_SHARE = 0.1;
/** Layer-sized tensors on the GPU with offloaded activations: the embeddings' output, the final norm's input and output, and two layer inputs in flight to or from the host. */
const OFFLOADED_RESIDENT_INPUTS = 5;
/** Bytes per logit the loss holds at the start of the backward: log-softmax's fp32 output, its gradient and its input's. */
const LOSS_BYTES = 12;
/**
 * The fitted margin the estimate adds on top of the physical model (docs/fine-tuning.md): what the
 * model does not count (library versions that keep more, allocator behaviour, load-time peaks).
 * Fitted by `npm run evaluate:llm` on the published measurements at their 90th percentile (an
 * estimate under a figure costs nine times one over it), leave one source out for the error it
 * reports; the value is the fit on all of them.
 */
export const FITTED_MARGIN = 0.1;
/** bitsandbytes 4-bit: one fp32 absmax per block of 64 weights; with double quantization an 8-bit absmax plus one fp32 per 256 blocks. */
const FOUR_BIT_CONSTANTS = { single: 4 / 64, double: 1 / 64 + 4 / (64 * 256) };
/** PEFT's default LoRA targets when target_modules is not given (its table for Llama-style and BERT models): query and value. */
const DEFAULT_TARGETS = ['q_proj', 'v_proj', 'query', 'value'];

/** Every parameter tensor, named as transformers names them in Llama-style models (BERT, BLOOM and T5 names are aliases). */
export function parameterTensors(shape: TransformerShape): ParameterTensor[] {
  const { hidden: h, heads, kvHeads, headDim, intermediate: i, vocab } = shape;
  const q = heads * headDim;
  const kv = kvHeads * headDim;
  const tensors: ParameterTensor[] = [{ name: 'embed_tokens', rows: vocab, cols: h, kind: 'embedding', perLayer: false }];
  if (shape.positions > 0) tensors.push({ name: 'position_embeddings', rows: shape.positions, cols: h, kind: 'embedding', perLayer: false });
  // A norm's weight (and LayerNorm's bias): `h` (or 2h) elements; none for OLMo's LayerNorm.
  const normSize = shape.parameterFreeNorms ? 0 : h * (shape.bias ? 2 : 1);
  const layer = (decoder: boolean) => {
    const linear = (name: string, inFeatures: number, out: number) => {
      tensors.push({ name, rows: out, cols: inFeatures, kind: 'linear', perLayer: true, ...(decoder ? { decoder } : {}) });
      if (shape.bias) tensors.push({ name: `${name}.bias`, rows: out, cols: 1, kind: 'vector', perLayer: true, ...(decoder ? { decoder } : {}) });
    };
    const attention = () => {
      if (shape.fusedQkv) linear('qkv_proj', h, q + 2 * kv);
      else {
        linear('q_proj', h, q);
        linear('k_proj', h, kv);
        linear('v_proj', h, kv);
      }
      if (shape.qkvBias && !shape.bias) tensors.push({ name: 'qkv_proj.bias', rows: q + 2 * kv, cols: 1, kind: 'vector', perLayer: true });
      linear('o_proj', q, h);
    };
    attention();
    // The decoder's cross-attention has the same projections (PEFT's names match both).
    if (decoder) attention();
    if (shape.qkNorms) tensors.push({ name: 'qk_norms', rows: shape.qkNorms === 'perHead' ? 2 * shape.headDim : q + kv, cols: 1, kind: 'vector', perLayer: true });
    if (shape.moe) for (const t of moeLinears(h, shape.moe)) tensors.push({ ...t, kind: 'linear', perLayer: true });
    else if (shape.fusedGateUp) {
      linear('gate_up_proj', h, 2 * i);
      linear('down_proj', i, h);
    } else {
      if (shape.gatedMlp) linear('gate_proj', h, i);
      linear('up_proj', h, i);
      linear('down_proj', i, h);
    }
    // Two norms per layer, three with a cross-attention; a parallel block's one or two.
    const norms = decoder ? 3 : shape.postNorms === 'extra' ? 4 : shape.parallelNorms ?? 2;
    tensors.push({ name: 'norms', rows: norms * normSize, cols: 1, kind: 'vector', perLayer: true, ...(decoder ? { decoder } : {}) });
  };
  layer(false);
  if (shape.decoderLayers) {
    layer(true);
    // T5's relative position bias: buckets x heads, in the first layer of each stack; a norm per stack (T5's final norms, BART's embedding norms).
    if (shape.t5Names) tensors.push({ name: 'relative_attention_bias', rows: 2 * 32 * heads, cols: 1, kind: 'vector', perLayer: false });
    tensors.push({ name: 'norm', rows: 2 * normSize, cols: 1, kind: 'vector', perLayer: false });
  } else tensors.push({ name: 'norm', rows: normSize * (shape.embeddingNorm ? 2 : 1), cols: 1, kind: 'vector', perLayer: false });
  if (shape.heldParams) tensors.push({ name: 'vision_tower', rows: shape.heldParams, cols: 1, kind: 'held', perLayer: false });
  if (shape.head.kind === 'lm') {
    if (!shape.tiedEmbeddings) tensors.push({ name: 'lm_head', rows: vocab, cols: h, kind: 'linear', perLayer: false });
  } else if (shape.head.kind === 'classifier') {
    tensors.push({ name: 'pooler', rows: h, cols: h, kind: 'linear', perLayer: false });
    tensors.push({ name: 'classifier', rows: shape.head.labels, cols: h, kind: 'linear', perLayer: false });
  }
  return tensors;
}

/** How many times a tensor is in the model: once, once per layer (and expert), or once per decoder layer. */
export const repeats = (shape: TransformerShape, t: ParameterTensor) => (t.perLayer ? (t.decoder ? (shape.decoderLayers ?? 0) : shape.layers) : 1) * (t.experts ?? 1);
const count = (shape: TransformerShape, t: ParameterTensor) => t.rows * t.cols * repeats(shape, t);

/** The names PEFT and transformers give the same projections in BERT-, BLOOM- and GPT-style models. */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  q_proj: ['q_proj', 'query', 'q', 'wq', 'q_lin'],
  k_proj: ['k_proj', 'key', 'k', 'wk', 'k_lin'],
  v_proj: ['v_proj', 'value', 'v', 'wv', 'v_lin'],
  qkv_proj: ['qkv_proj', 'query_key_value', 'c_attn', 'Wqkv'],
  // GPT-2 names both its attention's and its MLP's output projection c_proj: PEFT's "c_proj" adapts both.
  o_proj: ['o_proj', 'dense', 'out_proj', 'o', 'wo', 'out_lin', 'c_proj'],
  gate_proj: ['gate_proj', 'w1'],
  gate_up_proj: ['gate_up_proj'],
  up_proj: ['up_proj', 'fc1', 'intermediate.dense', 'w3', 'dense_h_to_4h', 'lin1', 'c_fc', 'fc_in'],
  down_proj: ['down_proj', 'fc2', 'output.dense', 'w2', 'dense_4h_to_h', 'lin2', 'c_proj', 'fc_out'],
  lm_head: ['lm_head', 'output'],
  // A mixture of experts' router is the block's `gate` (Mixtral, Qwen-MoE).
  router: ['router', 'gate'],
};
/** T5's names: `wo` is the MLP's output there, not the attention's. */
const T5_ALIASES: Readonly<Record<string, readonly string[]>> = {
  q_proj: ['q'], k_proj: ['k'], v_proj: ['v'], o_proj: ['o'], gate_proj: ['wi_0'], up_proj: ['wi_1', 'wi'], down_proj: ['wo'], lm_head: ['lm_head'],
};
/** PEFT's default targets when target_modules is not given (its TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING): the query and value; BLOOM's fused projection. */
const defaultTargets = (shape: TransformerShape): readonly string[] => (shape.t5Names ? ['q', 'v'] : shape.fusedQkv ? ['query_key_value', 'c_attn'] : [...DEFAULT_TARGETS, 'q_lin', 'v_lin']);

/** The linear layers a LoRA config targets: named ones, or every linear but the output head for "all-linear". */
export function loraTargets(shape: TransformerShape, targets: FineTuningAdapter['targetModules']): ParameterTensor[] {
  const linears = parameterTensors(shape).filter((t) => t.kind === 'linear');
  if (targets === 'all-linear') return linears.filter((t) => t.perLayer);
  const names = targets === undefined ? defaultTargets(shape) : typeof targets === 'string' ? [targets] : targets;
  const aliases = shape.t5Names ? T5_ALIASES : ALIASES;
  return linears.filter((t) => (aliases[t.name] ?? [t.name]).some((alias) => names.includes(alias)));
}

/** The linear layers of the layers GaLore projects (galore.ts), by the module paths transformers gives them. */
export function galoreTargets(shape: TransformerShape, targets: GaloreJob['targets']): ParameterTensor[] {
  const aliases = shape.t5Names ? T5_ALIASES : ALIASES;
  return parameterTensors(shape).filter((t) => t.kind === 'linear' && t.perLayer && galoreTargeted(layerModulePaths(t.name, aliases[t.name] ?? [t.name]), targets));
}

/** LoRA's A (rank x in) and B (out x rank) per targeted linear, and DoRA's magnitude vector (out). */
export function loraParams(shape: TransformerShape, adapter: FineTuningAdapter): number {
  const rank = adapter.rank ?? 8;
  return loraTargets(shape, adapter.targetModules).reduce((sum, t) => sum + (rank * (t.rows + t.cols) + (adapter.dora ? t.rows : 0)) * repeats(shape, t), 0);
}

/** The keys and values of every layer over `tokens` (after RoPE, not expanded to every head): what transformers' cache holds. */
const keyValueBytes = (shape: TransformerShape, tokens: number, bytes: number): number => 2 * shape.layers * tokens * shape.kvHeads * shape.headDim * bytes;

/**
 * Whether the keys and values a loop keeps with `outputs` are counted: for a decoder-only language
 * model, and not under gradient checkpointing (transformers turns the cache off there).
 */
export function keyValueCacheCounted(job: Pick<FineTuningJob, 'keyValueCacheHeld' | 'checkpointing' | 'shape'>): boolean {
  return job.keyValueCacheHeld === true && !job.checkpointing && !job.shape.decoderLayers && job.shape.head.kind === 'lm';
}

/** Elements of AdamW's step temporaries (OptimizerStep): foreach's one state, per-tensor's two of the largest trainable tensor, fused's none. */
function adamStepElements(step: OptimizerStep | undefined, trainableParams: number, largestTrainable: number): number {
  if (step === 'fused') return 0;
  if (step === 'per-tensor') return Math.min(trainableParams, 2 * largestTrainable);
  return trainableParams;
}

export function estimateFineTuning(job: FineTuningJob): FineTuningEstimate {
  const notes: string[] = [];
  const { shape } = job;
  // A paired preference trainer runs each prompt's chosen and rejected answers as one batch of twice the sequences.
  const paired = job.preference !== undefined && job.preference.trainer !== 'grpo' && job.preference.trainer !== 'kto';
  const batch = Math.max(1, Math.round(job.batch)) * (paired ? 2 : 1);
  const seq = Math.max(1, Math.round(job.seq));
  const targetSeq = shape.decoderLayers ? Math.max(1, Math.round(job.targetSeq ?? seq)) : 0;
  const tokens = batch * seq;
  const tensors = parameterTensors(shape);
  const totalParams = tensors.reduce((sum, t) => sum + count(shape, t), 0);
  const e = job.computeBytes;
  // The dtype the stored (unquantized) weights are in: the compute dtype, or fp32 under autocast.
  const storedBytes = job.weightBits >= 16 ? job.weightBits / 8 : e;

  // Frozen base weights: bitsandbytes quantizes the decoder's linear layers only; embeddings, norms and the output head stay in the load dtype (fp32 after prepare_model_for_kbit_training).
  let baseWeights = 0;
  let largestLinear = 0;
  const full = job.adapter === undefined;
  if (!full) {
    for (const t of tensors) {
      const n = count(shape, t);
      const quantized = job.weightBits < 16 && t.kind === 'linear' && t.perLayer;
      if (quantized) largestLinear = Math.max(largestLinear, t.rows * t.cols);
      if (quantized && job.weightBits === 4) baseWeights += n * (0.5 + (job.doubleQuant ? FOUR_BIT_CONSTANTS.double : FOUR_BIT_CONSTANTS.single));
      // LLM.int8: one byte per weight and an fp32 scale per output row.
      else if (quantized) baseWeights += n + t.rows * 4 * repeats(shape, t);
      else baseWeights += n * (job.kbitPrepared && job.weightBits < 16 ? 4 : storedBytes);
    }
  }

  // Trainable parameters: every tensor (full fine-tuning), or the adapter's, which PEFT keeps in fp32 (autocast_adapter_dtype).
  let trainableParams: number;
  let trainableWeights: number;
  let gradients: number;
  let optimizerState = 0;
  let galoreStep: number | undefined;
  let paramBytes: number;
  const adapterBytes = job.adapterBytes ?? 4;
  if (full && job.frozen) {
    // The frozen weights are a base like an adapter's; the rest train as in a full fine-tune (one state per parameter: their tensors are not told apart).
    paramBytes = job.weightBits === 32 ? 4 : 2;
    trainableParams = Math.min(totalParams, job.frozen.trainableParams);
    baseWeights = (totalParams - trainableParams) * paramBytes;
    trainableWeights = trainableParams * paramBytes;
    gradients = trainableWeights;
    optimizerState = optimizerBytes(job.optimizer, { rows: trainableParams, cols: 1 }, paramBytes);
  } else if (full) {
    if (job.weightBits < 16) notes.push('Full fine-tuning of a quantized model is not possible; the weights are counted at 16 bits.');
    paramBytes = job.weightBits === 32 ? 4 : 2;
    // Parameters a text batch never runs get no gradient: they are weights only.
    const held = shape.heldParams ?? 0;
    trainableParams = totalParams - held;
    trainableWeights = trainableParams * paramBytes;
    baseWeights = held * paramBytes;
    gradients = trainableWeights;
    // GaLore's optimizers are AdamW, 8-bit AdamW and Adafactor over the projections.
    const galore = job.galore && (job.optimizer === 'adamw' || job.optimizer === 'adamw-8bit' || job.optimizer === 'adafactor') ? job.galore : undefined;
    const projected = galore ? galoreTargets(shape, galore.targets) : [];
    const isProjected = (t: ParameterTensor) => projected.some((p) => p.name === t.name && p.decoder === t.decoder);
    for (const t of tensors) {
      if (t.kind === 'held') continue;
      optimizerState += (galore && isProjected(t) ? galoreStateBytes(t.rows, t.cols, galore.rank, job.optimizer, paramBytes) : optimizerBytes(job.optimizer, t, paramBytes)) * repeats(shape, t);
    }
    if (galore) {
      if (projected.length === 0) notes.push(`GaLore's target modules ${JSON.stringify(galore.targets)} match no linear layer of this architecture: every parameter keeps its optimizer's full state.`);
      // GaLore's optimizers step one parameter at a time: the largest of the projection's refresh (an fp32 SVD) and one other tensor's update.
      const largestOther = Math.max(0, ...tensors.filter((t) => t.kind !== 'held' && !isProjected(t)).map((t) => t.rows * t.cols));
      galoreStep = Math.max(0, ...projected.map((t) => galoreRefreshBytes(t.rows, t.cols)), largestOther * paramBytes);
    }
  } else {
    paramBytes = adapterBytes;
    const adapter = job.adapter;
    if (adapter.method === 'lora') {
      trainableParams = loraParams(shape, adapter);
      if (loraTargets(shape, adapter.targetModules).length === 0) notes.push(`None of the target modules ${JSON.stringify(adapter.targetModules)} is a linear layer of this architecture; the adapter is counted empty.`);
      for (const t of loraTargets(shape, adapter.targetModules)) {
        const rank = adapter.rank ?? 8;
        const times = repeats(shape, t);
        optimizerState += (optimizerBytes(job.optimizer, { rows: rank, cols: t.cols }, paramBytes) + optimizerBytes(job.optimizer, { rows: t.rows, cols: rank }, paramBytes)) * times;
        if (adapter.dora) optimizerState += optimizerBytes(job.optimizer, { rows: t.rows, cols: 1 }, paramBytes) * times;
      }
    } else {
      trainableParams = adapter.trainableParams ?? 0;
      if (adapter.trainableParams === undefined) notes.push('The adapter\'s parameter count is unknown; it is counted as none.');
      optimizerState = optimizerBytes(job.optimizer, { rows: trainableParams, cols: 1 }, paramBytes);
    }
    trainableWeights = trainableParams * paramBytes;
    gradients = trainableWeights;
  }
  const pagedOptimizerState = job.paged ? optimizerState : 0;
  // The frozen reference of DPO, KTO or GRPO (TRL's create_reference_model, or a ref_model of the same checkpoint): the model's weights again, without gradients or optimizer state.
  if (job.preference?.reference === 'separate' || (job.preference?.reference === 'default' && full)) baseWeights += full ? totalParams * paramBytes : baseWeights;

  // Activations: what autograd keeps per layer (savedActivations.ts), or with checkpointing each layer's input plus one layer recomputed in the backward.
  const ia3 = !full && job.adapter.method === 'ia3';
  const adapted = new Set(!full && !ia3 && (job.adapter.method === 'lora' || job.adapter.targetModules !== undefined) ? loraTargets(shape, job.adapter.targetModules).filter((t) => t.perLayer).map((t) => t.name) : []);
  let scaled: LayerActivationOptions['scaled'];
  if (ia3) {
    const defaults = ia3Defaults(shape);
    const perLayerNames = (targets: string | readonly string[]) => new Set(loraTargets(shape, targets).filter((t) => t.perLayer).map((t) => t.name));
    const inputs = perLayerNames(job.adapter.feedforwardModules ?? (job.adapter.targetModules === undefined ? defaults.feedforward : []));
    scaled = { inputs, outputs: new Set([...perLayerNames(job.adapter.targetModules ?? defaults.targets)].filter((name) => !inputs.has(name))) };
  }
  // The residual stream is fp32 under autocast over fp32 weights and after prepare_model_for_kbit_training (fp32 embeddings and norms: bitsandbytes casts each linear's output back to its input's dtype).
  const residualBytes: 2 | 4 = (job.autocast && job.weightBits === 32) || (job.kbitPrepared && job.weightBits < 16) ? 4 : e;
  const attention = shape.eagerOnly || job.eagerAttention ? 'eager' : job.flashAttention ? 'flash' : 'sdpa';
  const options: LayerActivationOptions = { computeBytes: e, residualBytes, autocast: job.autocast ?? false, full, adapted, adapterBytes, dora: !full && job.adapter.dora === true, adapterDropout: job.adapterDropout ?? false, compiled: job.compiled ?? false, ...(scaled ? { scaled } : {}), attention, seq };
  const perLayer = (savedBytesPerTokenLayer(shape, options) + (shape.moe ? moeBlockBytesPerToken(shape.hidden, shape.moe, options) : 0)) * tokens;
  const layerInput = shape.hidden * residualBytes * tokens;
  // Frozen layers before the first trained one are not recorded by autograd: they keep nothing.
  const recorded = full && job.frozen ? Math.max(0, Math.min(shape.layers, job.frozen.recordedLayers)) : shape.layers;
  let activations = job.checkpointing ? recorded * layerInput : recorded * perLayer;
  let recomputed = job.checkpointing ? perLayer : 0;
  if (shape.decoderLayers) {
    // The decoder's layers over the target tokens: self-attention over the target, cross-attention over the encoder's output.
    const targetTokens = batch * targetSeq;
    const cross = crossAttentionBytes(shape, options, seq);
    const decoderLayer = (savedBytesPerTokenLayer(shape, { ...options, seq: targetSeq }) + cross.perTarget) * targetTokens + cross.perSource * tokens;
    activations += job.checkpointing ? shape.decoderLayers * shape.hidden * residualBytes * targetTokens : shape.decoderLayers * decoderLayer;
    // The encoder's output, read by every cross-attention.
    activations += layerInput;
    if (job.checkpointing) recomputed = Math.max(recomputed, decoderLayer);
  }
  // The embeddings' output and the final norm's input and output (with the layers frozen, the head's input alone).
  activations += (recorded === shape.layers ? 3 : recorded > 0 ? 2 : 1) * layerInput;
  // The keys and values transformers returns in `past_key_values` (after RoPE, not expanded to every head), kept by a loop that keeps `outputs`.
  if (keyValueCacheCounted(job)) activations += keyValueBytes(shape, tokens, e);
  // Offloaded activations (Unsloth's and torchtune's offloading) wait on the host; the GPU keeps the embeddings' and the norm's tensors and the layer
  // inputs in flight (the one being copied out, the one being fetched back). With checkpointing the layer recomputed in the backward is `recomputed`;
  // without, one layer's saved tensors stay until they are copied.
  if (job.activationOffload) activations = Math.min(activations, (job.checkpointing ? 0 : perLayer) + OFFLOADED_RESIDENT_INPUTS * layerInput);
  // The backward's working set: the gradients of a layer's largest tensor and of its input, alive together (eager attention's probabilities, the MLP's intermediate, or the residual stream in fp32).
  // A mixture of experts' largest is one expert's intermediate over at most every token (or the shared expert's).
  const intermediate = shape.moe ? Math.max(shape.moe.expertIntermediate, shape.moe.sharedIntermediate ?? 0) : shape.intermediate;
  const largest = Math.max(attention === 'eager' ? shape.heads * seq * e : 0, intermediate * e, shape.hidden * 4);
  const backwardWorkspace = 2 * largest * tokens;
  // bitsandbytes dequantizes each quantized weight to the compute dtype for its matmul, forward and backward: one layer's largest at a time.
  const dequantized = 2 * largestLinear * e;

  // Logits (docs/fine-tuning.md): the loss upcasts them to fp32 and keeps log-softmax's fp32 output; its backward
  // makes the gradient of that output and of its input (12 bytes an element at the start of the backward). A loop
  // that keeps the model's `outputs` through the backward keeps the logits too; the Trainer and torchtune drop them.
  let logits = 0;
  if (shape.head.kind === 'lm') {
    const elements = batch * (shape.decoderLayers ? targetSeq : seq) * shape.vocab;
    const held = job.logitsHeld === false ? 0 : job.logitsFp32 ? 4 : e;
    if (job.fusedLoss === 'inPlace') logits = elements * e;
    else if (job.fusedLoss === 'linear') logits = (elements / Math.max(1, Math.ceil(shape.vocab / shape.hidden))) * (e + LOSS_BYTES);
    else if (job.preference?.trainer === 'grpo') {
      // TRL's GRPO asks the model for the completion's logits only (logits_to_keep), divides them by the temperature and keeps each row's log-softmax: three copies.
      logits = batch * ((job.preference.completionTokens ?? seq) + 1) * shape.vocab * ((job.logitsFp32 ? 4 : e) + 2 * e);
    } else if (job.preference) {
      // TRL's log-probabilities (selective_log_softmax) keep each row's log-softmax, in the logits' dtype, beside the logits; DPO's reference
      // forward makes its own logits while those are held; ORPO's and CPO's NLL over the chosen half upcasts it to fp32.
      const logitBytes = job.logitsFp32 ? 4 : e;
      logits = elements * (logitBytes + e) + (job.preference.reference !== 'none' ? elements * logitBytes : 0) + (job.preference.trainer === 'orpo' || job.preference.trainer === 'cpo' ? (elements / 2) * LOSS_BYTES : 0);
    } else logits = job.chunkedLoss && job.chunkedLoss > 1 ? elements * e + (elements / job.chunkedLoss) * LOSS_BYTES : elements * (held + LOSS_BYTES);
    // Gemma-2's soft-capping (logits / cap, tanh, * cap): tanh's output is kept for its backward, beside the capped logits.
    if (shape.logitSoftcap && !job.fusedLoss) logits += elements * e;
  }

  // Transient buffers: autocast's 16-bit weight copies (kept from the forward to the backward), the optimizer step's temporaries (adamStepElements).
  const autocastCopies = job.autocast && full && job.weightBits === 32 ? trainableParams * 2 : 0;
  const largestTrainable = full && !job.frozen ? Math.max(0, ...tensors.filter((t) => t.kind !== 'held').map((t) => t.rows * t.cols)) : trainableParams;
  const stepTemporary = galoreStep ?? (job.optimizer === 'adamw' && !job.optimizerInBackward ? adamStepElements(job.optimizerStep, trainableParams, largestTrainable) * paramBytes : 0);

  const persistent = baseWeights + trainableWeights + (optimizerState - pagedOptimizerState);
  // Gradients are all alive at the optimizer step; with accumulation, or with zero_grad(set_to_none=False), also through the next forward. optimizer_in_bwd frees each as it is applied.
  const heldGradients = job.optimizerInBackward ? 0 : gradients;
  const forwardGradients = (job.accumulation ?? 1) > 1 || job.gradientsZeroedInPlace ? heldGradients : 0;
  const working = recomputed + backwardWorkspace + dequantized;
  const forwardPeak = persistent + forwardGradients + activations + working + logits + autocastCopies;
  const stepPeak = persistent + heldGradients + stepTemporary;
  // GRPO generates its completions first (model.generate): the keys and values of every layer over prompt and completion.
  const generationPeak = job.preference?.trainer === 'grpo' ? persistent + forwardGradients + keyValueBytes(shape, tokens, e) : 0;
  const allocated = Math.max(forwardPeak, stepPeak, generationPeak);
  const transient = autocastCopies + Math.max(working, stepTemporary);
  const reserved = allocated + (job.reserveShare ?? RESERVE_SHARE) * (activations + working + logits + autocastCopies);
  const context = job.contextBytes ?? CUDA_CONTEXT_BYTES;
  const driver = reserved + pagedOptimizerState + context;
  const stepWorking = activations + working + logits;
  return { baseWeights, trainableWeights, gradients, heldGradients, optimizerState, pagedOptimizerState, activations, logits, context, transient, stepWorking, autocastCopies, stepTemporary, allocated, reserved, driver, fittedMargin: FITTED_MARGIN * driver, trainableParams, totalParams, notes };
}
