/**
 * Falcon (transformers 5.18.0, models/falcon/modeling_falcon.py; tiiuae/falcon-7b, falcon-rw-1b,
 * falcon-40b). Every projection is a `FalconLinear`, the library's subclass of nn.Linear: its
 * weight and bias are Parameter rows and its calls no rows. The fused `query_key_value` is sized by
 * the layout the config picks: grouped key/value heads with `new_decoder_architecture` (falcon-40b),
 * one shared key/value head with `multi_query` (falcon-7b), else full heads (falcon-rw-1b). The
 * layer norms follow the layout too: `ln_attn` and `ln_mlp` (new architecture, two norms), one
 * `input_layernorm` for attention and MLP side by side (`parallel_attn`), or `input_layernorm` and
 * `post_attention_layernorm` one after the other. Rotary positions hold only buffers; ALiBi adds
 * nothing. The attention's `attention_dropout` module is called only on ALiBi's eager path,
 * `[heads, T, T]` per sample; sdpa applies it as a function. The heads are the generic decoder ones
 * on `transformer`.
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, layerNorm, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';

/** A FalconLinear: the library's own module, so its parameters are Parameter rows. */
function falconLinear(inFeatures: number, outFeatures: number, bias: boolean): Module {
  const m = userModule('FalconLinear');
  m.param('weight', inFeatures * outFeatures);
  if (bias) m.param('bias', outFeatures);
  return m;
}

/** Whether forward calls the attention's dropout module: ALiBi attention computed eagerly. */
export function falconCallsAttentionDropout(c: HfConfig): boolean {
  return c.alibi === true && c.attn_implementation === 'eager';
}

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'hidden_size');
  const heads = num(c, 'num_attention_heads');
  const headDim = Math.floor(d / heads);
  const ffn = num(c, 'ffn_hidden_size');
  const bias = c.bias === true;
  const newArch = c.new_decoder_architecture === true;
  const parallel = c.parallel_attn === true;
  const twoNorms = newArch && c.num_ln_in_parallel_attn === 2;
  const qkvOut = newArch ? (2 * num(c, 'num_kv_heads') + heads) * headDim : c.multi_query === true ? d + 2 * headDim : 3 * d;
  const probsCalled = falconCallsAttentionDropout(c);

  const root = userModule('FalconModel');
  const words = root.add('word_embeddings', embedding(num(c, 'vocab_size'), d));
  const h = root.add('h', userModule('ModuleList'));
  const blocks: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = h.add(String(i), userModule('FalconDecoderLayer'));
    const attn = layer.add('self_attention', userModule('FalconAttention'));
    attn.add('query_key_value', falconLinear(d, qkvOut, bias));
    attn.add('dense', falconLinear(d, d, bias));
    const probsDropout = attn.add('attention_dropout', plain('Dropout'));
    const mlp = layer.add('mlp', userModule('FalconMLP'));
    mlp.add('dense_h_to_4h', falconLinear(d, ffn, bias));
    const act = mlp.add('act', activation(str(c, 'activation')));
    mlp.add('dense_4h_to_h', falconLinear(ffn, d, bias));
    // Registered in this order by FalconDecoderLayer.__init__.
    let post: Module | undefined;
    let input: Module;
    let lnMlp: Module | undefined;
    if (!parallel) {
      post = layer.add('post_attention_layernorm', layerNorm(d));
      input = layer.add('input_layernorm', layerNorm(d));
    } else if (twoNorms) {
      input = layer.add('ln_attn', layerNorm(d));
      lnMlp = layer.add('ln_mlp', layerNorm(d));
    } else {
      input = layer.add('input_layernorm', layerNorm(d));
    }
    blocks.push((trace, t) => {
      trace.call(input, [t, d]);
      if (lnMlp) trace.call(lnMlp, [t, d]);
      if (probsCalled) trace.call(probsDropout, [heads, t, t]);
      if (post) trace.call(post, [t, d]);
      trace.call(act, [t, ffn]);
    });
  }
  const lnF = root.add('ln_f', layerNorm(d));
  root.add('rotary_emb', userModule('FalconRotaryEmbedding'));
  return [
    root,
    (trace, t) => {
      trace.call(words, [t, d]);
      for (const block of blocks) block(trace, t);
      trace.call(lnF, [t, d]);
    },
  ];
}

const classes: Record<string, ClassSpec> = {
  ...decoderClasses({
    prefix: 'Falcon',
    causalLm: 'FalconForCausalLM',
    base: 'transformer',
    hidden: 'hidden_size',
    embedding: 'word_embeddings',
    tokenClassifier: () => ({ name: 'classifier', bias: true }),
  }, base),
};

export const falconTypeSpec: ModelTypeSpec = {
  modelType: 'falcon',
  input: 'tokens',
  classes,
  // Falcon was trained on 2048-token sequences (max_position_embeddings); rotary and ALiBi positions have no table.
  defaultShape: (c) => [num(c, 'max_position_embeddings')],
};
