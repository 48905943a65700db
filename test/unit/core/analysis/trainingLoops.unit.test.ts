import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { IncrementalEstimator, estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import { estimate, fixture, realParser, REPO_ROOT } from '../../fixtures';

const loops = (models: readonly { name: string; trainingLoops: readonly { startLine: number; endLine: number }[] }[]) => models.map((m) => [m.name, m.trainingLoops.map((l) => [l.startLine, l.endLine])]);
const corpus = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'corpus', name), 'utf8');

describe('training loops', () => {
  it('is the outermost loop around backward() and optimizer.step() (cnn_cifar: the epoch loop)', async () => {
    const result = await estimate(fixture('cnn_cifar'));
    assert.deepEqual(loops(result.models), [['model', [[28, 33]]]]);
  });

  it('includes the loop inside a training function and the loop that calls it', async () => {
    // train() holds the batch loop (lines 39-44); main() calls it once per epoch (lines 69-71).
    const result = await estimate(corpus('mlp_fashion_argparse.py'));
    assert.deepEqual(loops(result.models), [['model', [[39, 44], [69, 71]]]]);
  });

  it('gives a loop to the models it names, and a script with no training step none', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'a = nn.Linear(8, 8)',
      'b = nn.Linear(8, 2)',
      'opt = torch.optim.SGD(b.parameters(), lr=0.1)',
      'x = torch.randn(4, 8)',
      'for step in range(10):',
      '    for i in range(3):',
      '        loss = b(x).sum()',
      '        loss.backward()',
      '        opt.step()',
      'for i in range(3):',
      '    a(x)',
    ].join('\n');
    assert.deepEqual(loops((await estimate(source)).models), [
      ['a', []],
      ['b', [[7, 11]]],
    ]);
    assert.deepEqual(loops((await estimate(source.replace('loss.backward()', 'pass').replace('opt.step()', 'scheduler.step()'))).models), [
      ['a', []],
      ['b', []],
    ]);
  });

  it('gives the lines where the loop now stands after an edit above it (incremental estimate)', async () => {
    const parser = await realParser();
    const options = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };
    const estimator = new IncrementalEstimator(parser);
    try {
      const source = fixture('module_mlp');
      const before = estimator.estimate('a.py', source, options);
      assert.deepEqual(loops(before.models), [['model', [[32, 39]]]]);
      assert.equal(before.models[0]!.classLine, 11);
      const edited = source.replace('INPUT_DIM = 256\n', '# three lines\n# above the class\n# and the loop\nINPUT_DIM = 256\n');
      const after = estimator.estimate('a.py', edited, options);
      assert.equal(estimator.reusedTree, true);
      assert.deepEqual(loops(after.models), [['model', [[35, 42]]]]);
      assert.equal(after.models[0]!.classLine, 14);
      assert.deepEqual(after, estimateSource('a.py', edited, parser, options));
    } finally {
      estimator.dispose();
    }
  });
});
