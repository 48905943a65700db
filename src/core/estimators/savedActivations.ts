/**
 * The bytes one Transformer layer keeps for the backward pass, per token, counted the way autograd
 * keeps them: an operation saves an input only when the backward of something that requires a
 * gradient needs it. A frozen linear (the base weights under LoRA) needs only its weight to pass the
 * gradient on, so it keeps none of its input; a trainable one keeps it; PEFT's adapter casts its
 * input to the adapter's fp32 dtype and keeps that copy, one per adapted module. Every term names
 * the library code it follows (transformers' Llama/BERT/T5/BLOOM layers, torchtune's, PEFT's LoRA).
 */

import type { MoeShape } from './moe';

/** What the layer's shape gives (a subset of TransformerShape, so that this module stands alone). */
export interface LayerShape {
  readonly hidden: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly intermediate: number;
  readonly gatedMlp: boolean;
  /** Dropout (p > 0) on the attention probabilities and after the attention and MLP blocks. */
  readonly dropout: boolean;
  /** RMSNorm that upcasts to fp32 and casts back before its weight (Llama, T5): a 16-bit copy of the normalized tensor on top of the fp32 one. */
  readonly rmsNorm?: boolean;
  /** A mixture-of-experts block takes the dense MLP's place: its bytes are moeActivations.ts's moeBlockBytesPerToken. */
  readonly moe?: MoeShape;
  /**
   * Attention and MLP read the layer's input side by side and their outputs are summed (Falcon's
   * parallel_attn, GPT-NeoX's parallel residual): through one norm (Falcon-7B) or two (Falcon-40B's
   * ln_attn and ln_mlp). Undefined: one after the other, each behind its own norm.
   */
  readonly parallelNorms?: 1 | 2;
  /** One fused query-key-value linear (BLOOM's and Falcon's query_key_value, GPT-2's c_attn): PEFT adapts it as one module. */
  readonly fusedQkv?: boolean;
  /** One fused gate-and-up linear (Phi-3's gate_up_proj), split in two after it: one consumer of the norm's output. */
  readonly fusedGateUp?: boolean;
  /**
   * Norms on the attention's and the MLP's outputs: beside the two before them (Gemma-2's
   * post_attention_layernorm and post_feedforward_layernorm: four a layer), or instead of them (OLMo-2).
   */
  readonly postNorms?: 'extra' | 'instead';
  /** RMS norms over the projected queries and keys (OLMo-2's q_norm and k_norm; Qwen3's over each head, `perHead`: the same tensors kept). */
  readonly qkNorms?: boolean | 'perHead';
  /** Gemma's RMSNorm multiplies by (1 + weight) in fp32 before casting back: a trained weight keeps the fp32 normalized tensor. */
  readonly normWeightFp32?: boolean;
  /** Norms without a weight (OLMo's LayerNorm): even a full fine-tune keeps no normalized tensor for one. */
  readonly parameterFreeNorms?: boolean;
  /**
   * transformers' GELU written as the tanh formula in Python operations, each keeping what its
   * backward needs: `gelu_new` (NewGELUActivation: GPT-2, GPT-Neo, GPT-J, Phi-1/2, T5 v1.1's
   * gated-gelu) and `gelu_fast` (FastGELUActivation). F.gelu (`gelu`, `gelu_pytorch_tanh`) is one
   * operation and keeps only its input.
   */
  readonly tanhGelu?: 'new' | 'fast';
}

export interface LayerActivationOptions {
  /** Bytes of the dtype the matmuls run in: 2 (bf16/fp16 weights or autocast) or 4. */
  readonly computeBytes: 2 | 4;
  /** Bytes of the residual stream: 4 under autocast over fp32 weights or after prepare_model_for_kbit_training (fp32 embeddings and norms), else the compute dtype. */
  readonly residualBytes: 2 | 4;
  /** Autocast (bf16/fp16 mixed precision): every linear casts an fp32 input to 16 bits itself (the casts of activations are not cached), and keeps its own copy. */
  readonly autocast: boolean;
  /** Full fine-tuning: every weight is trainable, so every linear and norm keeps its input. */
  readonly full: boolean;
  /** The per-layer linears an adapter is on (`q_proj`, `down_proj`...). */
  readonly adapted: ReadonlySet<string>;
  /** Bytes of the adapter's weights: PEFT keeps them in fp32 (autocast_adapter_dtype) and casts its input to them; torchtune's are the model's dtype. */
  readonly adapterBytes: 2 | 4;
  /** The adapter's dropout (PEFT's lora_dropout > 0): each adapted module keeps dropout's output and its 1-byte mask of its input. */
  readonly adapterDropout?: boolean;
  /** IA3: modules whose output a learned vector scales (the output is kept for the vector's gradient), and feedforward modules whose input it scales (the input is kept). */
  readonly scaled?: { readonly outputs: ReadonlySet<string>; readonly inputs: ReadonlySet<string> };
  /** DoRA: per adapted module the recomputed base output and the adapter's output, both fp32, kept for the magnitude's gradient. */
  readonly dora?: boolean;
  /**
   * torch.compile: Inductor fuses each chain of pointwise operations and keeps only what its min-cut
   * partitioner decides to save, the chain's inputs (recomputing the rest in the backward): a norm keeps
   * its 16-bit input (and a per-token rstd), not the fp32 copy and the normalized tensor; SwiGLU keeps
   * the gate's and up's outputs, not SiLU's.
   */
  readonly compiled?: boolean;
  readonly attention: 'sdpa' | 'flash' | 'eager';
  /** Tokens per sample: eager attention keeps heads x seq probabilities per token. */
  readonly seq: number;
}

