import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseCliArguments } from '../../../src/cli/arguments';
import { REPO_ROOT } from '../fixtures';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

function run(...args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('gpu-estimate --slurm', () => {
  it('prints the smallest GPU type that fits as #SBATCH --gres, the estimate, and a result line for the plugin', () => {
    const { code, stdout, stderr } = run('examples/cnn_cifar10.py', '--slurm', '--gpu-types', 'a100=a100-40gb,t4=t4-16gb');
    assert.equal(code, 0, stderr);
    const lines = stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^# gpu-estimate: examples\/cnn_cifar10\.py needs ~[\d.]+ GiB of GPU memory \(model, batch 256\)$/);
    assert.equal(lines[1], '# fits: t4 (T4 16GB, 15.0 GiB), a100 (A100 40GB, 40.0 GiB)');
    assert.equal(lines[2], '#SBATCH --gres=gpu:t4:1');
    assert.match(lines[3]!, /^# gpu-estimate-result: status=fits choice=t4 fits=t4,a100 tight= estimateMiB=\d+$/);
  });

  it('says when the job fits no type, and exits 3 with --fail-on-oom', () => {
    const { code, stdout } = run('examples/cnn_cifar10.py', '--slurm', '--gpu-types', 't4=t4-16gb', '--batch-size', '100000', '--fail-on-oom');
    assert.equal(code, 3);
    assert.match(stdout, /^# does not fit any GPU type: t4 \(T4 16GB, 15\.0 GiB\)$/m);
    assert.doesNotMatch(stdout, /#SBATCH/);
    assert.match(stdout, /^# gpu-estimate-result: status=oom choice= fits= tight= estimateMiB=\d+$/m);
  });

  it('gives no request without an estimate, and checks its own arguments', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'slurm-'));
    try {
      writeFileSync(path.join(folder, 'nobatch.py'), 'import torch.nn as nn\nmodel = nn.Linear(2, 2)\n');
      const { code, stdout } = run(path.join(folder, 'nobatch.py'), '--slurm');
      assert.equal(code, 0);
      assert.match(stdout, /no estimate/);
      assert.match(stdout, /status=unknown choice= /);
      assert.doesNotMatch(stdout, /#SBATCH/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    assert.deepEqual(parseCliArguments(['a.py', '--slurm', '--gpu-types', 't4=t4-16gb, a100=a100-40gb']).gpuTypes, [
      { type: 't4', gpu: 't4-16gb' },
      { type: 'a100', gpu: 'a100-40gb' },
    ]);
    assert.throws(() => parseCliArguments(['a.py', '--gpu-types', 't4=t4-16gb']), /only with --slurm/);
    assert.throws(() => parseCliArguments(['a.py', '--slurm', '--gpu-types', 't4']), /TYPE=PROFILE/);
    assert.throws(() => parseCliArguments(['a.py', '--slurm', '--gpu-types', "t4;rm=t4-16gb"]), /TYPE=PROFILE/);
    assert.throws(() => parseCliArguments(['colocate', 'a.py', 'b.py', '--slurm']), /one script/);
    const unknown = run('examples/cnn_cifar10.py', '--slurm', '--gpu-types', 't4=t9-16gb');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown GPU profile "t9-16gb" for t4/);
  });
});
