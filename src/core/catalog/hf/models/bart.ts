/**
 * BART (transformers 5.18.0, models/bart/modeling_bart.py; facebook/bart-base, bart-large,
 * bart-large-cnn). An encoder and a decoder of post-norm layers. The token embeddings
 * (BartScaledWordEmbedding) and the learned positions (BartLearnedPositionalEmbedding, two rows more
 * than max_position_embeddings) are the library's own subclasses of nn.Embedding: their weights are
 * Parameter rows and their calls no rows. Tied (the default), `shared`, both `embed_tokens` and the
 * LM head are one matrix; untied, four. Dropouts are functional; the activation is a row only when
 * it is a torch.nn module (not the default `gelu`). The decoder's cross-attention projects the
 * encoder output for k and v, `[T_encoder, d_model]`.
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec } from '../modelTypeSpec';
import { activation, layerNorm, linear, userModule } from '../layers';
import type { Module, Param, Trace } from '../moduleTree';

type Seq2SeqForward = (trace: Trace, encoderTokens: number, decoderTokens: number) => void;

function libraryEmbedding(type: string, rows: number, d: number, shared?: Param): Module {
  const m = userModule(type);
  m.param('weight', rows * d);
  if (shared) m.tie('weight', shared);
  return m;
}

/** BartAttention: k, v, q, out_proj registered in that order; q is projected first. */
function attention(d: number): [Module, Module, Module, Module, Module] {
  const m = userModule('BartAttention');
  const k = m.add('k_proj', linear(d, d));
  const v = m.add('v_proj', linear(d, d));
  const q = m.add('q_proj', linear(d, d));
  const out = m.add('out_proj', linear(d, d));
  return [m, q, k, v, out];
}

function base(c: HfConfig): [Module, Seq2SeqForward, Module] {
  const d = num(c, 'd_model');
  const vocab = num(c, 'vocab_size');
  const positions = num(c, 'max_position_embeddings') + 2;
  const tied = c.tie_word_embeddings === true;
  const root = userModule('BartModel');
  const shared = root.add('shared', libraryEmbedding('BartScaledWordEmbedding', vocab, d));
  const sharedWeight = tied ? shared.get('weight') : undefined;

  const encoder = root.add('encoder', userModule('BartEncoder'));
  encoder.add('embed_tokens', libraryEmbedding('BartScaledWordEmbedding', vocab, d, sharedWeight));
  encoder.add('embed_positions', libraryEmbedding('BartLearnedPositionalEmbedding', positions, d));
  const encoderList = encoder.add('layers', userModule('ModuleList'));
  const encoderLayers: Array<(trace: Trace, t: number) => void> = [];
  const encoderFfn = num(c, 'encoder_ffn_dim');
  for (let i = 0; i < num(c, 'encoder_layers'); i++) {
    const layer = encoderList.add(String(i), userModule('BartEncoderLayer'));
    const [attn, q, k, v, out] = attention(d);
    layer.add('self_attn', attn);
    const attnNorm = layer.add('self_attn_layer_norm', layerNorm(d));
    const act = layer.add('activation_fn', activation(str(c, 'activation_function')));
    const fc1 = layer.add('fc1', linear(d, encoderFfn));
    const fc2 = layer.add('fc2', linear(encoderFfn, d));
    const finalNorm = layer.add('final_layer_norm', layerNorm(d));
    encoderLayers.push((trace, t) => {
      for (const proj of [q, k, v, out]) trace.call(proj, [t, d]);
      trace.call(attnNorm, [t, d]);
      trace.call(fc1, [t, encoderFfn]);
      trace.call(act, [t, encoderFfn]);
      trace.call(fc2, [t, d]);
      trace.call(finalNorm, [t, d]);
    });
  }
  const encoderNorm = encoder.add('layernorm_embedding', layerNorm(d));

  const decoder = root.add('decoder', userModule('BartDecoder'));
  decoder.add('embed_tokens', libraryEmbedding('BartScaledWordEmbedding', vocab, d, sharedWeight));
  decoder.add('embed_positions', libraryEmbedding('BartLearnedPositionalEmbedding', positions, d));
  const decoderList = decoder.add('layers', userModule('ModuleList'));
  const decoderLayers: Array<(trace: Trace, te: number, td: number) => void> = [];
  const decoderFfn = num(c, 'decoder_ffn_dim');
  for (let i = 0; i < num(c, 'decoder_layers'); i++) {
    const layer = decoderList.add(String(i), userModule('BartDecoderLayer'));
    const [selfAttn, q, k, v, out] = attention(d);
    layer.add('self_attn', selfAttn);
    const act = layer.add('activation_fn', activation(str(c, 'activation_function')));
    const selfNorm = layer.add('self_attn_layer_norm', layerNorm(d));
    const [crossAttn, cq, ck, cv, cout] = attention(d);
    layer.add('encoder_attn', crossAttn);
    const crossNorm = layer.add('encoder_attn_layer_norm', layerNorm(d));
    const fc1 = layer.add('fc1', linear(d, decoderFfn));
    const fc2 = layer.add('fc2', linear(decoderFfn, d));
    const finalNorm = layer.add('final_layer_norm', layerNorm(d));
    decoderLayers.push((trace, te, td) => {
      for (const proj of [q, k, v, out]) trace.call(proj, [td, d]);
      trace.call(selfNorm, [td, d]);
      trace.call(cq, [td, d]);
      trace.call(ck, [te, d]);
      trace.call(cv, [te, d]);
      trace.call(cout, [td, d]);
      trace.call(crossNorm, [td, d]);
      trace.call(fc1, [td, decoderFfn]);
      trace.call(act, [td, decoderFfn]);
      trace.call(fc2, [td, d]);
      trace.call(finalNorm, [td, d]);
    });
  }
  const decoderNorm = decoder.add('layernorm_embedding', layerNorm(d));
  return [
    root,
    (trace, te, td) => {
      trace.call(encoderNorm, [te, d]);
      for (const layer of encoderLayers) layer(trace, te);
      trace.call(decoderNorm, [td, d]);
      for (const layer of decoderLayers) layer(trace, te, td);
    },
    shared,
  ];
}

