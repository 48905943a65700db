import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { eagerAttentionBytesPerElement } from '../../../../src/core/estimators/eagerAttention';
import { replayTrainingStep } from '../../../../src/core/estimators/trainingStep';
import type { LayerTable } from '../../../../src/core/layerTable/layerTable';

/**
 * Written by scripts/generate_eager_attention_vectors.py: harness tables, autograd's saved
 * score-matrix bytes on torch 1.13, and how PyTorch 2 runs the case's attention (eager: the same
 * code as 1.13's, so the bytes are PyTorch 2's; fused: scaled_dot_product_attention keeps none).
 */
interface EagerAttentionVectors {
  readonly cases: readonly { name: string; batch: number; precision: 'fp32'; pytorch2: 'eager' | 'fused'; layerTable: LayerTable; measuredAttentionBytes: number }[];
}

const VECTORS = path.resolve(__dirname, '../../../../../test/vectors/eager-attention.json');

describe('eager attention', () => {
  it('keeps, per score element, softmax output, and with dropout its mask and output, in the activation dtype', () => {
    assert.equal(eagerAttentionBytesPerElement('fp32', true), 9);
    assert.equal(eagerAttentionBytesPerElement('fp32', false), 4);
    assert.equal(eagerAttentionBytesPerElement('bf16', true), 5);
    assert.equal(eagerAttentionBytesPerElement('fp16-mixed', true), 7);
  });

  const vectors = JSON.parse(readFileSync(VECTORS, 'utf8')) as EagerAttentionVectors;
  for (const vector of vectors.cases) {
    const kept = vector.pytorch2 === 'eager' ? vector.measuredAttentionBytes : 0;
    it(`${vector.name}: the replay's eager attention is what PyTorch 2 keeps (${kept} bytes at batch ${vector.batch}; torch 1.13 keeps ${vector.measuredAttentionBytes})`, () => {
      const replay = replayTrainingStep({ table: vector.layerTable, batchSize: vector.batch, optimizer: 'sgd', precision: vector.precision });
      assert.equal(replay.eagerAttentionBytes * vector.batch, kept);
      assert.equal(replay.attentionElements, 0);
    });
  }

  it('has direct attention both ways and the Transformer layers among the cases', () => {
    assert.deepEqual(
      vectors.cases.map((vector) => [vector.name, vector.pytorch2]),
      [
        ['mha_default', 'eager'],
        ['mha_need_weights_true_no_dropout', 'eager'],
        ['mha_need_weights_false', 'fused'],
        ['transformer_encoder', 'fused'],
        ['transformer_decoder_layer', 'fused'],
        ['gpt_block', 'eager'],
      ],
    );
  });
});
