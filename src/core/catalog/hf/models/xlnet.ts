/**
 * XLNet (transformers 5.18.0, models/xlnet/modeling_xlnet.py). The relative attention holds its
 * projections as raw parameters (q, k, v, o, r and the biases: Parameter rows) and calls its one
 * `dropout` module twice per layer: on the attention probabilities, (heads, T, T) per sample, and
 * on the projected output. The model's own `dropout` runs on the word embeddings, on the relative
 * position encoding ((klen + qlen) for attn_type 'bi', klen + 1 for 'uni', per sample) and on the
 * output. Each layer's own `dropout` is never called. Training forward: no mems
 * (use_mems_train=False), no target mapping, so only the content stream runs.
 */
import { num, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type ModelTypeSpec, type TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'd_model');
  const heads = num(c, 'n_head');
  const dHead = num(c, 'd_head');
  const inner = num(c, 'd_inner');
  const root = userModule('XLNetModel');
  const word = root.add('word_embedding', embedding(num(c, 'vocab_size'), d));
  root.param('mask_emb', d);
  const list = root.add('layer', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'n_layer'); i++) {
    const layer = list.add(String(i), userModule('XLNetLayer'));
    const attn = layer.add('rel_attn', userModule('XLNetRelativeAttention'));
    for (const name of ['q', 'k', 'v', 'o', 'r']) attn.param(name, d * heads * dHead);
    for (const name of ['r_r_bias', 'r_s_bias', 'r_w_bias']) attn.param(name, heads * dHead);
    attn.param('seg_embed', 2 * heads * dHead);
    const attnNorm = attn.add('layer_norm', layerNorm(d));
    const attnDropout = attn.add('dropout', plain('Dropout'));
    const ff = layer.add('ff', userModule('XLNetFeedForward'));
    const ffNorm = ff.add('layer_norm', layerNorm(d));
    const layer1 = ff.add('layer_1', linear(d, inner));
    const layer2 = ff.add('layer_2', linear(inner, d));
    const ffDropout = ff.add('dropout', plain('Dropout'));
    const act = ff.add('activation_function', activation(String(c.ff_activation)));
    layer.add('dropout', plain('Dropout'));
    layers.push((trace, t) => {
      trace.call(attnDropout, [heads, t, t]);
      trace.call(attnDropout, [t, d]);
      trace.call(attnNorm, [t, d]);
      trace.call(layer1, [t, inner]);
      trace.call(act, [t, inner]);
      trace.call(ffDropout, [t, inner]);
      trace.call(layer2, [t, d]);
      trace.call(ffDropout, [t, d]);
      trace.call(ffNorm, [t, d]);
    });
  }
  const dropout = root.add('dropout', plain('Dropout'));
  const positions = (t: number) => (c.attn_type === 'uni' ? t + 1 : 2 * t);
  return [
    root,
    (trace, t) => {
      trace.call(word, [t, d]);
      trace.call(dropout, [t, d]);
      trace.call(dropout, [positions(t), d]);
      for (const layer of layers) layer(trace, t);
      trace.call(dropout, [t, d]);
    },
  ];
}

const classes: Record<string, ClassSpec> = {
  XLNetModel: {
    build(c) {
      const [root, forward] = base(c);
      return tokenModel(root, forward);
    },
  },
  XLNetLMHeadModel: {
    build(c) {
      const vocab = num(c, 'vocab_size');
      const root = userModule('XLNetLMHeadModel');
      const [transformer, forward] = base(c);
      root.add('transformer', transformer);
      const head = root.add('lm_loss', linear(num(c, 'd_model'), vocab));
      if (c.tie_word_embeddings === true) head.tie('weight', transformer.children.find(([n]) => n === 'word_embedding')![1].get('weight'));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(head, [t, vocab]);
      });
    },
  },
  XLNetForSequenceClassification: {
    build(c) {
      const d = num(c, 'd_model');
      const labels = num(c, 'num_labels');
      const root = userModule('XLNetForSequenceClassification');
      const [transformer, forward] = base(c);
      root.add('transformer', transformer);
      // XLNetSequenceSummary: XLNetConfig has no summary_proj_to_labels, so the projection keeps d_model.
      const summary = root.add('sequence_summary', userModule('XLNetSequenceSummary'));
      const proj = summary.add('summary', c.summary_use_proj === true ? linear(d, d) : plain('Identity'));
      const act = summary.add('activation', c.summary_activation === null ? plain('Identity') : activation(String(c.summary_activation)));
      const first = summary.add('first_dropout', plain('Identity'));
      const last = summary.add('last_dropout', num(c, 'summary_last_dropout') > 0 ? plain('Dropout') : plain('Identity'));
      const logits = root.add('logits_proj', linear(d, labels));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(first, [d]);
        trace.call(proj, [d]);
        trace.call(act, [d]);
        trace.call(last, [d]);
        trace.call(logits, [labels]);
      });
    },
  },
  XLNetForTokenClassification: {
    build(c) {
      const labels = num(c, 'num_labels');
      const root = userModule('XLNetForTokenClassification');
      const [transformer, forward] = base(c);
      root.add('transformer', transformer);
      const classifier = root.add('classifier', linear(num(c, 'd_model'), labels));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(classifier, [t, labels]);
      });
    },
  },
  XLNetForQuestionAnsweringSimple: {
    refuse: (c) =>
      c.num_labels === 2 ? undefined : `XLNetForQuestionAnsweringSimple splits its logits into start and end: it needs num_labels=2, not ${String(c.num_labels)}`,
    build(c) {
      const labels = num(c, 'num_labels');
      const root = userModule('XLNetForQuestionAnsweringSimple');
      const [transformer, forward] = base(c);
      root.add('transformer', transformer);
      const qa = root.add('qa_outputs', linear(num(c, 'd_model'), labels));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(qa, [t, labels]);
      });
    },
  },
};

export const xlnetTypeSpec: ModelTypeSpec = {
  modelType: 'xlnet',
  input: 'tokens',
  classes,
  defaultShape: () => [512],
};
