/**
 * BERT and RoBERTa (transformers 5.18.0, models/bert/modeling_bert.py and
 * models/roberta/modeling_roberta.py). Attention weights are computed by the attention interface
 * (sdpa by default, or eager_attention_forward), which applies attention dropout functionally: the
 * self-attention's `dropout` module is never called and is listed last, whatever the
 * attn_implementation. The GELU of the intermediate layer is the library's GELUActivation (no row).
 */
import { num, str, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type ModelTypeSpec, type ModelKwargs, type TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, layerNorm, linear, plain, userModule } from '../layers';
import { Module } from '../moduleTree';

interface Dims {
  readonly hidden: number;
  readonly inter: number;
  readonly vocab: number;
}

function dims(c: HfConfig): Dims {
  return { hidden: num(c, 'hidden_size'), inter: num(c, 'intermediate_size'), vocab: num(c, 'vocab_size') };
}

function embeddings(c: HfConfig, roberta: boolean): [Module, Forward] {
  const { hidden, vocab } = dims(c);
  const m = userModule(roberta ? 'RobertaEmbeddings' : 'BertEmbeddings');
  const word = m.add('word_embeddings', embedding(vocab, hidden));
  let position: Module | undefined;
  if (!roberta) position = m.add('position_embeddings', embedding(num(c, 'max_position_embeddings'), hidden));
  const tokenType = m.add('token_type_embeddings', embedding(num(c, 'type_vocab_size'), hidden));
  const norm = m.add('LayerNorm', layerNorm(hidden));
  const dropout = m.add('dropout', plain('Dropout'));
  if (roberta) position = m.add('position_embeddings', embedding(num(c, 'max_position_embeddings'), hidden));
  return [
    m,
    (trace, t) => {
      trace.call(word, [t, hidden]);
      trace.call(tokenType, [t, hidden]);
      // BERT's position ids are its (1, T) buffer: no batch dimension. RoBERTa's are made from the input ids.
      trace.call(position!, roberta ? [t, hidden] : [1, t, hidden]);
      trace.call(norm, [t, hidden]);
      trace.call(dropout, [t, hidden]);
    },
  ];
}

/**
 * BERT-style embeddings of `width` (ALBERT's and ELECTRA's `embedding_size`): word, position and
 * token-type tables, LayerNorm and dropout, registered and called in BERT's order. Returns the
 * module, its forward and the word embedding (for tying).
 */
export function bertStyleEmbeddings(type: string, c: HfConfig, width: number): [Module, Forward, Module] {
  const m = userModule(type);
  const words = m.add('word_embeddings', embedding(num(c, 'vocab_size'), width));
  const positions = m.add('position_embeddings', embedding(num(c, 'max_position_embeddings'), width));
  const tokenTypes = m.add('token_type_embeddings', embedding(num(c, 'type_vocab_size'), width));
  const norm = m.add('LayerNorm', layerNorm(width));
  const dropout = m.add('dropout', plain('Dropout'));
  return [
    m,
    (trace, t) => {
      trace.call(words, [t, width]);
      trace.call(tokenTypes, [t, width]);
      // position ids are the (1, T) buffer: no batch dimension
      trace.call(positions, [1, t, width]);
      trace.call(norm, [t, width]);
      trace.call(dropout, [t, width]);
    },
    words,
  ];
}

