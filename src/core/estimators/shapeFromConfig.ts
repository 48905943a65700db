/**
 * From a checkpoint's config.json to the fine-tuning model's TransformerShape: the stage before the
 * estimate (fineTuning.ts), shared by the estimator, the evaluation scripts and the tests.
 */
import { modelWidth } from '../catalog/hf/configs';
import type { TransformerShape } from './fineTuning';
import { moeFromConfig } from './moe';

const GATED = /^(llama|mistral|mixtral|qwen2|qwen2_moe|qwen3|qwen3_moe|gemma|gemma2|gemma3_text|phi3|olmo|olmo2|granite|cohere|starcoder2_gated)$/;

/**
 * The shape of a catalog checkpoint's config.json (transformers' field names, with their defaults
 * where the file leaves them out), or a note saying what is missing. Llama-style models
 * (gated MLP, no biases, no dropout) and BERT-style encoders (LayerNorm with biases, learned
 * positions, dropout 0.1) are told apart by the model type.
 */
export function shapeFromConfig(modelType: string, config: Readonly<Record<string, unknown>>, head: TransformerShape['head']): TransformerShape | string {
  if (modelType === 'gemma3') return gemma3Shape(config, head);
  const num = (name: string): number | undefined => (typeof config[name] === 'number' ? (config[name]) : undefined);
  // DistilBERT's and BART's names for the same values.
  const hidden = modelWidth(config);
  const layers = num('num_hidden_layers') ?? num('n_layer') ?? num('num_layers') ?? num('n_layers') ?? num('encoder_layers');
  const heads = num('num_attention_heads') ?? num('n_head') ?? num('num_heads') ?? num('n_heads') ?? num('encoder_attention_heads');
  const vocab = num('vocab_size');
  if (!hidden || !layers || !heads || !vocab) return `config of ${modelType} without hidden size, layers, heads or vocabulary`;
  // Shapes this model does not describe: ALBERT shares one layer's weights across its layers; ELECTRA's small models and generators embed in fewer dimensions than their hidden size.
  if (modelType === 'albert') return 'ALBERT shares its layers, which the fine-tuning model does not count';
  if (num('embedding_size') !== undefined && num('embedding_size') !== hidden) return `${modelType} with embeddings of ${num('embedding_size')} for a hidden size of ${hidden}, which the fine-tuning model does not count`;
  if (/^(t5|mt5|umt5)$/.test(modelType)) {
    // T5: an encoder and a decoder stack, no biases, RMSNorm, d_kv per head (not d_model / heads), a gated MLP for "gated-gelu", dropout 0.1; transformers' T5Attention is eager only (its position bias).
    return {
      hidden, layers, heads, kvHeads: heads, headDim: num('d_kv') ?? hidden / heads, intermediate: num('d_ff') ?? 4 * hidden, vocab,
      tiedEmbeddings: config.tie_word_embeddings !== false, gatedMlp: typeof config.feed_forward_proj === 'string' && config.feed_forward_proj.startsWith('gated'), bias: false, positions: 0, head,
      dropout: (num('dropout_rate') ?? 0.1) > 0, rmsNorm: true, decoderLayers: num('num_decoder_layers') ?? layers, eagerOnly: true, t5Names: true,
      ...tanhGeluOf(modelType, config),
    };
  }
  if (modelType === 'bloom') {
    // BLOOM: one fused query_key_value linear with biases, LayerNorm (and one after the embeddings), a 4h GELU MLP, tied head; ALiBi attention is eager only.
    return {
      hidden, layers, heads, kvHeads: heads, headDim: hidden / heads, intermediate: 4 * hidden, vocab, tiedEmbeddings: true, gatedMlp: false, bias: true, positions: 0, head,
      dropout: (num('hidden_dropout') ?? 0) > 0, fusedQkv: true, eagerOnly: true, embeddingNorm: true,
    };
  }
  if (modelType === 'falcon') {
    // Falcon: one fused query_key_value (multi-query: one key-value head; the new decoder architecture of
    // Falcon-40B: num_kv_heads), a 4h GELU MLP, LayerNorm, a tied head. parallel_attn (Falcon-7B/40B):
    // attention and MLP side by side behind one norm, or ln_attn and ln_mlp in the new architecture;
    // without it (falcon-rw-1b) one after the other. ALiBi (falcon-rw) is eager only.
    const newArchitecture = config.new_decoder_architecture === true;
    const kvHeads = newArchitecture ? (num('num_kv_heads') ?? heads) : config.multi_query !== false ? 1 : heads;
    const parallel = newArchitecture || config.parallel_attn !== false;
    const norms: 1 | 2 = newArchitecture && (num('num_ln_in_parallel_attn') ?? 2) === 2 ? 2 : 1;
    return {
      hidden, layers, heads, kvHeads, headDim: hidden / heads, intermediate: num('ffn_hidden_size') ?? 4 * hidden, vocab, tiedEmbeddings: config.tie_word_embeddings !== false,
      gatedMlp: false, bias: config.bias === true, positions: 0, head, dropout: (num('hidden_dropout') ?? 0) > 0, fusedQkv: true,
      ...(config.alibi === true ? { eagerOnly: true } : {}), ...(parallel ? { parallelNorms: norms } : {}),
    };
  }
  if (modelType === 'gpt_neox') {
    // GPT-NeoX (Pythia): one fused query_key_value, a 4h GELU MLP (dense_h_to_4h, dense_4h_to_h), LayerNorm, biases, an
    // untied head; with use_parallel_residual (every published checkpoint) attention and MLP read the layer's input side
    // by side through two norms.
    return {
      hidden, layers, heads, kvHeads: heads, headDim: hidden / heads, intermediate: num('intermediate_size') ?? 4 * hidden, vocab,
      tiedEmbeddings: config.tie_word_embeddings === true, gatedMlp: false, bias: true, positions: 0, head, dropout: (num('hidden_dropout') ?? 0) > 0,
      fusedQkv: true, ...(config.use_parallel_residual !== false ? { parallelNorms: 2 as const } : {}), ...tanhGeluOf(modelType, config),
    };
  }
  if (modelType === 'bart') {
    // BART: an encoder and a decoder stack with biases and LayerNorm, learned positions (offset by 2) on both sides, a tied head, dropout 0.1.
    return {
      hidden, layers, heads, kvHeads: heads, headDim: hidden / heads, intermediate: num('encoder_ffn_dim') ?? 4 * hidden, vocab, tiedEmbeddings: true, gatedMlp: false, bias: true,
      positions: 2 * ((num('max_position_embeddings') ?? 1024) + 2), head, dropout: (num('dropout') ?? 0.1) > 0, decoderLayers: num('decoder_layers') ?? layers,
      ...tanhGeluOf(modelType, config),
    };
  }
  const bert = /^(bert|roberta|xlm-roberta|electra|deberta|distilbert)$/.test(modelType);
  // GPT-2, GPT-Neo and OPT: biases, LayerNorm, learned positions (OPT's offset by 2), a tied head; GPT-2's query, key and value are one Conv1D (c_attn).
  const gpt = /^(gpt2|gpt_neo|opt)$/.test(modelType);
  const learnedPositions = bert ? (num('max_position_embeddings') ?? 512) + (num('type_vocab_size') ?? 0) : gpt ? (num('n_positions') ?? num('max_position_embeddings') ?? 1024) + (modelType === 'opt' ? 2 : 0) : 0;
  const dropoutRate = num('hidden_dropout_prob') ?? num('resid_pdrop') ?? num('resid_dropout') ?? num('dropout') ?? (modelType === 'gpt2' ? 0.1 : 0);
  // Gemma ties its head to the embeddings unless told otherwise; other gated (Llama-style) decoders do not.
  const tiedByDefault = !GATED.test(modelType) || /^gemma/.test(modelType);
  const moe = moeFromConfig(modelType, config);
  if (typeof moe === 'string') return moe;
  return {
    hidden,
    layers,
    heads,
    kvHeads: num('num_key_value_heads') ?? heads,
    headDim: num('head_dim') ?? hidden / heads,
    intermediate: num('intermediate_size') ?? num('n_inner') ?? num('ffn_dim') ?? num('hidden_dim') ?? 4 * hidden,
    vocab,
    tiedEmbeddings: typeof config.tie_word_embeddings === 'boolean' ? config.tie_word_embeddings : tiedByDefault,
    gatedMlp: GATED.test(modelType),
    bias: bert || gpt || config.attention_bias === true,
    positions: learnedPositions,
    head,
    dropout: bert || dropoutRate > 0,
    rmsNorm: GATED.test(modelType),
    ...(modelType === 'gpt2' ? { fusedQkv: true } : {}),
    // Phi-3 (and Phi-3.5, Phi-4): qkv_proj and gate_up_proj. Gemma-2: four norms a layer, soft-capped logits. OLMo: norms
    // without parameters. OLMo-2: norms after attention and MLP, and over the queries and keys. Qwen3: norms over each head's queries and
    // keys. Gemma-3's text model: Gemma-2's norms and Qwen3's.
    ...(modelType === 'phi3' ? { fusedQkv: true, fusedGateUp: true } : {}),
    ...(modelType === 'gemma2' || modelType === 'gemma3_text' ? { postNorms: 'extra' as const, normWeightFp32: true, ...(typeof config.final_logit_softcapping === 'number' ? { logitSoftcap: true } : {}) } : {}),
    ...(modelType === 'olmo' ? { parameterFreeNorms: true } : {}),
    ...(modelType === 'olmo2' ? { postNorms: 'instead' as const, qkNorms: true } : {}),
    ...(modelType === 'qwen3' || modelType === 'qwen3_moe' || modelType === 'gemma3_text' ? { qkNorms: 'perHead' as const } : {}),
    ...(modelType === 'qwen2_moe' || modelType === 'qwen2' ? { qkvBias: true } : {}),
    ...(moe ? { moe } : {}),
    ...tanhGeluOf(modelType, config),
  };
}

