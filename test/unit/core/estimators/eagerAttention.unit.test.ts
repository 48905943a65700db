import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { eagerAttentionBytesPerElement } from '../../../../src/core/estimators/eagerAttention';
import { replayTrainingStep } from '../../../../src/core/estimators/trainingStep';
import type { LayerTable } from '../../../../src/core/layerTable/layerTable';

/** Written by scripts/generate_eager_attention_vectors.py: harness tables and autograd's saved score-matrix bytes. */
interface EagerAttentionVectors {
  readonly cases: readonly { name: string; batch: number; precision: 'fp32'; layerTable: LayerTable; measuredAttentionBytes: number }[];
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
    it(`${vector.name}: the replay's eager attention is what autograd saved (${vector.measuredAttentionBytes} bytes at batch ${vector.batch})`, () => {
      const replay = replayTrainingStep({ table: vector.layerTable, batchSize: vector.batch, optimizer: 'sgd', precision: vector.precision });
      assert.equal(replay.eagerAttentionBytes * vector.batch, vector.measuredAttentionBytes);
      assert.equal(replay.attentionElements, 0);
    });
  }
});
