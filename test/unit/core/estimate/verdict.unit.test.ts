import * as assert from 'node:assert/strict';
import { fits, riskOf } from '../../../../src/core/estimate/verdict';

describe('verdict', () => {
  it('fits up to the GPU memory itself, tight within the safety margin below it, oom above', () => {
    assert.equal(fits(1000, 1000), true);
    assert.equal(fits(1001, 1000), false);
    assert.equal(riskOf(899, 1000, 0.1), 'fits');
    assert.equal(riskOf(901, 1000, 0.1), 'tight');
    assert.equal(riskOf(1000, 1000, 0.1), 'tight');
    assert.equal(riskOf(1001, 1000, 0.1), 'oom');
  });
});
