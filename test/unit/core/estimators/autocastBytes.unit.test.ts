import * as assert from 'node:assert/strict';
import { autocastRows } from '../../../../src/core/estimators/autocastBytes';
import type { LayerRow } from '../../../../src/core/layerTable/layerTable';

const row = (type: string, params = 0): LayerRow => ({ path: type.toLowerCase(), type, outputShape: [8], activations: 8, params, trainable: true });

describe('autocast: what mixed precision makes of each row', () => {
  it('runs linears in half, norms and embeddings in fp32, and other rows in their input\'s dtype', () => {
    const rows = [row('Embedding', 800), row('Dropout'), row('LayerNorm', 16), row('Linear', 72), row('GELU'), row('Linear', 72), row('LayerNorm', 16), row('Softmax')];
    const { outputBytes, castsInput, weightCopyBytes } = autocastRows(rows, 'bf16-mixed', 2);
    assert.deepEqual(outputBytes, [4, 4, 4, 2, 2, 2, 4, 4]);
    // The first linear casts the norm's fp32 output (and keeps that half copy); the second gets half already.
    assert.deepEqual(castsInput, [false, false, false, true, false, false, false, false]);
    // The half copies of the linears' weights; the fp32 ones of norms and embeddings are used as they are.
    assert.deepEqual(weightCopyBytes, [0, 0, 0, 144, 0, 144, 0, 0]);
  });

  it('casts a convolution\'s fp32 input image; batch norm and ReLU follow the half output', () => {
    const { outputBytes, castsInput } = autocastRows([row('Conv2d', 432), row('BatchNorm2d', 32), row('ReLU')], 'fp16-mixed', 2);
    assert.deepEqual(outputBytes, [2, 2, 2]);
    assert.deepEqual(castsInput, [true, false, false]);
  });

  it('leaves every other precision at its one activation dtype', () => {
    assert.deepEqual(autocastRows([row('Embedding'), row('Linear', 72)], 'bf16', 2), { outputBytes: [2, 2], castsInput: [false, false], weightCopyBytes: [0, 0] });
    assert.deepEqual(autocastRows([row('LayerNorm'), row('Linear', 72)], 'fp32', 4).outputBytes, [4, 4]);
  });
});
