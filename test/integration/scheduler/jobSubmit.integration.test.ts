import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../../unit/fixtures';
import { SlurmCluster } from '../slurmCluster';

const PLUGIN = path.join(REPO_ROOT, 'scheduler', 'slurm', 'job_submit.lua');
const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

const TRAIN = (batch: number) => `import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(${batch}, 256)
loss = model(x).sum()
loss.backward()
optimizer.step()
print("trained one step")
`;

/** A batch script as people write them: the training script run by Python, with its arguments. */
const BATCH = (script: string) => `#!/bin/sh\n#SBATCH --job-name=train\n/usr/bin/python3 ${script} --epochs 1\n`;

describe('the SLURM job_submit.lua plugin on a real slurmctld and slurmd', function () {
  this.timeout(300_000);
  const cluster = new SlurmCluster();
  let work = '';

  before(async function () {
    const missing = SlurmCluster.missing();
    if (missing) throw new Error(`SLURM integration tests: ${missing}`);
    work = mkdtempSync(path.join(os.tmpdir(), 'gpu-estimator-jobs-'));
    writeFileSync(path.join(work, 'small.py'), TRAIN(32));
    writeFileSync(path.join(work, 'big.py'), TRAIN(3_000_000));
    writeFileSync(path.join(work, 'small.sh'), BATCH('small.py'));
    writeFileSync(path.join(work, 'big.sh'), BATCH('big.py'));
    writeFileSync(path.join(work, 'plain.sh'), '#!/bin/sh\necho no training here\n');
    writeFileSync(path.join(work, 'missing.sh'), BATCH('gone.py'));
    await cluster.setUp({ jobSubmitLua: PLUGIN, conf: `# written by the test\ncommand = ${process.execPath} ${CLI}\ngpu_types = t4=t4-16gb,a100=a100-40gb\ntimeout = 60\n` });
  });

  after(async () => {
    await cluster.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('accepts a job that fits the GPU type it asks for, and SLURM runs it', async () => {
    const { code, stdout, stderr } = cluster.sbatch(['--gres=gpu:t4:1', '-o', path.join(work, 'small.out'), 'small.sh'], work);
    assert.equal(code, 0, stderr);
    const id = /Submitted batch job (\d+)/.exec(stdout)?.[1];
    assert.ok(id, stdout);
    assert.equal(cluster.job(id).TresPerNode, 'gres:gpu:t4:1');
    assert.equal(await cluster.finished(id), 'COMPLETED', readFileSync(path.join(work, 'small.out'), 'utf8'));
    assert.match(readFileSync(path.join(work, 'small.out'), 'utf8'), /trained one step/);
  });

  it('rejects a job that does not fit the GPU type it asks for, with the estimate and the type that fits', () => {
    const { code, stdout, stderr } = cluster.sbatch(['--gres=gpu:t4:1', 'big.sh'], work);
    assert.notEqual(code, 0, stdout);
    assert.match(stderr, /gpu-estimate: rejected: \S*big\.py needs ~[\d.]+ GiB of GPU memory \(model, batch 3000000\): does not fit gpu:t4 \(\d+ MiB estimated\); ask for --gres=gpu:a100:1/);
    assert.doesNotMatch(stdout, /Submitted batch job/);
  });

  it('gives a job that asks for an untyped GPU the smallest type it fits', () => {
    // Held: submitted and placed, never run (the big one would take gigabytes of this machine's memory).
    const small = cluster.sbatch(['--hold', '--gres=gpu:1', '-o', '/dev/null', 'small.sh'], work);
    assert.equal(small.code, 0, small.stderr);
    assert.match(small.stderr, /gpu-estimate: \S*small\.py needs ~[\d.]+ (MiB|GiB) of GPU memory \(model, batch 32\); given --gres=gpu:t4:1/);
    assert.equal(cluster.job(/Submitted batch job (\d+)/.exec(small.stdout)![1]!).TresPerNode, 'gres:gpu:t4:1');
    const big = cluster.sbatch(['--hold', '--gres=gpu:1', '-o', '/dev/null', 'big.sh'], work);
    assert.equal(big.code, 0, big.stderr);
    assert.equal(cluster.job(/Submitted batch job (\d+)/.exec(big.stdout)![1]!).TresPerNode, 'gres:gpu:a100:1');
  });

  it('lets through, with a note, what it cannot judge; leaves jobs without GPUs alone', () => {
    const plain = cluster.sbatch(['--hold', '--gres=gpu:t4:1', '-o', '/dev/null', 'plain.sh'], work);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stderr, /gpu-estimate: no Python training script found in the batch script, not checked; submitted as requested/);
    const missing = cluster.sbatch(['--hold', '--gres=gpu:t4:1', '-o', '/dev/null', 'missing.sh'], work);
    assert.equal(missing.code, 0, missing.stderr);
    assert.match(missing.stderr, /gpu-estimate: cannot read \S*gone\.py, not checked; submitted as requested/);
    const cpu = cluster.sbatch(['--hold', '-o', '/dev/null', 'big.sh'], work);
    assert.equal(cpu.code, 0, cpu.stderr);
    assert.doesNotMatch(cpu.stderr, /gpu-estimate/);
  });

  it('lets a job through, with a note, when gpu-estimate itself cannot run: a cluster never waits on our error', () => {
    const conf = path.join(cluster.dir, 'gpu_estimate.conf');
    const before = readFileSync(conf, 'utf8');
    // The plugin reads its settings at each submission, so a broken command takes effect at once.
    writeFileSync(conf, before.replace(/^command = .*$/m, 'command = /nonexistent/gpu-estimate'));
    try {
      const { code, stderr } = cluster.sbatch(['--hold', '--gres=gpu:t4:1', '-o', '/dev/null', 'big.sh'], work);
      assert.equal(code, 0, stderr);
      assert.match(stderr, /gpu-estimate: the estimate failed \(exit 127\), not checked; submitted as requested/);
    } finally {
      writeFileSync(conf, before);
    }
  });
});

