import * as assert from 'node:assert/strict';
import { loadTimmRuns } from '../../../../scripts/evaluation/timmRuns';
import { referenceDataDir } from '../../../../scripts/evaluation/referenceData';
import { REPO_ROOT } from '../../fixtures';

describe('the timm runs of the shared A100 sheet (scripts/evaluation/timmRuns.ts)', () => {
  const { runs } = loadTimmRuns(referenceDataDir(REPO_ROOT));
  const lowerBound = (model: string, batchSize: number) => {
    const run = runs.find((r) => r.model === model && r.batchSize === batchSize);
    assert.ok(run, `${model}@${batchSize}`);
    return run.lowerBound;
  };

  it('keeps a run that measured less than a smaller batch when it held what its step needs', () => {
    // bat_resnext26ts: 6,119 MiB at batch 8, then 4,179, 6,753, 11,627 and 21,657 MiB, each above FakeTensor's tensors plus a context.
    for (const batch of [8, 16, 32, 64, 128]) assert.equal(lowerBound('bat_resnext26ts', batch), false, `bat_resnext26ts@${batch}`);
  });

  it('counts as crashed a run that measured less than FakeTensor\'s tensors plus the smallest context, and only that run', () => {
    // vit_large_patch14_clip_quickgelu_336: 2,531 MiB at batch 8 where FakeTensor counts 10,020; 21,123 MiB at 16 (FakeTensor 18,885).
    assert.equal(lowerBound('vit_large_patch14_clip_quickgelu_336', 8), true);
    assert.equal(lowerBound('vit_large_patch14_clip_quickgelu_336', 16), false);
    // fastvit_mci1 stays at 2,293 MiB from batch 8 to 64 while FakeTensor's tensors grow from 2,028 to 16,093 MiB.
    for (const batch of [8, 16, 32, 64]) assert.equal(lowerBound('fastvit_mci1', batch), true, `fastvit_mci1@${batch}`);
  });

  it('counts a run that filled the GPU, and every larger batch of its model, as a lower bound', () => {
    const filled = runs.filter((r) => r.measuredMiB >= 39_000);
    assert.ok(filled.length > 100 && filled.every((r) => r.lowerBound));
    for (const run of filled) {
      for (const larger of runs.filter((r) => r.model === run.model && r.batchSize > run.batchSize)) assert.equal(larger.lowerBound, true, `${larger.model}@${larger.batchSize}`);
    }
  });
});
