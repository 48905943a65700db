/** ALBERT's shared layers in the catalog: calls repeat, parameters do not. */
import * as assert from 'node:assert/strict';
import { isCatalogMiss, type CatalogArchitecture } from '../../../../../../src/core/catalog/catalog';
import { transformersArchitecture, type TransformersRequest } from '../../../../../../src/core/catalog/hf/transformers';

function arch(request: TransformersRequest): CatalogArchitecture {
  const result = transformersArchitecture(request);
  if (isCatalogMiss(result)) assert.fail(result.miss);
  return result;
}

describe('transformers catalog: ALBERT', () => {
  it('calls one shared layer per num_hidden_layers, its parameters counted once', () => {
    const twelve = arch({ className: 'AlbertModel', checkpoint: 'albert-base-v2' });
    const six = arch({ className: 'AlbertModel', checkpoint: 'albert-base-v2', options: { num_hidden_layers: 6 } });
    assert.equal(twelve.params, 11_683_584);
    assert.equal(six.params, twelve.params);
    const rows = twelve.table([128]).rows;
    const query = rows.filter((r) => r.path === 'encoder.albert_layer_groups.0.albert_layers.0.attention.query');
    assert.equal(query.length, 12);
    assert.deepEqual(query.map((r) => r.params), [768 * 768 + 768, ...new Array<number>(11).fill(0)]);
    // 9 rows a layer: q, k, v, dense, output_dropout, LayerNorm, ffn, ffn_output, full_layer_layer_norm (gelu_new is no row)
    assert.equal(six.table([128]).rows.length, rows.length - 6 * 9);
  });

  it('gives each group its own parameters', () => {
    const one = arch({ className: 'AlbertModel', configClass: 'AlbertConfig', config: { hidden_size: 64, num_attention_heads: 4, intermediate_size: 128, num_hidden_layers: 4 } });
    const two = arch({ className: 'AlbertModel', configClass: 'AlbertConfig', config: { hidden_size: 64, num_attention_heads: 4, intermediate_size: 128, num_hidden_layers: 4, num_hidden_groups: 2 } });
    const layer = 2 * 64 + 4 * (64 * 64 + 64) + 2 * 64 + (64 * 128 + 128) + (128 * 64 + 64);
    assert.equal(two.params - one.params, layer);
  });
});
