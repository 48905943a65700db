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

function base(entry: LlamaStyleEntry, c: HfConfig): [Module, Forward] {
  const p = entry.prefix;
  const rmsNorm = (d: number): Module => weightOnlyNorm(`${p}RMSNorm`, d);
  const d = num(c, 'hidden_size');
  const inter = num(c, 'intermediate_size');
  const headDim = num(c, 'head_dim');
  const q = num(c, 'num_attention_heads') * headDim;
  const kv = num(c, 'num_key_value_heads') * headDim;
  const attnBias = entry.projectionBias;
  const mlpBias = entry.mlpBias;
  const vocab = num(c, 'vocab_size');
  const root = userModule(`${p}Model`);
  let embed: Module;
  if (entry.embedding.torch) {
    embed = root.add('embed_tokens', embedding(vocab, d));
  } else {
    embed = root.add('embed_tokens', userModule(entry.embedding.type));
    embed.param('weight', vocab * d);
  }
  const list = root.add('layers', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule(`${p}DecoderLayer`));
    const attn = layer.add('self_attn', userModule(`${p}Attention`));
    const qProj = attn.add('q_proj', linear(d, q, hasBias(c, attnBias.q_proj)));
    const kProj = attn.add('k_proj', linear(d, kv, hasBias(c, attnBias.k_proj)));
    const vProj = attn.add('v_proj', linear(d, kv, hasBias(c, attnBias.v_proj)));
    const oProj = attn.add('o_proj', linear(q, d, hasBias(c, attnBias.o_proj)));
    const mlp = layer.add('mlp', userModule(`${p}MLP`));
    const gate = mlp.add('gate_proj', linear(d, inter, hasBias(c, mlpBias.gate_proj)));
    const up = mlp.add('up_proj', linear(d, inter, hasBias(c, mlpBias.up_proj)));
    const down = mlp.add('down_proj', linear(inter, d, hasBias(c, mlpBias.down_proj)));
    const act = mlp.add('act_fn', activation(str(c, entry.activationField)));
    layer.add('input_layernorm', rmsNorm(d));
    layer.add('post_attention_layernorm', rmsNorm(d));
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
  root.add('norm', rmsNorm(d));
  root.add('rotary_emb', userModule(`${p}RotaryEmbedding`));
  return [
    root,
    (trace, t) => {
      // The library's own embedding (Gemma) computes inside a module that is not a row.
      if (entry.embedding.torch) trace.call(embed, [t, d]);
      for (const layer of layers) layer(trace, t);
    },
  ];
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
