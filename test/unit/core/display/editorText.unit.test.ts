import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { withLearnedEstimates } from '../../../../src/core/estimate/learnedPass';
import { OnnxRunner } from '../../../../src/core/estimators/onnx/onnxRunner';
import { findGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { codeLensTitle, formatRangeMiB, riskProblems, statusTooltipMarkdown } from '../../../../src/core/display/editorText';
import type { FileEstimate, ModelEstimate } from '../../../../src/core/estimate/fileEstimate';
import { hoverText } from '../../../../src/core/display/hoverText';
import { ensembleCnnSource, horusMiB, estimate, REPO_ROOT } from '../../fixtures';

const MLP = (batch: number) => `import torch
import torch.nn as nn
batch_size = ${batch}
model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 10))
optimizer = torch.optim.Adam(model.parameters())
x = torch.randn(batch_size, 1024)
loss = model(x).sum()
`;

describe('editor texts (CodeLens, status tooltip, problems)', () => {
  let runner: OnnxRunner;
  before(() => {
    runner = new OnnxRunner({ modelsDir: path.join(REPO_ROOT, 'models'), executionProvider: 'cpu' });
  });
  after(() => runner.dispose());
  const learned = async (source: string, gpu = 'a100-40gb'): Promise<FileEstimate> =>
    withLearnedEstimates(await estimate(source, { gpu: findGpuProfile(gpu)! }), runner, { safetyMargin: 0.1 });

  it('formats ranges in the unit of their upper end', () => {
    assert.equal(formatRangeMiB(6144, 8192), '6-8 GiB');
    assert.equal(formatRangeMiB(6200, 8300), '6.1-8.1 GiB');
    assert.equal(formatRangeMiB(512, 2048), '0.5-2 GiB');
    assert.equal(formatRangeMiB(300.4, 900.6), '300-901 MiB');
  });

  it('CodeLens of an ensemble estimate: estimate on the GPU, bin with probability, Horus, utilization', async () => {
    const file = await learned(ensembleCnnSource());
    const model = file.models[0]!;
    assert.equal(model.memory.method, 'ensemble');
    const title = codeLensTitle(model, file.gpu.name);
    const { bin } = model.memory;
    const expectedDetails = bin ? `${formatRangeMiB(bin.lowMiB, bin.highMiB)}, ${Math.round(bin.probability * 100)}%` : formatRangeMiB(model.memory.lowMiB!, model.memory.highMiB!);
    assert.ok(title.startsWith(`~`), title);
    assert.ok(title.includes(` on A100 40GB (${expectedDetails})`), title);
    assert.match(title, /^~\d+(\.\d)? (GiB|MiB) on A100 40GB \(/);
    assert.doesNotMatch(title, /analytical/);
    if (horusMiB(model) !== null) assert.match(title, / \| Horus \d+(\.\d)? (GiB|MiB)/);
    for (const key of ['smact', 'smocc', 'drama'] as const) {
      const value = model.utilization[key];
      if (value !== null) assert.ok(title.includes(`${key.toUpperCase()} ${value}`), title);
      else assert.ok(!title.includes(key.toUpperCase()), title);
    }
    assert.ok(['smact', 'smocc', 'drama'].some((k) => model.utilization[k as 'smact'] !== null), 'the CNN ensemble gives utilization classes');
  });

  it('CodeLens of the analysis pass shows the real-model range, names a bare point, and leaves out what is null', async () => {
    const file = await estimate(MLP(64));
    const model = file.models[0]!;
    assert.equal(model.memory.method, 'real-model');
    assert.match(codeLensTitle(model, file.gpu.name), /^~\d+(\.\d)? (GiB|MiB) on A100 40GB \(~?\d/);
    // Where the estimate is a point without a range (the analytical model's), the CodeLens names it.
    const estimates = model.estimates.map((reading) => ({ ...reading, role: reading.estimator === 'analytical' ? ('estimate' as const) : reading.role === 'estimate' ? ('candidate' as const) : reading.role }));
    const analytical: ModelEstimate = { ...model, estimates, memory: { ...model.memory, lowMiB: null, highMiB: null, method: 'analytical' } };
    const title = codeLensTitle(analytical, file.gpu.name);
    assert.match(title, /^~\d+(\.\d)? (GiB|MiB) on A100 40GB \(analytical/);
    assert.doesNotMatch(title, /SMACT|SMOCC|DRAMA|%/);
    const bare: ModelEstimate = { ...model, estimates: model.estimates.map((reading) => ({ ...reading, estimateMiB: null, lowMiB: null, highMiB: null })), memory: { ...model.memory, estimateMiB: null, lowMiB: null, highMiB: null, bin: null, method: null }, risk: null };
    assert.equal(codeLensTitle(bare, 'T4 16GB'), 'No estimate for T4 16GB');
  });

  it('CodeLens warns when the model does not fit', async () => {
    const file = await learned(MLP(2_000_000), 't4-16gb');
    const model = file.models[0]!;
    assert.equal(model.risk, 'oom');
    assert.match(codeLensTitle(model, file.gpu.name), /^\$\(warning\) ~/);
  });

  it('status tooltip names the model, estimate, range, GPU and verdict', async () => {
    const file = await learned(ensembleCnnSource());
    const model = file.models[0]!;
    const md = statusTooltipMarkdown(file, model);
    assert.ok(md.includes(`\`${model.name}\``), md);
    assert.match(md, /- Estimate: ~\d/);
    assert.match(md, /- Range: \d/);
    assert.match(md, /- GPU: A100 40GB \(40\.0 GiB\)/);
    assert.ok(md.includes(`- Verdict: fits A100 40GB`), md);
    assert.match(md, /Click for the full report\.$/);
  });

  it('hover text of a real network: the real-model estimate with Horus and the ensemble beside it, its range, verdict, utilization, linked assumptions, why the ensemble is passed over', async () => {
    const file = await learned(readFileSync(path.join(REPO_ROOT, 'examples', 'cnn_cifar10.py'), 'utf8'));
    const model = file.models[0]!;
    const uri = 'file:///w/cnn_cifar10.py';
    const text = hoverText(file, model, uri);
    assert.ok(text.startsWith(`**GPU Estimator** · \`model\` ([line 12](${uri}#L12)) · CNN · `), text);
    assert.match(text, /Estimated peak GPU memory: \*\*~\d+(\.\d)? (GiB|MiB)\*\* \(real-model estimator\) · Horus formula: \d.* · Trained ensemble: \d/);
    assert.match(text, /\nRange \d.* to .* \(5th-95th percentile\)\n/);
    assert.match(text, /\$\(pass\) fits A100 40GB \(40\.0 GiB\); largest batch that fits: \d+/);
    assert.match(text, /\nUtilization: SMACT (low|medium|high), SMOCC (low|medium|high), DRAMA (low|medium|high|not available)\n/);
    assert.ok(text.includes(`- batch size 256 (DataLoader(batch\\_size=...), [line 49](${uri}#L49))`), text);
    assert.match(text, /Utilization classes from the CNN ensemble, outside the CNN ensemble's training data, GPUMemNet's generated networks \(layer types it never saw: MaxPool2d; batch\\_size 256 \\> /);
  });

  it('hover text of a network like the ensemble\'s training data: the CNN ensemble, its range and memory bin', async () => {
    const file = await learned(ensembleCnnSource());
    const model = file.models[0]!;
    const text = hoverText(file, model, 'file:///w/cnn.py');
    assert.match(text, /Estimated peak GPU memory: \*\*~\d+(\.\d)? (GiB|MiB)\*\* \(CNN ensemble\) · Horus formula: \d/);
    assert.match(text, /\nRange \d.* to .* \(10th-90th percentile\) · memory bin .* \(p \d\.\d\d\)\n/);
    assert.doesNotMatch(text, /outside/i);
  });

  it('problems: an error on the batch-size line when out of memory, a warning when tight, none when it fits', async () => {
    const oom = await learned(MLP(2_000_000), 't4-16gb');
    assert.deepEqual(riskProblems(oom).map((p) => [p.line, p.severity]), [[3, 'error']]);
    assert.match(riskProblems(oom)[0]!.message, /^model: ~.* with batch size 2000000: does not fit T4 16GB \(out of memory\)/);
    assert.deepEqual(riskProblems(await learned(MLP(64))), []);
    const model = oom.models[0]!;
    const tight: FileEstimate = { ...oom, models: [{ ...model, risk: 'tight' }] };
    assert.deepEqual(riskProblems(tight).map((p) => [p.line, p.severity]), [[3, 'warning']]);
  });
});