/**
 * The input of a group of linears that read the same tensor (`width` wide, `sourceBytes` a value):
 * with autocast each consumer that needs it keeps its own 16-bit cast of an fp32 tensor; an adapter
 * whose dtype differs keeps its own cast; otherwise the one tensor is kept once, however many keep it.
 */
export function linearInputs(width: number, sourceBytes: number, consumers: readonly string[], o: LayerActivationOptions): number {
  let copies = 0;
  let shared = false;
  for (const name of consumers) {
    if (!o.full && o.scaled?.inputs.has(name)) {
      shared = true;
      continue;
    }
    const needs = o.full || o.adapted.has(name);
    if (!needs) continue;
    // Dropout's output (what the adapter's matmul reads: under autocast its 16-bit cast) and its 1-byte mask.
    if (!o.full && o.adapterDropout) copies += ((o.autocast ? 2 : o.adapterBytes) + 1) * width;
    // Autocast runs the matmul in 16 bits and keeps its own cast: of an fp32 input, or of the fp32 copy PEFT makes for its fp32 adapter.
    else if (o.autocast && (sourceBytes === 4 || (!o.full && o.adapterBytes === 4))) copies += 2 * width;
    else if (!o.full && o.adapterBytes !== sourceBytes) copies += o.adapterBytes * width;
    else shared = true;
  }
  return copies + (shared ? sourceBytes * width : 0);
}

/** Bytes per token one layer keeps for the backward (without checkpointing). */
export function savedBytesPerTokenLayer(shape: LayerShape, o: LayerActivationOptions): number {
  const { hidden: h, intermediate: i } = shape;
  const q = shape.heads * shape.headDim;
  const kv = shape.kvHeads * shape.headDim;
  const e = o.computeBytes;
  let bytes = 0;

  // Two norms. Llama's RMSNorm upcasts its input to fp32 and keeps that copy (pow and mul need it);
  // LayerNorm keeps its input at the residual's dtype. With trainable norm weights the normalized
  // tensor the weight multiplies is kept too (RMSNorm makes a 16-bit copy of it; LayerNorm's fused
  // kernel recomputes it from the input and its saved mean and rstd).
  const normInput = o.compiled ? o.residualBytes : shape.rmsNorm ? 4 : o.residualBytes;
  const normalized = o.full && shape.rmsNorm && !o.compiled && !shape.parameterFreeNorms ? (shape.normWeightFp32 ? 4 : e) : 0;
  // A parallel block's norms read the same tensor, kept once (checked with saved_tensors_hooks on a tiny
  // Falcon-style block in torch 1.13: one saved storage of the layer input for ln_attn and ln_mlp).
  const norms = shape.parallelNorms ?? 2;
  bytes += (shape.parallelNorms ? 1 : 2) * normInput * h + norms * normalized * h;
  // Gemma-2's two more norms read the attention's and the MLP's outputs, tensors of their own: each keeps its
  // fp32 copy (and, trained, the normalized tensor). OLMo-2's q_norm and k_norm do the same over q and k's widths.
  if (shape.postNorms === 'extra') bytes += 2 * (normInput + normalized) * h;
  if (shape.qkNorms) bytes += (normInput + normalized) * (q + kv);

  // The linears' inputs: the first norm's output (q, k, v), the attention's output made contiguous
  // (o_proj), the second norm's output (gate and up, or fc1) and the MLP's hidden tensor (down).
  // A fused query-key-value linear (BLOOM, Falcon, GPT-2's c_attn) is one consumer, qkv_proj. Behind one
  // shared norm the attention's and the MLP's first linears read the same tensor (kept once: the same check).
  const attentionIn = shape.fusedQkv ? ['qkv_proj'] : ['q_proj', 'k_proj', 'v_proj'];
  // A mixture of experts' block reads the second norm's output itself (moeActivations.ts).
  const mlpIn = shape.moe ? [] : shape.fusedGateUp ? ['gate_up_proj'] : shape.gatedMlp ? ['gate_proj', 'up_proj'] : ['up_proj'];
  if (shape.parallelNorms === 1) bytes += linearInputs(h, o.residualBytes, [...attentionIn, ...mlpIn], o);
  else bytes += linearInputs(h, o.residualBytes, attentionIn, o) + linearInputs(h, o.residualBytes, mlpIn, o);
  bytes += linearInputs(q, e, ['o_proj'], o);
  if (!shape.moe) bytes += linearInputs(i, e, ['down_proj'], o);

  // Attention. SDPA keeps the rotated queries, the keys and values and its output; transformers and
  // torchtune expand grouped keys and values to every head first (repeat_kv), flash-attention 2
  // reads them grouped. Eager attention keeps q and the expanded k and v for its two matmuls and the
  // probabilities: softmax's fp32 output, dropout's 1-byte mask, and the tensor the second matmul
  // reads (dropout's output in fp32, or the 16-bit copy).
  if (o.attention === 'eager') {
    const probabilities = 4 + (shape.dropout ? 1 : 0) + (e === 4 ? (shape.dropout ? 4 : 0) : 2);
    bytes += 3 * q * e + shape.heads * o.seq * probabilities;
  } else {
    const keysValues = o.attention === 'flash' ? 2 * kv : 2 * q;
    bytes += (2 * q + keysValues) * e;
  }

  // MLP: SiLU keeps the gate's output, the product keeps SiLU's output and up's (gated); GELU keeps fc1's output.
  // Phi-3's gate and up are halves of gate_up_proj's output: the two views keep that one 2i-wide tensor, the same bytes.
  if (!shape.moe) bytes += (shape.gatedMlp ? (o.compiled ? 2 : 3) : 1) * i * e + (o.compiled ? 0 : tanhGeluBytes(shape, o) * i);

  // Dropout after the attention and the MLP blocks: a 1-byte mask each.
  if (shape.dropout) bytes += 2 * h;

  const widths: Readonly<Record<string, number>> = { q_proj: q, k_proj: kv, v_proj: kv, qkv_proj: q + 2 * kv, o_proj: h, gate_proj: i, up_proj: i, gate_up_proj: 2 * i, down_proj: h };
  // DoRA (PEFT's DoraLinearLayer): (magnitude / norm - 1) * base(x) + magnitude / norm * lora(x) keeps both fp32 outputs.
  if (o.dora && !o.full) for (const name of o.adapted) bytes += 2 * 4 * (widths[name] ?? 0);
  // IA3 (PEFT's IA3 Linear): base(x) * vector keeps base(x) in the compute dtype.
  if (o.scaled && !o.full) for (const name of o.scaled.outputs) bytes += e * (widths[name] ?? 0);
  return bytes;
}

