import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { analyticalEstimate } from '../../../../src/core/estimators/analytical';
import { withLearnedEstimates } from '../../../../src/core/estimate/learnedPass';
import { OnnxRunner } from '../../../../src/core/estimators/onnx/onnxRunner';
import { findGpuProfile, GPU_PROFILES } from '../../../../src/core/gpus/gpuProfiles';
import type { FileEstimate, ModelEstimate } from '../../../../src/core/estimate/fileEstimate';
import {
  chartData,
  CURVE_POINTS,
  estimatorComparison,
  exportFileName,
  exportText,
  gpuComparison,
  isExportFormat,
  layerTableCsv,
  markdownSummary,
  memoryCurve,
} from '../../../../src/core/display/reportData';
import { estimate, fixture, REPO_ROOT } from '../../fixtures';

const example = (name: string) => readFileSync(path.join(REPO_ROOT, 'examples', name), 'utf8');
const A100_40 = findGpuProfile('a100-40gb')!;
const analyticalAt = (model: ModelEstimate, batchSize: number) =>
  analyticalEstimate({ table: model.layerTable, batchSize, optimizer: model.optimizer, precision: model.precision }).totalMiB;

/** A minimal RFC 4180 reader, to check the CSV export round-trips. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  return rows;
}

describe('report data', () => {
  describe('memory vs batch size curve', () => {
    it('samples the analytical model from 1 to twice the largest batch that fits, with the script batch and the limit on it', async () => {
      const model = (await estimate(fixture('cnn_cifar'))).models[0]!;
      const curve = memoryCurve(model, A100_40.memoryMiB)!;
      const sizes = curve.points.map((p) => p.batchSize);
      assert.equal(sizes[0], 1);
      assert.deepEqual(sizes, [...sizes].sort((a, b) => a - b), 'ascending');
      assert.equal(new Set(sizes).size, sizes.length, 'no duplicates');
      assert.ok(sizes.length >= CURVE_POINTS - 2 && sizes.length <= CURVE_POINTS + 4, `${sizes.length} points`);
      assert.equal(curve.analyticalMaxBatch, model.maxBatchSize, 'analytical method: the same largest batch as the estimate');
      assert.equal(sizes[sizes.length - 1], Math.max(8, 2 * curve.analyticalMaxBatch, 2 * model.batchSize!));
      assert.ok(sizes.includes(model.batchSize!) && sizes.includes(curve.analyticalMaxBatch) && sizes.includes(curve.analyticalMaxBatch + 1));
      for (const p of curve.points) assert.ok(Math.abs(p.analyticalMiB - analyticalAt(model, p.batchSize)) <= 0.05, `batch ${p.batchSize}`);
      const at = (b: number) => curve.points.find((p) => p.batchSize === b)!.analyticalMiB;
      assert.ok(at(curve.analyticalMaxBatch) <= A100_40.memoryMiB && at(curve.analyticalMaxBatch + 1) > A100_40.memoryMiB, 'the limit is crossed right after the largest batch');
      for (let i = 1; i < curve.points.length; i++) assert.ok(curve.points[i]!.analyticalMiB >= curve.points[i - 1]!.analyticalMiB, 'memory grows with the batch');
      assert.equal(at(model.batchSize!), Math.round(analyticalAt(model, model.batchSize!) * 10) / 10);
      assert.equal(curve.ensemblePoint, null, 'no ensemble ran');
      assert.ok(curve.points.every((p) => p.ensemble === null), 'no ensemble band');
    });

    it('carries the ensemble’s calibrated range over the whole curve, low <= estimate <= high, crossing the limit at its largest batch', async () => {
      const runner = new OnnxRunner({ modelsDir: path.join(REPO_ROOT, 'models'), executionProvider: 'cpu' });
      try {
        for (const [file, gpu] of [['cnn_cifar10.py', findGpuProfile('t4-16gb')!], ['mlp_mnist.py', A100_40]] as const) {
          const learned = await withLearnedEstimates(await estimate(example(file), { gpu }), runner, { safetyMargin: 0.1 });
          const model = learned.models[0]!;
          assert.equal(model.memory.method, 'ensemble', file);
          const curve = memoryCurve(model, gpu.memoryMiB)!;
          const banded = curve.points.filter((p) => p.ensemble !== null);
          const last = curve.points[curve.points.length - 1]!;
          assert.ok(banded.length >= 40, `${file}: ${banded.length} points with the range`);
          assert.equal(banded[0]!.batchSize, 1, `${file}: the band starts at batch 1`);
          assert.equal(banded[banded.length - 1], last, `${file}: the band reaches the end of the curve`);
          assert.ok(last.batchSize >= 2 * model.maxBatchSize! && last.batchSize >= 2 * curve.analyticalMaxBatch, `${file}: the curve reaches twice the largest batch`);
          for (const p of banded) {
            const e = p.ensemble!;
            assert.ok(e.lowMiB <= e.estimateMiB && e.estimateMiB <= e.highMiB, `${file} batch ${p.batchSize}: ${e.lowMiB} <= ${e.estimateMiB} <= ${e.highMiB}`);
            assert.ok(e.lowMiB > 0, `${file} batch ${p.batchSize}`);
          }
          // At the script's batch the band is the estimate as the report states it.
          assert.deepEqual(curve.points.find((p) => p.batchSize === model.batchSize)!.ensemble, { estimateMiB: model.memory.estimateMiB, lowMiB: model.memory.lowMiB, highMiB: model.memory.highMiB });
          // Elsewhere it is the ensemble's own grid, as the estimate carries it.
          const grid = new Map(model.memory.ensemble!.curve!.map((p) => [p.batchSize, p]));
          for (const p of banded.filter((q) => q.batchSize !== model.batchSize)) {
            const { estimateMiB, lowMiB, highMiB } = grid.get(p.batchSize)!;
            assert.deepEqual(p.ensemble, { estimateMiB, lowMiB, highMiB }, `${file} batch ${p.batchSize}`);
          }
          // Its estimate stays within the GPU up to the largest batch that fits, and is over it past that.
          for (const p of banded) if (p.batchSize <= model.maxBatchSize!) assert.ok(p.ensemble!.estimateMiB <= gpu.memoryMiB, `${file} batch ${p.batchSize}`);
          assert.ok(banded.find((p) => p.batchSize > model.maxBatchSize!)!.ensemble!.estimateMiB >= gpu.memoryMiB, file);
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
        const learned = await withLearnedEstimates(await estimate(example('cnn_cifar10.py')), runner, { safetyMargin: 0.1 });
        const model = learned.models[0]!;
        assert.equal(model.memory.method, 'ensemble');
        const curve = memoryCurve(model, A100_40.memoryMiB)!;
        assert.deepEqual(curve.ensemblePoint, { batchSize: model.batchSize, estimateMiB: model.memory.estimateMiB, lowMiB: model.memory.lowMiB, highMiB: model.memory.highMiB });
        assert.ok(curve.points.some((p) => p.batchSize === model.batchSize));
        assert.ok(curve.points.some((p) => p.batchSize === model.maxBatchSize), 'the ensemble’s largest batch is on the curve');
        const rows = estimatorComparison(model);
        assert.deepEqual(rows.map((r) => r.estimator), ['analytical', 'horus', 'ensemble']);
        assert.equal(rows[0]!.estimateMiB, model.memory.ensemble!.analyticalMiB);
        assert.equal(rows[1]!.estimateMiB, model.horusMiB);
        assert.equal(rows[2]!.estimateMiB, model.memory.estimateMiB);
        assert.equal(rows[2]!.lowMiB, model.memory.lowMiB);
      } finally {
        await runner.dispose();
      }
      const noBatch = (await estimate('import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 10))\nx = torch.randn(1, 1024)\nmodel(x)\n')).models[0]!;
      assert.equal(noBatch.memory.estimateMiB, null);
      const curve = memoryCurve(noBatch, A100_40.memoryMiB);
      assert.ok(curve && curve.batchSize === null && curve.analyticalMaxBatch > 0);
      assert.deepEqual(estimatorComparison(noBatch).map((r) => r.estimateMiB), [null, null, null]);
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
      assert.equal(byId.get('a100-40gb')!.analyticalMaxBatch, probe.maxBatchSize);
    });

    it('is empty without an estimate', async () => {
      const model = (await estimate('import torch.nn as nn\nmodel = nn.Linear(2, 2)\n')).models[0]!;
      assert.equal(model.memory.estimateMiB, null);
      assert.deepEqual(gpuComparison(model, 'a100-40gb', 0.1), []);
    });
  });

  describe('chart data', () => {
    it('draws exactly the rows the tables show: the GPU comparison and the estimators', async () => {
      const file = await estimate(fixture('cnn_cifar'));
      const model = file.models[0]!;
      const data = chartData(file, model, 'model-0', 0.1);
      assert.deepEqual(data.gpus, { estimateMiB: model.memory.estimateMiB, rows: gpuComparison(model, file.gpu.id, 0.1) });
      assert.equal(data.gpus.rows.length, GPU_PROFILES.length);
      assert.deepEqual(data.estimators, estimatorComparison(model));
      assert.deepEqual(data.curve, memoryCurve(model, file.gpu.memoryMiB));
      assert.equal(data.gpuName, file.gpu.name);
      // A tighter margin changes the verdicts the chart colours.
      const tight = chartData(file, model, 'model-0', 0.99);
      assert.deepEqual(tight.gpus!.rows, gpuComparison(model, file.gpu.id, 0.99));
      assert.notDeepEqual(tight.gpus!.rows.map((row) => row.risk), data.gpus.rows.map((row) => row.risk));
    });

    it('has no GPU or estimator chart without an estimate', async () => {
      const file = await estimate('import torch.nn as nn\nmodel = nn.Linear(2, 2)\n');
      const data = chartData(file, file.models[0]!, 'model-0', 0.1);
      assert.equal(data.gpus, null);
      assert.equal(data.estimators, null);
    });
  });

  describe('exports', () => {
    it('CSV: one row per layer with the table’s numbers, quoted where needed, formulas defused', async () => {
      const file = await estimate(fixture('cnn_cifar'));
      const model = file.models[0]!;
      const rows = parseCsv(layerTableCsv(model));
      assert.deepEqual(rows[0], ['path', 'type', 'output_shape', 'params', 'activations_per_sample', 'trainable']);
      assert.equal(rows.length, model.layerTable.rows.length + 1);
      model.layerTable.rows.forEach((layer, i) => {
        const row = rows[i + 1]!;
        assert.equal(row[0], layer.path);
        assert.equal(row[1], layer.type);
        assert.equal(row[2], layer.outputShape ? layer.outputShape.join('x') : '');
        assert.equal(row[3], layer.params === null ? '' : String(layer.params));
        assert.equal(row[4], layer.activations === null ? '' : String(layer.activations));
      });
      const odd: ModelEstimate = {
        ...model,
        layerTable: { ...model.layerTable, rows: [{ ...model.layerTable.rows[0]!, path: 'a,"b"\nc', type: '=HYPERLINK("x")', params: null }] },
      };
      const parsed = parseCsv(layerTableCsv(odd));
      assert.equal(parsed[1]![0], 'a,"b"\nc');
      assert.equal(parsed[1]![1], `'=HYPERLINK("x")`);
      assert.equal(parsed[1]![3], '');
    });

    it('Markdown: verdict, estimators, breakdown and every GPU, with names escaped', async () => {
      const file = await estimate(fixture('cnn_cifar'));
      const model = file.models[0]!;
      const text = markdownSummary({ ...file, file: 'a|b*.py' }, model, 0.1);
      assert.match(text, /^# GPU estimate: model in a\\\|b\\\*\.py$/m);
      assert.match(text, new RegExp(`Largest batch that fits: ${model.maxBatchSize}`));
      assert.match(text, /## Estimators[\s\S]*\| Analytical model \| [\d.]+ (MiB|GiB) \|/);
      assert.match(text, /\| Optimizer state \| /);
      for (const gpu of GPU_PROFILES) assert.ok(text.includes(`| ${gpu.name}`), gpu.name);
      assert.match(text, /\| A100 40GB \(selected\) \|/);
    });

    it('JSON is the estimate limited to the model; names and formats are checked', async () => {
      const file = await estimate(fixture('cnn_cifar'));
      const model = file.models[0]!;
      const json = JSON.parse(exportText(file, model, 'json', 0.1)) as FileEstimate;
      assert.equal(json.file, file.file);
      assert.deepEqual(json.gpu, file.gpu);
      assert.equal(json.models.length, 1);
      assert.equal(json.models[0]?.memory.estimateMiB, model.memory.estimateMiB);
      assert.equal(exportText(file, model, 'csv', 0.1), layerTableCsv(model));
      assert.equal(exportFileName('src/train.py', 'model', 'csv'), 'train-model.gpu-estimate.csv');
      assert.equal(exportFileName('C:\\w\\my net.py', 'm', 'markdown'), 'my_net-m.gpu-estimate.md');
      for (const format of ['json', 'csv', 'markdown']) assert.ok(isExportFormat(format));
      for (const bad of ['md', 'toString', '__proto__', 'constructor', 1, null, undefined]) assert.ok(!isExportFormat(bad), String(bad));
    });
  });
});
