import * as assert from 'node:assert/strict';
import { fits, largestFittingBatch, riskOf } from '../../../../src/core/estimate/verdict';

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

describe('largest fitting batch over a curve', () => {
  /** The plain answer: the largest batch whose memory fits, by walking a binary search. */
  function reference(memoryAt: (b: number) => number, limit: number): number {
    if (memoryAt(1) > limit) return 0;
    let low = 1;
    let high = 1 << 24;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (memoryAt(middle) <= limit) low = middle;
      else high = middle;
    }
    return low;
  }
  const counted = (curve: (b: number) => number) => {
    let calls = 0;
    return { at: (b: number) => (calls++, curve(b)), calls: () => calls };
  };

  it('finds the same batch as a binary search on straight, bent, stepped and flat curves', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 400; i++) {
      const base = 500 + 3000 * random();
      const slope = 10 ** (-3 + 6 * random());
      const limit = base + slope * (1 + 1e5 * random());
      const step = 1 + Math.floor(64 * random());
      const curves: [string, (b: number) => number][] = [
        ['straight', (b) => base + slope * b],
        ['bending up', (b) => base + slope * b + 1e-4 * slope * b * b],
        ['bending down', (b) => base + slope * 50 * Math.sqrt(b)],
        ['stepped (allocator blocks)', (b) => base + slope * step * Math.ceil(b / step)],
        ['flat, then rising', (b) => (b < 1000 ? base : base + slope * (b - 1000))],
      ];
      for (const [name, curve] of curves) assert.equal(largestFittingBatch(curve, limit), reference(curve, limit), `${name} #${i}`);
    }
    assert.equal(largestFittingBatch(() => 10, 20), (1 << 24) - 1, 'a curve that never reaches the limit: the end of the search');
    assert.equal(largestFittingBatch((b) => 2000 + b, 1000), 0);
  });

  it('does not answer from inside a dip: the batches just below the answer fit too', () => {
    // A replayed peak that steps over the limit at 94,209 and dips back under it from 98,000 to 100,095.
    const curve = (b: number) => (b >= 98_000 && b <= 100_095 ? 14_400 : 1000 + 0.1 * b + (b > 94_208 ? 30 : 0));
    const limit = 10_420.8 + 30 - 30.01;
    const found = largestFittingBatch(curve, limit);
    assert.ok(curve(found) <= limit && curve(found + 1) > limit, String(found));
    for (const share of [0.99, 0.97, 0.94, 0.9]) assert.ok(curve(Math.floor(found * share)) <= limit, `${share}`);
    assert.equal(found, 94_207);
  });

  it('takes a handful of probes on a near-straight curve, at most about two binary searches on any', () => {
    const straight = counted((b) => 1440 + 0.37 * b + 64 * Math.ceil(b / 4096));
    assert.equal(largestFittingBatch(straight.at, 40_960), reference((b) => 1440 + 0.37 * b + 64 * Math.ceil(b / 4096), 40_960));
    assert.ok(straight.calls() <= 16, `${straight.calls()} probes (a binary search: 34)`);
    const line = counted((b) => 1440 + 0.37 * b);
    assert.equal(largestFittingBatch(line.at, 40_960), 106_810);
    assert.ok(line.calls() <= 9, `${line.calls()} probes`);
    const stepped = counted((b) => 1000 + 512 * Math.ceil(b / 37));
    largestFittingBatch(stepped.at, 30_000);
    assert.ok(stepped.calls() <= 2 * 2 * 24, `${stepped.calls()} probes`);
  });
});
