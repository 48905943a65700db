/**
 * DistilBERT (transformers 5.18.0, models/distilbert/modeling_distilbert.py). Attention dropout is
 * functional (the attention's `dropout` module is listed last, uncalled). The sequence classifier's
 * ReLU is an `nn.ReLU()` made inside forward, never registered, so it is no row; the masked-LM
 * model registers `mlm_loss_fct = nn.CrossEntropyLoss()`, which forward calls only with labels.
 * With sinusoidal_pos_embds the position table is filled with sinusoids but, in 5.18, stays a
 * trainable parameter.
 */
import { num, str, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type ModelTypeSpec, type TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';

function base(c: HfConfig): [Module, Forward] {
  const dim = num(c, 'dim');
  const hiddenDim = num(c, 'hidden_dim');
  const root = userModule('DistilBertModel');
  const emb = root.add('embeddings', userModule('Embeddings'));
  const word = emb.add('word_embeddings', embedding(num(c, 'vocab_size'), dim));
  const position = emb.add('position_embeddings', embedding(num(c, 'max_position_embeddings'), dim));
  const embNorm = emb.add('LayerNorm', layerNorm(dim));
  const embDropout = emb.add('dropout', plain('Dropout'));
  const transformer = root.add('transformer', userModule('Transformer'));
  const list = transformer.add('layer', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'n_layers'); i++) {
    const block = list.add(String(i), userModule('TransformerBlock'));
    const attention = block.add('attention', userModule('DistilBertSelfAttention'));
    const q = attention.add('q_lin', linear(dim, dim));
    const k = attention.add('k_lin', linear(dim, dim));
    const v = attention.add('v_lin', linear(dim, dim));
    const out = attention.add('out_lin', linear(dim, dim));
    attention.add('dropout', plain('Dropout'));
    const saNorm = block.add('sa_layer_norm', layerNorm(dim));
    const ffn = block.add('ffn', userModule('FFN'));
    const ffnDropout = ffn.add('dropout', plain('Dropout'));
    const lin1 = ffn.add('lin1', linear(dim, hiddenDim));
    const lin2 = ffn.add('lin2', linear(hiddenDim, dim));
    const act = ffn.add('activation', activation(str(c, 'activation')));
    const outNorm = block.add('output_layer_norm', layerNorm(dim));
    layers.push((trace, t) => {
      trace.call(q, [t, dim]);
      trace.call(k, [t, dim]);
      trace.call(v, [t, dim]);
      trace.call(out, [t, dim]);
      trace.call(saNorm, [t, dim]);
      trace.call(lin1, [t, hiddenDim]);
      trace.call(act, [t, hiddenDim]);
      trace.call(lin2, [t, dim]);
      trace.call(ffnDropout, [t, dim]);
      trace.call(outNorm, [t, dim]);
    });
  }
  return [
    root,
    (trace, t) => {
      trace.call(word, [t, dim]);
      // position ids are the (1, T) buffer: no batch dimension
      trace.call(position, [1, t, dim]);
      trace.call(embNorm, [t, dim]);
      trace.call(embDropout, [t, dim]);
      for (const layer of layers) layer(trace, t);
    },
  ];
}

function wordEmbeddings(distilbert: Module): Module {
  const emb = distilbert.children.find(([n]) => n === 'embeddings')![1];
  return emb.children.find(([n]) => n === 'word_embeddings')![1];
}

const classes: Record<string, ClassSpec> = {
  DistilBertModel: {
    build(c) {
      const [root, forward] = base(c);
      return tokenModel(root, forward);
    },
  },
  DistilBertForMaskedLM: {
    build(c) {
      const dim = num(c, 'dim');
      const vocab = num(c, 'vocab_size');
      const root = userModule('DistilBertForMaskedLM');
      const act = root.add('activation', activation(str(c, 'activation')));
      const [distilbert, forward] = base(c);
      root.add('distilbert', distilbert);
      const transform = root.add('vocab_transform', linear(dim, dim));
      const norm = root.add('vocab_layer_norm', layerNorm(dim));
      const projector = root.add('vocab_projector', linear(dim, vocab));
      root.add('mlm_loss_fct', plain('CrossEntropyLoss'));
      if (c.tie_word_embeddings === true) projector.tie('weight', wordEmbeddings(distilbert).get('weight'));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(transform, [t, dim]);
        trace.call(act, [t, dim]);
        trace.call(norm, [t, dim]);
        trace.call(projector, [t, vocab]);
      });
    },
  },
  DistilBertForSequenceClassification: {
    build(c) {
      const dim = num(c, 'dim');
      const labels = num(c, 'num_labels');
      const root = userModule('DistilBertForSequenceClassification');
      const [distilbert, forward] = base(c);
      root.add('distilbert', distilbert);
      const pre = root.add('pre_classifier', linear(dim, dim));
      const classifier = root.add('classifier', linear(dim, labels));
      const dropout = root.add('dropout', plain('Dropout'));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(pre, [dim]);
        trace.call(dropout, [dim]);
        trace.call(classifier, [labels]);
      });
    },
  },
  DistilBertForTokenClassification: {
    build(c) {
      const dim = num(c, 'dim');
      const labels = num(c, 'num_labels');
      const root = userModule('DistilBertForTokenClassification');
      const [distilbert, forward] = base(c);
      root.add('distilbert', distilbert);
      const dropout = root.add('dropout', plain('Dropout'));
      const classifier = root.add('classifier', linear(dim, labels));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(dropout, [t, dim]);
        trace.call(classifier, [t, labels]);
      });
    },
  },
  DistilBertForQuestionAnswering: {
    refuse: (c) => (c.num_labels === 2 ? undefined : `DistilBertForQuestionAnswering needs num_labels=2, not ${String(c.num_labels)} (the library raises)`),
    build(c) {
      const dim = num(c, 'dim');
      const root = userModule('DistilBertForQuestionAnswering');
      const [distilbert, forward] = base(c);
      root.add('distilbert', distilbert);
      const qa = root.add('qa_outputs', linear(dim, 2));
      const dropout = root.add('dropout', plain('Dropout'));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(dropout, [t, dim]);
        trace.call(qa, [t, 2]);
      });
    },
  },
};

export const distilbertTypeSpec: ModelTypeSpec = {
  modelType: 'distilbert',
  input: 'tokens',
  classes,
  defaultShape: (c) => [Math.min(512, num(c, 'max_position_embeddings'))],
  maxTokens: (c) => num(c, 'max_position_embeddings'),
};