/** Model types whose config's `activation_function` defaults to transformers' gelu_new when the file leaves it out. */
const GELU_NEW_BY_DEFAULT = /^(gpt2|gpt_neo|gptj|codegen)$/;

/**
 * The MLP's activation where transformers writes GELU as the tanh formula in Python operations
 * (savedActivations.ts, LayerShape.tanhGelu), from the config's `activation_function` (GPT-2,
 * GPT-Neo, GPT-J, BART), `hidden_act` (Phi) or T5's `feed_forward_proj` (gated-gelu runs gelu_new).
 */
function tanhGeluOf(modelType: string, config: Readonly<Record<string, unknown>>): Pick<TransformerShape, 'tanhGelu'> {
  const t5 = /^(t5|mt5|umt5)$/.test(modelType);
  const declared = t5
    ? config.feed_forward_proj === 'gated-gelu' ? 'gelu_new' : typeof config.feed_forward_proj === 'string' ? config.feed_forward_proj.split('-').at(-1) : undefined
    : [config.activation_function, config.hidden_act].find((value): value is string => typeof value === 'string');
  const name = declared ?? (GELU_NEW_BY_DEFAULT.test(modelType) ? 'gelu_new' : undefined);
  return name === 'gelu_new' ? { tanhGelu: 'new' } : name === 'gelu_fast' ? { tanhGelu: 'fast' } : {};
}

