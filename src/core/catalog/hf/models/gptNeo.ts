/**
 * GPT-Neo (transformers 5.18.0, models/gpt_neo/modeling_gpt_neo.py; EleutherAI/gpt-neo-125m, 1.3B,
 * 2.7B). GPT-2's layout with torch.nn Linears: q, k and v without bias, the attention's
 * `attn_dropout` module on the probabilities (`[heads, T, T]` per sample) and `resid_dropout` on
 * its output. Global and local layers (attention_types) differ only in the mask, not in modules.
 * The activation is the library's (`gelu_new`: no row). Heads are the generic decoder ones on
 * `transformer`.
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { activation, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';
import { eleutherAttention } from './eleutherAttention';
import { gpt2StyleStack } from './gpt2';

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'hidden_size');
  const inner = c.intermediate_size === null ? 4 * d : num(c, 'intermediate_size');
  const heads = num(c, 'num_heads');
  return gpt2StyleStack('GPTNeoModel', num(c, 'vocab_size'), num(c, 'max_position_embeddings'), d, (h) => {
    const blocks: Forward[] = [];
    for (let i = 0; i < num(c, 'num_layers'); i++) {
      const block = h.add(String(i), userModule('GPTNeoBlock'));
      const ln1 = block.add('ln_1', layerNorm(d));
      const attn = eleutherAttention(block.add('attn', userModule('GPTNeoAttention')).add('attention', userModule('GPTNeoSelfAttention')), d, heads, true);
      const ln2 = block.add('ln_2', layerNorm(d));
      const mlp = block.add('mlp', userModule('GPTNeoMLP'));
      const fc = mlp.add('c_fc', linear(d, inner));
      const proj = mlp.add('c_proj', linear(inner, d));
      const act = mlp.add('act', activation(str(c, 'activation_function')));
      const mlpDropout = mlp.add('dropout', plain('Dropout'));
      blocks.push((trace, t) => {
        trace.call(ln1, [t, d]);
        attn(trace, t);
        trace.call(ln2, [t, d]);
        trace.call(fc, [t, inner]);
        trace.call(act, [t, inner]);
        trace.call(proj, [t, d]);
        trace.call(mlpDropout, [t, d]);
      });
    }
    return blocks;
  });
}

const classes: Record<string, ClassSpec> = {
  ...decoderClasses({
    prefix: 'GPTNeo',
    causalLm: 'GPTNeoForCausalLM',
    base: 'transformer',
    hidden: 'hidden_size',
    embedding: 'wte',
    tokenClassifier: () => ({ name: 'classifier', bias: true }),
  }, base),
};

export const gptNeoTypeSpec: ModelTypeSpec = {
  modelType: 'gpt_neo',
  input: 'tokens',
  classes,
  defaultShape: (c) => [num(c, 'max_position_embeddings')],
  maxTokens: (c) => num(c, 'max_position_embeddings'),
};
