import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseCliArguments, UsageError } from '../../../src/cli/arguments';
import type { Collocation } from '../../../src/core/estimate/collocation';
import { REPO_ROOT } from '../fixtures';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

function run(...args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const MLP = (batch: number) => `import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(1024, 8192), nn.ReLU(), nn.Linear(8192, 10))
optimizer = torch.optim.Adam(model.parameters())
x = torch.randn(${batch}, 1024)
loss = model(x).sum()
`;

describe('gpu-estimate colocate', () => {
  it('parses two or more scripts, and refuses one script, too many, or a batch size for all', () => {
    const args = parseCliArguments(['colocate', 'a.py', 'b.py', '--gpu', 't4-16gb', '--json']);
    assert.equal(args.command, 'colocate');
    assert.deepEqual(args.files, ['a.py', 'b.py']);
    assert.equal(args.file, undefined);
    assert.equal(parseCliArguments(['a.py']).command, 'estimate');
    assert.throws(() => parseCliArguments(['colocate', 'a.py']), (e: unknown) => e instanceof UsageError && /two or more scripts, got 1/.test(e.message));
    assert.throws(() => parseCliArguments(['colocate', ...Array.from({ length: 17 }, (_, i) => `s${i}.py`)]), /at most 16 scripts/);
    assert.throws(() => parseCliArguments(['colocate', 'a.py', 'b.py', '--batch-size', '8']), /does not apply to colocate/);
    assert.throws(() => parseCliArguments(['a.py', 'b.py']), /gpu-estimate colocate/);
  });

  it('prints the jobs, their sum’s verdict, the largest batches together, MIG and the interference rule', () => {
    const { code, stdout, stderr } = run('colocate', 'examples/cnn_cifar10.py', 'examples/mlp_mnist.py');
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Collocation on A100 40GB \(40\.0 GiB\), each job in its own process$/m);
    assert.match(stdout, /script\s+models\s+memory\s+batch\s+max batch together\s+SMACT\s+cap\s+MIG alone/);
    assert.match(stdout, /^examples\/cnn_cifar10\.py\s+model\s+[\d.]+ GiB\s+256\s+\d+\s+(low|medium|high)\s+0\.\d{3} \([\d.]+ GiB\)\s+1g\.5gb/m);
    assert.match(stdout, /^note: .*torch\.cuda\.set_per_process_memory_fraction\(F\)/m);
    assert.match(stdout, /^verdict: the jobs fit A100 40GB together \([\d.]+ GiB together\)$/m);
    assert.match(stdout, /^interference: (low|medium|high) \(SMACT /m);
    assert.match(stdout, /Interference is a rule, not a measurement/);
  });

  it('gives JSON, and with --fail-on-oom exits 3 when the jobs do not fit together though each does alone', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'colocate-'));
    try {
      // Two copies of a job that takes 60% of a T4 each.
      writeFileSync(path.join(folder, 'probe.py'), MLP(256));
      const single = JSON.parse(run(path.join(folder, 'probe.py'), '--gpu', 't4-16gb', '--json').stdout) as { models: { maxBatchSize: number }[] };
      const batch = Math.floor(single.models[0]!.maxBatchSize * 0.6);
      writeFileSync(path.join(folder, 'a.py'), MLP(batch));
      writeFileSync(path.join(folder, 'b.py'), MLP(batch));
      const { code, stdout, stderr } = run('colocate', path.join(folder, 'a.py'), path.join(folder, 'b.py'), '--gpu', 't4-16gb', '--json', '--fail-on-oom');
      assert.equal(code, 3, stderr);
      const collocation = JSON.parse(stdout) as Collocation;
      assert.equal(collocation.fits, false);
      assert.equal(collocation.risk, 'oom');
      assert.equal(collocation.jobs.length, 2);
      assert.equal(collocation.totalMiB, collocation.jobs[0]!.memoryMiB! + collocation.jobs[1]!.memoryMiB!);
      assert.ok(collocation.jobs.every((job) => job.maxBatchSizeTogether! < batch));
      assert.equal(collocation.jobs[0]!.migProfile, null, 'a T4 has no MIG');
      assert.equal(run('colocate', path.join(folder, 'a.py'), path.join(folder, 'b.py'), '--gpu', 't4-16gb', '--json').code, 0);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('refuses a missing script with one line before estimating any', () => {
    const { code, stdout, stderr } = run('colocate', 'examples/mlp_mnist.py', 'examples/nope.py');
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /nope\.py/);
  });
});
