/**
 * LLaMA-style decoders (transformers 5.18.0: models/llama/modeling_llama.py, and Mistral, Qwen2 and
 * Gemma, which the library builds with the same tree; the generic heads of modeling_layers.py).
 * What differs between them is data read from the library (llamaStyle.json): class names, which
 * projections carry a bias, the activation's config field, and Gemma's embedding, the library's own
 * subclass of nn.Embedding (so its weight is a Parameter row and its call no row). The RMS norms are
 * the library's own modules (Parameter rows, calls no rows); the rotary embedding holds only
 * buffers; `silu` is the library's SiLUActivation (no row); attention dropout is functional.
 * Rotary positions have no hard limit, so a sequence past max_position_embeddings runs (with a note).
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, linear, userModule, weightOnlyNorm } from '../layers';
import { LLAMA_STYLE, LLAMA_STYLE_TYPES, type BiasRule, type LlamaStyleEntry, type LlamaStyleType } from '../llamaStyle';
import { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';

function hasBias(c: HfConfig, rule: BiasRule): boolean {
  return typeof rule === 'boolean' ? rule : c[rule] === true;
}

/**
 * What tells the LLaMA tree's relatives apart (Gemma-2's four norms a layer, OLMo's norms without
 * weights, OLMo-2's norms after attention and MLP and on the queries and keys): the tree is otherwise
 * LLaMA's, registered in LLaMA's order.
 */
export interface LlamaTreeSpec {
  /** Class-name prefix: `Llama`, `Gemma2`. */
  readonly prefix: string;
  /** The base model's class where it is not `${prefix}Model` (Gemma-3's text model: Gemma3TextModel). */
  readonly baseClass?: string;
  /** `embed_tokens`: nn.Embedding (a row), or the library's own subclass (a Parameter row, its call no row). */
  readonly embedding: { readonly type: string; readonly torch: boolean };
  readonly bias: Readonly<Record<'q_proj' | 'k_proj' | 'v_proj' | 'o_proj' | 'gate_proj' | 'up_proj' | 'down_proj', boolean>>;
  /** The MLP's activation name (ACT2FN). */
  readonly activation: string;
  /** The decoder layer's norms after self_attn and mlp, in registration order. */
  readonly layerNorms: readonly string[];
  /** One norm of `d` features: the library's own module, so never a row. */
  norm(d: number): Module;
  /**
   * `q_norm` and `k_norm` over the projected queries and keys, registered after o_proj: over all heads'
   * width (OLMo-2), or over one head's, shared by the heads (Qwen3: `perHead`).
   */
  readonly qkNorms?: boolean | 'perHead';
}

/** The base model of a LLaMA-style tree: embed_tokens, layers of self_attn and mlp with their norms, norm, rotary_emb. */
export function llamaTree(spec: LlamaTreeSpec, c: HfConfig): [Module, Forward] {
  const p = spec.prefix;
  const d = num(c, 'hidden_size');
  const inter = num(c, 'intermediate_size');
  const headDim = typeof c.head_dim === 'number' ? c.head_dim : Math.floor(d / num(c, 'num_attention_heads'));
  const q = num(c, 'num_attention_heads') * headDim;
  const kv = num(c, 'num_key_value_heads') * headDim;
  const bias = spec.bias;
  const vocab = num(c, 'vocab_size');
  const root = userModule(spec.baseClass ?? `${p}Model`);
  let embed: Module;
  if (spec.embedding.torch) {
    embed = root.add('embed_tokens', embedding(vocab, d));
  } else {
    embed = root.add('embed_tokens', userModule(spec.embedding.type));
    embed.param('weight', vocab * d);
  }
  const list = root.add('layers', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule(`${p}DecoderLayer`));
    const attn = layer.add('self_attn', userModule(`${p}Attention`));
    const qProj = attn.add('q_proj', linear(d, q, bias.q_proj));
    const kProj = attn.add('k_proj', linear(d, kv, bias.k_proj));
    const vProj = attn.add('v_proj', linear(d, kv, bias.v_proj));
    const oProj = attn.add('o_proj', linear(q, d, bias.o_proj));
    if (spec.qkNorms) {
      attn.add('q_norm', spec.norm(spec.qkNorms === 'perHead' ? headDim : q));
      attn.add('k_norm', spec.norm(spec.qkNorms === 'perHead' ? headDim : kv));
    }
    const mlp = layer.add('mlp', userModule(`${p}MLP`));
    const gate = mlp.add('gate_proj', linear(d, inter, bias.gate_proj));
    const up = mlp.add('up_proj', linear(d, inter, bias.up_proj));
    const down = mlp.add('down_proj', linear(inter, d, bias.down_proj));
    const act = mlp.add('act_fn', activation(spec.activation));
    for (const name of spec.layerNorms) layer.add(name, spec.norm(d));
    layers.push((trace, t) => {
      trace.call(qProj, [t, q]);
      trace.call(kProj, [t, kv]);
      trace.call(vProj, [t, kv]);
      trace.call(oProj, [t, d]);
      trace.call(gate, [t, inter]);
      trace.call(act, [t, inter]);
      trace.call(up, [t, inter]);
      trace.call(down, [t, d]);
    });
  }
  root.add('norm', spec.norm(d));
  root.add('rotary_emb', userModule(`${p}RotaryEmbedding`));
  return [
    root,
    (trace, t) => {
      // The library's own embedding (Gemma) computes inside a module that is not a row.
      if (spec.embedding.torch) trace.call(embed, [t, d]);
      for (const layer of layers) layer(trace, t);
    },
  ];
}

