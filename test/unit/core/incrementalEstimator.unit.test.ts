import * as assert from 'node:assert/strict';
import { estimateSource } from '../../../src/core/estimateSource';
import { defaultGpuProfile } from '../../../src/core/gpus/gpuProfiles';
import { IncrementalEstimator } from '../../../src/core/incrementalEstimator';
import { parseableSource } from '../../../src/core/parsing/parseableSource';
import { fixture, realParser } from '../fixtures';

const options = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };

describe('IncrementalEstimator', () => {
  it('re-parses edits incrementally and gives what a fresh estimate gives', async () => {
    const parser = await realParser();
    const estimator = new IncrementalEstimator(parser);
    try {
      const first = fixture('cnn_cifar');
      estimator.estimate('a.py', first, options);
      assert.equal(estimator.reusedTree, false);
      const edits = [first.replace('batch_size=64', 'batch_size=512'), first.replace('nn.Linear(256, 10)', 'nn.Linear(256, 100)'), `# header\n${first}`, first.slice(0, first.length / 2)];
      for (const edited of edits) {
        const incremental = estimator.estimate('a.py', edited, options);
        assert.equal(estimator.reusedTree, true);
        assert.deepEqual(incremental, estimateSource('a.py', edited, parser, options));
      }
      estimator.estimate('a.py', edits[edits.length - 1]!, options);
      assert.equal(estimator.reusedTree, true, 'unchanged text needs no parse');
    } finally {
      estimator.dispose();
    }
  });

  it('gives a file ending in thousands of comment lines the same estimate as without them', async () => {
    // tree-sitter-python needs minutes for 20,000 trailing indented comment lines; the analyzer
    // parses the source with comment-only lines emptied (parseableSource), which keeps line numbers.
    const parser = await realParser();
    const plain = estimateSource('a.py', fixture('cnn_cifar'), parser, options);
    const commented = estimateSource('a.py', `${fixture('cnn_cifar')}${'    # commented-out experiment, kept for reference\n'.repeat(20_000)}`, parser, options);
    assert.deepEqual(commented, plain);
  });
});

describe('parseableSource', () => {
  it('empties comment-only and blank lines and keeps everything else where it was', () => {
    const source = 'import torch\n# a comment\n    # indented\n  \t \nx = 1  # kept\n# a "quote" stays\r\ny = 2\r\n';
    const result = parseableSource(source);
    assert.equal(result, 'import torch\n\n\n\nx = 1  # kept\n# a "quote" stays\r\ny = 2\r\n');
    assert.equal(result.split('\n').length, source.split('\n').length);
  });
});