/**
 * Gemma-3's multimodal models: the text model's shape (gemma3_text), holding the SigLIP vision tower
 * and the multimodal projector, which a text batch never runs (catalog/hf/models/gemma3.ts builds
 * the same modules).
 */
function gemma3Shape(config: Readonly<Record<string, unknown>>, head: TransformerShape['head']): TransformerShape | string {
  const text = config.text_config;
  if (typeof text !== 'object' || text === null) return 'Gemma-3 config without its text_config';
  const shape = shapeFromConfig('gemma3_text', text as Record<string, unknown>, head);
  if (typeof shape === 'string') return shape;
  const vision = (typeof config.vision_config === 'object' && config.vision_config !== null ? config.vision_config : {}) as Record<string, unknown>;
  // SiglipVisionConfig's defaults where the file leaves a value out.
  const v = (name: string, fallback: number) => (typeof vision[name] === 'number' ? vision[name] : fallback);
  const d = v('hidden_size', 768);
  const inter = v('intermediate_size', 3072);
  const patch = v('patch_size', 16);
  const patches = (v('image_size', 224) / patch) ** 2;
  // Patch convolution (with bias) and positions; per layer two LayerNorms, four biased d x d projections and the biased MLP; the last LayerNorm.
  const tower = v('num_channels', 3) * patch * patch * d + d + patches * d + v('num_hidden_layers', 12) * (4 * d + 4 * (d * d + d) + 2 * d * inter + inter + d) + 2 * d;
  // The projector: a vision x text matrix and an RMS norm over the vision width.
  const projector = d * shape.hidden + d;
  return { ...shape, heldParams: tower + projector };
}
