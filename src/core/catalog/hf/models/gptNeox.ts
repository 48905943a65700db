/**
 * GPT-NeoX (transformers 5.18.0, models/gpt_neox/modeling_gpt_neox.py; EleutherAI/pythia-160m ...
 * pythia-12b, gpt-neox-20b). torch.nn throughout: `embed_in` and its dropout, then layers of two
 * LayerNorms, one fused `query_key_value` (3 x hidden) and `dense` (biases by attention_bias), the MLP's
 * `dense_h_to_4h` and `dense_4h_to_h` (always with biases) and a dropout after each block. With
 * use_parallel_residual (Pythia, GPT-NeoX-20B) attention and MLP read the layer's input side by side
 * through their own norms (`input_layernorm`, `post_attention_layernorm`), else one after the other:
 * the same calls either way. Rotary positions over part of each head (rotary_pct) hold only buffers;
 * attention dropout is functional; `gelu` is the library's activation (no row). The causal-LM head
 * `lm_head` has no bias and is not tied by default; the heads keep the base model as `gpt_neox`.
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'hidden_size');
  const inter = num(c, 'intermediate_size');
  const bias = c.attention_bias !== false;
  const root = userModule('GPTNeoXModel');
  const embedIn = root.add('embed_in', embedding(num(c, 'vocab_size'), d));
  const embDropout = root.add('emb_dropout', plain('Dropout'));
  const list = root.add('layers', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule('GPTNeoXLayer'));
    const inputNorm = layer.add('input_layernorm', layerNorm(d));
    const postNorm = layer.add('post_attention_layernorm', layerNorm(d));
    const attnDropout = layer.add('post_attention_dropout', plain('Dropout'));
    const mlpDropout = layer.add('post_mlp_dropout', plain('Dropout'));
    const attn = layer.add('attention', userModule('GPTNeoXAttention'));
    const qkv = attn.add('query_key_value', linear(d, 3 * d, bias));
    const dense = attn.add('dense', linear(d, d, bias));
    const mlp = layer.add('mlp', userModule('GPTNeoXMLP'));
    const up = mlp.add('dense_h_to_4h', linear(d, inter));
    const down = mlp.add('dense_4h_to_h', linear(inter, d));
    const act = mlp.add('act', activation(str(c, 'hidden_act')));
    layers.push((trace, t) => {
      trace.call(inputNorm, [t, d]);
      trace.call(qkv, [t, 3 * d]);
      trace.call(dense, [t, d]);
      trace.call(attnDropout, [t, d]);
      trace.call(postNorm, [t, d]);
      trace.call(up, [t, inter]);
      trace.call(act, [t, inter]);
      trace.call(down, [t, d]);
      trace.call(mlpDropout, [t, d]);
    });
  }
  const finalNorm = root.add('final_layer_norm', layerNorm(d));
  root.add('rotary_emb', userModule('GPTNeoXRotaryEmbedding'));
  return [
    root,
    (trace, t) => {
      trace.call(embedIn, [t, d]);
      trace.call(embDropout, [t, d]);
      for (const layer of layers) layer(trace, t);
      trace.call(finalNorm, [t, d]);
    },
  ];
}

const classes: Record<string, ClassSpec> = decoderClasses({
  prefix: 'GPTNeoX',
  causalLm: 'GPTNeoXForCausalLM',
  base: 'gpt_neox',
  qaBase: 'gpt_neox',
  hidden: 'hidden_size',
  embedding: 'embed_in',
  tokenClassifier: () => ({ name: 'classifier', bias: true }),
}, base);

export const gptNeoxTypeSpec: ModelTypeSpec = {
  modelType: 'gpt_neox',
  input: 'tokens',
  classes,
  defaultShape: (c) => [num(c, 'max_position_embeddings')],
};
