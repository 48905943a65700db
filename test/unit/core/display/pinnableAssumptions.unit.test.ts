import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { diskProjectFiles } from '../../../../src/cli/diskProjectFiles';
import { pinnableAssumptionsAt, pinnedSizeOf } from '../../../../src/core/display/pinnableAssumptions';
import { estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../src/core/project/parsedModules';
import { normalizePath } from '../../../../src/core/project/projectFiles';
import { realParser, REPO_ROOT } from '../../fixtures';

const WORD_LM = path.join(REPO_ROOT, 'test', 'fixtures', 'configs', 'word_lm');

async function estimateWordLm(assume: Record<string, number> = {}) {
  const parsed = new ParsedModules(await realParser());
  const file = normalizePath(path.join(WORD_LM, 'main.py'));
  const project = { source: { files: diskProjectFiles, path: file, root: normalizePath(WORD_LM) }, parse: (p: string, text: string) => parsed.parse(p, text) };
  return estimateSource('main.py', diskProjectFiles.read(file)!, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1, assume }, project);
}

describe('pinnable assumptions (the quick fix on a size from the data)', () => {
  it('offers to pin the vocabulary on the line that reads it from the corpus, and nowhere else', async () => {
    const estimate = await estimateWordLm();
    assert.deepEqual(pinnableAssumptionsAt(estimate, 31), [{ key: 'ntokens', value: '50257', title: 'Pin the vocabulary size (ntokens, assumed 50257) in the workspace settings', line: 31 }]);
    assert.deepEqual(pinnableAssumptionsAt(estimate, 32), []);
  });

  it('offers the pinned value once pinned', async () => {
    const estimate = await estimateWordLm({ ntokens: 33_278 });
    assert.equal(pinnableAssumptionsAt(estimate, 31)[0]?.value, '33278');
  });

  it('takes a positive whole number only', () => {
    assert.equal(pinnedSizeOf(' 33278 '), 33_278);
    assert.equal(pinnedSizeOf('50_257'), 50_257);
    for (const text of ['0', '-3', '1.5', 'many', '', '99999999999999999999']) assert.equal(pinnedSizeOf(text), undefined, text);
  });
});
