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
  readonly head: { readonly kind: 'lm' } | { readonly kind: 'classifier'; readonly labels: number };
  /** Dropout after attention and MLP (BERT's 0.1) keeps a 1-byte mask per element; Llama has none. */
  readonly dropout: boolean;
}

/** One parameter tensor of the architecture: a linear (`in` -> `out`), an embedding, or a vector. */
export interface ParameterTensor {
  readonly name: string;
  readonly rows: number;
  readonly cols: number;
  readonly kind: 'linear' | 'embedding' | 'vector';
  /** Repeated once per layer. */
  readonly perLayer: boolean;
}

export type AdapterMethod = 'lora' | 'other';

export interface FineTuningAdapter {
  readonly method: AdapterMethod;
  readonly rank?: number;
  /** Module names (`q_proj`), `"all-linear"`, or undefined for PEFT's default (the attention's query and value). */
  readonly targetModules?: string | readonly string[];
  readonly dora?: boolean;
  /** For methods whose parameters are not computed here (IA3, prompt tuning...): how many there are. */
  readonly trainableParams?: number;
}

export type OptimizerState = 'adamw' | 'adamw-8bit' | 'adafactor' | 'sgd';

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
  /** Autocast over fp32 weights: it keeps a 16-bit copy of each weight it casts until the backward used it. */
  readonly autocast?: boolean;
  readonly optimizer: OptimizerState;
  /** bitsandbytes' paged optimizers: their state is in managed memory the torch allocator does not see. */
  readonly paged?: boolean;
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
  /** The CUDA context's bytes when the measurement's source states them; else CUDA_CONTEXT_BYTES. */
  readonly contextBytes?: number;
}

export interface FineTuningEstimate {
  /** Bytes by part; `total` is what the caching allocator has reserved at the peak, `driver` what nvidia-smi shows. */
  readonly baseWeights: number;
  readonly trainableWeights: number;
  readonly gradients: number;
  readonly optimizerState: number;
  /** The part of `optimizerState` in managed (paged) memory: counted by the driver, not by torch's allocator. */
  readonly pagedOptimizerState: number;
  readonly activations: number;
  readonly logits: number;
  readonly context: number;
  /** Short-lived buffers: autocast's weight copies, the optimizer step's temporaries, one layer recomputed and the backward's working set. */
  readonly transient: number;
  /** What the forward and backward allocate and free each step (activations, the layer recomputed, the backward's working set, logits), without autocast's copies: what sharding (sharding.ts) leaves per GPU as it is. */
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
/** bitsandbytes 4-bit: one fp32 absmax per block of 64 weights; with double quantization an 8-bit absmax plus one fp32 per 256 blocks. */
const FOUR_BIT_CONSTANTS = { single: 4 / 64, double: 1 / 64 + 4 / (64 * 256) };
/** bitsandbytes' 8-bit optimizers keep tensors under 4096 elements in 32-bit state. */
const MIN_8BIT_SIZE = 4096;
/** PEFT's default LoRA targets when target_modules is not given (its table for Llama-style and BERT models): query and value. */
const DEFAULT_TARGETS = ['q_proj', 'v_proj', 'query', 'value'];

/** Every parameter tensor, named as transformers names them in Llama-style and BERT-style models. */
export function parameterTensors(shape: TransformerShape): ParameterTensor[] {
  const { hidden: h, heads, kvHeads, headDim, intermediate: i, vocab } = shape;
  const q = heads * headDim;
  const kv = kvHeads * headDim;
  const tensors: ParameterTensor[] = [{ name: 'embed_tokens', rows: vocab, cols: h, kind: 'embedding', perLayer: false }];
  if (shape.positions > 0) tensors.push({ name: 'position_embeddings', rows: shape.positions, cols: h, kind: 'embedding', perLayer: false });
  const linear = (name: string, inFeatures: number, out: number) => {
    tensors.push({ name, rows: out, cols: inFeatures, kind: 'linear', perLayer: true });
    if (shape.bias) tensors.push({ name: `${name}.bias`, rows: out, cols: 1, kind: 'vector', perLayer: true });
  };
  linear('q_proj', h, q);
  linear('k_proj', h, kv);
  linear('v_proj', h, kv);
  linear('o_proj', q, h);
  if (shape.gatedMlp) {
    linear('gate_proj', h, i);
    linear('up_proj', h, i);
    linear('down_proj', i, h);
  } else {
    linear('up_proj', h, i);
    linear('down_proj', i, h);
  }
  // Two norms per layer (weight, and a bias for LayerNorm), one at the end.
  tensors.push({ name: 'norms', rows: 2 * h * (shape.bias ? 2 : 1), cols: 1, kind: 'vector', perLayer: true });
  tensors.push({ name: 'norm', rows: h * (shape.bias ? 2 : 1), cols: 1, kind: 'vector', perLayer: false });
  if (shape.head.kind === 'lm') {
    if (!shape.tiedEmbeddings) tensors.push({ name: 'lm_head', rows: vocab, cols: h, kind: 'linear', perLayer: false });
  } else {
    tensors.push({ name: 'pooler', rows: h, cols: h, kind: 'linear', perLayer: false });
    tensors.push({ name: 'classifier', rows: shape.head.labels, cols: h, kind: 'linear', perLayer: false });
  }
  return tensors;
}

const count = (shape: TransformerShape, t: ParameterTensor) => t.rows * t.cols * (t.perLayer ? shape.layers : 1);

/** The names PEFT and transformers give the same projections in BERT-style models. */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  q_proj: ['q_proj', 'query', 'q', 'wq'],
  k_proj: ['k_proj', 'key', 'k', 'wk'],
  v_proj: ['v_proj', 'value', 'v', 'wv'],
  o_proj: ['o_proj', 'dense', 'out_proj', 'o', 'wo'],
  gate_proj: ['gate_proj', 'w1'],
  up_proj: ['up_proj', 'fc1', 'intermediate.dense', 'w3'],
  down_proj: ['down_proj', 'fc2', 'output.dense', 'w2'],
  lm_head: ['lm_head', 'output'],
};

