import * as assert from 'node:assert/strict';
import { DEFAULT_GPU_ID, GPU_PROFILES, findGpuProfile } from '../../../../src/core/gpus/gpuProfiles';

describe('GPU profiles', () => {
  it('cover the GPUs users schedule on, once each, with memory in MiB', () => {
    // A floor, not the list: a new GPU is added in gpuProfiles.json alone (package.json and the
    // README follow it through `npm run gpus:sync`, test/unit/scripts/gpus checks they did).
    const required = ['a100-40gb', 'a100-80gb', 'h100-80gb', 'h200-141gb', 'v100-16gb', 'v100-32gb', 't4-16gb', 'l4-24gb', 'a10-24gb', 'l40s-48gb', 'rtx3090-24gb', 'rtx4090-24gb'];
    const ids = GPU_PROFILES.map((p) => p.id);
    assert.deepEqual(required.filter((id) => !ids.includes(id)), []);
    assert.equal(new Set(ids).size, ids.length);
    // findGpuProfile lowercases what it is asked for.
    assert.deepEqual(ids.filter((id) => id !== id.toLowerCase()), []);
    for (const profile of GPU_PROFILES) {
      const nominalGiB = Number(/(\d+)gb$/.exec(profile.id)?.[1]);
      assert.ok(Math.abs(profile.memoryMiB / 1024 - nominalGiB) / nominalGiB < 0.1, `${profile.id}: ${profile.memoryMiB} MiB`);
    }
  });

  it('default to the A100 40GB of the reference measurements', () => {
    assert.equal(DEFAULT_GPU_ID, 'a100-40gb');
    assert.equal(findGpuProfile('A100-40GB')?.memoryMiB, 40960);
    assert.equal(findGpuProfile('no-such-gpu'), undefined);
  });
});