/** One encoder layer, BERT's and those copied from it (ELECTRA): `${prefix}Layer`. */
export function layer(c: HfConfig, prefix: string): [Module, Forward] {
  const { hidden, inter } = dims(c);
  const m = userModule(`${prefix}Layer`);
  const attention = m.add('attention', userModule(`${prefix}Attention`));
  const self = attention.add('self', userModule(`${prefix}SelfAttention`));
  const query = self.add('query', linear(hidden, hidden));
  const key = self.add('key', linear(hidden, hidden));
  const value = self.add('value', linear(hidden, hidden));
  self.add('dropout', plain('Dropout'));
  const selfOutput = attention.add('output', userModule(`${prefix}SelfOutput`));
  const attnDense = selfOutput.add('dense', linear(hidden, hidden));
  const attnNorm = selfOutput.add('LayerNorm', layerNorm(hidden));
  const attnDropout = selfOutput.add('dropout', plain('Dropout'));
  const intermediate = m.add('intermediate', userModule(`${prefix}Intermediate`));
  const interDense = intermediate.add('dense', linear(hidden, inter));
  const act = intermediate.add('intermediate_act_fn', activation(str(c, 'hidden_act')));
  const output = m.add('output', userModule(`${prefix}Output`));
  const outDense = output.add('dense', linear(inter, hidden));
  const outNorm = output.add('LayerNorm', layerNorm(hidden));
  const outDropout = output.add('dropout', plain('Dropout'));
  return [
    m,
    (trace, t) => {
      trace.call(query, [t, hidden]);
      trace.call(key, [t, hidden]);
      trace.call(value, [t, hidden]);
      trace.call(attnDense, [t, hidden]);
      trace.call(attnDropout, [t, hidden]);
      trace.call(attnNorm, [t, hidden]);
      trace.call(interDense, [t, inter]);
      trace.call(act, [t, inter]);
      trace.call(outDense, [t, hidden]);
      trace.call(outDropout, [t, hidden]);
      trace.call(outNorm, [t, hidden]);
    },
  ];
}

/** BertModel / RobertaModel; `pooler` as add_pooling_layer. */
function baseModel(c: HfConfig, roberta: boolean, pooler: boolean): [Module, Forward] {
  const prefix = roberta ? 'Roberta' : 'Bert';
  const { hidden } = dims(c);
  const m = userModule(`${prefix}Model`);
  const [emb, embForward] = embeddings(c, roberta);
  m.add('embeddings', emb);
  const encoder = m.add('encoder', userModule(`${prefix}Encoder`));
  const list = encoder.add('layer', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const [mod, fwd] = layer(c, prefix);
    list.add(String(i), mod);
    layers.push(fwd);
  }
  let poolerForward: Forward | undefined;
  if (pooler) {
    const p = m.add('pooler', userModule(`${prefix}Pooler`));
    const dense = p.add('dense', linear(hidden, hidden));
    const tanh = p.add('activation', plain('Tanh'));
    poolerForward = (trace) => {
      trace.call(dense, [hidden]);
      trace.call(tanh, [hidden]);
    };
  }
  return [
    m,
    (trace, t) => {
      embForward(trace, t);
      for (const fwd of layers) fwd(trace, t);
      poolerForward?.(trace, t);
    },
  ];
}

function wordEmbeddings(base: Module): Module {
  const emb = base.children.find(([n]) => n === 'embeddings')![1];
  return emb.children.find(([n]) => n === 'word_embeddings')![1];
}

/** BertLMPredictionHead (`predictions`): transform (dense, act, LayerNorm), decoder, and its own `bias`. */
function bertLmHead(c: HfConfig, base: Module, parent: Module): Forward {
  const { hidden, vocab } = dims(c);
  const predictions = parent.add('predictions', userModule('BertLMPredictionHead'));
  const transform = predictions.add('transform', userModule('BertPredictionHeadTransform'));
  const dense = transform.add('dense', linear(hidden, hidden));
  const act = transform.add('transform_act_fn', activation(str(c, 'hidden_act')));
  const norm = transform.add('LayerNorm', layerNorm(hidden));
  const decoder = predictions.add('decoder', linear(hidden, vocab));
  const bias = predictions.param('bias', vocab);
  if (c.tie_word_embeddings === true) {
    decoder.tie('weight', wordEmbeddings(base).get('weight'));
    decoder.tie('bias', bias);
  }
  return (trace, t) => {
    trace.call(dense, [t, hidden]);
    trace.call(act, [t, hidden]);
    trace.call(norm, [t, hidden]);
    trace.call(decoder, [t, vocab]);
  };
}

