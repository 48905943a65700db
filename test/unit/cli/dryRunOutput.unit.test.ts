import * as assert from 'node:assert/strict';
import { dryRunJson, dryRunLines } from '../../../src/cli/dryRunOutput';
import type { DryRunResult } from '../../../src/core/dryRun/dryRunProcess';
import type { FileEstimate } from '../../../src/core/estimate/fileEstimate';

const ok: DryRunResult = { ok: true, torchVersion: '1.13.0', figure: { predictedMiB: 5000, peakReservedMiB: 3160, peakAllocatedMiB: 3000, peakPhase: 'backward', steps: 3, seconds: 0.5, workspaceFallbacks: 0, outOfMemory: false, breakdown: { contextMiB: 1840, cachedMiB: 160, livePerPhaseMiB: {} } } };
const A100 = { id: 'a100-40gb', name: 'A100 40GB' };
const H100 = { id: 'h100-80gb', name: 'H100 80GB' };

describe('dry run in the CLI output', () => {
  it('gives rangeMiB with its reason off the A100 40GB, null on it', () => {
    assert.equal(dryRunJson(ok, 4000, A100).rangeMiB, null);
    const range = dryRunJson(ok, 4000, H100).rangeMiB as { low: number; high: number; reason: string };
    assert.deepEqual([range.low, range.high], [4300, 5700]);
    assert.match(range.reason, /measured on the A100 40GB/);
    assert.deepEqual(dryRunJson({ ok: false, error: 'no Python at x' }, 4000, H100), { error: 'no Python at x' });
  });

  it('prints the range and why under the figure on another GPU', () => {
    const estimate = (gpu: typeof A100) => ({ gpu: { ...gpu, memoryMiB: 81920 }, models: [] }) as unknown as FileEstimate;
    assert.ok(!dryRunLines(ok, estimate(A100)).some((line) => line.includes(' to ')));
    assert.ok(dryRunLines(ok, estimate(H100)).includes('  on the H100 80GB 4.2 GiB to 5.6 GiB: its CUDA context was measured on the A100 40GB; on the H100 80GB (Hopper) another architecture\'s kernels, driver and CUDA version can move it by up to 700 MiB'));
  });

  it('gives outOfMemory and workspaceFallbacks in the JSON, and the caveats that say what they mean under the figure', () => {
    const estimate = { gpu: { ...A100, memoryMiB: 40960 }, models: [] } as unknown as FileEstimate;
    assert.deepEqual([dryRunJson(ok, 4000, A100).outOfMemory, dryRunJson(ok, 4000, A100).workspaceFallbacks], [false, 0]);
    const caveat = "Out of memory: the step's tensors alone do not fit in the GPU's 40.0 GiB (with the CUDA context), even with the allocator's cache given back.";
    const oom: DryRunResult = { ...ok, figure: { ...ok.figure, predictedMiB: 45000, outOfMemory: true }, caveats: [caveat] };
    assert.ok(dryRunLines(oom, estimate).includes(`  ${caveat}`));
    assert.equal(dryRunJson(oom, 4000, A100).outOfMemory, true);
  });

  it('names a device mismatch as the reason there is no figure', () => {
    const error = "the model's weights are on the CPU but its input is on the GPU (aten.addmm: (1024, 4096) on the CPU, (256, 1024) on the GPU; loss = loss_fn(model(x), y) at train_mlp.py:21): a GPU run stops here with a device mismatch; move the model with .to(device)";
    assert.deepEqual(dryRunLines({ ok: false, error }, { gpu: { ...A100, memoryMiB: 40960 }, models: [] } as unknown as FileEstimate), ['', `dry run: not done: ${error}`]);
  });
});