/**
 * What a tanh-formula GELU keeps beyond its input, bytes per element of the MLP's hidden tensor.
 * `0.5 * x * (1 + tanh(c * (x + 0.044715 * pow(x, 3))))` (gelu_new): pow keeps x, tanh its output,
 * and the last product both factors: three tensors more (counted with saved_tensors_hooks on torch
 * 1.13). Under autocast pow is on the fp32 list, so it keeps an fp32 copy of x and everything after
 * it is fp32 but `0.5 * x`: 4 + 4 + 4 + 2 bytes where one 16-bit input was counted, and a gated MLP's
 * product keeps the activation's fp32 output (2 bytes more). gelu_fast (`x * 0.7978845608 * (1 +
 * 0.044715 * x * x)` inside the tanh) keeps six tensors more, all in the input's dtype. Inductor
 * (torch.compile) fuses the formula and keeps its input alone.
 */
function tanhGeluBytes(shape: LayerShape, o: LayerActivationOptions): number {
  if (shape.tanhGelu === 'fast') return 6 * o.computeBytes;
  if (shape.tanhGelu !== 'new') return 0;
  return o.autocast ? 4 + 4 + 4 + 2 - 2 + (shape.gatedMlp ? 2 : 0) : 3 * o.computeBytes;
}

/**
 * A decoder layer's cross-attention (T5, BART), which the self-attention layer above does not have:
 * per target token its norm, the query's input, the query and the attention's output (or eager
 * attention's probabilities over the source); per source token and decoder layer the keys and
 * values projected from the encoder's output, and their linears' input where they are trainable.
 */
export function crossAttentionBytes(shape: LayerShape, o: LayerActivationOptions, sourceSeq: number): { perTarget: number; perSource: number } {
  const { hidden: h } = shape;
  const q = shape.heads * shape.headDim;
  const e = o.computeBytes;
  let perTarget = (shape.rmsNorm ? 4 : o.residualBytes) * h + linearInputs(h, o.residualBytes, ['q_proj'], o) + linearInputs(q, e, ['o_proj'], o);
  if (o.attention === 'eager') perTarget += q * e + shape.heads * sourceSeq * (4 + (shape.dropout ? 1 : 0) + (e === 4 ? (shape.dropout ? 4 : 0) : 2));
  else perTarget += 2 * q * e;
  if (shape.dropout) perTarget += h;
  const perSource = 2 * q * e + linearInputs(h, o.residualBytes, ['k_proj', 'v_proj'], o);
  return { perTarget, perSource };
}
