/**
 * Gemma-2, Gemma-3's text model, Phi-3, GPT-NeoX, OLMo, OLMo-2 and Qwen3 in the catalog: each checkpoint's published count from the
 * catalog's module tree and from the fine-tuning model's tensors alike, and the linears each tree has
 * under the names LoRA's target_modules use (expected-tables.json checks every row against the library).
 */
import * as assert from 'node:assert/strict';
import { isCatalogMiss, type CatalogArchitecture } from '../../../../../../src/core/catalog/catalog';
import { CHECKPOINTS } from '../../../../../../src/core/catalog/hf/checkpoints';
import { transformersArchitecture, type TransformersRequest } from '../../../../../../src/core/catalog/hf/transformers';
import { loraTargets, parameterTensors, repeats } from '../../../../../../src/core/estimators/fineTuning';
import { checkpointShape } from '../../../../fixtures';

function arch(request: TransformersRequest): CatalogArchitecture {
  const result = transformersArchitecture(request);
  if (isCatalogMiss(result)) assert.fail(result.miss);
  return result;
}

const TYPES = ['gemma2', 'gemma3_text', 'phi3', 'gpt_neox', 'olmo', 'olmo2', 'qwen3'];
const members = CHECKPOINTS.filter((c) => TYPES.includes(c.modelType));

/** The linear names of one layer of a catalog table (`model.layers.0.self_attn.qkv_proj` -> `qkv_proj`). */
function layerLinears(name: string): string[] {
  const rows = arch({ className: 'AutoModelForCausalLM', checkpoint: name }).table([8]).rows;
  return rows.filter((r) => r.type === 'Linear' && /\.0\./.test(r.path)).map((r) => r.path.split('.').pop()!);
}

