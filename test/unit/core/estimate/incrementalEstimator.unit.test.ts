import * as assert from 'node:assert/strict';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { IncrementalEstimator, estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import { parseableSource } from '../../../../src/core/parsing/parseableSource';
import type { FileEstimate } from '../../../../src/core/estimate/fileEstimate';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { analyzeSource, type SyntaxCache } from '../../../../src/core/analysis/analyzeSource';
import { fixture, realParser, REPO_ROOT } from '../../fixtures';
import { warningsOf } from '../../../../src/core/estimate/notes';

/** A small deterministic random generator, so a failing edit sequence can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

/** Edits as a user makes them: a letter typed, a line broken, a line deleted, a line duplicated. */
function edit(text: string, next: () => number): string {
  const lines = text.split('\n');
  const line = Math.floor(next() * lines.length);
  const kind = Math.floor(next() * 4);
  if (kind === 0) {
    const column = Math.floor(next() * (lines[line]!.length + 1));
    lines[line] = `${lines[line]!.slice(0, column)}${'x1(:'[Math.floor(next() * 4)]}${lines[line]!.slice(column)}`;
  } else if (kind === 1) lines.splice(line, 0, '');
  else if (kind === 2) lines.splice(line, 1);
  else lines.splice(line, 0, lines[line]!);
  return lines.join('\n');
}

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

  it('gives what a fresh estimate gives after every edit of a random typing session over the corpus', async function () {
    this.timeout(60_000);
    const parser = await realParser();
    const corpus = path.join(REPO_ROOT, 'test', 'fixtures', 'corpus');
    const scripts = readdirSync(corpus).filter((file) => file.endsWith('.py'));
    // Several scripts in one file, as the benchmark's long files are: their statements form independent groups.
    const combined = ['resnet18_cifar.py', 'gpt_mini.py', 'mlp_fashion_argparse.py'].map((file) => readFileSync(path.join(corpus, file), 'utf8')).join('\n');
    for (const [i, file] of ['combined', ...scripts.slice(0, 12)].entries()) {
      const next = random(i + 1);
      let text = file === 'combined' ? combined : readFileSync(path.join(corpus, file), 'utf8');
      const estimator = new IncrementalEstimator(parser);
      try {
        estimator.estimate(file, text, options);
        for (let step = 0; step < 6; step++) {
          text = edit(text, next);
          const incremental = JSON.parse(JSON.stringify(estimator.estimate(file, text, options))) as FileEstimate;
          const fresh = JSON.parse(JSON.stringify(estimateSource(file, text, parser, options))) as FileEstimate;
          // An analysis cut short by its time budget (a loaded machine) legitimately differs; the step budget alone is deterministic.
          const stopped = (estimate: FileEstimate) => [...estimate.warnings, ...estimate.models.flatMap((m) => warningsOf(m))].some((w) => /Analysis stopped|takes too long/.test(w));
          if (stopped(incremental) || stopped(fresh)) continue;
          assert.deepEqual(incremental, fresh, `${file}, edit ${step + 1}`);
        }
      } finally {
        estimator.dispose();
      }
    }
  });

  it('runs again only the statement groups an edit touched', async () => {
    const parser = await realParser();
    const source = ['import torch.nn as nn', 'a = nn.Linear(4, 8)', 'b = nn.Linear(8, 16)', 'c = nn.Conv2d(3, 8, 3)'].join('\n');
    const edited = source.replace('nn.Linear(8, 16)', 'nn.Linear(8, 32)');
    const cache: SyntaxCache = {};
    const first = parser.parse(source);
    const second = parser.parse(edited);
    try {
      analyzeSource(first, source, undefined, cache);
      const before = [...cache.groups!.values()];
      const analysis = analyzeSource(second, edited, undefined, cache);
      const after = [...cache.groups!.values()];
      assert.equal(after.length, 3);
      assert.equal(after[0], before[0], 'the group of `a` is reused');
      assert.notEqual(after[1], before[1], 'the edited group runs again');
      assert.equal(after[2], before[2], 'the group of `c` is reused');
      assert.deepEqual(
        analysis.models.map((model) => [model.name, model.range.startLine, model.root.layer?.args]),
        [
          ['a', 1, [4, 8]],
          ['b', 2, [8, 32]],
          ['c', 3, [3, 8, 3]],
        ],
      );
    } finally {
      first.delete();
      second.delete();
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