/** The linear layers a LoRA config targets: named ones, or every linear but the output head for "all-linear". */
export function loraTargets(shape: TransformerShape, targets: FineTuningAdapter['targetModules']): ParameterTensor[] {
  const linears = parameterTensors(shape).filter((t) => t.kind === 'linear');
  if (targets === 'all-linear') return linears.filter((t) => t.perLayer);
  const names = targets === undefined ? DEFAULT_TARGETS : typeof targets === 'string' ? [targets] : targets;
  return linears.filter((t) => (ALIASES[t.name] ?? [t.name]).some((alias) => names.includes(alias)));
}

/** LoRA's A (rank x in) and B (out x rank) per targeted linear, and DoRA's magnitude vector (out). */
export function loraParams(shape: TransformerShape, adapter: FineTuningAdapter): number {
  const rank = adapter.rank ?? 8;
  return loraTargets(shape, adapter.targetModules).reduce((sum, t) => sum + (rank * (t.rows + t.cols) + (adapter.dora ? t.rows : 0)) * (t.perLayer ? shape.layers : 1), 0);
}

/**
 * Bytes per token and layer the backward needs, in elements of the compute dtype: the norms'
 * inputs, the inputs of the linears that need them, the queries, keys and values the attention
 * kernel keeps, its output, the MLP's intermediate tensors, and dropout's 1-byte masks.
 */
export function activationBytesPerTokenLayer(shape: TransformerShape, computeBytes: number, eager: boolean, seq: number, autocast = false): number {
  const { hidden: h, intermediate: i } = shape;
  const q = shape.heads * shape.headDim;
  const kv = shape.kvHeads * shape.headDim;
  // Autocast runs the norms in fp32: their inputs (the residual stream) and outputs are kept in 4 bytes, and each linear keeps its own 16-bit cast of the output.
  const norm = autocast ? 4 : computeBytes;
  // Attention block: norm input and output, q, k, v, the kernel's output (o_proj's input); MLP block: norm input and output, then gate, up, act(gate) and their product (gated) or fc1's output and the activation's.
  let bytes = 2 * h * norm + (q + 2 * kv + q) * computeBytes + 2 * h * norm + (shape.gatedMlp ? 4 * i : 2 * i) * computeBytes;
  if (autocast) bytes += 2 * h * computeBytes;
  if (eager) {
    // Eager attention keeps its probabilities: softmax's fp32 output, dropout's mask and fp32 output, and the 16-bit copy the next matmul is given.
    const probabilities = 4 + (shape.dropout ? 1 + 4 : 0) + (computeBytes === 2 ? 2 : 0);
    bytes += shape.heads * seq * probabilities;
  }
  // Dropout after attention and after the MLP: a 1-byte mask each.
  if (shape.dropout) bytes += 2 * h;
  return bytes;
}

