import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { jobDriverMiB, longestFittingLength, longestSequence, modelMaximumPosition, SEQUENCE_STEP } from '../../../../src/core/estimate/longestSequence';
import type { FineTuningJob } from '../../../../src/core/estimators/fineTuning';
import { findGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { checkpointShape, estimate, REPO_ROOT } from '../../fixtures';

const llm = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', name), 'utf8');

function job(name: string, over: Partial<FineTuningJob> = {}): FineTuningJob {
  const shape = checkpointShape(name);
  return { shape, batch: 2, seq: 512, weightBits: 16, computeBytes: 2, optimizer: 'adamw', checkpointing: true, adapter: { method: 'lora', rank: 8 }, ...over };
}

describe('longestSequence', () => {
  it("reads the model's maximum position under the names transformers configs give it", () => {
    assert.equal(modelMaximumPosition({ max_position_embeddings: 4096 }), 4096);
    assert.equal(modelMaximumPosition({ n_positions: 1024 }), 1024);
    assert.equal(modelMaximumPosition({ hidden_size: 768 }), null);
    assert.equal(modelMaximumPosition({ max_position_embeddings: 'long' }), null);
    assert.equal(modelMaximumPosition(undefined), null);
  });

  it('finds what a scan of every multiple of 64 finds, with eager attention growing with the square of the length', () => {
    const eager = job('meta-llama/Llama-3.2-1B', { eagerAttention: true, checkpointing: false, batch: 4 });
    const limitMiB = 20_000;
    let scanned = 0;
    for (let tokens = SEQUENCE_STEP; tokens <= 131072 && jobDriverMiB({ ...eager, seq: tokens }) <= limitMiB; tokens += SEQUENCE_STEP) scanned = tokens;
    assert.ok(scanned > 0 && scanned < 131072, String(scanned));
    assert.equal(longestFittingLength(eager, limitMiB, 131072).tokens, scanned);
  });

  it("tries the model's maximum itself when it is not a multiple of 64, and says when it fits", () => {
    const small = job('meta-llama/Llama-3.2-1B', { batch: 1 });
    const found = longestSequence(small, 80_000, 1000);
    assert.deepEqual([found.tokens, found.modelMaximum, found.modelMaximumFits], [1000, 1000, true]);
    assert.equal(found.driverMiB, jobDriverMiB({ ...small, seq: 1000 }));
    const none = longestSequence(job('meta-llama/Llama-2-7b-hf', { adapter: undefined }), 24_000, 4096);
    assert.deepEqual([none.tokens, none.modelMaximumFits, none.driverMiB], [0, false, null]);
  });

  it('searches past any fixed length when the config gives no maximum', () => {
    const small = job('meta-llama/Llama-3.2-1B', { batch: 1 });
    const found = longestSequence(small, 160_000, null);
    assert.equal(found.modelMaximum, null);
    assert.equal(found.modelMaximumFits, false);
    assert.ok(found.tokens > 32768, String(found.tokens));
    assert.ok(jobDriverMiB({ ...small, seq: found.tokens + SEQUENCE_STEP }) > 160_000);
  });

  it("on the QLoRA fixture: the longest sequence at the script's batch fits the GPU and 64 more tokens do not", async () => {
    const source = llm('qlora_trainer.py');
    const gpu = findGpuProfile('rtx4090-24gb')!;
    const [model] = (await estimate(source, { gpu })).models;
    const longest = model!.fineTuning!.longestSequence;
    assert.equal(longest.modelMaximum, 4096);
    assert.ok(longest.tokens > 1024 && longest.tokens < 4096 && longest.tokens % 64 === 0, String(longest.tokens));
    const at = async (tokens: number) => (await estimate(source.replace('max_length=1024', `max_length=${tokens}`), { gpu })).models[0]!;
    assert.equal((await at(longest.tokens)).fits, true);
    assert.equal((await at(longest.tokens + 64)).fits, false);
    // On an 80 GB card the model's own maximum fits.
    const [roomy] = (await estimate(source, { gpu: findGpuProfile('a100-80gb')! })).models;
    assert.deepEqual([roomy!.fineTuning!.longestSequence.tokens, roomy!.fineTuning!.longestSequence.modelMaximumFits], [4096, true]);
  });
});
