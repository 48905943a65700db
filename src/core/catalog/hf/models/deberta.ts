/**
 * DeBERTa-v2 and DeBERTa-v3 (model type `deberta-v2`; transformers 5.18.0,
 * models/deberta_v2/modeling_deberta_v2.py). What shapes the table:
 * - the relative position embedding `rel_embeddings` is never called: its weight is read (and
 *   normalised by the encoder's LayerNorm once per forward, a row without a batch dimension,
 *   `[2 * span, hidden]`), so it is an uncalled row that holds its parameters;
 * - each layer's attention runs `pos_dropout` on those embeddings and projects them again, with
 *   `query_proj`/`key_proj` themselves when `share_att_key` (DeBERTa-v3), else with its own
 *   `pos_key_proj` (c2p) / `pos_query_proj` (p2c): `[1, 2 * span, hidden]`;
 * - attention probabilities go through the attention's `dropout` module: `[heads, T, T]` per sample;
 * - the sequence classifier pools the first token (`[hidden]`, no token dimension).
 * `span` is position_buckets when positive, else max_relative_positions (max_position_embeddings
 * when below 1). The masked-LM head is BERT's (`cls.predictions`) unless legacy=False, whose
 * logits are a matmul with the word embeddings (no row; its `bias` a Parameter row).
 */
import { num, str, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type ModelTypeSpec, type TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, layerNorm, linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';
import { tokenAndQaHeads } from './encoderHeads';

function posAttTypes(c: HfConfig): string[] {
  return typeof c.pos_att_type === 'string' ? c.pos_att_type.toLowerCase().split('|').map((s) => s.trim()) : [];
}

/** The relative embedding table's half-width. */
function span(c: HfConfig): number {
  const maxRelative = num(c, 'max_relative_positions') < 1 ? num(c, 'max_position_embeddings') : num(c, 'max_relative_positions');
  return num(c, 'position_buckets') > 0 ? num(c, 'position_buckets') : maxRelative;
}

function base(c: HfConfig): [Module, Forward, Module] {
  const d = num(c, 'hidden_size');
  const e = num(c, 'embedding_size');
  const inter = num(c, 'intermediate_size');
  const heads = num(c, 'num_attention_heads');
  const relative = c.relative_attention === true;
  const share = c.share_att_key === true;
  const types = posAttTypes(c);
  const rows = 2 * span(c);
  const root = userModule('DebertaV2Model');
  const emb = root.add('embeddings', userModule('DebertaV2Embeddings'));
  const words = emb.add('word_embeddings', embedding(num(c, 'vocab_size'), e));
  const positions = c.position_biased_input !== false ? emb.add('position_embeddings', embedding(num(c, 'max_position_embeddings'), e)) : undefined;
  const tokenTypes = num(c, 'type_vocab_size') > 0 ? emb.add('token_type_embeddings', embedding(num(c, 'type_vocab_size'), e)) : undefined;
  const project = e !== d ? emb.add('embed_proj', linear(e, d, false)) : undefined;
  const embNorm = emb.add('LayerNorm', layerNorm(d));
  const embDropout = emb.add('dropout', plain('Dropout'));
  const encoder = root.add('encoder', userModule('DebertaV2Encoder'));
  const list = encoder.add('layer', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule('DebertaV2Layer'));
    const attention = layer.add('attention', userModule('DebertaV2Attention'));
    const self = attention.add('self', userModule('DisentangledSelfAttention'));
    const query = self.add('query_proj', linear(d, d));
    const key = self.add('key_proj', linear(d, d));
    const value = self.add('value_proj', linear(d, d));
    const posDropout = relative ? self.add('pos_dropout', plain('Dropout')) : undefined;
    const posKey = relative && !share && types.includes('c2p') ? self.add('pos_key_proj', linear(d, d)) : undefined;
    const posQuery = relative && !share && types.includes('p2c') ? self.add('pos_query_proj', linear(d, d)) : undefined;
    const probsDropout = self.add('dropout', plain('Dropout'));
    const selfOutput = attention.add('output', userModule('DebertaV2SelfOutput'));
    const attnDense = selfOutput.add('dense', linear(d, d));
    const attnNorm = selfOutput.add('LayerNorm', layerNorm(d));
    const attnDropout = selfOutput.add('dropout', plain('Dropout'));
    const intermediate = layer.add('intermediate', userModule('DebertaV2Intermediate'));
    const up = intermediate.add('dense', linear(d, inter));
    const act = intermediate.add('intermediate_act_fn', activation(str(c, 'hidden_act')));
    const output = layer.add('output', userModule('DebertaV2Output'));
    const down = output.add('dense', linear(inter, d));
    const outNorm = output.add('LayerNorm', layerNorm(d));
    const outDropout = output.add('dropout', plain('Dropout'));
    layers.push((trace, t) => {
      trace.call(query, [t, d]);
      trace.call(key, [t, d]);
      trace.call(value, [t, d]);
      if (posDropout) {
        trace.call(posDropout, [rows, d]);
        if (share) {
          trace.call(query, [1, rows, d]);
          trace.call(key, [1, rows, d]);
        }
        if (posKey) trace.call(posKey, [1, rows, d]);
        if (posQuery) trace.call(posQuery, [1, rows, d]);
      }
      trace.call(probsDropout, [heads, t, t]);
      trace.call(attnDense, [t, d]);
      trace.call(attnDropout, [t, d]);
      trace.call(attnNorm, [t, d]);
      trace.call(up, [t, inter]);
      trace.call(act, [t, inter]);
      trace.call(down, [t, d]);
      trace.call(outDropout, [t, d]);
      trace.call(outNorm, [t, d]);
    });
  }
  if (relative) encoder.add('rel_embeddings', embedding(rows, d));
  const relNorm = relative && String(c.norm_rel_ebd).toLowerCase().split('|').map((s) => s.trim()).includes('layer_norm')
    ? encoder.add('LayerNorm', layerNorm(d))
    : undefined;
  return [
    root,
    (trace, t) => {
      trace.call(words, [t, e]);
      if (positions) trace.call(positions, [1, t, e]);
      if (tokenTypes) trace.call(tokenTypes, [t, e]);
      if (project) trace.call(project, [t, d]);
      trace.call(embNorm, [t, d]);
      trace.call(embDropout, [t, d]);
      if (relNorm) trace.call(relNorm, [rows, d]);
      for (const layer of layers) layer(trace, t);
    },
    words,
  ];
}

