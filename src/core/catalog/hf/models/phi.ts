/**
 * Phi (transformers 5.18.0, models/phi/modeling_phi.py; microsoft/phi-1, phi-1_5, phi-2). Each
 * layer normalises once and runs attention and the MLP side by side on the same input, each output
 * through the layer's one `resid_dropout` (two calls, two rows). The projections and LayerNorms are
 * torch.nn; the activation is the library's (`gelu_new`: no row); rotary positions and attention
 * dropout are functional. The causal-LM head has a bias. `qk_layernorm` is refused (not covered).
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'hidden_size');
  const inter = num(c, 'intermediate_size');
  const headDim = Math.floor(d / num(c, 'num_attention_heads'));
  const q = num(c, 'num_attention_heads') * headDim;
  const kv = num(c, 'num_key_value_heads') * headDim;
  const root = userModule('PhiModel');
  const embed = root.add('embed_tokens', embedding(num(c, 'vocab_size'), d));
  const list = root.add('layers', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule('PhiDecoderLayer'));
    const attn = layer.add('self_attn', userModule('PhiAttention'));
    const qProj = attn.add('q_proj', linear(d, q));
    const kProj = attn.add('k_proj', linear(d, kv));
    const vProj = attn.add('v_proj', linear(d, kv));
    const dense = attn.add('dense', linear(q, d));
    const mlp = layer.add('mlp', userModule('PhiMLP'));
    const act = mlp.add('activation_fn', activation(str(c, 'hidden_act')));
    const fc1 = mlp.add('fc1', linear(d, inter));
    const fc2 = mlp.add('fc2', linear(inter, d));
    const norm = layer.add('input_layernorm', layerNorm(d));
    const dropout = layer.add('resid_dropout', plain('Dropout'));
    layers.push((trace, t) => {
      trace.call(norm, [t, d]);
      trace.call(qProj, [t, q]);
      trace.call(kProj, [t, kv]);
      trace.call(vProj, [t, kv]);
      trace.call(dense, [t, d]);
      trace.call(dropout, [t, d]);
      trace.call(fc1, [t, inter]);
      trace.call(act, [t, inter]);
      trace.call(fc2, [t, d]);
      trace.call(dropout, [t, d]);
    });
  }
  root.add('rotary_emb', userModule('PhiRotaryEmbedding'));
  const embedDropout = root.add('embed_dropout', plain('Dropout'));
  const finalNorm = root.add('final_layernorm', layerNorm(d));
  return [
    root,
    (trace, t) => {
      trace.call(embed, [t, d]);
      trace.call(embedDropout, [t, d]);
      for (const layer of layers) layer(trace, t);
      trace.call(finalNorm, [t, d]);
    },
  ];
}

const classes: Record<string, ClassSpec> = {
  ...decoderClasses({
    prefix: 'Phi',
    causalLm: 'PhiForCausalLM',
    base: 'model',
    hidden: 'hidden_size',
    embedding: 'embed_tokens',
    lmHeadBias: true,
    tokenClassifier: (c) => ({ name: 'score', bias: c.token_classification_bias !== false }),
  }, base),
};
// The library has no PhiForQuestionAnswering.
delete classes.PhiForQuestionAnswering;

export const phiTypeSpec: ModelTypeSpec = {
  modelType: 'phi',
  input: 'tokens',
  classes,
  defaultShape: (c) => [num(c, 'max_position_embeddings')],
};
