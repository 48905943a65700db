import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { FileEstimate } from '../../../src/core/estimate/fileEstimate';
import { REPO_ROOT } from '../fixtures';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

describe('gpu-estimate on the fine-tuning script of issue 20 (the built CLI, as a process)', () => {
  it('reads 13B in 4 bits, LoRA r=8, batch 4, checkpointing, bf16, paged_adamw_32bit and 1024 tokens, and estimates it with the fine-tuning model', () => {
    const result = spawnSync(process.execPath, [CLI, 'test/fixtures/llm/issue20_qlora_13b.py', '--json', '--gpu', 'rtx4090-24gb'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(result.stdout) as FileEstimate;
    const [model] = report.models;
    assert.ok(model);
    assert.equal(model.params, 13015864320);
    assert.equal(model.batchSize, 4);
    assert.deepEqual(model.inputShape, [1024]);
    assert.equal(model.precision, 'bf16-mixed');
    assert.equal(model.gradientCheckpointing, true);
    const value = (name: string) => model.assumptions.find((a) => a.name === name)?.value;
    assert.equal(value('quantization'), '4-bit fp4');
    assert.equal(value('adapter'), 'lora rank 8 on default modules');
    assert.match(model.assumptions.find((a) => a.name === 'optimizer')?.origin ?? '', /paged_adamw_32bit/);
    assert.equal(model.memory.method, 'fineTuning');
    // About 7 GiB of 4-bit weights, checkpointed activations of 4 x 1024 tokens and the logits: between 10 and 20 GiB, so it fits a 24 GB card.
    assert.ok(model.memory.estimateMiB! > 10 * 1024 && model.memory.estimateMiB! < 20 * 1024, String(model.memory.estimateMiB));
    assert.equal(model.fits, true);
  });
});