function withBase(className: string, c: HfConfig): [Module, Forward, Module] {
  const root = userModule(className);
  const [inner, forward, words] = base(c);
  root.add('deberta', inner);
  return [root, forward, words];
}

const classes: Record<string, ClassSpec> = {
  DebertaV2Model: {
    build(c) {
      const [root, forward] = base(c);
      return tokenModel(root, forward);
    },
  },
  DebertaV2ForMaskedLM: {
    refuse: (c) =>
      c.legacy === false && num(c, 'embedding_size') !== num(c, 'hidden_size')
        ? 'DebertaV2ForMaskedLM with legacy=False needs embedding_size == hidden_size (its logits multiply by the word embeddings)'
        : undefined,
    build(c) {
      const d = num(c, 'hidden_size');
      const vocab = num(c, 'vocab_size');
      const tied = c.tie_word_embeddings === true;
      const [root, forward, words] = withBase('DebertaV2ForMaskedLM', c);
      if (c.legacy === false) {
        const head = root.add('lm_predictions', userModule('DebertaV2OnlyMLMHead')).add('lm_head', userModule('DebertaV2LMPredictionHead'));
        const dense = head.add('dense', linear(d, d));
        const act = head.add('transform_act_fn', activation(str(c, 'hidden_act')));
        const norm = head.add('LayerNorm', layerNorm(d));
        head.param('bias', vocab);
        return tokenModel(root, (trace, t) => {
          forward(trace, t);
          trace.call(dense, [t, d]);
          trace.call(act, [t, d]);
          trace.call(norm, [t, d]);
        });
      }
      const e = num(c, 'embedding_size');
      const predictions = root.add('cls', userModule('LegacyDebertaV2OnlyMLMHead')).add('predictions', userModule('LegacyDebertaV2LMPredictionHead'));
      const bias = predictions.param('bias', vocab);
      const transform = predictions.add('transform', userModule('LegacyDebertaV2PredictionHeadTransform'));
      const dense = transform.add('dense', linear(d, e));
      const act = transform.add('transform_act_fn', activation(str(c, 'hidden_act')));
      const norm = transform.add('LayerNorm', layerNorm(e));
      const decoder = predictions.add('decoder', linear(e, vocab));
      if (tied) {
        decoder.tie('weight', words.get('weight'));
        decoder.tie('bias', bias);
      }
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(dense, [t, e]);
        trace.call(act, [t, e]);
        trace.call(norm, [t, e]);
        trace.call(decoder, [t, vocab]);
      });
    },
  },
  DebertaV2ForSequenceClassification: {
    refuse: (c) =>
      c.pooler_hidden_size !== null && c.pooler_hidden_size !== c.hidden_size
        ? `DebertaV2ForSequenceClassification: pooler_hidden_size (${String(c.pooler_hidden_size)}) other than hidden_size is not covered`
        : undefined,
    build(c) {
      const d = num(c, 'hidden_size');
      const labels = num(c, 'num_labels');
      const [root, forward] = withBase('DebertaV2ForSequenceClassification', c);
      const pooler = root.add('pooler', userModule('ContextPooler'));
      const dense = pooler.add('dense', linear(d, d));
      const poolerDropout = pooler.add('dropout', plain('Dropout'));
      const classifier = root.add('classifier', linear(d, labels));
      const dropout = root.add('dropout', plain('Dropout'));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        // The first token only; ContextPooler's activation is a function (ACT2FN called inline).
        trace.call(poolerDropout, [d]);
        trace.call(dense, [d]);
        trace.call(dropout, [d]);
        trace.call(classifier, [labels]);
      });
    },
  },
  ...tokenAndQaHeads('DebertaV2', withBase),
};

export const debertaV2TypeSpec: ModelTypeSpec = {
  modelType: 'deberta-v2',
  input: 'tokens',
  classes,
  defaultShape: (c) => [num(c, 'max_position_embeddings')],
  // Absolute positions (position_biased_input) have a table; relative ones bucket any distance.
  maxTokens: (c) => (c.position_biased_input !== false ? num(c, 'max_position_embeddings') : Number.POSITIVE_INFINITY),
};
