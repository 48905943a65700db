/**
 * LLaMA-style decoders (transformers 5.18.0, models/llama/modeling_llama.py and the generic heads
 * of modeling_layers.py). LlamaRMSNorm is the library's own module: its `weight` is a Parameter row
 * and its calls are no rows. The rotary embedding holds only buffers. `silu` is the library's
 * SiLUActivation in 5.18 (no row); attention dropout is functional. Rotary positions have no hard
 * limit, so a sequence past max_position_embeddings runs (with a note).
 */
import { num, str, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type ModelTypeSpec, type TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, linear, userModule } from '../layers';
import { Module } from '../moduleTree';
import { decoderHeads } from './decoderHeads';

function rmsNorm(d: number): Module {
  const m = new Module('LlamaRMSNorm', false);
  m.param('weight', d);
  return m;
}

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'hidden_size');
  const inter = num(c, 'intermediate_size');
  const headDim = num(c, 'head_dim');
  const q = num(c, 'num_attention_heads') * headDim;
  const kv = num(c, 'num_key_value_heads') * headDim;
  const attnBias = c.attention_bias === true;
  const mlpBias = c.mlp_bias === true;
  const root = userModule('LlamaModel');
  const embed = root.add('embed_tokens', embedding(num(c, 'vocab_size'), d));
  const list = root.add('layers', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule('LlamaDecoderLayer'));
    const attn = layer.add('self_attn', userModule('LlamaAttention'));
    const qProj = attn.add('q_proj', linear(d, q, attnBias));
    const kProj = attn.add('k_proj', linear(d, kv, attnBias));
    const vProj = attn.add('v_proj', linear(d, kv, attnBias));
    const oProj = attn.add('o_proj', linear(q, d, attnBias));
    const mlp = layer.add('mlp', userModule('LlamaMLP'));
    const gate = mlp.add('gate_proj', linear(d, inter, mlpBias));
    const up = mlp.add('up_proj', linear(d, inter, mlpBias));
    const down = mlp.add('down_proj', linear(inter, d, mlpBias));
    const act = mlp.add('act_fn', activation(str(c, 'hidden_act')));
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
  root.add('rotary_emb', userModule('LlamaRotaryEmbedding'));
  return [
    root,
    (trace, t) => {
      trace.call(embed, [t, d]);
      for (const layer of layers) layer(trace, t);
    },
  ];
}

const classes: Record<string, ClassSpec> = {
  LlamaModel: {
    build(c) {
      const [root, forward] = base(c);
      return tokenModel(root, forward);
    },
  },
  ...decoderHeads({
    prefix: 'Llama',
    causalLm: 'LlamaForCausalLM',
    base: 'model',
    hidden: 'hidden_size',
    embedding: 'embed_tokens',
    tokenClassifier: (c) => ({ name: 'score', bias: c.token_classification_bias !== false }),
  }, base),
};

export const llamaTypeSpec: ModelTypeSpec = {
  modelType: 'llama',
  input: 'tokens',
  classes,
  defaultShape: (c) => [Math.min(4096, num(c, 'max_position_embeddings'))],
};