const needsTwoLabels = (className: string) => (c: HfConfig) =>
  c.num_labels === 2 ? undefined : `${className} splits its logits into start and end: it needs num_labels=2, not ${String(c.num_labels)}`;

/** The token-classification and question-answering heads, alike for BERT and RoBERTa but for names. */
function tokenAndQaHeads(prefix: string, attribute: string, roberta: boolean): Record<string, ClassSpec> {
  const withBase = (className: string, c: HfConfig): [Module, Forward] => {
    const root = userModule(className);
    const [base, baseForward] = baseModel(c, roberta, false);
    root.add(attribute, base);
    return [root, baseForward];
  };
  return {
    [`${prefix}ForTokenClassification`]: {
      build(c) {
        const labels = num(c, 'num_labels');
        const { hidden } = dims(c);
        const [root, baseForward] = withBase(`${prefix}ForTokenClassification`, c);
        const dropout = root.add('dropout', plain('Dropout'));
        const classifier = root.add('classifier', linear(hidden, labels));
        return tokenModel(root, (trace, t) => {
          baseForward(trace, t);
          trace.call(dropout, [t, hidden]);
          trace.call(classifier, [t, labels]);
        });
      },
    },
    [`${prefix}ForQuestionAnswering`]: {
      refuse: needsTwoLabels(`${prefix}ForQuestionAnswering`),
      build(c) {
        const [root, baseForward] = withBase(`${prefix}ForQuestionAnswering`, c);
        const qa = root.add('qa_outputs', linear(dims(c).hidden, num(c, 'num_labels')));
        return tokenModel(root, (trace, t) => {
          baseForward(trace, t);
          trace.call(qa, [t, num(c, 'num_labels')]);
        });
      },
    },
  };
}

function bertClasses(): Record<string, ClassSpec> {
  const maskedLm = (name: string): ClassSpec => ({
    build(c) {
      const root = userModule(name);
      const [base, baseForward] = baseModel(c, false, false);
      root.add('bert', base);
      const cls = root.add('cls', userModule('BertOnlyMLMHead'));
      const head = bertLmHead(c, base, cls);
      return tokenModel(root, (trace, t) => {
        baseForward(trace, t);
        head(trace, t);
      });
    },
  });
  return {
    BertModel: {
      kwargs: { add_pooling_layer: true },
      build(c, kwargs: ModelKwargs) {
        const [root, forward] = baseModel(c, false, kwargs.add_pooling_layer !== false);
        return tokenModel(root, forward);
      },
    },
    BertForMaskedLM: maskedLm('BertForMaskedLM'),
    BertLMHeadModel: maskedLm('BertLMHeadModel'),
    BertForPreTraining: {
      build(c) {
        const { hidden } = dims(c);
        const root = userModule('BertForPreTraining');
        const [base, baseForward] = baseModel(c, false, true);
        root.add('bert', base);
        const cls = root.add('cls', userModule('BertPreTrainingHeads'));
        const head = bertLmHead(c, base, cls);
        const nsp = cls.add('seq_relationship', linear(hidden, 2));
        return tokenModel(root, (trace, t) => {
          baseForward(trace, t);
          head(trace, t);
          trace.call(nsp, [2]);
        });
      },
    },
    BertForNextSentencePrediction: {
      build(c) {
        const root = userModule('BertForNextSentencePrediction');
        const [base, baseForward] = baseModel(c, false, true);
        root.add('bert', base);
        const cls = root.add('cls', userModule('BertOnlyNSPHead'));
        const nsp = cls.add('seq_relationship', linear(dims(c).hidden, 2));
        return tokenModel(root, (trace, t) => {
          baseForward(trace, t);
          trace.call(nsp, [2]);
        });
      },
    },
    BertForSequenceClassification: {
      build(c) {
        const labels = num(c, 'num_labels');
        const root = userModule('BertForSequenceClassification');
        const [base, baseForward] = baseModel(c, false, true);
        root.add('bert', base);
        const dropout = root.add('dropout', plain('Dropout'));
        const classifier = root.add('classifier', linear(dims(c).hidden, labels));
        return tokenModel(root, (trace, t) => {
          baseForward(trace, t);
          trace.call(dropout, [dims(c).hidden]);
          trace.call(classifier, [labels]);
        });
      },
    },
    ...tokenAndQaHeads('Bert', 'bert', false),
  };
}

