/**
 * T5 (transformers 5.18.0, models/t5/modeling_t5.py). T5LayerNorm is the library's own RMS norm:
 * its `weight` is a Parameter row and its calls are no rows. Only the first block of each stack
 * has the relative attention bias, an Embedding called on the (query, key) bucket grid after q, k
 * and v: output (Tq, Tk, heads), no batch dimension. Attention dropout is functional. In 5.18 the
 * encoder's and decoder's embed_tokens are Embeddings of their own that share `shared.weight`, so
 * `shared` itself is never called, and T5Config always ties the LM head to it
 * (tie_word_embeddings=False only stops the output scaling).
 */
import { num, type HfConfig } from '../configs';
import type { BuiltModel, ClassSpec, ModelTypeSpec, ForwardInput } from '../modelTypeSpec';
import { activation, embedding, linear, plain, userModule, weightOnlyNorm } from '../layers';
import { Module, type Param, type Trace } from '../moduleTree';

/** T5LayerNorm(d): a user module holding `weight`. */
const t5LayerNorm = (d: number): Module => weightOnlyNorm('T5LayerNorm', d);

type StackForward = (trace: Trace, t: number, encoderT?: number) => void;

function ffn(c: HfConfig, parent: Module): (trace: Trace, t: number) => void {
  const d = num(c, 'd_model');
  const dff = num(c, 'd_ff');
  const proj = String(c.feed_forward_proj);
  const gated = proj.startsWith('gated-');
  const act = proj === 'gated-gelu' ? 'gelu_new' : proj.split('-').pop()!;
  const ff = parent.add('DenseReluDense', userModule(gated ? 'T5DenseGatedActDense' : 'T5DenseActDense'));
  if (gated) {
    const wi0 = ff.add('wi_0', linear(d, dff, false));
    const wi1 = ff.add('wi_1', linear(d, dff, false));
    const wo = ff.add('wo', linear(dff, d, false));
    const dropout = ff.add('dropout', plain('Dropout'));
    const a = ff.add('act', activation(act));
    return (trace, t) => {
      trace.call(wi0, [t, dff]);
      trace.call(a, [t, dff]);
      trace.call(wi1, [t, dff]);
      trace.call(dropout, [t, dff]);
      trace.call(wo, [t, d]);
    };
  }
  const wi = ff.add('wi', linear(d, dff, false));
  const wo = ff.add('wo', linear(dff, d, false));
  const dropout = ff.add('dropout', plain('Dropout'));
  const a = ff.add('act', activation(act));
  return (trace, t) => {
    trace.call(wi, [t, dff]);
    trace.call(a, [t, dff]);
    trace.call(dropout, [t, dff]);
    trace.call(wo, [t, d]);
  };
}

/** T5Attention: q, k, v, o and, in the first block, relative_attention_bias. */
function attention(c: HfConfig, relativeBias: boolean): [Module, (trace: Trace, tq: number, tk: number) => void] {
  const d = num(c, 'd_model');
  const heads = num(c, 'num_heads');
  const inner = heads * num(c, 'd_kv');
  const m = userModule('T5Attention');
  const q = m.add('q', linear(d, inner, false));
  const k = m.add('k', linear(d, inner, false));
  const v = m.add('v', linear(d, inner, false));
  const o = m.add('o', linear(inner, d, false));
  const bias = relativeBias ? m.add('relative_attention_bias', embedding(num(c, 'relative_attention_num_buckets'), heads)) : undefined;
  return [
    m,
    (trace, tq, tk) => {
      trace.call(q, [tq, inner]);
      trace.call(k, [tk, inner]);
      trace.call(v, [tk, inner]);
      if (bias) trace.call(bias, [tq, tk, heads]);
      trace.call(o, [tq, d]);
    },
  ];
}

