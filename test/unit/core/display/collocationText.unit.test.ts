import * as assert from 'node:assert/strict';
import { collocationMarkdown, describeMemoryCap } from '../../../../src/core/display/collocationText';
import { INTERFERENCE_RULE, type CollocatedJob, type Collocation } from '../../../../src/core/estimate/collocation';

const job = (file: string, memoryMiB: number, memoryCap: CollocatedJob['memoryCap']): CollocatedJob => ({
  file,
  models: ['model'],
  memoryMiB,
  batchSize: 32,
  maxBatchSizeTogether: 64,
  smact: 'medium',
  migProfile: null,
  memoryCap,
  notes: [],
});

const collocation = (jobs: CollocatedJob[]): Collocation => ({
  gpu: { id: 'a100-40gb', name: 'A100 40GB', memoryMiB: 40_960 },
  safetyMargin: 0.1,
  jobs,
  totalMiB: jobs.reduce((sum, j) => sum + j.memoryMiB!, 0),
  fits: true,
  risk: 'fits',
  interference: { level: 'medium', rule: INTERFERENCE_RULE, reason: 'SMACT a.py medium, b.py medium: score 2' },
  notes: [],
});

describe('collocation text', () => {
  it('gives each job’s cap as the fraction to pass and what it leaves the job, and a dash without one', () => {
    assert.equal(describeMemoryCap(job('a.py', 10_000, { fraction: 0.412, mib: 16_876 })), '0.412 (16.5 GiB)');
    assert.equal(describeMemoryCap(job('a.py', 10_000, { fraction: 0.05, mib: 2_048 })), '0.050 (2.0 GiB)');
    assert.equal(describeMemoryCap(job('a.py', 10_000, null)), '-');
  });

  it('puts a cap column in the report only when the jobs have caps', () => {
    const capped = collocationMarkdown(collocation([job('a.py', 10_000, { fraction: 0.6, mib: 24_576 }), job('b.py', 5_000, { fraction: 0.3, mib: 12_288 })]));
    assert.match(capped, /^\| Script \| Models \| Memory \| Batch \| Largest batch together \| SMACT \| Cap \(set_per_process_memory_fraction\) \|$/m);
    assert.match(capped, /^\| a\.py \| model \| 9\.8 GiB \| 32 \| 64 \| medium \| 0\.600 \(24\.0 GiB\) \|$/m);
    const uncapped = collocationMarkdown(collocation([job('a.py', 10_000, null)]));
    assert.doesNotMatch(uncapped, /Cap/);
    assert.match(uncapped, /^\| a\.py \| model \| 9\.8 GiB \| 32 \| 64 \| medium \|$/m);
  });
});
