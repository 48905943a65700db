/**
 * Mixture-of-experts decoders (transformers 5.18.0: models/mixtral/modeling_mixtral.py and
 * models/qwen2_moe/modeling_qwen2_moe.py): the LLaMA layer with a sparse MoE block as its `mlp`.
 * Transformers 5 keeps the experts fused, as two parameters of the library's own experts module
 * (gate_up_proj: experts x 2·intermediate x hidden, down_proj: experts x hidden x intermediate, run
 * with F.linear), and the router as the library's top-k router holding one weight (experts x
 * hidden): Parameter rows, no calls. Qwen2-MoE adds a shared expert (a torch.nn gated MLP every
 * token goes through) and its Linear(hidden, 1) gate, and biases on the query, key and value.
 * Qwen3-MoE (models/qwen3_moe/modeling_qwen3_moe.py) has no shared expert, registers the experts
 * before the router, and normalizes each head's queries and keys as Qwen3 does (q_norm, k_norm:
 * head_dim wide), with head_dim its own field and attention_bias on all four projections.
 * The fine-tuning estimator counts the same parameters per expert (estimators/moe.ts).
 */
import { num, str, type HfConfig } from '../configs';
import type { ClassSpec, ModelTypeSpec, TokenForward as Forward } from '../modelTypeSpec';
import { activation, embedding, linear, userModule, weightOnlyNorm } from '../layers';
import { Module } from '../moduleTree';
import { decoderClasses } from './decoderHeads';

interface MoeNames {
  readonly prefix: 'Mixtral' | 'Qwen2Moe' | 'Qwen3Moe';
  readonly modelType: 'mixtral' | 'qwen2_moe' | 'qwen3_moe';
  /** Config fields: the expert count and one expert's intermediate size. */
  readonly experts: string;
  readonly expertIntermediate: string;
  /** Qwen2-MoE: the shared expert's intermediate size field. */
  readonly shared?: string;
  /** Which projections carry a bias: Qwen2-MoE's q/k/v always, Qwen3-MoE's four by attention_bias. */
  readonly bias: (c: HfConfig) => { readonly qkv: boolean; readonly o: boolean };
  /** Qwen3-MoE: RMS norms over each head's queries and keys, and the experts registered before the router. */
  readonly qwen3?: boolean;
}

function base(names: MoeNames, c: HfConfig): [Module, Forward] {
  const p = names.prefix;
  const rmsNorm = (d: number): Module => weightOnlyNorm(`${p}RMSNorm`, d);
  const d = num(c, 'hidden_size');
  const headDim = num(c, 'head_dim');
  const q = num(c, 'num_attention_heads') * headDim;
  const kv = num(c, 'num_key_value_heads') * headDim;
  const experts = num(c, names.experts);
  const inner = num(c, names.expertIntermediate);
  const shared = names.shared ? num(c, names.shared) : 0;
  const vocab = num(c, 'vocab_size');
  const root = userModule(`${p}Model`);
  const embed = root.add('embed_tokens', embedding(vocab, d));
  const list = root.add('layers', userModule('ModuleList'));
  const layers: Forward[] = [];
  for (let i = 0; i < num(c, 'num_hidden_layers'); i++) {
    const layer = list.add(String(i), userModule(`${p}DecoderLayer`));
    const attn = layer.add('self_attn', userModule(`${p}Attention`));
    const bias = names.bias(c);
    const qProj = attn.add('q_proj', linear(d, q, bias.qkv));
    const kProj = attn.add('k_proj', linear(d, kv, bias.qkv));
    const vProj = attn.add('v_proj', linear(d, kv, bias.qkv));
    const oProj = attn.add('o_proj', linear(q, d, bias.o));
    if (names.qwen3) {
      attn.add('q_norm', rmsNorm(headDim));
      attn.add('k_norm', rmsNorm(headDim));
    }
    const block = layer.add('mlp', userModule(`${p}SparseMoeBlock`));
    const router = () => block.add('gate', userModule(`${p}TopKRouter`)).param('weight', experts * d);
    if (!names.qwen3) router();
    const fused = block.add('experts', userModule(`${p}Experts`));
    fused.param('gate_up_proj', experts * 2 * inner * d);
    fused.param('down_proj', experts * d * inner);
    fused.add('act_fn', activation(str(c, 'hidden_act')));
    if (names.qwen3) router();
    const calls: Array<[Module, number]> = [];
    if (shared > 0) {
      const mlp = block.add('shared_expert', userModule(`${p}MLP`));
      const gate = mlp.add('gate_proj', linear(d, shared, false));
      const up = mlp.add('up_proj', linear(d, shared, false));
      const down = mlp.add('down_proj', linear(shared, d, false));
      const act = mlp.add('act_fn', activation(str(c, 'hidden_act')));
      const sharedGate = block.add('shared_expert_gate', linear(d, 1, false));
      calls.push([gate, shared], [act, shared], [up, shared], [down, d], [sharedGate, 1]);
    }
    layer.add('input_layernorm', rmsNorm(d));
    layer.add('post_attention_layernorm', rmsNorm(d));
    layers.push((trace, t) => {
      trace.call(qProj, [t, q]);
      trace.call(kProj, [t, kv]);
      trace.call(vProj, [t, kv]);
      trace.call(oProj, [t, d]);
      for (const [module, width] of calls) trace.call(module, [t, width]);
    });
  }
  root.add('norm', rmsNorm(d));
  root.add('rotary_emb', userModule(`${p}RotaryEmbedding`));
  return [
    root,
    (trace, t) => {
      trace.call(embed, [t, d]);
      for (const layer of layers) layer(trace, t);
    },
  ];
}

function typeSpec(names: MoeNames): ModelTypeSpec {
  const classes: Record<string, ClassSpec> = decoderClasses({
    prefix: names.prefix,
    causalLm: `${names.prefix}ForCausalLM`,
    base: 'model',
    hidden: 'hidden_size',
    embedding: 'embed_tokens',
    tokenClassifier: (c) => ({ name: 'score', bias: c.token_classification_bias !== false }),
  }, (c) => base(names, c));
  // Which attribute the question-answering class keeps its base model in was checked against the library for Qwen3-MoE only
  // (`transformer`, the heads' default): the others' are left out.
  if (!names.qwen3) delete classes[`${names.prefix}ForQuestionAnswering`];
  return { modelType: names.modelType, input: 'tokens', classes, defaultShape: (c) => [Math.min(4096, num(c, 'max_position_embeddings'))] };
}

export const mixtralTypeSpec = typeSpec({ prefix: 'Mixtral', modelType: 'mixtral', experts: 'num_local_experts', expertIntermediate: 'intermediate_size', bias: () => ({ qkv: false, o: false }) });
export const qwen2MoeTypeSpec = typeSpec({ prefix: 'Qwen2Moe', modelType: 'qwen2_moe', experts: 'num_experts', expertIntermediate: 'moe_intermediate_size', shared: 'shared_expert_intermediate_size', bias: () => ({ qkv: true, o: false }) });
export const qwen3MoeTypeSpec = typeSpec({
  prefix: 'Qwen3Moe', modelType: 'qwen3_moe', experts: 'num_experts', expertIntermediate: 'moe_intermediate_size', qwen3: true,
  bias: (c) => ({ qkv: c.attention_bias === true, o: c.attention_bias === true }),
});
