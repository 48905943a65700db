/**
 * Phi-3 (transformers 5.18.0, models/phi3/modeling_phi3.py; microsoft/Phi-3-mini-4k-instruct,
 * Phi-3-mini-128k-instruct, Phi-3-medium-4k-instruct, Phi-3.5-mini-instruct, microsoft/phi-4): LLaMA's
 * layout with fused projections, so its linears are named unlike LLaMA's. The attention holds one
 * `qkv_proj` (queries, then grouped keys and values; registered after `o_proj`), the MLP one
 * `gate_up_proj` whose output is split into the gate and the up half, and `down_proj`. Each block's
 * output passes its own dropout module (`resid_attn_dropout`, `resid_mlp_dropout`: rows even at
 * p=0). RMS norms are the library's (Parameter rows); `silu` is the library's activation (no row);
 * rotary positions (LongRoPE for the 128k variants) hold only buffers. Heads: the generic ones on `model`.
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, linear, plain, userModule, weightOnlyNorm } from '../layers';
import type { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'hidden_size');
  const inter = num(c, 'intermediate_size');
  const headDim = Math.floor(d / num(c, 'num_attention_heads'));
  const q = num(c, 'num_attention_heads') * headDim;
  const qkv = q + 2 * num(c, 'num_key_value_heads') * headDim;
  const root = userModule('Phi3Model');
  const embed = root.add('embed_tokens', embedding(num(c, 'vocab_size'), d));
  const list = root.add('layers', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule('Phi3DecoderLayer'));
    const attn = layer.add('self_attn', userModule('Phi3Attention'));
    const oProj = attn.add('o_proj', linear(q, d, false));
    const qkvProj = attn.add('qkv_proj', linear(d, qkv, false));
    const mlp = layer.add('mlp', userModule('Phi3MLP'));
    const gateUp = mlp.add('gate_up_proj', linear(d, 2 * inter, false));
    const down = mlp.add('down_proj', linear(inter, d, false));
    const act = mlp.add('activation_fn', activation(str(c, 'hidden_act')));
    layer.add('input_layernorm', weightOnlyNorm('Phi3RMSNorm', d));
    layer.add('post_attention_layernorm', weightOnlyNorm('Phi3RMSNorm', d));
    const attnDropout = layer.add('resid_attn_dropout', plain('Dropout'));
    const mlpDropout = layer.add('resid_mlp_dropout', plain('Dropout'));
    layers.push((trace, t) => {
      trace.call(qkvProj, [t, qkv]);
      trace.call(oProj, [t, d]);
      trace.call(attnDropout, [t, d]);
      trace.call(gateUp, [t, 2 * inter]);
      // The activation runs on the gate half only.
      trace.call(act, [t, inter]);
      trace.call(down, [t, d]);
      trace.call(mlpDropout, [t, d]);
    });
  }
  root.add('norm', weightOnlyNorm('Phi3RMSNorm', d));
  root.add('rotary_emb', userModule('Phi3RotaryEmbedding'));
  return [
    root,
    (trace, t) => {
      trace.call(embed, [t, d]);
      for (const layer of layers) layer(trace, t);
    },
  ];
}

const heads = decoderClasses({
  prefix: 'Phi3',
  causalLm: 'Phi3ForCausalLM',
  base: 'model',
  hidden: 'hidden_size',
  embedding: 'embed_tokens',
  tokenClassifier: (c) => ({ name: 'score', bias: c.token_classification_bias !== false }),
}, base);
// The library has no Phi3ForQuestionAnswering.
const classes: Record<string, ClassSpec> = Object.fromEntries(Object.entries(heads).filter(([name]) => name !== 'Phi3ForQuestionAnswering'));

export const phi3TypeSpec: ModelTypeSpec = {
  modelType: 'phi3',
  input: 'tokens',
  classes,
  defaultShape: (c) => [Math.min(4096, num(c, 'max_position_embeddings'))],
};
