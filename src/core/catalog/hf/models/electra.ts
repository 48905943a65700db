/**
 * ELECTRA (transformers 5.18.0, models/electra/modeling_electra.py; google/electra-small/base/
 * large-discriminator and -generator). BERT's encoder layers (copied from it) behind embeddings of
 * `embedding_size`, projected to the hidden size by `embeddings_project` when the two differ; no
 * pooler. The classification head pools the first token and runs its one `dropout` twice; its
 * GELU, the generator head's and (for `gelu`) the discriminator head's are the library's (no row).
 */
import { num, str, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type ModelTypeSpec, type TokenForward as Forward } from '../modelTypeSpec';
import { activation, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';
import { tokenAndQaHeads } from './encoderHeads';
import { bertStyleEmbeddings, layer } from './bert';

function base(c: HfConfig): [Module, Forward, Module] {
  const e = num(c, 'embedding_size');
  const d = num(c, 'hidden_size');
  const root = userModule('ElectraModel');
  const [emb, embForward, words] = bertStyleEmbeddings('ElectraEmbeddings', c, e);
  root.add('embeddings', emb);
  const project = e !== d ? root.add('embeddings_project', linear(e, d)) : undefined;
  const list = root.add('encoder', userModule('ElectraEncoder')).add('layer', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const [mod, fwd] = layer(c, 'Electra');
    list.add(String(i), mod);
    layers.push(fwd);
  }
  return [
    root,
    (trace, t) => {
      embForward(trace, t);
      if (project) trace.call(project, [t, d]);
      for (const fwd of layers) fwd(trace, t);
    },
    words,
  ];
}

function withBase(className: string, c: HfConfig): [Module, Forward, Module] {
  const root = userModule(className);
  const [inner, forward, words] = base(c);
  root.add('electra', inner);
  return [root, forward, words];
}

const classes: Record<string, ClassSpec> = {
  ElectraModel: {
    build(c) {
      const [root, forward] = base(c);
      return tokenModel(root, forward);
    },
  },
  ElectraForPreTraining: {
    build(c) {
      const d = num(c, 'hidden_size');
      const [root, forward] = withBase('ElectraForPreTraining', c);
      const head = root.add('discriminator_predictions', userModule('ElectraDiscriminatorPredictions'));
      const dense = head.add('dense', linear(d, d));
      const act = head.add('activation', activation(str(c, 'hidden_act')));
      const prediction = head.add('dense_prediction', linear(d, 1));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(dense, [t, d]);
        trace.call(act, [t, d]);
        trace.call(prediction, [t, 1]);
      });
    },
  },
  ElectraForMaskedLM: {
    build(c) {
      const d = num(c, 'hidden_size');
      const e = num(c, 'embedding_size');
      const vocab = num(c, 'vocab_size');
      const [root, forward, words] = withBase('ElectraForMaskedLM', c);
      const head = root.add('generator_predictions', userModule('ElectraGeneratorPredictions'));
      head.add('activation', activation('gelu'));
      const norm = head.add('LayerNorm', layerNorm(e));
      const dense = head.add('dense', linear(d, e));
      const lmHead = root.add('generator_lm_head', linear(e, vocab));
      if (c.tie_word_embeddings === true) lmHead.tie('weight', words.get('weight'));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(dense, [t, e]);
        trace.call(norm, [t, e]);
        trace.call(lmHead, [t, vocab]);
      });
    },
  },
  ElectraForSequenceClassification: {
    build(c) {
      const d = num(c, 'hidden_size');
      const labels = num(c, 'num_labels');
      const [root, forward] = withBase('ElectraForSequenceClassification', c);
      const head = root.add('classifier', userModule('ElectraClassificationHead'));
      const dense = head.add('dense', linear(d, d));
      head.add('activation', activation('gelu'));
      const dropout = head.add('dropout', plain('Dropout'));
      const out = head.add('out_proj', linear(d, labels));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        // the first token only: no token dimension
        trace.call(dropout, [d]);
        trace.call(dense, [d]);
        trace.call(dropout, [d]);
        trace.call(out, [labels]);
      });
    },
  },
  ...tokenAndQaHeads('Electra', withBase),
};

export const electraTypeSpec: ModelTypeSpec = {
  modelType: 'electra',
  input: 'tokens',
  classes,
  defaultShape: (c) => [num(c, 'max_position_embeddings')],
  maxTokens: (c) => num(c, 'max_position_embeddings'),
};
