import * as assert from 'node:assert/strict';
import { analyzeSource } from '../../../../src/core/analysis/analyzeSource';
import type { PyValue } from '../../../../src/core/analysis/interpreter/pyValues';
import { realParser } from '../../fixtures';

async function constants(source: string): Promise<(name: string) => PyValue | undefined> {
  const tree = (await realParser()).parse(source);
  const { scope } = analyzeSource(tree, source).context;
  tree.delete();
  return (name) => scope.get(name);
}

describe('module constants', () => {
  it('evaluates literals, arithmetic and earlier constants in source order', async () => {
    const get = await constants('A = 4\nB = A * 2 ** 3 + 1\nC = (B - 1) // 3\nD = -A\nE = 1_000\nF = 2.5e1\nG = [A, B]\nH = (A,) * 2\nA = 7\nI = int(A / 2)\nJ = max(A, 3)\n');
    assert.equal(get('A'), 7);
    assert.equal(get('B'), 33);
    assert.equal(get('C'), 10);
    assert.equal(get('D'), -4);
    assert.equal(get('E'), 1000);
    assert.equal(get('F'), 25);
    assert.deepEqual(get('G'), [4, 33]);
    assert.deepEqual([...(get('H') as number[])], [4, 4]);
    assert.equal(get('I'), 3);
    assert.equal(get('J'), 7);
  });

  it('marks what is not constant as unresolved with a reason', async () => {
    const get = await constants('import os\nN = int(os.environ["N"])\nM = N + 1\nS = f"{N}"\n');
    for (const name of ['N', 'M', 'S']) {
      const value = get(name);
      assert.ok(value && typeof value === 'object' && 'reason' in value, `${name} is unresolved`);
    }
  });
});