function base(entry: LlamaStyleEntry, c: HfConfig): [Module, Forward] {
  const rule = (r: BiasRule) => hasBias(c, r);
  return llamaTree({
    prefix: entry.prefix,
    embedding: entry.embedding,
    bias: {
      q_proj: rule(entry.projectionBias.q_proj), k_proj: rule(entry.projectionBias.k_proj), v_proj: rule(entry.projectionBias.v_proj),
      o_proj: rule(entry.projectionBias.o_proj), gate_proj: rule(entry.mlpBias.gate_proj), up_proj: rule(entry.mlpBias.up_proj),
      down_proj: rule(entry.mlpBias.down_proj),
    },
    activation: str(c, entry.activationField),
    layerNorms: ['input_layernorm', 'post_attention_layernorm'],
    norm: (d) => weightOnlyNorm(`${entry.prefix}RMSNorm`, d),
  }, c);
}

function typeSpec(entry: LlamaStyleEntry): ModelTypeSpec {
  const build = (c: HfConfig) => base(entry, c);
  const all: Record<string, ClassSpec> = {
    ...decoderClasses({
      prefix: entry.prefix,
      causalLm: `${entry.prefix}ForCausalLM`,
      base: 'model',
      ...(entry.headBase[`${entry.prefix}ForQuestionAnswering`] ? { qaBase: entry.headBase[`${entry.prefix}ForQuestionAnswering`] } : {}),
      hidden: 'hidden_size',
      embedding: 'embed_tokens',
      tokenClassifier: (c) => ({ name: 'score', bias: c.token_classification_bias !== false }),
    }, build),
  };
  // Only the heads the library has for this type (Gemma has no question-answering class).
  const classes = Object.fromEntries(entry.classes.map((name) => {
    const spec = all[name];
    if (!spec) throw new Error(`llamaStyle.json: ${entry.modelType} lists ${name}, which the LLaMA-style heads do not build`);
    const attribute = entry.headBase[name];
    if (!name.endsWith('ForQuestionAnswering') && attribute !== undefined && attribute !== 'model') {
      throw new Error(`llamaStyle.json: ${name} keeps its base model as ${attribute}, which the LLaMA-style heads do not build`);
    }
    return [name, spec];
  }));
  return {
    modelType: entry.modelType,
    input: 'tokens',
    classes,
    defaultShape: (c) => [Math.min(4096, num(c, 'max_position_embeddings'))],
  };
}

export const LLAMA_STYLE_SPECS: Readonly<Record<LlamaStyleType, ModelTypeSpec>> = Object.fromEntries(
  LLAMA_STYLE_TYPES.map((t) => [t, typeSpec(LLAMA_STYLE[t])]),
) as Record<LlamaStyleType, ModelTypeSpec>;
