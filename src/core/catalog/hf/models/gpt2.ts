/**
 * GPT-2 (transformers 5.18.0, models/gpt2/modeling_gpt2.py). Its projections are the library's
 * `Conv1D` (transformers.pytorch_utils), not a torch.nn class: expanded, so their weight and bias
 * are Parameter rows and their calls no rows. Attention dropout is functional unless
 * reorder_and_upcast_attn with eager attention, so `attn_dropout` is listed last, uncalled.
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, layerNorm, plain, userModule } from '../layers';
import { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';

/** transformers' Conv1D(nf, nx): weight (nx, nf) and bias (nf), registered on the module itself. */
function conv1d(nf: number, nx: number): Module {
  const m = new Module('Conv1D', false);
  m.param('weight', nx * nf);
  m.param('bias', nf);
  return m;
}

/**
 * GPT-2's stack, which GPT-Neo keeps: `wte`, `wpe`, `drop`, the blocks `h` (built by `blocks`),
 * `ln_f`. Positions run on the (1, T) position-id buffer: no batch dimension.
 */
export function gpt2StyleStack(type: string, vocab: number, positions: number, d: number, blocks: (h: Module) => Forward[]): [Module, Forward] {
  const root = userModule(type);
  const wte = root.add('wte', embedding(vocab, d));
  const wpe = root.add('wpe', embedding(positions, d));
  const drop = root.add('drop', plain('Dropout'));
  const forwards = blocks(root.add('h', userModule('ModuleList')));
  const lnF = root.add('ln_f', layerNorm(d));
  return [
    root,
    (trace, t) => {
      trace.call(wte, [t, d]);
      trace.call(wpe, [1, t, d]);
      trace.call(drop, [t, d]);
      for (const block of forwards) block(trace, t);
      trace.call(lnF, [t, d]);
    },
  ];
}

function base(c: HfConfig): [Module, Forward] {
  const d = num(c, 'n_embd');
  const inner = c.n_inner === null ? 4 * d : num(c, 'n_inner');
  const eagerDropout = c.attn_implementation === 'eager' && c.reorder_and_upcast_attn === true;
  const heads = num(c, 'n_head');
  return gpt2StyleStack('GPT2Model', num(c, 'vocab_size'), num(c, 'n_positions'), d, (h) => {
    const blocks: Forward[] = [];
    for (let i = 0; i < num(c, 'n_layer'); i++) {
      const block = h.add(String(i), userModule('GPT2Block'));
      const ln1 = block.add('ln_1', layerNorm(d));
      const attn = block.add('attn', userModule('GPT2Attention'));
      attn.add('c_attn', conv1d(3 * d, d));
      attn.add('c_proj', conv1d(d, d));
      const attnDropout = attn.add('attn_dropout', plain('Dropout'));
      const residDropout = attn.add('resid_dropout', plain('Dropout'));
      const ln2 = block.add('ln_2', layerNorm(d));
      const mlp = block.add('mlp', userModule('GPT2MLP'));
      mlp.add('c_fc', conv1d(inner, d));
      mlp.add('c_proj', conv1d(d, inner));
      const act = mlp.add('act', activation(str(c, 'activation_function')));
      const mlpDropout = mlp.add('dropout', plain('Dropout'));
      blocks.push((trace, t) => {
        trace.call(ln1, [t, d]);
        if (eagerDropout) trace.call(attnDropout, [heads, t, t]);
        trace.call(residDropout, [t, d]);
        trace.call(ln2, [t, d]);
        trace.call(act, [t, inner]);
        trace.call(mlpDropout, [t, d]);
      });
    }
    return blocks;
  });
}

const classes: Record<string, ClassSpec> = {
  ...decoderClasses({
    prefix: 'GPT2',
    causalLm: 'GPT2LMHeadModel',
    base: 'transformer',
    hidden: 'n_embd',
    embedding: 'wte',
    tokenClassifier: () => ({ name: 'classifier', bias: true }),
  }, base),
};

export const gpt2TypeSpec: ModelTypeSpec = {
  modelType: 'gpt2',
  input: 'tokens',
  classes,
  defaultShape: (c) => [num(c, 'n_positions')],
  maxTokens: (c) => num(c, 'n_positions'),
};
