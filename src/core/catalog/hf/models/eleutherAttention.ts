/**
 * The self-attention GPT-Neo and GPT-J share (EleutherAI's layout in transformers 5.18.0):
 * `attn_dropout` and `resid_dropout` registered first, then k, v, q (no bias) and out_proj; q is
 * projected first, `attn_dropout` runs on the probabilities (`[heads, T, T]` per sample) and
 * `resid_dropout` on the output.
 */
import { linear, plain } from '../layers';
import type { Module, Trace } from '../moduleTree';

/** Registers the attention's modules on `attn` and returns its forward for `t` tokens. */
export function eleutherAttention(attn: Module, d: number, heads: number, outBias: boolean): (trace: Trace, t: number) => void {
  const attnDropout = attn.add('attn_dropout', plain('Dropout'));
  const residDropout = attn.add('resid_dropout', plain('Dropout'));
  const k = attn.add('k_proj', linear(d, d, false));
  const v = attn.add('v_proj', linear(d, d, false));
  const q = attn.add('q_proj', linear(d, d, false));
  const out = attn.add('out_proj', linear(d, d, outBias));
  return (trace, t) => {
    trace.call(q, [t, d]);
    trace.call(k, [t, d]);
    trace.call(v, [t, d]);
    trace.call(attnDropout, [heads, t, t]);
    trace.call(out, [t, d]);
    trace.call(residDropout, [t, d]);
  };
}