/** T5Stack: embed_tokens (sharing `shared`), blocks, final_layer_norm, dropout. */
function stack(c: HfConfig, decoder: boolean, shared: Param): [Module, StackForward] {
  const d = num(c, 'd_model');
  const m = userModule('T5Stack');
  const embed = m.add('embed_tokens', embedding(num(c, 'vocab_size'), d));
  embed.tie('weight', shared);
  const blockList = m.add('block', userModule('ModuleList'));
  const blocks: StackForward[] = [];
  const count = decoder ? num(c, 'num_decoder_layers') : num(c, 'num_layers');
  for (let i = 0; i < count; i++) {
    const block = blockList.add(String(i), userModule('T5Block'));
    const layers = block.add('layer', userModule('ModuleList'));
    const self = layers.add('0', userModule('T5LayerSelfAttention'));
    const [selfAttn, selfForward] = attention(c, i === 0);
    self.add('SelfAttention', selfAttn);
    self.add('layer_norm', t5LayerNorm(d));
    const selfDropout = self.add('dropout', plain('Dropout'));
    let crossForward: ((trace: Trace, t: number, encoderT: number) => void) | undefined;
    if (decoder) {
      const cross = layers.add('1', userModule('T5LayerCrossAttention'));
      const [crossAttn, attnForward] = attention(c, false);
      cross.add('EncDecAttention', crossAttn);
      cross.add('layer_norm', t5LayerNorm(d));
      const crossDropout = cross.add('dropout', plain('Dropout'));
      crossForward = (trace, t, encoderT) => {
        attnForward(trace, t, encoderT);
        trace.call(crossDropout, [t, d]);
      };
    }
    const ff = layers.add(decoder ? '2' : '1', userModule('T5LayerFF'));
    const ffForward = ffn(c, ff);
    ff.add('layer_norm', t5LayerNorm(d));
    const ffDropout = ff.add('dropout', plain('Dropout'));
    blocks.push((trace, t, encoderT) => {
      selfForward(trace, t, t);
      trace.call(selfDropout, [t, d]);
      if (crossForward && encoderT !== undefined) crossForward(trace, t, encoderT);
      ffForward(trace, t);
      trace.call(ffDropout, [t, d]);
    });
  }
  m.add('final_layer_norm', t5LayerNorm(d));
  const dropout = m.add('dropout', plain('Dropout'));
  return [
    m,
    (trace, t, encoderT) => {
      trace.call(embed, [t, d]);
      trace.call(dropout, [t, d]);
      for (const block of blocks) block(trace, t, encoderT);
      trace.call(dropout, [t, d]);
    },
  ];
}

interface Parts {
  readonly root: Module;
  readonly shared: Module;
  readonly encoder: StackForward;
  readonly decoder?: StackForward;
}

/** `shared`, `encoder` and (with `decoder`) `decoder`, registered on `root` in T5's order. */
function parts(c: HfConfig, root: Module, withDecoder: boolean): Parts {
  const shared = root.add('shared', embedding(num(c, 'vocab_size'), num(c, 'd_model')));
  const [encoder, encoderForward] = stack(c, false, shared.get('weight'));
  root.add('encoder', encoder);
  if (!withDecoder) return { root, shared, encoder: encoderForward };
  const [decoder, decoderForward] = stack(c, true, shared.get('weight'));
  root.add('decoder', decoder);
  return { root, shared, encoder: encoderForward, decoder: decoderForward };
}

function seq2seq(root: Module, forward: (trace: Trace, t: number, u: number) => void): BuiltModel {
  return {
    root,
    forward: (trace: Trace, input: ForwardInput) => forward(trace, input.tokens!, input.decoderTokens ?? input.tokens!),
  };
}

const classes: Record<string, ClassSpec> = {
  T5Model: {
    build(c) {
      const p = parts(c, userModule('T5Model'), true);
      return seq2seq(p.root, (trace, t, u) => {
        p.encoder(trace, t);
        p.decoder!(trace, u, t);
      });
    },
  },
  T5ForConditionalGeneration: {
    build(c) {
      const vocab = num(c, 'vocab_size');
      const p = parts(c, userModule('T5ForConditionalGeneration'), true);
      const head = p.root.add('lm_head', linear(num(c, 'd_model'), vocab, false));
      head.tie('weight', p.shared.get('weight'));
      return seq2seq(p.root, (trace, t, u) => {
        p.encoder(trace, t);
        p.decoder!(trace, u, t);
        trace.call(head, [u, vocab]);
      });
    },
  },
  T5EncoderModel: {
    build(c) {
      const p = parts(c, userModule('T5EncoderModel'), false);
      return { root: p.root, forward: (trace, input) => p.encoder(trace, input.tokens!) };
    },
  },
  T5ForTokenClassification: {
    build(c) {
      const d = num(c, 'd_model');
      const labels = num(c, 'num_labels');
      const root = userModule('T5ForTokenClassification');
      const p = parts(c, root.add('transformer', userModule('T5EncoderModel')), false);
      const dropout = root.add('dropout', plain('Dropout'));
      const classifier = root.add('classifier', linear(d, labels));
      return {
        root,
        forward: (trace, input) => {
          p.encoder(trace, input.tokens!);
          trace.call(dropout, [input.tokens!, d]);
          trace.call(classifier, [input.tokens!, labels]);
        },
      };
    },
  },
};

export const t5TypeSpec: ModelTypeSpec = {
  modelType: 't5',
  input: 'seq2seq',
  hasDecoder,
  classes,
  defaultShape: () => [512],
};

/** The classes that run a decoder (and so take decoder_input_ids). */
export function hasDecoder(className: string): boolean {
  return className === 'T5Model' || className === 'T5ForConditionalGeneration';
}
