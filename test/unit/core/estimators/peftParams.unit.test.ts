import * as assert from 'node:assert/strict';
import type { AdapterSetup } from '../../../../src/core/analysis/modelDescription';
import type { TransformerShape } from '../../../../src/core/estimators/fineTuning';
import { shapeFromConfig } from '../../../../src/core/estimators/shapeFromConfig';
import { kroneckerFactors, peftParams } from '../../../../src/core/estimators/peftParams';

/**
 * A two-layer Llama small enough to count by hand: hidden 64, 4 heads of 16, 2 key-value heads
 * (k_proj and v_proj are 64 -> 32), MLP 176. PEFT's default targets for Llama are q_proj (64 -> 64)
 * and v_proj (64 -> 32) for every method below.
 */
const shape = shapeFromConfig('llama', { hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: 176, vocab_size: 100 }, { kind: 'lm' }) as TransformerShape;

const adapter = (method: string, extra: Partial<AdapterSetup> = {}): AdapterSetup => ({ method, dora: false, applied: true, ...extra });
const count = (a: AdapterSetup): number => {
  const counted = peftParams(shape, a);
  assert.ok('params' in counted, JSON.stringify(counted));
  return counted.params;
};

describe('peftParams: PEFT methods other than LoRA, counted by hand on a small Llama', () => {
  it('AdaLoRA: P (r x in), Q (out x r) and r singular values per linear, at init_r', () => {
    // q: 6 x (64 + 64) + 6 = 774; v: 6 x (32 + 64) + 6 = 582; two layers.
    assert.equal(count(adapter('adalora', { rank: 6 })), 2 * (774 + 582));
  });

  it('LoHa: two Hadamard-multiplied pairs, 2 r (in + out) per linear', () => {
    // q: 2 x 4 x 128 = 1024; v: 2 x 4 x 96 = 768.
    assert.equal(count(adapter('loha', { rank: 4 })), 2 * (1024 + 768));
  });

  it('VeRA: a scaling vector of r and one of out per linear (the random projections are frozen buffers)', () => {
    // q: 64 + 16; v: 32 + 16.
    assert.equal(count(adapter('vera', { rank: 16 })), 2 * (80 + 48));
  });

  it('LoKr: Kronecker factors of each side; w2 full when r is at least half its larger side, low-rank below; w1 low-rank only with decompose_both', () => {
    assert.deepEqual(kroneckerFactors(64), [8, 8]);
    assert.deepEqual(kroneckerFactors(32), [4, 8]);
    assert.deepEqual(kroneckerFactors(11008), [86, 128]);
    assert.deepEqual(kroneckerFactors(128, 4), [4, 32]);
    // r = 8: q w1 8 x 8 + w2 8 x 8 = 128; v (out 32 = 4 x 8) w1 4 x 8 + w2 8 x 8 = 96.
    assert.equal(count(adapter('lokr', { rank: 8 })), 2 * (128 + 96));
    // r = 2 < 8 / 2: w2 becomes 2 x (8 + 8) = 32; q 64 + 32, v 32 + 32.
    assert.equal(count(adapter('lokr', { rank: 2 })), 2 * (96 + 64));
    // decompose_both: w1 too, q 2 x (8 + 8) = 32, v 2 x (4 + 8) = 24.
    assert.equal(count(adapter('lokr', { rank: 2, shapeOptions: { decompose_both: true } })), 2 * (32 + 32 + 24 + 32));
  });

  it('OFT: in / b blocks of b(b-1)/2 skew-symmetric entries per linear, by oft_block_size (32 by default) or r', () => {
    // Block 32: 2 blocks of 496 on a 64-wide input, for q and for v.
    assert.equal(count(adapter('oft')), 2 * 2 * (2 * 496));
    // r = 4 with oft_block_size=0: blocks of 16, 4 x 120.
    assert.equal(count(adapter('oft', { rank: 4, shapeOptions: { oft_block_size: 0 } })), 2 * 2 * (4 * 120));
    // block_share: one block per linear.
    assert.equal(count(adapter('oft', { shapeOptions: { block_share: true } })), 2 * 2 * 496);
    // A block size that does not divide the input is moved to the nearest divisor (30 -> 32).
    assert.equal(count(adapter('oft', { shapeOptions: { oft_block_size: 30 } })), 2 * 2 * (2 * 496));
    // PEFT refuses r and oft_block_size together; so does the count.
    assert.match(JSON.stringify(peftParams(shape, adapter('oft', { rank: 4 }))), /either r or oft_block_size/);
  });

  it('BOFT: butterfly factors x blocks x b² per linear, plus a scale per output', () => {
    // Block 4, one factor: q 16 blocks x 16 + 64 = 320; v 16 x 16 + 32 = 288.
    assert.equal(count(adapter('boft')), 2 * (320 + 288));
    // 8 blocks (of 8), two factors: q 2 x 8 x 64 + 64 = 1088; v 1024 + 32 = 1056.
    assert.equal(count(adapter('boft', { shapeOptions: { boft_block_size: 0, boft_block_num: 8, boft_n_butterfly_factor: 2 } })), 2 * (1088 + 1056));
  });

  it('targets the modules the config names, and says what it cannot read', () => {
    // LoHa on the MLP's down_proj (176 -> 64): 2 x 4 x 240.
    assert.equal(count(adapter('loha', { rank: 4, targetModules: ['down_proj'] })), 2 * 1920);
    assert.deepEqual(peftParams(shape, adapter('loha')), { unknown: 'r is not readable' });
    assert.deepEqual(peftParams(shape, adapter('oft', { shapeOptions: { oft_block_size: null } })), { unknown: 'oft_block_size is not readable' });
  });
});
