/**
 * OPT (transformers 5.18.0, models/opt/modeling_opt.py; facebook/opt-125m ... opt-66b). The learned
 * positions are the library's OPTLearnedPositionalEmbedding (a subclass of nn.Embedding, two rows
 * more than max_position_embeddings): its weight is a Parameter row and its call no row. Dropout is
 * functional; the activation is a torch.nn module where ACT2FN says so (ReLU for every checkpoint).
 * With word_embed_proj_dim != hidden_size (opt-350m) the embeddings are projected in and out, and
 * do_layer_norm_before=False (opt-350m) moves each layer's norms after their block and drops the
 * final norm. Attention registers k, v, q, out_proj but projects q first.
 */
import { num, str, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type ModelTypeSpec, type TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, linear, userModule } from '../layers';
import { Module } from '../moduleTree';

function norm(d: number, affine: boolean): Module {
  const m = new Module('LayerNorm', true);
  if (affine) {
    m.param('weight', d);
    m.param('bias', d);
  }
  return m;
}

function base(c: HfConfig): [Module, Forward, Module] {
  const d = num(c, 'hidden_size');
  const proj = num(c, 'word_embed_proj_dim');
  const ffn = num(c, 'ffn_dim');
  const bias = c.enable_bias !== false;
  const affine = c.layer_norm_elementwise_affine !== false;
  const before = c.do_layer_norm_before !== false;
  const root = userModule('OPTModel');
  const decoder = root.add('decoder', userModule('OPTDecoder'));
  const embed = decoder.add('embed_tokens', embedding(num(c, 'vocab_size'), proj));
  const positions = decoder.add('embed_positions', userModule('OPTLearnedPositionalEmbedding'));
  positions.param('weight', (num(c, 'max_position_embeddings') + 2) * d);
  const projectOut = proj !== d ? decoder.add('project_out', linear(d, proj, false)) : undefined;
  const projectIn = proj !== d ? decoder.add('project_in', linear(proj, d, false)) : undefined;
  const finalNorm = before && c._remove_final_layer_norm !== true ? decoder.add('final_layer_norm', norm(d, affine)) : undefined;
  const list = decoder.add('layers', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule('OPTDecoderLayer'));
    const attn = layer.add('self_attn', userModule('OPTAttention'));
    const k = attn.add('k_proj', linear(d, d, bias));
    const v = attn.add('v_proj', linear(d, d, bias));
    const q = attn.add('q_proj', linear(d, d, bias));
    const out = attn.add('out_proj', linear(d, d, bias));
    const act = layer.add('activation_fn', activation(str(c, 'activation_function')));
    const attnNorm = layer.add('self_attn_layer_norm', norm(d, affine));
    const fc1 = layer.add('fc1', linear(d, ffn, bias));
    const fc2 = layer.add('fc2', linear(ffn, d, bias));
    const ffnNorm = layer.add('final_layer_norm', norm(d, affine));
    layers.push((trace, t) => {
      if (before) trace.call(attnNorm, [t, d]);
      trace.call(q, [t, d]);
      trace.call(k, [t, d]);
      trace.call(v, [t, d]);
      trace.call(out, [t, d]);
      if (!before) trace.call(attnNorm, [t, d]);
      // The feed-forward block runs on (batch * tokens, hidden): per sample, t rows.
      if (before) trace.call(ffnNorm, [t, d]);
      trace.call(fc1, [t, ffn]);
      trace.call(act, [t, ffn]);
      trace.call(fc2, [t, d]);
      if (!before) trace.call(ffnNorm, [t, d]);
    });
  }
  return [
    root,
    (trace, t) => {
      trace.call(embed, [t, proj]);
      if (projectIn) trace.call(projectIn, [t, d]);
      for (const layer of layers) layer(trace, t);
      if (finalNorm) trace.call(finalNorm, [t, d]);
      if (projectOut) trace.call(projectOut, [t, proj]);
    },
    embed,
  ];
}

function withBase(className: string, c: HfConfig): [Module, Forward, Module] {
  const root = userModule(className);
  const [inner, forward, embed] = base(c);
  root.add('model', inner);
  return [root, forward, embed];
}

const classes: Record<string, ClassSpec> = {
  OPTModel: {
    build(c) {
      const [root, forward] = base(c);
      return tokenModel(root, forward);
    },
  },
  OPTForCausalLM: {
    build(c) {
      const vocab = num(c, 'vocab_size');
      const [root, forward, embed] = withBase('OPTForCausalLM', c);
      const head = root.add('lm_head', linear(num(c, 'word_embed_proj_dim'), vocab, false));
      if (c.tie_word_embeddings === true) head.tie('weight', embed.get('weight'));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(head, [t, vocab]);
      });
    },
  },
  OPTForSequenceClassification: {
    build(c) {
      const labels = num(c, 'num_labels');
      const [root, forward] = withBase('OPTForSequenceClassification', c);
      const score = root.add('score', linear(num(c, 'word_embed_proj_dim'), labels, false));
      return tokenModel(
        root,
        (trace, t) => {
          forward(trace, t);
          trace.call(score, [t, labels]);
        },
        c.pad_token_id === null ? ['OPTForSequenceClassification needs config.pad_token_id for batches larger than 1 (the library raises without one)'] : undefined,
      );
    },
  },
  OPTForQuestionAnswering: {
    build(c) {
      const [root, forward] = withBase('OPTForQuestionAnswering', c);
      const qa = root.add('qa_outputs', linear(num(c, 'word_embed_proj_dim'), 2));
      return tokenModel(root, (trace, t) => {
        forward(trace, t);
        trace.call(qa, [t, 2]);
      });
    },
  },
};

export const optTypeSpec: ModelTypeSpec = {
  modelType: 'opt',
  input: 'tokens',
  classes,
  defaultShape: (c) => [num(c, 'max_position_embeddings')],
  maxTokens: (c) => num(c, 'max_position_embeddings'),
};
