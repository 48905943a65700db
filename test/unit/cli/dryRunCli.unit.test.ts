// `gpu-estimate FILE --dry-run` as a process (the built CLI, Debian's CPU torch at /usr/bin/python3):
// --batch-size and --set reach the script the harness runs, and a device mismatch is the dry run's error.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../fixtures';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');
const PYTHON = '/usr/bin/python3';

interface DryRunJson {
  predictedMiB?: number;
  peakAllocatedMiB?: number;
  rangeMiB?: { low: number; high: number; reason: string } | null;
  notes?: string[];
  error?: string;
}

function dryRun(file: string, ...args: string[]): DryRunJson {
  const result = spawnSync(process.execPath, [CLI, file, '--dry-run', '--python', PYTHON, '--json', ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 90_000 });
  assert.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { models: { dryRun: DryRunJson }[] };
  return report.models[0]!.dryRun;
}

describe('gpu-estimate --dry-run (the built CLI, as a process)', function () {
  this.timeout(120_000);
  before(function () {
    if (!existsSync(PYTHON)) this.skip();
  });

  const ENV_MLP = 'test/fixtures/configs/env_mlp/train.py';

  it("--batch-size replaces the loader's batch: the figure grows with it", () => {
    const small = dryRun(ENV_MLP, '--batch-size', '64');
    const large = dryRun(ENV_MLP, '--batch-size', '8192');
    assert.ok(small.peakAllocatedMiB !== undefined && large.peakAllocatedMiB !== undefined, JSON.stringify([small, large]));
    // 8192 - 64 more samples of 64 features in, 512 hidden units out of three layers, at least.
    assert.ok(large.peakAllocatedMiB - small.peakAllocatedMiB > ((8192 - 64) * (64 + 3 * 512) * 4) / 2 ** 20, JSON.stringify([small, large]));
    assert.ok(large.predictedMiB! > small.predictedMiB!);
  });

  it('--set reaches the script: an environment variable it reads (HIDDEN_UNITS) changes the model', () => {
    const base = dryRun(ENV_MLP);
    const wide = dryRun(ENV_MLP, '--set', 'HIDDEN_UNITS=4096');
    // Two 4096 x 4096 layers with their gradients and Adam's two moments: 4 x 2 x 64 MiB more.
    assert.ok(wide.peakAllocatedMiB! - base.peakAllocatedMiB! > 4 * 2 * 64 * 0.9, JSON.stringify([base, wide]));
    assert.deepEqual(base.notes, []);
    assert.match(wide.notes!.join(' '), /assumed values: set as environment variables/);
  });

  it('--batch-size reaches a loop that makes its own batches under a constant, and --set an argparse option', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'dry-run-cli-'));
    try {
      const script = path.join(folder, 'train.py');
      writeFileSync(script, [
        'import argparse',
        'import torch',
        'from torch import nn',
        '',
        'BATCH_SIZE = 32',
        'parser = argparse.ArgumentParser()',
        'parser.add_argument("--width", type=int, default=256)',
        'args = parser.parse_args()',
        'model = nn.Sequential(nn.Linear(1024, args.width), nn.ReLU(), nn.Linear(args.width, 10)).cuda()',
        'optimizer = torch.optim.SGD(model.parameters(), lr=0.1)',
        'for step in range(100):',
        '    x = torch.randn(BATCH_SIZE, 1024, device="cuda")',
        '    y = torch.randint(0, 10, (BATCH_SIZE,), device="cuda")',
        '    nn.functional.cross_entropy(model(x), y).backward()',
        '    optimizer.step()',
        '',
      ].join('\n'));
      const small = dryRun(script);
      const large = dryRun(script, '--batch-size', '8192');
      assert.ok(large.peakAllocatedMiB! - small.peakAllocatedMiB! > ((8192 - 32) * 1024 * 4) / 2 ** 20, JSON.stringify([small, large]));
      assert.match(large.notes!.join(' '), /replaced constant BATCH_SIZE/);
      const wide = dryRun(script, '--set', 'width=8192');
      assert.match(wide.notes!.join(' '), /replaced argparse option width/);
      assert.ok(wide.peakAllocatedMiB! - small.peakAllocatedMiB! > ((1024 * 8192 - 1024 * 256) * 4 * 2) / 2 ** 20, JSON.stringify([small, wide]));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('gives a range off the A100 40GB, none on it', () => {
    assert.equal(dryRun(ENV_MLP).rangeMiB, null);
    const range = dryRun(ENV_MLP, '--gpu', 'h100-80gb').rangeMiB!;
    assert.ok(range.low < range.high);
    assert.match(range.reason, /measured on the A100 40GB/);
  });

  it('reports a model left on the CPU with batches on the GPU (test/fixtures/workspace/train_mlp.py) as the error, with no figure', () => {
    const result = dryRun('test/fixtures/workspace/train_mlp.py');
    assert.equal(result.predictedMiB, undefined);
    assert.match(result.error ?? '', /^the model's weights are on the CPU but its input is on the GPU \(.*at train_mlp\.py:21\): a GPU run stops here with a device mismatch; move the model with \.to\(device\)$/);
  });
});