const optimizerBytes = (optimizer: OptimizerState, tensor: { rows: number; cols: number }, paramBytes: number): number => {
  const elements = tensor.rows * tensor.cols;
  switch (optimizer) {
    // torch's AdamW keeps exp_avg and exp_avg_sq in the parameter's dtype.
    case 'adamw':
      return 2 * elements * paramBytes;
    // bitsandbytes 8-bit: two 1-byte states and an fp32 absmax per 256 elements; small tensors stay 32-bit.
    case 'adamw-8bit':
      return elements < MIN_8BIT_SIZE ? 8 * elements : 2 * elements + (2 * 4 * elements) / 256;
    // Adafactor without momentum: a row and a column of fp32 second moments per matrix, a full vector for vectors.
    case 'adafactor':
      return tensor.cols > 1 ? 4 * (tensor.rows + tensor.cols) : 4 * elements;
    case 'sgd':
      return 0;
  }
};

export function estimateFineTuning(job: FineTuningJob): FineTuningEstimate {
  const notes: string[] = [];
  const { shape } = job;
  const batch = Math.max(1, Math.round(job.batch));
  const seq = Math.max(1, Math.round(job.seq));
  const tokens = batch * seq;
  const tensors = parameterTensors(shape);
  const totalParams = tensors.reduce((sum, t) => sum + count(shape, t), 0);
  const e = job.computeBytes;
  // The dtype the stored (unquantized) weights are in: the compute dtype, or fp32 under autocast.
  const storedBytes = job.weightBits >= 16 ? job.weightBits / 8 : e;

  // Frozen base weights: bitsandbytes quantizes the decoder's linear layers only; embeddings, norms and the output head stay in the load dtype (fp32 after prepare_model_for_kbit_training).
  let baseWeights = 0;
  const full = job.adapter === undefined;
  if (!full) {
    for (const t of tensors) {
      const n = count(shape, t);
      const quantized = job.weightBits < 16 && t.kind === 'linear' && t.perLayer;
      if (quantized && job.weightBits === 4) baseWeights += n * (0.5 + (job.doubleQuant ? FOUR_BIT_CONSTANTS.double : FOUR_BIT_CONSTANTS.single));
      // LLM.int8: one byte per weight and an fp32 scale per output row.
      else if (quantized) baseWeights += n + t.rows * 4 * shape.layers;
      else baseWeights += n * (job.kbitPrepared && job.weightBits < 16 ? 4 : storedBytes);
    }
  }

  // Trainable parameters: every tensor (full fine-tuning), or the adapter's, which PEFT keeps in fp32 (autocast_adapter_dtype).
  let trainableParams: number;
  let trainableWeights: number;
  let gradients: number;
  let optimizerState = 0;
  let paramBytes: number;
  if (full) {
    if (job.weightBits < 16) notes.push('Full fine-tuning of a quantized model is not possible; the weights are counted at 16 bits.');
    paramBytes = job.weightBits === 32 ? 4 : 2;
    trainableParams = totalParams;
    trainableWeights = totalParams * paramBytes;
    gradients = trainableWeights;
    for (const t of tensors) optimizerState += optimizerBytes(job.optimizer, t, paramBytes) * (t.perLayer ? shape.layers : 1);
  } else {
    paramBytes = 4;
    const adapter = job.adapter;
    if (adapter.method === 'lora') {
      trainableParams = loraParams(shape, adapter);
      if (loraTargets(shape, adapter.targetModules).length === 0) notes.push(`None of the target modules ${JSON.stringify(adapter.targetModules)} is a linear layer of this architecture; the adapter is counted empty.`);
      for (const t of loraTargets(shape, adapter.targetModules)) {
        const rank = adapter.rank ?? 8;
        const times = t.perLayer ? shape.layers : 1;
        optimizerState += (optimizerBytes(job.optimizer, { rows: rank, cols: t.cols }, 4) + optimizerBytes(job.optimizer, { rows: t.rows, cols: rank }, 4)) * times;
        if (adapter.dora) optimizerState += optimizerBytes(job.optimizer, { rows: t.rows, cols: 1 }, 4) * times;
      }
    } else {
      trainableParams = adapter.trainableParams ?? 0;
      if (adapter.trainableParams === undefined) notes.push('The adapter\'s parameter count is unknown; it is counted as none.');
      optimizerState = optimizerBytes(job.optimizer, { rows: trainableParams, cols: 1 }, 4);
    }
    trainableWeights = trainableParams * paramBytes;
    gradients = trainableWeights;
  }
  const pagedOptimizerState = job.paged ? optimizerState : 0;

  // Activations: every layer's saved tensors, or with checkpointing each layer's input plus one layer recomputed in the backward.
  const perLayer = activationBytesPerTokenLayer(shape, e, job.eagerAttention ?? false, seq, job.autocast ?? false) * tokens;
  const layerInput = shape.hidden * e * tokens;
  let activations = job.checkpointing ? shape.layers * layerInput : shape.layers * perLayer;
  // The embeddings' output and the final norm's input and output.
  activations += 3 * layerInput;
  if (job.activationOffload) activations = Math.min(activations, perLayer + 3 * layerInput);
  const recomputed = job.checkpointing ? perLayer : 0;
  // The backward's working set: the gradients of a layer's largest tensor and of its input, alive together (eager attention's probabilities, the MLP's intermediate, or the residual stream in fp32).
  const largest = Math.max(job.eagerAttention ? shape.heads * seq * e : 0, shape.intermediate * e, shape.hidden * 4);
  const backwardWorkspace = 2 * largest * tokens;

  // Logits: the head's output in the compute dtype, the loss's fp32 copy and log-softmax (transformers upcasts before cross-entropy); a classifier's are negligible.
  let logits = 0;
  if (shape.head.kind === 'lm') {
    const elements = tokens * shape.vocab;
    const chunk = job.chunkedLoss && job.chunkedLoss > 1 ? 1 / job.chunkedLoss : 1;
    logits = elements * e + elements * chunk * (e === 4 ? 4 : 8);
  }

  // Transient buffers: autocast's 16-bit weight copies (kept from the forward to the backward), the optimizer step's temporaries (torch's foreach AdamW: about one state's size).
  const autocastCopies = job.autocast && full ? totalParams * 2 : 0;
  const stepTemporary = job.optimizer === 'adamw' && !job.optimizerInBackward ? trainableParams * paramBytes : 0;

  const persistent = baseWeights + trainableWeights + (optimizerState - pagedOptimizerState);
  // Gradients are all alive at the optimizer step; with accumulation they are also alive through the next forward. optimizer_in_bwd frees each as it is applied.
  const heldGradients = job.optimizerInBackward ? 0 : gradients;
  const forwardGradients = (job.accumulation ?? 1) > 1 ? heldGradients : 0;
  const forwardPeak = persistent + forwardGradients + activations + recomputed + backwardWorkspace + logits + autocastCopies;
  const stepPeak = persistent + heldGradients + stepTemporary;
  const allocated = Math.max(forwardPeak, stepPeak);
  const transient = autocastCopies + Math.max(recomputed + backwardWorkspace, stepTemporary);
  const reserved = allocated + RESERVE_SHARE * (activations + recomputed + backwardWorkspace + logits + autocastCopies);
  const context = job.contextBytes ?? CUDA_CONTEXT_BYTES;
  const driver = reserved + pagedOptimizerState + context;
  const stepWorking = activations + recomputed + backwardWorkspace + logits;
  return { baseWeights, trainableWeights, gradients, optimizerState, pagedOptimizerState, activations, logits, context, transient, stepWorking, autocastCopies, stepTemporary, allocated, reserved, driver, trainableParams, totalParams, notes };
}

