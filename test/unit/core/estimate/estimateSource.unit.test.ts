import * as assert from 'node:assert/strict';
import { MAX_SOURCE_CHARS } from '../../../../src/core/estimate/sourceLimit';
import { largestFittingBatch } from '../../../../src/core/estimate/verdict';
import { findGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { horusMiB, estimate, fixture } from '../../fixtures';
import { warningsOf } from '../../../../src/core/estimate/notes';

describe('estimateSource', () => {
  it('fills the report contract for a script with a model', async () => {
    const result = await estimate(fixture('cnn_cifar'));
    assert.equal(result.gpu.id, 'a100-40gb');
    const [model] = result.models;
    assert.ok(model);
    assert.equal(model.line, 11);
    assert.equal(model.family, 'cnn');
    assert.equal(model.batchSize, 64);
    assert.equal(model.optimizer, 'sgd-momentum');
    assert.ok(model.memory.estimateMiB! > 1440 && model.memory.estimateMiB! < 4000, String(model.memory.estimateMiB));
    // The analysis pass: the real-model estimator, with its calibrated range; the ensemble runs later.
    assert.equal(model.memory.method, 'real-model');
    assert.ok(model.memory.lowMiB! <= model.memory.estimateMiB! && model.memory.estimateMiB! <= model.memory.highMiB!);
    assert.deepEqual(model.memory.rangeQuantiles, [0.05, 0.95]);
    assert.equal(model.memory.bin, null, 'no ensemble yet: null, not a made-up bin');
    assert.deepEqual(model.utilization, { smact: null, smocc: null, drama: null });
    assert.equal(model.fits, true);
    assert.equal(model.risk, 'fits');
    assert.ok(horusMiB(model)! > 800);
    assert.deepEqual(model.assumptions.map((a) => [a.name, a.line]), [['batchSize', 9], ['inputShape', 8], ['optimizer', 26], ['precision', null]]);
  });

  it('uses a batch size given by the user and finds the largest that fits', async () => {
    const base = (await estimate(fixture('cnn_cifar'))).models[0]!;
    const big = (await estimate(fixture('cnn_cifar'), { batchSize: 4096 })).models[0]!;
    assert.equal(big.batchSize, 4096);
    assert.ok(big.memory.estimateMiB! > base.memory.estimateMiB!);
    assert.equal(base.maxBatchSize, big.maxBatchSize);
    const atMax = (await estimate(fixture('cnn_cifar'), { batchSize: base.maxBatchSize! })).models[0]!;
    const pastMax = (await estimate(fixture('cnn_cifar'), { batchSize: base.maxBatchSize! + 1 })).models[0]!;
    assert.equal(atMax.fits, true);
    assert.equal(pastMax.fits, false);
    assert.equal(pastMax.risk, 'oom');
  });

  it('keeps, under a batch size given by the user, the name the script read its own under (the dry run sets it there)', async () => {
    const constant = 'import torch\nfrom torch import nn\nBATCH_SIZE = 32\nmodel = nn.Linear(64, 10).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor step in range(10):\n    x = torch.randn(BATCH_SIZE, 64).cuda()\n    model(x).sum().backward()\n    opt.step()\n';
    const option = constant.replace('BATCH_SIZE = 32\n', 'import argparse\np = argparse.ArgumentParser()\np.add_argument("--batch-size", type=int, default=32)\nargs = p.parse_args()\n').replace('randn(BATCH_SIZE', 'randn(args.batch_size');
    const batch = async (source: string, batchSize?: number) => (await estimate(source, batchSize === undefined ? {} : { batchSize })).models[0]!.assumptions.find((a) => a.name === 'batchSize')!;
    assert.equal((await batch(constant)).key, undefined);
    assert.deepEqual(await batch(constant, 128), { name: 'batchSize', value: '128', origin: 'given by the user', line: null, key: 'BATCH_SIZE' });
    assert.equal((await batch(option, 128)).key, 'batch_size');
    assert.equal((await batch(fixture('cnn_cifar'), 128)).key, undefined);
  });

  it('calls an estimate within the safety margin tight', async () => {
    const t4 = findGpuProfile('t4-16gb')!;
    const max = (await estimate(fixture('cnn_cifar'), { gpu: t4 })).models[0]!.maxBatchSize!;
    const near = (await estimate(fixture('cnn_cifar'), { gpu: t4, batchSize: max })).models[0]!;
    assert.equal(near.risk, 'tight');
  });

  it('gives no estimate, and says why, when the batch size is unknown', async () => {
    const result = await estimate('import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(8, 8))\n');
    const model = result.models[0]!;
    assert.equal(model.memory.estimateMiB, null);
    assert.equal(model.fits, null);
    assert.equal(horusMiB(model), null);
    assert.ok(warningsOf(model).some((w) => /Batch size not found/.test(w)));
  });

  it('returns a safe, model-less result for broken and oversized input', async () => {
    const none = await estimate(fixture('no_model'));
    assert.deepEqual(none.models, []);
    assert.ok(none.warnings.some((w) => /No PyTorch model/.test(w)));
    const huge = await estimate('#'.repeat(MAX_SOURCE_CHARS + 1));
    assert.deepEqual(huge.models, []);
    assert.match(huge.warnings[0] ?? '', /no top-level statement ends within them .*; nothing was analysed\.$/);
    const garbage = await estimate('\u0000\u0001 def ((( class :::\n\t\t)))');
    assert.deepEqual(garbage.models, []);
  });

  it('analyses the first lines of a file over the size limit, and says so', async () => {
    const script = fixture('cnn_cifar');
    const padding = '# a long comment line that pads the file well past the analyser limit\n'.repeat(Math.ceil(MAX_SOURCE_CHARS / 60));
    const result = await estimate(script + padding);
    assert.equal(result.models.length, 1, 'the model at the top is still estimated');
    assert.equal(result.models[0]!.params, 1070858);
    assert.match(result.warnings[0] ?? '', /only its first \d+ lines \(\d+ characters of whole statements\) were analysed, the rest from line \d+ on was skipped\./);
  });

  describe('a 5 MB script whose model comes first', () => {
    const model = 'import torch.nn as nn; model = nn.Sequential(nn.Linear(8, 8)); BATCH_SIZE = 32';
    const items = '1, '.repeat(1_700_000);

    it('on one line: analyses the statements before the long one, and says where it stopped', async () => {
      const source = `${model}; data = [${items}1]\n`;
      assert.ok(source.length > 5_000_000);
      const result = await estimate(source);
      assert.deepEqual(result.models.map((m) => [m.name, m.line, m.params, m.batchSize]), [['model', 1, 72, 32]]);
      assert.equal(result.warnings[0], `The file has ${source.length} characters, more than the ${MAX_SOURCE_CHARS} analysed; only its first ${model.length + 1} characters (whole statements, up to line 1, column ${model.length + 1}) were analysed, the rest from line 1, column ${model.length + 2} on was skipped.`);
      assert.ok(!result.warnings.some((w) => /0 lines|No PyTorch model|syntax errors/.test(w)), result.warnings.join('\n'));
    });

    it('over many lines in one statement: analyses the lines before it', async () => {
      const source = `${model.replace(/; /g, '\n')}\ndata = [\n${items.replace(/ /g, '\n')}1]\n`;
      const result = await estimate(source);
      assert.deepEqual(result.models.map((m) => [m.name, m.line, m.batchSize]), [['model', 2, 32]]);
      assert.match(result.warnings[0] ?? '', /only its first 3 lines \(\d+ characters of whole statements\) were analysed, the rest from line 4 on was skipped\./);
      assert.ok(!result.warnings.some((w) => /syntax errors/.test(w)), result.warnings.join('\n'));
    });

    it('behind a statement longer than the limit: says plainly that nothing was analysed', async () => {
      const source = `data = [${items}1]; ${model}\n`;
      const result = await estimate(source);
      assert.deepEqual(result.models, []);
      assert.equal(result.warnings[0], `The file has ${source.length} characters, more than the ${MAX_SOURCE_CHARS} analysed, and no top-level statement ends within them (its first one is longer); nothing was analysed.`);
    });
  });

  it('takes a batch size past 2**53 - 1 as unknown and says why, instead of printing an inexact one', async () => {
    const result = await estimate('import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(8, 8))\nBATCH_SIZE = 2**64\n');
    const model = result.models[0]!;
    assert.equal(model.batchSize, null);
    assert.equal(model.memory.estimateMiB, null);
    assert.ok(result.warnings.includes('line 3: `2**64` is larger than 9007199254740991 (2**53 - 1), beyond what can be estimated exactly; it is taken as unknown'), result.warnings.join('\n'));
    assert.ok(warningsOf(model).some((w) => /Batch size not found/.test(w)));
    assert.ok(!JSON.stringify(result).includes('18446744073709552000'));
  });

  it('finds the largest batch by bisection', () => {
    assert.equal(largestFittingBatch((b) => 100 + b, 1000), 900);
    assert.equal(largestFittingBatch((b) => 2000 + b, 1000), 0);
  });

  it('gives no largest batch where the input is unknown: no activation is counted, so nothing says how memory grows', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'from torch.utils.data import DataLoader',
      'from mydata import load_dataset',
      'class Net(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.norm = nn.LayerNorm(64)',
      '    def forward(self, x):',
      '        return self.norm(x)',
      'model = Net()',
      'optimizer = torch.optim.Adam(model.parameters())',
      'for x, y in DataLoader(load_dataset(), batch_size=32):',
      '    nn.functional.mse_loss(model(x), y).backward()',
      '    optimizer.step()',
      '',
    ].join('\n');
    const [model] = (await estimate(source)).models;
    assert.equal(model!.layerTable.inputShape, null);
    assert.notEqual(model!.memory.estimateMiB, null);
    assert.equal(model!.maxBatchSize, null);
  });
});
