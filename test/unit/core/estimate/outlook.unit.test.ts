import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { analyticalEstimate } from '../../../../src/core/estimators/analytical';
import { withLearnedEstimates } from '../../../../src/core/estimate/learnedPass';
import { OnnxRunner } from '../../../../src/core/estimators/onnx/onnxRunner';
import { findGpuProfile, GPU_PROFILES } from '../../../../src/core/gpus/gpuProfiles';
import type { ModelEstimate } from '../../../../src/core/estimate/fileEstimate';
import { estimatorComparison } from '../../../../src/core/display/reportData';
import { CURVE_POINTS, gpuComparison, memoryCurve } from '../../../../src/core/estimate/outlook';
import { largestFittingBatch } from '../../../../src/core/estimate/verdict';
import { ensembleCnnSource, horusMiB, estimate, fixture, REPO_ROOT } from '../../fixtures';

const example = (name: string) => readFileSync(path.join(REPO_ROOT, 'examples', name), 'utf8');
const A100_40 = findGpuProfile('a100-40gb')!;
const analyticalAt = (model: ModelEstimate, batchSize: number) =>
  analyticalEstimate({ table: model.layerTable, batchSize, optimizer: model.optimizer, precision: model.precision }).totalMiB;


describe('outlook', () => {
  describe('memory vs batch size curve', () => {
    it('samples the analytical model from 1 to twice the largest batch that fits, with the script batch and the limit on it, and the real-model estimate’s band', async () => {
      const model = (await estimate(fixture('cnn_cifar'))).models[0]!;
      assert.equal(model.memory.method, 'real-model');
      const curve = memoryCurve(model, A100_40.memoryMiB, A100_40)!;
      const sizes = curve.points.map((p) => p.batchSize);
      assert.equal(sizes[0], 1);
      assert.deepEqual(sizes, [...sizes].sort((a, b) => a - b), 'ascending');
      assert.equal(new Set(sizes).size, sizes.length, 'no duplicates');
      assert.ok(sizes[sizes.length - 1]! >= Math.max(8, 2 * curve.analyticalMaxBatch, 2 * model.maxBatchSize!, 2 * model.batchSize!));
      assert.ok(sizes.includes(model.batchSize!) && sizes.includes(curve.analyticalMaxBatch) && sizes.includes(curve.analyticalMaxBatch + 1) && sizes.includes(model.maxBatchSize!));
      for (const p of curve.points) assert.ok(Math.abs(p.analyticalMiB - analyticalAt(model, p.batchSize)) <= 0.05, `batch ${p.batchSize}`);
      const at = (b: number) => curve.points.find((p) => p.batchSize === b)!.analyticalMiB;
      assert.ok(at(curve.analyticalMaxBatch) <= A100_40.memoryMiB && at(curve.analyticalMaxBatch + 1) > A100_40.memoryMiB, 'the limit is crossed right after the largest batch');
      for (let i = 1; i < curve.points.length; i++) assert.ok(curve.points[i]!.analyticalMiB >= curve.points[i - 1]!.analyticalMiB, 'memory grows with the batch');
      // The band: the real-model estimator over its geometric grid, the estimate itself at the script's batch.
      assert.equal(curve.estimator, 'real-model estimator');
      assert.deepEqual(curve.estimatePoint, { batchSize: model.batchSize, estimateMiB: model.memory.estimateMiB, lowMiB: model.memory.lowMiB, highMiB: model.memory.highMiB });
      const banded = curve.points.filter((p) => p.estimate !== null);
      assert.equal(banded[0]!.batchSize, 1);
      assert.equal(banded[banded.length - 1], curve.points[curve.points.length - 1], 'the band reaches the end of the curve');
      for (const p of banded) {
        const e = p.estimate!;
        assert.ok(e.lowMiB <= e.estimateMiB && e.estimateMiB <= e.highMiB, `batch ${p.batchSize}: ${e.lowMiB} <= ${e.estimateMiB} <= ${e.highMiB}`);
        if (p.batchSize <= model.maxBatchSize!) assert.ok(e.estimateMiB <= A100_40.memoryMiB, `batch ${p.batchSize} fits`);
      }
      assert.ok(banded.find((p) => p.batchSize > model.maxBatchSize!)!.estimate!.estimateMiB > A100_40.memoryMiB, 'past the largest batch the estimate is over the GPU');
    });

    it('draws no band where the estimate is the analytical model itself', async () => {
      const model = (await estimate(fixture('cnn_cifar'))).models[0]!;
      const curve = memoryCurve({ ...model, memory: { ...model.memory, method: 'analytical', lowMiB: null, highMiB: null } }, A100_40.memoryMiB)!;
      assert.ok(curve.points.length >= CURVE_POINTS - 2 && curve.points.length <= CURVE_POINTS + 4, `${curve.points.length} points`);
      assert.equal(curve.estimatePoint, null);
      assert.equal(curve.estimator, null);
      assert.ok(curve.points.every((p) => p.estimate === null), 'no band');
    });

    it('carries the ensemble’s calibrated range over the whole curve, low <= estimate <= high, crossing the limit at its largest batch', async () => {
      const runner = new OnnxRunner({ modelsDir: path.join(REPO_ROOT, 'models'), executionProvider: 'cpu' });
      try {
        for (const [file, source, gpu] of [['cnn_plain_cifar10.py', ensembleCnnSource(), findGpuProfile('t4-16gb')!], ['mlp_mnist.py', example('mlp_mnist.py'), A100_40]] as const) {
          const learned = await withLearnedEstimates(await estimate(source, { gpu }), runner, { safetyMargin: 0.1 });
          const model = learned.models[0]!;
          assert.equal(model.memory.method, 'ensemble', file);
          const curve = memoryCurve(model, gpu.memoryMiB)!;
          const banded = curve.points.filter((p) => p.estimate !== null);
          const last = curve.points[curve.points.length - 1]!;
          assert.ok(banded.length >= 40, `${file}: ${banded.length} points with the range`);
          assert.equal(banded[0]!.batchSize, 1, `${file}: the band starts at batch 1`);
          assert.equal(banded[banded.length - 1], last, `${file}: the band reaches the end of the curve`);
          assert.ok(last.batchSize >= 2 * model.maxBatchSize! && last.batchSize >= 2 * curve.analyticalMaxBatch, `${file}: the curve reaches twice the largest batch`);
          for (const p of banded) {
            const e = p.estimate!;
            assert.ok(e.lowMiB <= e.estimateMiB && e.estimateMiB <= e.highMiB, `${file} batch ${p.batchSize}: ${e.lowMiB} <= ${e.estimateMiB} <= ${e.highMiB}`);
            assert.ok(e.lowMiB > 0, `${file} batch ${p.batchSize}`);
          }
          // At the script's batch the band is the estimate as the report states it.
          assert.deepEqual(curve.points.find((p) => p.batchSize === model.batchSize)!.estimate, { estimateMiB: model.memory.estimateMiB, lowMiB: model.memory.lowMiB, highMiB: model.memory.highMiB });
          // Elsewhere it is the ensemble's own grid, as the estimate carries it.
          const grid = new Map(model.memory.ensemble!.curve!.map((p) => [p.batchSize, p]));
          for (const p of banded.filter((q) => q.batchSize !== model.batchSize)) {
            const { estimateMiB, lowMiB, highMiB } = grid.get(p.batchSize)!;
            assert.deepEqual(p.estimate, { estimateMiB, lowMiB, highMiB }, `${file} batch ${p.batchSize}`);
          }
          // Its estimate stays within the GPU up to the largest batch that fits, and is over it past that.
          for (const p of banded) if (p.batchSize <= model.maxBatchSize!) assert.ok(p.estimate!.estimateMiB <= gpu.memoryMiB, `${file} batch ${p.batchSize}`);
          assert.ok(banded.find((p) => p.batchSize > model.maxBatchSize!)!.estimate!.estimateMiB >= gpu.memoryMiB, file);
          // The analytical curve is still sampled evenly besides the grid.
          assert.ok(curve.points.length >= banded.length + CURVE_POINTS - 8, `${file}: ${curve.points.length} points`);
        }
      } finally {
        await runner.dispose();
      }
    });

    it('adds the ensemble point where the ensemble ran, and draws a curve even without a batch size', async () => {
      const runner = new OnnxRunner({ modelsDir: path.join(REPO_ROOT, 'models'), executionProvider: 'cpu' });
      try {
        const learned = await withLearnedEstimates(await estimate(ensembleCnnSource()), runner, { safetyMargin: 0.1 });
        const model = learned.models[0]!;
        assert.equal(model.memory.method, 'ensemble');
        const curve = memoryCurve(model, A100_40.memoryMiB)!;
        assert.deepEqual(curve.estimatePoint, { batchSize: model.batchSize, estimateMiB: model.memory.estimateMiB, lowMiB: model.memory.lowMiB, highMiB: model.memory.highMiB });
        assert.ok(curve.points.some((p) => p.batchSize === model.batchSize));
        assert.ok(curve.points.some((p) => p.batchSize === model.maxBatchSize), 'the ensemble’s largest batch is on the curve');
        const rows = estimatorComparison(model);
        assert.deepEqual(rows.map((r) => r.estimator), ['analytical', 'horus', 'ensemble', 'real-model']);
        assert.equal(rows[0]!.estimateMiB, model.memory.ensemble!.analyticalMiB);
        assert.equal(rows[1]!.estimateMiB, horusMiB(model));
        assert.equal(rows[2]!.estimateMiB, model.memory.estimateMiB);
        assert.equal(rows[2]!.lowMiB, model.memory.lowMiB);
      } finally {
        await runner.dispose();
      }
      const noBatch = (await estimate('import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 10))\nx = torch.randn(1, 1024)\nmodel(x)\n')).models[0]!;
      assert.equal(noBatch.memory.estimateMiB, null);
      const curve = memoryCurve(noBatch, A100_40.memoryMiB);
      assert.ok(curve && curve.batchSize === null && curve.analyticalMaxBatch > 0);
      assert.deepEqual(estimatorComparison(noBatch).map((r) => r.estimateMiB), [null, null, null, null]);
    });
  });

  describe('GPU comparison', () => {
    it('puts the estimate against every profile: oom above the memory, tight within the margin', async () => {
      const probe = (await estimate(fixture('cnn_cifar'))).models[0]!;
      // The batch that just fits an A100 40GB: near 40 GiB, too much for 16 and 24 GB cards.
      const model = (await estimate(fixture('cnn_cifar'), { batchSize: probe.maxBatchSize! })).models[0]!;
      const estimateMiB = model.memory.estimateMiB!;
      const rows = gpuComparison(model, 'a100-40gb', 0.1);
      assert.equal(rows.length, GPU_PROFILES.length);
      assert.deepEqual(rows.map((r) => r.memoryMiB), [...rows.map((r) => r.memoryMiB)].sort((a, b) => a - b));
      for (const row of rows) {
        const expected = estimateMiB > row.memoryMiB ? 'oom' : estimateMiB > 0.9 * row.memoryMiB ? 'tight' : 'fits';
        assert.equal(row.risk, expected, row.name);
        assert.equal(row.headroomMiB, row.memoryMiB - estimateMiB);
        assert.ok(analyticalAt(model, row.analyticalMaxBatch) <= row.memoryMiB && analyticalAt(model, row.analyticalMaxBatch + 1) > row.memoryMiB, row.name);
      }
      const byId = new Map(rows.map((r) => [r.id, r]));
      assert.equal(byId.get('a100-40gb')!.risk, 'tight');
      assert.equal(byId.get('a100-40gb')!.current, true);
      assert.equal(rows.filter((r) => r.current).length, 1);
      assert.equal(byId.get('t4-16gb')!.risk, 'oom');
      assert.equal(byId.get('h200-141gb')!.risk, 'fits');
      assert.equal(byId.get('a100-40gb')!.analyticalMaxBatch, largestFittingBatch((b) => analyticalAt(model, b), A100_40.memoryMiB));
    });

    it('is empty without an estimate', async () => {
      const model = (await estimate('import torch.nn as nn\nmodel = nn.Linear(2, 2)\n')).models[0]!;
      assert.equal(model.memory.estimateMiB, null);
      assert.deepEqual(gpuComparison(model, 'a100-40gb', 0.1), []);
    });
  });

});