const GATED = /^(llama|mistral|mixtral|qwen2|qwen3|gemma|gemma2|phi3|olmo|olmo2|granite|cohere|starcoder2_gated)$/;

/**
 * The shape of a catalog checkpoint's config.json (transformers' field names, with their defaults
 * where the file leaves them out), or a note saying what is missing. Llama-style models
 * (gated MLP, no biases, no dropout) and BERT-style encoders (LayerNorm with biases, learned
 * positions, dropout 0.1) are told apart by the model type.
 */
export function shapeFromConfig(modelType: string, config: Readonly<Record<string, unknown>>, head: TransformerShape['head']): TransformerShape | string {
  const num = (name: string): number | undefined => (typeof config[name] === 'number' ? (config[name]) : undefined);
  const hidden = num('hidden_size') ?? num('n_embd') ?? num('d_model');
  const layers = num('num_hidden_layers') ?? num('n_layer') ?? num('num_layers');
  const heads = num('num_attention_heads') ?? num('n_head') ?? num('num_heads');
  const vocab = num('vocab_size');
  if (!hidden || !layers || !heads || !vocab) return `config of ${modelType} without hidden size, layers, heads or vocabulary`;
  const bert = /^(bert|roberta|xlm-roberta|electra|deberta|distilbert)$/.test(modelType);
  return {
    hidden,
    layers,
    heads,
    kvHeads: num('num_key_value_heads') ?? heads,
    headDim: num('head_dim') ?? hidden / heads,
    intermediate: num('intermediate_size') ?? num('n_inner') ?? 4 * hidden,
    vocab,
    tiedEmbeddings: typeof config.tie_word_embeddings === 'boolean' ? config.tie_word_embeddings : !GATED.test(modelType),
    gatedMlp: GATED.test(modelType),
    bias: bert || config.attention_bias === true,
    positions: bert ? (num('max_position_embeddings') ?? 512) + (num('type_vocab_size') ?? 0) : 0,
    head,
    dropout: bert || (num('hidden_dropout_prob') ?? 0) > 0,
  };
}
