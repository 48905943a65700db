import * as assert from 'node:assert/strict';
import { assumedValueOf, assumedValuesFrom, parseAssignment } from '../../../../../src/core/analysis/config/assumedValues';

describe('assumed values (--set and gpuEstimator.assume)', () => {
  it('types a value: numbers, booleans, else text', () => {
    assert.equal(assumedValueOf('1000'), 1000);
    assert.equal(assumedValueOf('3e-4'), 0.0003);
    assert.equal(assumedValueOf('50_257'), 50_257);
    assert.equal(assumedValueOf('true'), true);
    assert.equal(assumedValueOf('False'), false);
    assert.equal(assumedValueOf('bf16'), 'bf16');
    assert.equal(assumedValueOf('99999999999999999999'), '99999999999999999999');
  });

  it('reads NAME=VALUE, dotted names included, and says what is wrong otherwise', () => {
    assert.deepEqual(parseAssignment('vocab_size=50257'), { name: 'vocab_size', value: 50257 });
    assert.deepEqual(parseAssignment('model.n_layer=12'), { name: 'model.n_layer', value: 12 });
    assert.deepEqual(parseAssignment('DATA=/a=b'), { name: 'DATA', value: '/a=b' });
    assert.equal(parseAssignment('vocab_size'), '--set needs NAME=VALUE (batch_size=64, model.n_layer=12, BATCH_SIZE=1000), got "vocab_size"');
    assert.equal(parseAssignment('1x=3'), '--set needs NAME=VALUE (batch_size=64, model.n_layer=12, BATCH_SIZE=1000), got "1x=3"');
    assert.equal(parseAssignment('n='), '--set n= needs a value');
  });

  it('takes the setting\'s valid entries and names the others', () => {
    assert.deepEqual(assumedValuesFrom({ vocab_size: 50257, 'model.n_layer': '12', amp: true, bad: [1], 'no name': 1 }), {
      values: { vocab_size: 50257, 'model.n_layer': 12, amp: true },
      problems: ['gpuEstimator.assume: the value of "bad" must be a number, true/false or text', 'gpuEstimator.assume: "no name" is not a name a script reads a value under'],
    });
    assert.deepEqual(assumedValuesFrom(undefined), { values: {}, problems: [] });
    assert.deepEqual(assumedValuesFrom([1]), { values: {}, problems: ['gpuEstimator.assume must be an object of names to values ({"vocab_size": 50257})'] });
  });
});