/** RobertaLMHead (`lm_head`): dense, gelu (a function), layer_norm, decoder, and its own `bias`. */
function robertaLmHead(c: HfConfig, base: Module, root: Module): Forward {
  const { hidden, vocab } = dims(c);
  const head = root.add('lm_head', userModule('RobertaLMHead'));
  const dense = head.add('dense', linear(hidden, hidden));
  const norm = head.add('layer_norm', layerNorm(hidden));
  const decoder = head.add('decoder', linear(hidden, vocab));
  const bias = head.param('bias', vocab);
  if (c.tie_word_embeddings === true) {
    decoder.tie('weight', wordEmbeddings(base).get('weight'));
    decoder.tie('bias', bias);
  }
  return (trace, t) => {
    trace.call(dense, [t, hidden]);
    trace.call(norm, [t, hidden]);
    trace.call(decoder, [t, vocab]);
  };
}

function robertaClasses(): Record<string, ClassSpec> {
  const lm = (name: string): ClassSpec => ({
    build(c) {
      const root = userModule(name);
      const [base, baseForward] = baseModel(c, true, false);
      root.add('roberta', base);
      const head = robertaLmHead(c, base, root);
      return tokenModel(root, (trace, t) => {
        baseForward(trace, t);
        head(trace, t);
      });
    },
  });
  return {
    RobertaModel: {
      kwargs: { add_pooling_layer: true },
      build(c, kwargs: ModelKwargs) {
        const [root, forward] = baseModel(c, true, kwargs.add_pooling_layer !== false);
        return tokenModel(root, forward);
      },
    },
    RobertaForMaskedLM: lm('RobertaForMaskedLM'),
    RobertaForCausalLM: lm('RobertaForCausalLM'),
    RobertaForSequenceClassification: {
      build(c) {
        const { hidden } = dims(c);
        const labels = num(c, 'num_labels');
        const root = userModule('RobertaForSequenceClassification');
        const [base, baseForward] = baseModel(c, true, false);
        root.add('roberta', base);
        const head = root.add('classifier', userModule('RobertaClassificationHead'));
        const dense = head.add('dense', linear(hidden, hidden));
        const dropout = head.add('dropout', plain('Dropout'));
        const outProj = head.add('out_proj', linear(hidden, labels));
        return tokenModel(root, (trace, t) => {
          baseForward(trace, t);
          // features[:, 0, :] -> dropout -> dense -> tanh (a function) -> dropout -> out_proj
          trace.call(dropout, [hidden]);
          trace.call(dense, [hidden]);
          trace.call(dropout, [hidden]);
          trace.call(outProj, [labels]);
        });
      },
    },
    ...tokenAndQaHeads('Roberta', 'roberta', true),
  };
}

export const bertTypeSpec: ModelTypeSpec = {
  modelType: 'bert',
  input: 'tokens',
  classes: bertClasses(),
  defaultShape: (c) => [Math.min(512, num(c, 'max_position_embeddings'))],
  maxTokens: (c) => num(c, 'max_position_embeddings'),
};

export const robertaTypeSpec: ModelTypeSpec = {
  modelType: 'roberta',
  input: 'tokens',
  classes: robertaClasses(),
  defaultShape: (c) => [Math.min(512, robertaMaxTokens(c))],
  maxTokens: robertaMaxTokens,
};

/** RoBERTa numbers positions from padding_idx + 1, so its table holds max_position_embeddings - padding_idx - 1 tokens. */
function robertaMaxTokens(c: HfConfig): number {
  return num(c, 'max_position_embeddings') - num(c, 'pad_token_id') - 1;
}
