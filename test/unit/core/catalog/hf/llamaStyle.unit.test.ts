/**
 * The LLaMA-style decoders the generator read from transformers (llamaStyle.json): what each
 * type's data says shows up in the catalog's answers. The row-by-row comparison with the library is
 * library.unit.test.ts.
 */
import * as assert from 'node:assert/strict';
import { isCatalogMiss, type CatalogArchitecture, type CatalogOptions } from '../../../../../src/core/catalog/catalog';
import { LLAMA_STYLE, LLAMA_STYLE_TYPES, TRANSFORMERS_LLAMA_STYLE_VERSION, isLlamaStyle } from '../../../../../src/core/catalog/hf/llamaStyle';
import { TRANSFORMERS_VERSION, resolveTransformersRequest, transformersArchitecture, type TransformersRequest } from '../../../../../src/core/catalog/hf/transformers';

function arch(request: TransformersRequest): CatalogArchitecture {
  const result = transformersArchitecture(request);
  if (isCatalogMiss(result)) assert.fail(`${JSON.stringify(request)}: ${result.miss}`);
  return result;
}

const pretrained = (className: string, checkpoint: string, options: CatalogOptions = {}) => arch({ className, checkpoint, options });

describe('LLaMA-style decoders from the library (llamaStyle.json)', () => {
  it('was read from the transformers version the catalog follows, for llama, mistral, qwen2, gemma and granite', () => {
    assert.equal(TRANSFORMERS_LLAMA_STYLE_VERSION, TRANSFORMERS_VERSION);
    assert.deepEqual([...LLAMA_STYLE_TYPES], ['llama', 'mistral', 'qwen2', 'gemma', 'granite']);
    // Granite's multipliers scale values, not shapes: the library's tables are the same with any of them.
    for (const field of ['embedding_multiplier', 'residual_multiplier', 'attention_multiplier', 'logits_scaling']) assert.ok(LLAMA_STYLE.granite.noEffectFields.includes(field), field);
    assert.deepEqual(LLAMA_STYLE.granite.classes, ['GraniteModel', 'GraniteForCausalLM']);
    assert.ok(isLlamaStyle('qwen2'));
    assert.ok(!isLlamaStyle('gpt2'));
  });

  it('resolves the Auto classes to each type\'s own classes, as the library maps them', () => {
    for (const modelType of LLAMA_STYLE_TYPES) {
      const entry = LLAMA_STYLE[modelType];
      for (const [auto, concrete] of Object.entries(entry.auto)) {
        const resolved = resolveTransformersRequest({ className: auto, configClass: entry.configClass, options: { num_labels: 2 } });
        if ('miss' in resolved) assert.fail(`${auto} ${entry.configClass}: ${resolved.miss}`);
        assert.equal(resolved.className, concrete);
      }
    }
    // Gemma has no question-answering class in the library, so neither has the catalog.
    const gemmaQa = transformersArchitecture({ className: 'AutoModelForQuestionAnswering', configClass: 'GemmaConfig' });
    assert.ok(isCatalogMiss(gemmaQa) && /no class for gemma/.test(gemmaQa.miss));
  });

  it('builds the projections\' biases as the library does: Qwen2 q/k/v only, LLaMA and Gemma by attention_bias, Mistral none', () => {
    const tiny = { vocab_size: 100, hidden_size: 64, intermediate_size: 96, num_hidden_layers: 1, num_attention_heads: 4, num_key_value_heads: 2 };
    const biasRows = (configClass: string, extra: CatalogOptions = {}) =>
      arch({ className: 'AutoModel', configClass, config: { ...tiny, ...(configClass === 'GemmaConfig' ? { head_dim: 16 } : {}), ...extra } })
        .table([8])
        .rows.filter((r) => /_proj$/.test(r.path))
        .map((r) => [r.path.split('.').pop(), r.params]);
    const noBias = biasRows('MistralConfig');
    assert.deepEqual(noBias.slice(0, 4), [['q_proj', 64 * 64], ['k_proj', 64 * 32], ['v_proj', 64 * 32], ['o_proj', 64 * 64]]);
    assert.deepEqual(biasRows('Qwen2Config').slice(0, 4), [['q_proj', 64 * 64 + 64], ['k_proj', 64 * 32 + 32], ['v_proj', 64 * 32 + 32], ['o_proj', 64 * 64]]);
    assert.deepEqual(biasRows('LlamaConfig', { attention_bias: true }).slice(0, 4).map(([, p]) => p), [64 * 64 + 64, 64 * 32 + 32, 64 * 32 + 32, 64 * 64 + 64]);
    assert.deepEqual(biasRows('GemmaConfig').slice(0, 4), noBias.slice(0, 4));
  });

  it('keeps Gemma\'s scaled embedding as the library\'s own module: a Parameter row when untied, the tied LM head\'s row otherwise', () => {
    const tied = pretrained('GemmaForCausalLM', 'google/gemma-2b');
    const rows = tied.table([16]).rows;
    assert.ok(!rows.some((r) => r.path.startsWith('model.embed_tokens')), 'no embedding row: its call is not a torch.nn call');
    assert.equal(rows.find((r) => r.path === 'lm_head')!.params, 256_000 * 2048);
    const untied = pretrained('GemmaForCausalLM', 'google/gemma-2b', { tie_word_embeddings: false });
    const embed = untied.table([16]).rows.find((r) => r.path === 'model.embed_tokens.weight')!;
    assert.equal(embed.type, 'Parameter');
    assert.equal(embed.params, 256_000 * 2048);
    assert.equal(untied.params - tied.params, 256_000 * 2048);
  });

  it('applies the config class\'s own rewrites: GemmaConfig turns the legacy gelu into gelu_pytorch_tanh', () => {
    const resolved = resolveTransformersRequest({ className: 'GemmaForCausalLM', checkpoint: 'google/gemma-7b' });
    if ('miss' in resolved) assert.fail(resolved.miss);
    assert.equal(resolved.config.hidden_act, 'gelu_pytorch_tanh');
    const llama = resolveTransformersRequest({ className: 'LlamaModel', configClass: 'LlamaConfig', config: { hidden_act: 'gelu' } });
    if ('miss' in llama) assert.fail(llama.miss);
    assert.equal(llama.config.hidden_act, 'gelu');
  });

  it('accepts the fields the generator saw leave the table unchanged, and refuses names the config class does not have', () => {
    const plain = pretrained('MistralForCausalLM', 'mistralai/Mistral-7B-v0.1');
    const windowed = pretrained('MistralForCausalLM', 'mistralai/Mistral-7B-v0.1', { sliding_window: null, rms_norm_eps: 1e-6 });
    assert.ok(LLAMA_STYLE.mistral.noEffectFields.includes('sliding_window'));
    assert.deepEqual(windowed.table([512]).rows, plain.table([512]).rows);
    const miss = transformersArchitecture({ className: 'MistralModel', configClass: 'MistralConfig', config: { attention_bias: true } });
    assert.ok(isCatalogMiss(miss) && /MistralConfig has no option 'attention_bias'/.test(miss.miss));
  });

  it('scales with the sequence length and runs past max_position_embeddings with a note', () => {
    const qwen = pretrained('Qwen2ForCausalLM', 'Qwen/Qwen2.5-0.5B');
    const short = qwen.table([1024]);
    const long = qwen.table([2048]);
    const acts = (rows: typeof short.rows) => rows.reduce((s, r) => s + (r.activations ?? 0), 0);
    assert.equal(acts(long.rows), 2 * acts(short.rows));
    assert.deepEqual(qwen.input.defaultShape, [4096]);
    const past = pretrained('GemmaForCausalLM', 'google/gemma-2b').table([9000]);
    assert.ok(past.notes.some((n) => /past max_position_embeddings \(8192\)/.test(n)));
  });
});