const classes: Record<string, ClassSpec> = {
  BartModel: {
    build(c) {
      const [root, forward] = base(c);
      return { root, forward: (trace, input) => forward(trace, input.tokens!, input.decoderTokens ?? input.tokens!) };
    },
  },
  BartForConditionalGeneration: {
    build(c) {
      const vocab = num(c, 'vocab_size');
      const root = userModule('BartForConditionalGeneration');
      const [inner, forward, shared] = base(c);
      root.add('model', inner);
      const head = root.add('lm_head', linear(num(c, 'd_model'), vocab, false));
      if (c.tie_word_embeddings === true) head.tie('weight', shared.get('weight'));
      return {
        root,
        forward(trace, input) {
          const td = input.decoderTokens ?? input.tokens!;
          forward(trace, input.tokens!, td);
          trace.call(head, [td, vocab]);
        },
      };
    },
  },
  BartForQuestionAnswering: {
    build(c) {
      const root = userModule('BartForQuestionAnswering');
      const [inner, forward] = base(c);
      root.add('model', inner);
      const qa = root.add('qa_outputs', linear(num(c, 'd_model'), 2));
      return {
        root,
        // The decoder runs on the input shifted right: as many tokens as the encoder.
        forward(trace, input) {
          forward(trace, input.tokens!, input.tokens!);
          trace.call(qa, [input.tokens!, 2]);
        },
      };
    },
  },
};

export const bartTypeSpec: ModelTypeSpec = {
  modelType: 'bart',
  input: 'seq2seq',
  hasDecoder: (className) => className === 'BartModel' || className === 'BartForConditionalGeneration',
  classes,
  defaultShape: (c) => [num(c, 'max_position_embeddings')],
  maxTokens: (c) => num(c, 'max_position_embeddings'),
};
