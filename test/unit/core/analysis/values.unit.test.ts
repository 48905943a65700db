import * as assert from 'node:assert/strict';
import { analyzeSource } from '../../../../src/core/analysis/analyzeSource';
import type { PyValue } from '../../../../src/core/analysis/interpreter/pyValues';
import { realParser } from '../../fixtures';

async function analysed(source: string, scriptArguments: readonly string[] = []): Promise<{ get: (name: string) => PyValue | undefined; notes: string[] }> {
  const tree = (await realParser()).parse(source);
  const analysis = analyzeSource(tree, source, undefined, undefined, undefined, {}, scriptArguments);
  tree.delete();
  return { get: (name) => analysis.context.scope.get(name), notes: analysis.notes.map((note) => `${(note.range?.startLine ?? -1) + 1}: ${note.message}`) };
}

async function constants(source: string): Promise<(name: string) => PyValue | undefined> {
  return (await analysed(source)).get;
}

describe('the command line (sys.argv)', () => {
  const script = 'import sys\nfrom sys import argv\nPATH = sys.argv[1] if len(sys.argv) > 1 else "config.json"\nN = len(argv)\nREST = sys.argv[1:]\n';

  it('is the script alone when no arguments are given, so the script\'s own default is taken', async () => {
    const { get } = await analysed(script);
    assert.equal(get('PATH'), 'config.json');
    assert.equal(get('N'), 1);
    assert.deepEqual(get('REST'), []);
  });

  it('holds the arguments the script is run with', async () => {
    const { get } = await analysed(script, ['other.json', '--lr=0.1']);
    assert.equal(get('PATH'), 'other.json');
    assert.equal(get('N'), 3);
    assert.deepEqual(get('REST'), ['other.json', '--lr=0.1']);
  });
});

describe('an object\'s __dict__', () => {
  it('is a view of its attributes: update() through it sets them (yacs and minGPT\'s CfgNode)', async () => {
    const get = await constants(
      [
        'class CfgNode:',
        '    def __init__(self, **kwargs):',
        '        self.__dict__.update(kwargs)',
        '    def merge_from_dict(self, d):',
        '        self.__dict__.update(d)',
        'c = CfgNode(n_layer=4)',
        'c.merge_from_dict({"gpt-mini": dict(n_embd=192), "gpt-micro": dict(n_embd=128)}["gpt-micro"])',
        'c.vocab = 3',
        'LAYERS = c.n_layer',
        'EMBD = c.n_embd',
        'KEYS = list(c.__dict__.keys())',
        '',
      ].join('\n'),
    );
    assert.equal(get('LAYERS'), 4);
    assert.equal(get('EMBD'), 128);
    assert.deepEqual(get('KEYS'), ['n_layer', 'n_embd', 'vocab']);
  });
});

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

  it('computes whole numbers exactly as Python does, shifts and bitwise operators included', async () => {
    const get = await constants('A = 1 << 40\nB = -(1 << 33) >> 3\nC = 2**52 + (2**52 - 1)\nD = (1 << 40) | 5\nE = ((1 << 40) + 7) & 6\nF = ~(1 << 40)\nG = pow(2, 52)\n');
    assert.equal(get('A'), 2 ** 40);
    assert.equal(get('B'), -(2 ** 30));
    assert.equal(get('C'), Number.MAX_SAFE_INTEGER);
    assert.equal(get('D'), 2 ** 40 + 5);
    assert.equal(get('E'), 6);
    assert.equal(get('F'), -(2 ** 40) - 1);
    assert.equal(get('G'), 2 ** 52);
  });

  it('takes a whole number past 2**53 - 1 as unknown, with a note, instead of an inexact one', async () => {
    const { get, notes } = await analysed('A = 2**64\nB = 18446744073709551616\nC = 1 << 64\nD = pow(2, 64)\nE = int(1e20)\nF = A + 1\nG = 2 ** 5000\nH = 2**53\n');
    for (const name of ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H']) {
      const value = get(name);
      assert.ok(value && typeof value === 'object' && 'reason' in value, `${name} is ${JSON.stringify(value)}`);
    }
    const [a, b, c, d, e, , g, h] = ['2**64', '18446744073709551616', '1 << 64', 'pow(2, 64)', 'int(1e20)', '', '2 ** 5000', '2**53'];
    assert.deepEqual(
      notes.filter((note) => !/No PyTorch model/.test(note)),
      [[1, a], [2, b], [3, c], [4, d], [5, e], [7, g], [8, h]].map(([line, text]) => `${line}: \`${text}\` is larger than 9007199254740991 (2**53 - 1), beyond what can be estimated exactly; it is taken as unknown`),
    );
  });
});
