/**
 * GPT-J (transformers 5.18.0, models/gptj/modeling_gptj.py; EleutherAI/gpt-j-6b). Each block
 * normalises once and runs attention and the MLP side by side on that output. q, k, v and
 * out_proj have no bias; the attention's `attn_dropout` module runs on the probabilities
 * (`[heads, T, T]` per sample); rotary positions come from a sin/cos buffer of `n_positions` rows (the length limit); the
 * activation is the library's (`gelu_new`: no row). The causal-LM head has a bias and is not tied
 * by default.
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';
import { eleutherAttention } from './eleutherAttention';

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'n_embd');
  const inner = c.n_inner === null ? 4 * d : num(c, 'n_inner');
  const heads = num(c, 'n_head');
  const root = userModule('GPTJModel');
  const wte = root.add('wte', embedding(num(c, 'vocab_size'), d));
  const drop = root.add('drop', plain('Dropout'));
  const h = root.add('h', userModule('ModuleList'));
  const blocks: Forward[] = [];
  for (let i = 0; i < num(c, 'n_layer'); i++) {
    const block = h.add(String(i), userModule('GPTJBlock'));
    const ln1 = block.add('ln_1', layerNorm(d));
    const attn = eleutherAttention(block.add('attn', userModule('GPTJAttention')), d, heads, false);
    const mlp = block.add('mlp', userModule('GPTJMLP'));
    const fcIn = mlp.add('fc_in', linear(d, inner));
    const fcOut = mlp.add('fc_out', linear(inner, d));
    const act = mlp.add('act', activation(str(c, 'activation_function')));
    const mlpDropout = mlp.add('dropout', plain('Dropout'));
    blocks.push((trace, t) => {
      trace.call(ln1, [t, d]);
      attn(trace, t);
      trace.call(fcIn, [t, inner]);
      trace.call(act, [t, inner]);
      trace.call(fcOut, [t, d]);
      trace.call(mlpDropout, [t, d]);
    });
  }
  const lnF = root.add('ln_f', layerNorm(d));
  return [
    root,
    (trace, t) => {
      trace.call(wte, [t, d]);
      trace.call(drop, [t, d]);
      for (const block of blocks) block(trace, t);
      trace.call(lnF, [t, d]);
    },
  ];
}

const heads = decoderClasses({
  prefix: 'GPTJ',
  causalLm: 'GPTJForCausalLM',
  base: 'transformer',
  hidden: 'n_embd',
  embedding: 'wte',
  lmHeadBias: true,
  tokenClassifier: () => ({ name: 'classifier', bias: true }),
}, base);

const classes: Record<string, ClassSpec> = {
  GPTJModel: heads.GPTJModel!,
  GPTJForCausalLM: heads.GPTJForCausalLM!,
  GPTJForSequenceClassification: heads.GPTJForSequenceClassification!,
  // GPT-J's own QA head is Linear(hidden, num_labels), split in two: it needs num_labels=2.
  GPTJForQuestionAnswering: {
    ...heads.GPTJForQuestionAnswering!,
    refuse: (c) =>
      c.num_labels === 2 ? undefined : `GPTJForQuestionAnswering splits its logits into start and end: it needs num_labels=2, not ${String(c.num_labels)}`,
  },
};

export const gptjTypeSpec: ModelTypeSpec = {
  modelType: 'gptj',
  input: 'tokens',
  classes,
  defaultShape: (c) => [num(c, 'n_positions')],
  // The rotary sin/cos table is a buffer of n_positions rows, indexed by position.
  maxTokens: (c) => num(c, 'n_positions'),
};
