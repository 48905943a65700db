/**
 * BLOOM (transformers 5.18.0, models/bloom/modeling_bloom.py; bigscience/bloom-560m ... bloom-7b1).
 * ALiBi positions are computed, not learned (no position table, no length limit). Each block's
 * attention projects q, k and v with one fused `query_key_value` and runs its `attention_dropout`
 * module on the probabilities (`[heads, T, T]` per sample); the MLP's BloomGelu is the library's
 * (no row); the residual dropouts are functional. The heads are the generic decoder ones, on
 * `transformer`. `slow_but_exact` with pretraining_tp > 1 slices the projections into functional
 * calls and is refused.
 */
import { num, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { embedding, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'hidden_size');
  const heads = num(c, 'n_head');
  const root = userModule('BloomModel');
  const words = root.add('word_embeddings', embedding(num(c, 'vocab_size'), d));
  const wordsNorm = root.add('word_embeddings_layernorm', layerNorm(d));
  const h = root.add('h', userModule('ModuleList'));
  const blocks: Forward[] = [];
  for (let i = 0; i < num(c, 'n_layer'); i++) {
    const block = h.add(String(i), userModule('BloomBlock'));
    const inputNorm = block.add('input_layernorm', layerNorm(d));
    const attn = block.add('self_attention', userModule('BloomAttention'));
    const qkv = attn.add('query_key_value', linear(d, 3 * d));
    const dense = attn.add('dense', linear(d, d));
    const probsDropout = attn.add('attention_dropout', plain('Dropout'));
    const postNorm = block.add('post_attention_layernorm', layerNorm(d));
    const mlp = block.add('mlp', userModule('BloomMLP'));
    const up = mlp.add('dense_h_to_4h', linear(d, 4 * d));
    mlp.add('gelu_impl', userModule('BloomGelu'));
    const down = mlp.add('dense_4h_to_h', linear(4 * d, d));
    blocks.push((trace, t) => {
      trace.call(inputNorm, [t, d]);
      trace.call(qkv, [t, 3 * d]);
      trace.call(probsDropout, [heads, t, t]);
      trace.call(dense, [t, d]);
      trace.call(postNorm, [t, d]);
      trace.call(up, [t, 4 * d]);
      trace.call(down, [t, d]);
    });
  }
  const lnF = root.add('ln_f', layerNorm(d));
  return [
    root,
    (trace, t) => {
      trace.call(words, [t, d]);
      trace.call(wordsNorm, [t, d]);
      for (const block of blocks) block(trace, t);
      trace.call(lnF, [t, d]);
    },
  ];
}

const classes: Record<string, ClassSpec> = {
  ...decoderClasses({
    prefix: 'Bloom',
    causalLm: 'BloomForCausalLM',
    base: 'transformer',
    hidden: 'hidden_size',
    embedding: 'word_embeddings',
    tokenClassifier: () => ({ name: 'classifier', bias: true }),
  }, base),
};

export const bloomTypeSpec: ModelTypeSpec = {
  modelType: 'bloom',
  input: 'tokens',
  classes,
  // BLOOM was trained on 2048-token sequences; its config has no length field.
  defaultShape: () => [2048],
};
