import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { withLearnedEstimates } from '../../../src/core/estimate/learnedPass';
import { OnnxRunner } from '../../../src/core/estimators/onnx/onnxRunner';
import { formatMiB } from '../../../src/core/format/units';
import { GPU_PROFILES } from '../../../src/core/gpus/gpuProfiles';
import { estimatorComparison, type ModelChartData, type ReportedEstimate } from '../../../src/core/display/reportData';
import type { FileEstimate, ModelEstimate } from '../../../src/core/estimate/fileEstimate';
import { gpuComparison, memoryCurve, outlookOf } from '../../../src/core/estimate/outlook';
import { escapeHtml, jsonForScript, reportHtml } from '../../../src/extension/report/reportHtml';
import { withDryRunReading } from '../../../src/core/display/dryRunText';
import type { DryRunResult } from '../../../src/core/dryRun/dryRunProcess';
import { ensembleCnnSource, horusMiB, estimate, fixture, REPO_ROOT } from '../fixtures';

const chartJson = (html: string) => JSON.parse(/<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/.exec(html)![1]!) as ModelChartData[];
const ariaLabel = (html: string, id: string) => /aria-label="([^"]*)"/.exec(new RegExp(`<div class="chart" id="${id}"[^>]*>`).exec(html)?.[0] ?? '')?.[1];

