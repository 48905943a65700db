import * as assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { syntheticCases, timmCases, traceFile, tracerFor } from '../../../../scripts/dryRun/dryRunCases';

describe('the dry run evaluation cases (scripts/dryRun/dryRunCases.ts)', () => {
  it('marks a timm run that measured more than the same model at a larger batch, and only such runs', () => {
    const cases = timmCases(1);
    const byKey = new Map(cases.map((c) => [c.key, c]));
    // resnetv2_50t: 7,041 MiB at batch 8, 3,677 MiB at 16 (a completed run too: FakeTensor counts 1,333 MiB there).
    assert.equal(byKey.get('timm-resnetv2_50t@8')?.largerBatchMeasuredMiB, 3677);
    // xception65p grows with every batch it completed.
    assert.equal(byKey.get('timm-xception65p@16')?.largerBatchMeasuredMiB, undefined);
    const marked = cases.filter((c) => c.largerBatchMeasuredMiB !== undefined);
    // A larger batch that crashed early does not mark the runs below it: efficientnet_b5 measured 12,331 MiB at
    // batch 8 and 4,289 MiB at 64, where FakeTensor counts far more tensors than that.
    assert.ok(byKey.has('timm-efficientnet_b5@8'));
    assert.equal(byKey.get('timm-efficientnet_b5@8')!.largerBatchMeasuredMiB, undefined);
    assert.ok(marked.length > 0 && marked.length < cases.length / 20, `${marked.length} of ${cases.length}`);
    for (const c of marked) assert.ok(c.largerBatchMeasuredMiB! <= c.measuredMiB, c.key);
  });

  it('names each synthetic record by an absolute path, whatever the cache folder is given as', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'dry-run-cases-'));
    const cwd = process.cwd();
    try {
      process.chdir(folder);
      const [first] = syntheticCases(1000, '.');
      assert.ok(first);
      const record = first.argv[0]!;
      assert.ok(path.isAbsolute(record), record);
      assert.equal(path.dirname(record), folder);
      assert.ok((JSON.parse(readFileSync(record, 'utf8')) as { layers?: string }).layers);
    } finally {
      process.chdir(cwd);
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('traces the synthetic runs with their own Python, and caches a trace under the PyTorch version that made it', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'dry-run-tracers-'));
    try {
      // Stand-ins that answer the version question as the two venvs do.
      const python = (name: string, version: string) => {
        const file = path.join(folder, name);
        writeFileSync(file, `#!/bin/sh\necho ${version}\n`);
        chmodSync(file, 0o755);
        return file;
      };
      const tracers = { timm: python('timm-python', '1.13.0a0'), synthetic: python('torch2-python', '2.4.1+cu121') };
      const timm = { key: 'timm-resnet50@8', group: 'timm ConvNets' };
      const mlp = { key: 'mlp-0123456789abcdef', group: 'synthetic MLP' };
      assert.equal(tracerFor(tracers, timm), tracers.timm);
      assert.equal(tracerFor(tracers, mlp), tracers.synthetic);
      assert.equal(traceFile('/cache', timm, 2, tracers), path.join('/cache', 'timm-resnet50@8-steps2-torch1.13.0a0.json'));
      assert.equal(traceFile('/cache', mlp, 3, tracers), path.join('/cache', 'mlp-0123456789abcdef-steps3-torch2.4.1+cu121.json'));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
