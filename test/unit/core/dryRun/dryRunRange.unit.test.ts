import * as assert from 'node:assert/strict';
import { dryRunRangeOnGpu } from '../../../../src/core/dryRun/dryRunRange';
import { dryRunSummary, withDryRunReading } from '../../../../src/core/display/dryRunText';
import type { DryRunResult } from '../../../../src/core/dryRun/dryRunProcess';
import type { FileEstimate } from '../../../../src/core/estimate/fileEstimate';
import { CONTEXT_SPREAD_MIB } from '../../../../src/core/estimators/realModel';
import { findGpuProfile } from '../../../../src/core/gpus/gpuProfiles';

const gpu = (id: string) => {
  const profile = findGpuProfile(id)!;
  return { id: profile.id, name: profile.name, memoryMiB: profile.memoryMiB };
};

const ok: DryRunResult = { ok: true, torchVersion: '1.13.0', figure: { predictedMiB: 5000, peakReservedMiB: 3160, peakAllocatedMiB: 3000, peakPhase: 'backward', steps: 3, seconds: 0.5, workspaceFallbacks: 0, outOfMemory: false, breakdown: { contextMiB: 1840, cachedMiB: 160, livePerPhaseMiB: {} } } };

describe('dry run range on a GPU', () => {
  it('is no range on the A100 40GB the CUDA context was measured on', () => {
    assert.equal(dryRunRangeOnGpu(5000, gpu('a100-40gb')), null);
  });

  it("widens by the real-model estimator's context spread: less on the same architecture, more on another", () => {
    const sameArchitecture = dryRunRangeOnGpu(5000, gpu('a100-80gb'))!;
    assert.deepEqual([sameArchitecture.lowMiB, sameArchitecture.highMiB], [5000 - CONTEXT_SPREAD_MIB.sameArchitecture, 5000 + CONTEXT_SPREAD_MIB.sameArchitecture]);
    assert.match(sameArchitecture.reason, /measured on the A100 40GB; on the A100 80GB \(Ampere\) another driver and CUDA version can move it by up to 300 MiB/);
    const hopper = dryRunRangeOnGpu(5000, gpu('h100-80gb'))!;
    assert.deepEqual([hopper.lowMiB, hopper.highMiB], [5000 - CONTEXT_SPREAD_MIB.otherArchitecture, 5000 + CONTEXT_SPREAD_MIB.otherArchitecture]);
    assert.match(hopper.reason, /on the H100 80GB \(Hopper\) another architecture's kernels, driver and CUDA version can move it by up to 700 MiB/);
  });

  it('takes a GPU the profiles do not know as another architecture', () => {
    const unknown = dryRunRangeOnGpu(5000, { id: 'my-card', name: 'My Card' })!;
    assert.equal(unknown.highMiB - unknown.lowMiB, 2 * CONTEXT_SPREAD_MIB.otherArchitecture);
    assert.match(unknown.reason, /on the My Card \(unknown\)/);
  });

  it('shows in the hover line and the report reading off the A100 40GB only', () => {
    assert.doesNotMatch(dryRunSummary(ok, 4000, gpu('a100-40gb')), / to /);
    assert.match(dryRunSummary({ ...ok, caveats: ['Grouped or depthwise convolutions at batch 8: leave headroom.'] }, 4000, gpu('a100-40gb')), /dry run \+25%\. Grouped or depthwise convolutions at batch 8: leave headroom\.$/);
    assert.match(dryRunSummary(ok, 4000, gpu('h100-80gb')), /^Dry run on CPU: 4\.9 GiB \(.*3 steps\); on the H100 80GB 4\.2 GiB to 5\.6 GiB: its CUDA context was measured on the A100 40GB;.*; static estimate 3\.9 GiB, dry run \+25%$/);
    const file = (id: string) => ({ gpu: gpu(id), models: [{ name: 'model', estimates: [] }] }) as unknown as FileEstimate;
    const reading = (id: string) => withDryRunReading(file(id), ok, false).models[0]!.estimates.find((r) => r.estimator === 'dry-run')!;
    assert.deepEqual([reading('a100-40gb').lowMiB, reading('a100-40gb').highMiB], [null, null]);
    assert.deepEqual([reading('h100-80gb').lowMiB, reading('h100-80gb').highMiB], [4300, 5700]);
  });
});