describe('transformers catalog: Gemma-2, Gemma-3 (text), Phi-3, GPT-NeoX, OLMo, OLMo-2, Qwen3', () => {
  it('has the published checkpoints of every family, each with its published count', () => {
    assert.deepEqual([...new Set(members.map((c) => c.modelType))].sort(), [...TYPES].sort());
    assert.equal(members.length, 27);
    for (const checkpoint of members) {
      const published = checkpoint.published;
      assert.ok(published, checkpoint.name);
      assert.equal(arch({ className: published.className, checkpoint: checkpoint.name }).params + (published.plus ?? 0), published.params, checkpoint.name);
    }
  });

  it("gives the fine-tuning model each checkpoint's published count from its own tensors", () => {
    for (const checkpoint of members) {
      const shape = checkpointShape(checkpoint.name);
      const total = parameterTensors(shape).reduce((sum, t) => sum + t.rows * t.cols * repeats(shape, t), 0);
      assert.equal(total + (checkpoint.published!.plus ?? 0), checkpoint.published!.params, checkpoint.name);
    }
  });

  it('names the linears as the library does: fused qkv_proj and gate_up_proj (Phi-3), query_key_value and dense_h_to_4h (GPT-NeoX), q/k/v/o and gate/up/down (Gemma-2, OLMo)', () => {
    assert.deepEqual(layerLinears('microsoft/Phi-3-mini-4k-instruct'), ['qkv_proj', 'o_proj', 'gate_up_proj', 'down_proj']);
    assert.deepEqual(layerLinears('EleutherAI/pythia-160m'), ['query_key_value', 'dense', 'dense_h_to_4h', 'dense_4h_to_h']);
    for (const name of ['google/gemma-2-2b', 'google/gemma-3-1b-it', 'allenai/OLMo-1B-hf', 'allenai/OLMo-2-1124-7B', 'Qwen/Qwen3-8B']) {
      assert.deepEqual(layerLinears(name), ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'], name);
    }
  });

  it("finds LoRA's target modules by the family's own names, and all-linear on every layer linear", () => {
    const targets = (name: string, modules: string | readonly string[] | undefined) => loraTargets(checkpointShape(name), modules).map((t) => `${t.name}:${t.rows}x${t.cols}`);
    assert.deepEqual(targets('microsoft/Phi-3-mini-4k-instruct', ['qkv_proj', 'o_proj']), ['qkv_proj:9216x3072', 'o_proj:3072x3072']);
    assert.deepEqual(targets('microsoft/Phi-3-mini-4k-instruct', ['gate_up_proj']), ['gate_up_proj:16384x3072']);
    // PEFT's defaults: Phi-3's qkv_proj, GPT-NeoX's query_key_value, Gemma-2's q_proj and v_proj.
    assert.deepEqual(targets('microsoft/phi-4', undefined), ['qkv_proj:7680x5120']);
    assert.deepEqual(targets('EleutherAI/pythia-1b', undefined), ['qkv_proj:6144x2048']);
    assert.deepEqual(targets('google/gemma-2-9b', undefined), ['q_proj:4096x3584', 'v_proj:2048x3584']);
    assert.deepEqual(targets('EleutherAI/pythia-1b', ['query_key_value', 'dense', 'dense_h_to_4h', 'dense_4h_to_h']),
      ['qkv_proj:6144x2048', 'o_proj:2048x2048', 'up_proj:8192x2048', 'down_proj:2048x8192']);
    assert.deepEqual(targets('microsoft/Phi-3-mini-4k-instruct', 'all-linear').map((t) => t.split(':')[0]), ['qkv_proj', 'o_proj', 'gate_up_proj', 'down_proj']);
    assert.equal(targets('allenai/OLMo-2-1124-7B', 'all-linear').length, 7);
  });

  it("Gemma-2: four norms a layer, head_dim 256 apart from the width, a tied head, soft-capped logits in the fine-tuning shape", () => {
    const model = arch({ className: 'Gemma2ForCausalLM', checkpoint: 'google/gemma-2-2b' });
    const norms = model.table([8]).rows.filter((r) => /^model\.layers\.0\..*layernorm/.test(r.path)).map((r) => r.path.split('.')[3]);
    assert.deepEqual(norms, ['input_layernorm', 'post_attention_layernorm', 'pre_feedforward_layernorm', 'post_feedforward_layernorm']);
    const q = model.table([8]).rows.find((r) => r.path === 'model.layers.0.self_attn.q_proj')!;
    assert.equal(q.params, 2304 * 8 * 256);
    const shape = checkpointShape('google/gemma-2-2b');
    assert.equal(shape.tiedEmbeddings, true);
    assert.equal(shape.logitSoftcap, true);
    assert.equal(shape.postNorms, 'extra');
  });

  it('GPT-NeoX: parallel residual behind two norms unless use_parallel_residual is False; OLMo: norms without parameters', () => {
    assert.equal(checkpointShape('EleutherAI/gpt-neox-20b').parallelNorms, 2);
    const sequential = arch({ className: 'GPTNeoXForCausalLM', configClass: 'GPTNeoXConfig', config: { vocab_size: 99, hidden_size: 32, intermediate_size: 37, num_hidden_layers: 2, num_attention_heads: 4, use_parallel_residual: false } });
    const parallel = arch({ className: 'GPTNeoXForCausalLM', configClass: 'GPTNeoXConfig', config: { vocab_size: 99, hidden_size: 32, intermediate_size: 37, num_hidden_layers: 2, num_attention_heads: 4 } });
    // The same modules and calls either way: only the residual's wiring differs.
    assert.deepEqual(sequential.table([8]).rows, parallel.table([8]).rows);
    const olmo = arch({ className: 'OlmoForCausalLM', checkpoint: 'allenai/OLMo-1B-hf' });
    assert.ok(!olmo.table([8]).rows.some((r) => /layernorm|norm\.weight/.test(r.path)));
    assert.equal(checkpointShape('allenai/OLMo-1B-hf').parameterFreeNorms, true);
  });

  it('Qwen3: RMS norms over one head of queries and keys, head_dim 128 apart from the width, the small models tied', () => {
    const model = arch({ className: 'Qwen3ForCausalLM', checkpoint: 'Qwen/Qwen3-0.6B' });
    const rows = model.table([8]).rows;
    const q = rows.find((r) => r.path === 'model.layers.0.self_attn.q_proj')!;
    // 16 heads of 128 from a width of 1024.
    assert.equal(q.params, 1024 * 16 * 128);
    const shape = checkpointShape('Qwen/Qwen3-0.6B');
    assert.equal(shape.qkNorms, 'perHead');
    assert.equal(shape.headDim, 128);
    assert.equal(shape.tiedEmbeddings, true);
    assert.equal(checkpointShape('Qwen/Qwen3-8B').tiedEmbeddings, false);
    const norms = parameterTensors(shape).find((t) => t.name === 'qk_norms')!;
    assert.equal(norms.rows, 2 * 128);
    // The published 0.6B and 1.7B files store the tied head beside the embedding: the count they publish has it twice.
    const small = CHECKPOINTS.find((c) => c.name === 'Qwen/Qwen3-0.6B')!;
    assert.equal(small.published!.plus, 151936 * 1024);
    // Sliding windows change the mask, not the modules.
    const tiny = { vocab_size: 99, hidden_size: 32, intermediate_size: 37, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8 };
    const full = arch({ className: 'Qwen3ForCausalLM', configClass: 'Qwen3Config', config: tiny });
    const sliding = arch({ className: 'Qwen3ForCausalLM', configClass: 'Qwen3Config', config: { ...tiny, use_sliding_window: true, sliding_window: 4, max_window_layers: 1 } });
    assert.deepEqual(sliding.table([8]).rows, full.table([8]).rows);
  });

  it("Gemma-3's text model: Gemma-2's four norms and scaled embedding with Qwen3's per-head query and key norms, its own class names, no soft-capping", () => {
    const model = arch({ className: 'AutoModelForCausalLM', checkpoint: 'google/gemma-3-1b-it' });
    assert.equal(model.className, 'Gemma3ForCausalLM');
    const rows = model.table([8]).rows;
    const attention = rows.filter((r) => r.path.startsWith('model.layers.0.self_attn.')).map((r) => r.path.split('.').slice(4).join('.'));
    assert.deepEqual([...attention].sort(), ['k_norm.weight', 'k_proj', 'o_proj', 'q_norm.weight', 'q_proj', 'v_proj']);
    // 4 heads of 256 from a width of 1152; one key-value head.
    assert.equal(rows.find((r) => r.path === 'model.layers.0.self_attn.k_proj')!.params, 1152 * 256);
    const shape = checkpointShape('google/gemma-3-1b-it');
    assert.equal(shape.postNorms, 'extra');
    assert.equal(shape.qkNorms, 'perHead');
    assert.equal(shape.normWeightFp32, true);
    assert.equal(shape.logitSoftcap, undefined);
    assert.equal(shape.vocab, 262144);
    assert.ok(!isCatalogMiss(transformersArchitecture({ className: 'Gemma3TextForSequenceClassification', checkpoint: 'google/gemma-3-1b-pt' })));
  });

  it('refuses what the config classes refuse', () => {
    const miss = transformersArchitecture({ className: 'Phi3Model', configClass: 'Phi3Config', config: { hidden_size: 30, num_attention_heads: 4 } });
    assert.ok(isCatalogMiss(miss) && /multiple of num_attention_heads/.test(miss.miss));
    const unknown = transformersArchitecture({ className: 'OlmoModel', configClass: 'OlmoConfig', config: { head_dim: 64 } });
    assert.ok(isCatalogMiss(unknown) && /no option 'head_dim'/.test(unknown.miss));
  });
});
