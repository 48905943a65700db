/** Falcon in the catalog: the three attention layouts, ALiBi's eager dropout, the layouts the library cannot run. */
import * as assert from 'node:assert/strict';
import { isCatalogMiss, type CatalogArchitecture } from '../../../../../../src/core/catalog/catalog';
import { transformersArchitecture, type TransformersRequest } from '../../../../../../src/core/catalog/hf/transformers';

function arch(request: TransformersRequest): CatalogArchitecture {
  const result = transformersArchitecture(request);
  if (isCatalogMiss(result)) assert.fail(result.miss);
  return result;
}

const SMALL = { vocab_size: 100, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 8 };

describe('transformers catalog: Falcon', () => {
  it('sizes the fused query_key_value by the layout: multi-query, full heads, grouped key/value heads', () => {
    const qkv = (config: Record<string, number | boolean>) =>
      arch({ className: 'FalconModel', configClass: 'FalconConfig', config: { ...SMALL, ...config } })
        .table([16])
        .rows.find((r) => r.path === 'h.0.self_attention.query_key_value.weight')!.params;
    // head_dim 8: one shared key and value head, 8 of each, or 2 groups.
    assert.equal(qkv({}), 64 * (64 + 2 * 8));
    assert.equal(qkv({ multi_query: false }), 64 * 3 * 64);
    assert.equal(qkv({ new_decoder_architecture: true, num_kv_heads: 2 }), 64 * (8 + 2 * 2) * 8);
  });

  it("falcon-rw-1b: ALiBi, biases, attention then MLP, and KerasHub's published count", () => {
    const model = arch({ className: 'AutoModelForCausalLM', checkpoint: 'tiiuae/falcon-rw-1b' });
    assert.equal(model.className, 'FalconForCausalLM');
    const paths = model.table([2048]).rows.map((r) => r.path);
    assert.ok(paths.includes('transformer.h.0.post_attention_layernorm') && paths.includes('transformer.h.23.self_attention.dense.bias'));
    assert.equal(arch({ className: 'FalconModel', checkpoint: 'tiiuae/falcon-rw-1b' }).params, 1_311_625_216);
  });

  it('calls the attention dropout on [heads, T, T] only with ALiBi computed eagerly, and says so instead of the attention note', () => {
    const dropout = (options: Record<string, string | boolean>) => {
      const table = arch({ className: 'FalconModel', configClass: 'FalconConfig', config: { ...SMALL, alibi: true }, options }).table([32]);
      return [table.rows.find((r) => r.path === 'h.0.self_attention.attention_dropout')!.outputShape, table.notes.some((n) => /attn_implementation/.test(n))];
    };
    assert.deepEqual(dropout({ attn_implementation: 'eager' }), [[8, 32, 32], false]);
    assert.deepEqual(dropout({ attn_implementation: 'sdpa' }), [null, true]);
    assert.deepEqual(dropout({}), [null, false]);
  });

  it('refuses the layouts whose forward finds no norm, and attention kernels Falcon does not support', () => {
    const miss = (config: Record<string, number | boolean | string>) => {
      const result = transformersArchitecture({ className: 'FalconModel', configClass: 'FalconConfig', config: { ...SMALL, ...config } });
      return isCatalogMiss(result) ? result.miss : '';
    };
    assert.match(miss({ new_decoder_architecture: true, parallel_attn: false }), /parallel_attn=False .* raises/);
    assert.match(miss({ num_ln_in_parallel_attn: 2 }), /without new_decoder_architecture/);
    assert.match(miss({ attn_implementation: 'flex_attention' }), /not supported by Falcon/);
    assert.match(miss({ hidden_size: 60 }), /divisible by num_attention_heads/);
  });

  it('fills in what __post_init__ and the layers derive: ffn_hidden_size, num_kv_heads, two norms for the new architecture', () => {
    const model = arch({ className: 'FalconModel', configClass: 'FalconConfig', config: { ...SMALL, new_decoder_architecture: true, num_kv_heads: 4 } });
    const rows = model.table([10]).rows;
    assert.deepEqual(rows.filter((r) => r.path.startsWith('h.0.ln_')).map((r) => r.path), ['h.0.ln_attn', 'h.0.ln_mlp']);
    assert.equal(rows.find((r) => r.path === 'h.0.mlp.dense_h_to_4h.weight')!.params, 64 * 256);
    assert.deepEqual(model.input.defaultShape, [2048]);
  });
});
