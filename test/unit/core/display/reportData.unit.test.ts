import * as assert from 'node:assert/strict';
import { GPU_PROFILES } from '../../../../src/core/gpus/gpuProfiles';
import type { FileEstimate, ModelEstimate } from '../../../../src/core/estimate/fileEstimate';
import { chartData, estimatorComparison, exportFileName, exportText, isExportFormat, layerTableCsv, markdownSummary } from '../../../../src/core/display/reportData';
import { gpuComparison, memoryCurve, outlookOf } from '../../../../src/core/estimate/outlook';
import { estimate, fixture } from '../../fixtures';


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
  describe('chart data', () => {
    it('draws exactly the rows the tables show: the GPU comparison and the estimators', async () => {
      const file = await estimate(fixture('cnn_cifar'));
      const model = file.models[0]!;
      const data = chartData(file, model, outlookOf(file, 0.1)[0]!, 'model-0');
      assert.deepEqual(data.gpus, { estimateMiB: model.memory.estimateMiB, rows: gpuComparison(model, file.gpu.id, 0.1) });
      assert.equal(data.gpus.rows.length, GPU_PROFILES.length);
      assert.deepEqual(data.estimators, estimatorComparison(model));
      assert.deepEqual(data.curve, memoryCurve(model, file.gpu.memoryMiB));
      assert.equal(data.gpuName, file.gpu.name);
      // A tighter margin changes the verdicts the chart colours.
      const tight = chartData(file, model, outlookOf(file, 0.99)[0]!, 'model-0');
      assert.deepEqual(tight.gpus!.rows, gpuComparison(model, file.gpu.id, 0.99));
      assert.notDeepEqual(tight.gpus!.rows.map((row) => row.risk), data.gpus.rows.map((row) => row.risk));
    });

    it('has no GPU or estimator chart without an estimate', async () => {
      const file = await estimate('import torch.nn as nn\nmodel = nn.Linear(2, 2)\n');
      const data = chartData(file, file.models[0]!, outlookOf(file, 0.1)[0]!, 'model-0');
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
      const text = markdownSummary({ ...file, file: 'a|b*.py' }, model, outlookOf(file, 0.1)[0]!);
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
      const json = JSON.parse(exportText(file, model, outlookOf(file, 0.1)[0]!, 'json')) as FileEstimate;
      assert.equal(json.file, file.file);
      assert.deepEqual(json.gpu, file.gpu);
      assert.equal(json.models.length, 1);
      assert.equal(json.models[0]?.memory.estimateMiB, model.memory.estimateMiB);
      assert.equal(exportText(file, model, outlookOf(file, 0.1)[0]!, 'csv'), layerTableCsv(model));
      assert.equal(exportFileName('src/train.py', 'model', 'csv'), 'train-model.gpu-estimate.csv');
      assert.equal(exportFileName('C:\\w\\my net.py', 'm', 'markdown'), 'my_net-m.gpu-estimate.md');
      for (const format of ['json', 'csv', 'markdown']) assert.ok(isExportFormat(format));
      for (const bad of ['md', 'toString', '__proto__', 'constructor', 1, null, undefined]) assert.ok(!isExportFormat(bad), String(bad));
    });
  });
});