describe('report page', () => {
  /** How the estimator chart names the real-model estimator's reading (it has a range). */
  const realModelText = (model: ModelEstimate): string => {
    const reading = model.estimates.find((r) => r.estimator === 'real-model')!;
    return `Real-model estimator ${formatMiB(reading.estimateMiB!)} (range ${formatMiB(reading.lowMiB!)} to ${formatMiB(reading.highMiB!)})`;
  };
  /** The report's input as the estimate command builds it: the estimate and the pipeline's outlook of it. */
  const reported = (estimate: FileEstimate): ReportedEstimate => ({ estimate, outlooks: outlookOf(estimate, 0.1) });
  const page = {
    cspSource: 'vscode-webview://abc',
    stylesheetUri: 'vscode-webview://abc/media/report.css',
    chartStylesheetUri: 'vscode-webview://abc/dist/webview/report.css',
    scriptUri: 'vscode-webview://abc/dist/webview/report.js',
    nonce: 'n0nc3+/AB',
    safetyMargin: 0.1,
  };
  const scripts = (html: string) => [...html.matchAll(/<script\b([^>]*)>/gi)].map((m) => m[1]!);

  it('runs only the bundled script, by nonce, under a strict CSP with no remote source', async () => {
    const html = reportHtml(reported(await estimate(fixture('cnn_cifar'))), page);
    const csp = /Content-Security-Policy" content="([^"]*)"/.exec(html)?.[1];
    assert.equal(csp, "default-src 'none'; script-src 'nonce-n0nc3+/AB'; style-src vscode-webview://abc; img-src vscode-webview://abc data:; font-src vscode-webview://abc;");
    const tags = scripts(html);
    assert.equal(tags.length, 2);
    assert.equal(tags.filter((attrs) => attrs.includes('type="application/json"')).length, 1, 'one data block (not run)');
    assert.deepEqual(tags.filter((attrs) => !attrs.includes('type="application/json"')), [' nonce="n0nc3+/AB" src="vscode-webview://abc/dist/webview/report.js"']);
    assert.doesNotMatch(html, /https?:\/\//, 'no remote resources');
    assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handlers');
    assert.doesNotMatch(html, /\sstyle=/i, 'no inline styles (the CSP would block them)');
  });

  it("says, under each of a script's models, what they take together in one process", async () => {
    const one = await estimate(fixture('cnn_cifar'));
    const [model] = one.models;
    const together: FileEstimate = {
      ...one,
      models: [model!, { ...model!, name: 'second' }],
      process: { models: ['model', 'second'], inferenceOnly: [], estimateMiB: 41_000, fits: false, risk: 'oom', batchSize: 64, maxBatchSize: 30 },
    };
    const html = reportHtml(reported(together), page);
    const lines = [...html.matchAll(/<p class="verdict verdict-oom">Whole script: ([^<]*)<\/p>/g)].map((m) => m[1]);
    assert.deepEqual(lines, Array(2).fill('model + second in one process: ~40.0 GiB; does not fit A100 40GB (out of memory); largest batch that fits them together: 30'));
    assert.doesNotMatch(reportHtml(reported(one), page), /Whole script/);
  });

  it('keeps the layer table and shows the estimators, the breakdown, the curve and the GPUs with text alternatives', async () => {
    const file = await estimate(fixture('cnn_cifar'));
    const html = reportHtml(reported(file), page);
    const model = file.models[0]!;
    assert.equal((html.match(/<tr><td><code>/g) ?? []).length, 12, 'one row per layer');
    assert.match(html, /<th scope="row">Horus formula<\/th>/);
    assert.match(html, /<th scope="row">Trained ensemble<\/th><td class="num">n\/a<\/td>/);
    for (const chart of ['estimators', 'breakdown', 'curve', 'gpus']) {
      assert.match(html, new RegExp(`<div class="chart" id="model-0-${chart}" data-chart="${chart}" role="img" aria-label="[^"]+"></div>`), chart);
    }
    assert.match(html, /aria-label="Memory breakdown: Weights [^"]*Optimizer state [^"]*Activations [^"]*CUDA context and allocator /);
    assert.match(html, new RegExp(`largest batch that fits is ${model.maxBatchSize}\\.`));
    assert.match(html, /<caption>Memory breakdown<\/caption>/);
    assert.match(html, /<caption>Peak memory by batch size \(analytical model and real-model estimator\)<\/caption>/);
    assert.equal((html.match(/<tr class="risk-(fits|tight|oom)/g) ?? []).length, GPU_PROFILES.length, 'one row per GPU profile');
    assert.match(html, /<tr class="risk-fits current"><th scope="row">A100 40GB <span class="muted">\(selected\)/);

    const data = chartJson(html);
    assert.equal(data.length, 1);
    assert.equal(data[0]!.id, 'model-0');
    assert.deepEqual(data[0]!.curve, JSON.parse(JSON.stringify(memoryCurve(model, file.gpu.memoryMiB))));
    assert.deepEqual(data[0]!.breakdown!.map((p) => p.mib), [
      model.memory.breakdown!.weightsMiB,
      model.memory.breakdown!.gradientsMiB,
      model.memory.breakdown!.optimizerMiB,
      model.memory.breakdown!.activationsMiB,
      model.memory.breakdown!.overheadMiB,
    ]);
    assert.ok(data[0]!.curve!.points.some((p) => p.estimate !== null), 'the real-model estimate’s band');
    assert.match(html, /<th scope="col">Real-model estimator<\/th><th scope="col">Real-model estimator range<\/th>/);
  });

  it('draws the GPU comparison and the estimators from the rows their tables show', async () => {
    // The batch that just fits an A100 40GB: too much for the 16 and 24 GB cards.
    const probe = (await estimate(fixture('cnn_cifar'))).models[0]!;
    const file = await estimate(fixture('cnn_cifar'), { batchSize: probe.maxBatchSize! });
    const model = file.models[0]!;
    const html = reportHtml(reported(file), page);
    const { gpus: comparison, estimators } = chartJson(html)[0]!;
    const gpus = comparison!;
    assert.deepEqual(gpus.rows, gpuComparison(model, file.gpu.id, 0.1));
    assert.equal(gpus.estimateMiB, model.memory.estimateMiB);
    assert.ok(new Set(gpus.rows.map((r: { risk: string }) => r.risk)).size >= 2, 'verdicts differ between GPUs at this batch');
    const table = [...html.matchAll(/<tr class="risk-(\w+)[^"]*"><th scope="row">([^<]*)[^]*?<\/th><td class="num">([^<]*)<\/td>/g)].map((m) => ({ risk: m[1], name: m[2]!.trim(), memory: m[3] }));
    assert.deepEqual(table, gpus.rows.map((r: { risk: string; name: string; memoryMiB: number }) => ({ risk: r.risk, name: escapeHtml(r.name), memory: formatMiB(r.memoryMiB) })));
    const gpuLabel = ariaLabel(html, 'model-0-gpus')!;
    assert.match(gpuLabel, new RegExp(`^GPU memory of ${GPU_PROFILES.length} GPUs against the estimate of ${formatMiB(model.memory.estimateMiB!)}: `));
    for (const row of gpus.rows) assert.ok(gpuLabel.includes(`${row.name} (${formatMiB(row.memoryMiB)})`), row.name);
    assert.match(gpuLabel, /does not fit on T4 16GB/);
    assert.deepEqual(estimators, JSON.parse(JSON.stringify(estimatorComparison(model))));
    assert.equal(ariaLabel(html, 'model-0-estimators'), `Estimators compared: Analytical model ${formatMiB(model.estimates[0]!.estimateMiB!)}, Horus formula ${formatMiB(horusMiB(model)!)}, Trained ensemble n/a, ${realModelText(model)}.`);
    // Without an estimate, neither chart (and no empty canvas).
    const none = reportHtml(reported(await estimate('import torch.nn as nn\nmodel = nn.Linear(2, 2)\n')), page);
    assert.doesNotMatch(none, /id="model-0-(gpus|estimators)"/);
    assert.match(none, /<caption>Estimators<\/caption>/, 'the estimators table stays');
  });

  it('shades the trained ensemble’s range on the curve, and lists it per batch size in the curve table', async () => {
    const runner = new OnnxRunner({ modelsDir: path.join(REPO_ROOT, 'models'), executionProvider: 'cpu' });
    try {
      const file = await withLearnedEstimates(await estimate(ensembleCnnSource()), runner, { safetyMargin: 0.1 });
      const model = file.models[0]!;
      assert.equal(model.memory.method, 'ensemble');
      const html = reportHtml(reported(file), page);
      const { curve, estimators } = chartJson(html)[0]!;
      assert.deepEqual(curve, JSON.parse(JSON.stringify(memoryCurve(model, file.gpu.memoryMiB))));
      assert.match(ariaLabel(html, 'model-0-curve')!, /by the analytical model and the CNN ensemble, its range shaded; A100 40GB has 40\.0 GiB; the largest batch that fits is \d+\./);
      assert.match(ariaLabel(html, 'model-0-estimators')!, new RegExp(`Trained ensemble ${formatMiB(model.memory.estimateMiB!)} \\(range ${formatMiB(model.memory.lowMiB!)} to ${formatMiB(model.memory.highMiB!)}\\), Real-model estimator `));
      assert.equal(estimators![2]!.lowMiB, model.memory.lowMiB);
      assert.match(html, /<th scope="col">CNN ensemble<\/th><th scope="col">CNN ensemble range<\/th>/);
      const rows = [...html.matchAll(/<tr><td class="num">(\d+)<\/td><td class="num">[^<]*<\/td><td class="num">([^<]*)<\/td><td class="num">([^<]*)<\/td>/g)];
      assert.equal(rows.length, curve!.points.length, 'one table row per point of the curve');
      let banded = 0;
      rows.forEach((row, i) => {
        const point = curve!.points[i]!;
        assert.equal(Number(row[1]), point.batchSize);
        if (!point.estimate) return assert.deepEqual([row[2], row[3]], ['', ''], `batch ${point.batchSize}`);
        banded++;
        assert.ok(point.estimate.lowMiB <= point.estimate.estimateMiB && point.estimate.estimateMiB <= point.estimate.highMiB, `batch ${point.batchSize}`);
        assert.equal(row[2], formatMiB(point.estimate.estimateMiB));
        assert.equal(row[3], `${formatMiB(point.estimate.lowMiB)} to ${formatMiB(point.estimate.highMiB)}`);
      });
      assert.ok(banded >= 40, `${banded} rows with the range`);
    } finally {
      await runner.dispose();
    }
  });

  it('offers real buttons for the exports and the GPU pick', async () => {
    const html = reportHtml(reported(await estimate(fixture('cnn_cifar'))), page);
    for (const format of ['json', 'csv', 'markdown']) assert.match(html, new RegExp(`<button type="button" class="export" data-export="${format}" data-model="0" aria-label="Export model as [^"]+">`));
    assert.match(html, /<button type="button" id="change-gpu" aria-label="Change the GPU \(now A100 40GB\)">/);
  });

  it('escapes names from the source, in the page and in the chart data', async () => {
    const html = reportHtml(reported(await estimate('import torch.nn as nn\nbatch_size = 2\nx_y = nn.Sequential(nn.Linear(2, 2))\n', { batchSize: 2 })), page);
    const evil = reportHtml(reported({ file: '<img src=x onerror=alert(1)>.py', gpu: { id: 'a', name: '</script><script>alert(1)</script>', memoryMiB: 1 }, models: [], warnings: ['<b>'] }), page);
    assert.match(html, /x_y/);
    assert.doesNotMatch(evil, /<img/);
    assert.doesNotMatch(evil, /<script>alert/);
    assert.match(evil, /&lt;b&gt;/);
    const json = jsonForScript({ name: '</script><!--<script>', sep: '\u2028' });
    assert.doesNotMatch(json, /[<>\u2028]/);
    assert.deepEqual(JSON.parse(json), { name: '</script><!--<script>', sep: '\u2028' });
  });

  it('is packaged: the bundled chart script and its stylesheet are built and allowed by .vscodeignore', () => {
    for (const file of ['dist/webview/report.js', 'dist/webview/report.css']) {
      assert.ok(existsSync(path.join(REPO_ROOT, file)), `${file} (npm run build)`);
      assert.match(readFileSync(path.join(REPO_ROOT, '.vscodeignore'), 'utf8'), new RegExp(`^!${file.replace(/\./g, '\\.')}$`, 'm'));
    }
    const bundle = readFileSync(path.join(REPO_ROOT, 'dist/webview/report.js'), 'utf8');
    assert.match(bundle, /acquireVsCodeApi/);
    assert.match(bundle, /u-legend|uplot/i, 'uPlot is bundled in');
    assert.doesNotMatch(bundle, /\b(import\(|importScripts|fetch\()/, 'loads nothing at run time');
  });

  it('shows what fits a fine-tune: the longest sequence and a table of every change tried, and nothing of the kind for other models', async () => {
    const source = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'full_finetune_7b_eager.py'), 'utf8');
    const result = await estimate(source, { gpu: GPU_PROFILES.find((gpu) => gpu.id === 'rtx4090-24gb')! });
    const html = reportHtml(reported(result), page);
    assert.match(html, /<h3>What fits<\/h3>\s*<p>Not even 64 tokens per sequence fit at batch 4\. Fits with: gradient checkpointing \+ QLoRA \(4-bit NF4 and LoRA r=8\): 12\.2 GiB, changes the training;/);
    const rows = [...html.matchAll(/<tr class="risk-(\w+)"><th scope="row">([^<]*)<\/th><td class="num">([^<]*)<\/td>.*?<td>(yes|no)<\/td><\/tr>/g)].map((m) => [m[2], m[3], m[1], m[4]]);
    assert.equal(rows.length, result.models[0]!.fineTuning!.remedies.length);
    assert.deepEqual(rows[0], ['gradient checkpointing + QLoRA (4-bit NF4 and LoRA r=8)', '12.2 GiB', 'fits', 'no']);
    assert.ok(rows.some((row) => row.join() === 'gradient checkpointing,70.4 GiB,oom,yes'), JSON.stringify(rows));
    assert.doesNotMatch(reportHtml(reported(await estimate(fixture('cnn_cifar'))), page), /What fits/);
  });

  it("draws a fine-tune's memory curve by the fine-tuning model, a point estimate with no range to shade", async () => {
    const source = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'qlora_trainer.py'), 'utf8');
    const result = await estimate(source, { gpu: GPU_PROFILES.find((gpu) => gpu.id === 'rtx4090-24gb')! });
    const model = result.models[0]!;
    const curve = memoryCurve(model, result.gpu.memoryMiB)!;
    assert.equal(curve.estimator, 'fine-tuning model');
    assert.equal(curve.ranged, false);
    const at = (batch: number) => curve.points.find((p) => p.batchSize === batch)?.estimate;
    assert.equal(at(model.batchSize!)?.estimateMiB, model.memory.estimateMiB);
    const over = curve.points.find((p) => p.estimate && p.batchSize > model.maxBatchSize!);
    assert.ok(over && over.estimate!.estimateMiB > result.gpu.memoryMiB, 'the curve reaches past the largest batch that fits');
    assert.ok(curve.points.every((p) => !p.estimate || p.batchSize > model.maxBatchSize! || p.estimate.estimateMiB <= result.gpu.memoryMiB), 'every batch up to the largest that fits is under the limit');
    const html = reportHtml(reported(result), page);
    assert.match(html, /Analytical model, and the fine-tuning model; RTX 4090 24GB limit/);
    assert.doesNotMatch(html, /range shaded|Fine-tuning model range/);
  });

  it('shows a dry run beside the estimators, with the difference and why they differ; a failed one adds nothing', async () => {
    const file = await estimate(fixture('cnn_cifar'));
    const estimateMiB = file.models[0]!.memory.estimateMiB!;
    const predictedMiB = Math.round(estimateMiB * 1.2);
    const ok: DryRunResult = { ok: true, torchVersion: '1.13.0', figure: { predictedMiB, peakReservedMiB: predictedMiB - 1840, peakAllocatedMiB: 100, peakPhase: 'backward', steps: 3, seconds: 0.5, workspaceFallbacks: 0, outOfMemory: false, breakdown: { contextMiB: 1840, cachedMiB: 10, livePerPhaseMiB: {} } } };
    const html = reportHtml(reported(withDryRunReading(file, ok, false)), page);
    assert.match(html, new RegExp(`<th scope="row">Dry run on CPU</th><td class="num">${formatMiB(predictedMiB).replace('.', '\\.')}</td>`));
    assert.match(html, /The dry run is \+20% against the estimate/);
    assert.equal(chartJson(html)[0]!.estimators!.at(-1)!.estimator, 'dry-run');
    assert.match(reportHtml(reported(withDryRunReading(file, ok, true)), page), /Dry run on CPU \(before later edits\)/);
    // Off the A100 40GB its CUDA context was measured on, the figure has a range, and the report says why.
    assert.doesNotMatch(html, /Its range/);
    const onH100 = reportHtml(reported(withDryRunReading({ ...file, gpu: { id: 'h100-80gb', name: 'H100 80GB', memoryMiB: 81559 } }, ok, false)), page);
    assert.match(onH100, /Its range: on the H100 80GB [\d.]+ GiB to [\d.]+ GiB: its CUDA context was measured on the A100 40GB/);
    // Where the figure may fall short, the report says so under it.
    assert.doesNotMatch(html, /Grouped or depthwise/);
    const caveat = 'Grouped or depthwise convolutions at batch 8: leave headroom.';
    assert.match(reportHtml(reported(withDryRunReading(file, { ...ok, caveats: [caveat] }, false)), page), /Grouped or depthwise convolutions at batch 8: leave headroom\. The dry run ran/);
    const failed = reportHtml(reported(withDryRunReading(file, { ok: false, error: 'no Python at x' }, false)), page);
    assert.doesNotMatch(failed, /Dry run on CPU/);
  });
});
