/**
 * ALBERT (transformers 5.18.0, models/albert/modeling_albert.py; albert-base-v2 ... xxlarge-v2).
 * Layers share their parameters: layer i runs group `i / (num_hidden_layers / num_hidden_groups)`,
 * so the same modules are called once per layer, each call a row and the parameters counted by
 * the first. Embeddings are `embedding_size` wide and mapped to the hidden size by
 * `embedding_hidden_mapping_in`. Attention dropout is functional (`attention_dropout` and the
 * layer's `dropout` are never called); `gelu_new` is the library's (no row). The pooler is a
 * torch.nn Linear and Tanh on the first token.
 */
import { num, str, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type ModelTypeSpec, type TokenForward as Forward } from '../modelTypeSpec';
import { activation, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';
import { bertStyleEmbeddings } from './bert';
import { tokenAndQaHeads } from './encoderHeads';

function albertLayer(c: HfConfig): [Module, Forward] {
  const d = num(c, 'hidden_size');
  const inter = num(c, 'intermediate_size');
  const m = userModule('AlbertLayer');
  const fullNorm = m.add('full_layer_layer_norm', layerNorm(d));
  const attn = m.add('attention', userModule('AlbertAttention'));
  attn.add('attention_dropout', plain('Dropout'));
  const outputDropout = attn.add('output_dropout', plain('Dropout'));
  const query = attn.add('query', linear(d, d));
  const key = attn.add('key', linear(d, d));
  const value = attn.add('value', linear(d, d));
  const dense = attn.add('dense', linear(d, d));
  const attnNorm = attn.add('LayerNorm', layerNorm(d));
  const ffn = m.add('ffn', linear(d, inter));
  const ffnOutput = m.add('ffn_output', linear(inter, d));
  const act = m.add('activation', activation(str(c, 'hidden_act')));
  m.add('dropout', plain('Dropout'));
  return [
    m,
    (trace, t) => {
      trace.call(query, [t, d]);
      trace.call(key, [t, d]);
      trace.call(value, [t, d]);
      trace.call(dense, [t, d]);
      trace.call(outputDropout, [t, d]);
      trace.call(attnNorm, [t, d]);
      trace.call(ffn, [t, inter]);
      trace.call(act, [t, inter]);
      trace.call(ffnOutput, [t, d]);
      trace.call(fullNorm, [t, d]);
    },
  ];
}

/** AlbertModel; `pooler` as add_pooling_layer. Returns the word embedding for tying. */
function base(c: HfConfig, pooler: boolean): [Module, Forward, Module] {
  const e = num(c, 'embedding_size');
  const d = num(c, 'hidden_size');
  const root = userModule('AlbertModel');
  const [emb, embForward, words] = bertStyleEmbeddings('AlbertEmbeddings', c, e);
  root.add('embeddings', emb);
  const encoder = root.add('encoder', userModule('AlbertTransformer'));
  const mapping = encoder.add('embedding_hidden_mapping_in', linear(e, d));
  const groupList = encoder.add('albert_layer_groups', userModule('ModuleList'));
  const groups: Forward[] = [];
  for (let g = 0; g < num(c, 'num_hidden_groups'); g++) {
    const layerList = groupList.add(String(g), userModule('AlbertLayerGroup')).add('albert_layers', userModule('ModuleList'));
    const inner: Forward[] = [];
    for (let i = 0; i < num(c, 'inner_group_num'); i++) {
      const [mod, fwd] = albertLayer(c);
      layerList.add(String(i), mod);
      inner.push(fwd);
    }
    groups.push((trace, t) => inner.forEach((fwd) => fwd(trace, t)));
  }
  const poolerDense = pooler ? root.add('pooler', linear(d, d)) : undefined;
  const poolerAct = pooler ? root.add('pooler_activation', plain('Tanh')) : undefined;
  const layers = num(c, 'num_hidden_layers');
  const perGroup = layers / num(c, 'num_hidden_groups');
  return [
    root,
    (trace, t) => {
      embForward(trace, t);
      trace.call(mapping, [t, d]);
      for (let i = 0; i < layers; i++) groups[Math.floor(i / perGroup)]!(trace, t);
      if (poolerDense && poolerAct) {
        // the first token only: no token dimension
        trace.call(poolerDense, [d]);
        trace.call(poolerAct, [d]);
      }
    },
    words,
  ];
}

/** AlbertMLMHead (`predictions`): its own `bias` (the decoder's while tied), LayerNorm, dense, decoder, activation. */
function mlmHead(c: HfConfig, root: Module, words: Module): Forward {
  const d = num(c, 'hidden_size');
  const e = num(c, 'embedding_size');
  const vocab = num(c, 'vocab_size');
  const head = root.add('predictions', userModule('AlbertMLMHead'));
  const bias = head.param('bias', vocab);
  const norm = head.add('LayerNorm', layerNorm(e));
  const dense = head.add('dense', linear(d, e));
  const decoder = head.add('decoder', linear(e, vocab));
  const act = head.add('activation', activation(str(c, 'hidden_act')));
  if (c.tie_word_embeddings === true) {
    decoder.tie('weight', words.get('weight'));
    decoder.tie('bias', bias);
  }
  return (trace, t) => {
    trace.call(dense, [t, e]);
    trace.call(act, [t, e]);
    trace.call(norm, [t, e]);
    trace.call(decoder, [t, vocab]);
  };
}

function withBase(className: string, c: HfConfig, pooler = false): [Module, Forward, Module] {
  const root = userModule(className);
  const [inner, forward, words] = base(c, pooler);
  root.add('albert', inner);
  return [root, forward, words];
}

const classes: Record<string, ClassSpec> = {
  AlbertModel: {
    kwargs: { add_pooling_layer: true },
    build(c, kwargs) {
      const [root, forward] = base(c, kwargs.add_pooling_layer !== false);
      return tokenModel(root, forward);
    },
  },
  AlbertForPreTraining: {
    build(c) {
      const d = num(c, 'hidden_size');
      const labels = num(c, 'num_labels');
      const [root, forward, words] = withBase('AlbertForPreTraining', c, true);
      const mlm = mlmHead(c, root, words);
      const sop = root.add('sop_classifier', userModule('AlbertSOPHead'));
      const dropout = sop.add('dropout', plain('Dropout'));
      const classifier = sop.add('classifier', linear(d, labels));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        mlm(trace, t);
        trace.call(dropout, [d]);
        trace.call(classifier, [labels]);
      });
    },
  },
  AlbertForMaskedLM: {
    build(c) {
      const [root, forward, words] = withBase('AlbertForMaskedLM', c);
      const mlm = mlmHead(c, root, words);
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        mlm(trace, t);
      });
    },
  },
  AlbertForSequenceClassification: {
    build(c) {
      const d = num(c, 'hidden_size');
      const labels = num(c, 'num_labels');
      const [root, forward] = withBase('AlbertForSequenceClassification', c, true);
      const dropout = root.add('dropout', plain('Dropout'));
      const classifier = root.add('classifier', linear(d, labels));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(dropout, [d]);
        trace.call(classifier, [labels]);
      });
    },
  },
  ...tokenAndQaHeads('Albert', (className, c) => withBase(className, c)),
};

export const albertTypeSpec: ModelTypeSpec = {
  modelType: 'albert',
  input: 'tokens',
  classes,
  defaultShape: (c) => [num(c, 'max_position_embeddings')],
  maxTokens: (c) => num(c, 'max_position_embeddings'),
};
