import * as assert from 'node:assert/strict';
import { describeUtilization } from '../../../../src/core/display/describe';
import { hoverText, modelForHover } from '../../../../src/core/display/hoverText';
import { estimate, fixture, realParser } from '../../fixtures';
import { estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../src/core/project/projectFiles';
import { warningsOf } from '../../../../src/core/estimate/notes';

describe('modelForHover', () => {
  it('finds the model built on a line, named by the word, or resting on a value read from the line', async () => {
    const source = ['import torch', 'import torch.nn as nn', 'BATCH = 64', 'net = nn.Linear(8, 2)', 'opt = torch.optim.Adam(net.parameters())', 'x = torch.randn(BATCH, 8)', 'y = net(x)'].join('\n');
    const result = await estimate(source);
    const batchLine = result.models[0]!.assumptions.find((a) => a.name === 'batchSize')?.line;
    assert.ok(batchLine, JSON.stringify(result.models[0]!.assumptions));
    assert.equal(modelForHover(result, 4, 'nn')?.name, 'net');
    assert.equal(modelForHover(result, 7, 'net')?.name, 'net');
    assert.equal(modelForHover(result, batchLine, 'BATCH')?.name, 'net');
    assert.equal(modelForHover(result, 1, 'torch'), undefined);
  });

  it('finds the model trained by the loop the line is in (cnn_cifar: lines 28-33)', async () => {
    const result = await estimate(fixture('cnn_cifar'));
    for (const [line, word] of [[28, 'epoch'], [31, 'zero_grad'], [32, 'backward'], [33, 'step']] as const) assert.equal(modelForHover(result, line, word)?.name, 'model', `line ${line}`);
    assert.equal(modelForHover(result, 27, 'criterion'), undefined, 'the line before the loop');
    assert.equal(modelForHover(result, 2, 'torch'), undefined);
  });

  it('finds the model whose class is defined on the line (module_mlp: class MLP on line 11, built on line 29)', async () => {
    const result = await estimate(fixture('module_mlp'));
    assert.equal(result.models[0]!.line, 29);
    assert.equal(modelForHover(result, 11, 'MLP')?.name, 'model');
    assert.equal(modelForHover(result, 11, 'Module')?.name, 'model');
    assert.equal(modelForHover(result, 12, '__init__'), undefined, 'the class body is not the class line');
  });
});

describe('hoverText', () => {
  const uri = 'file:///home/me/my%20project/train.py';

  it('links every line it names to the document (construction, assumptions, training loop)', async () => {
    const result = await estimate(fixture('cnn_cifar'));
    const model = result.models[0]!;
    const text = hoverText(result, model, uri);
    assert.ok(text.includes(`\`model\` ([line 11](${uri}#L11))`), text);
    assert.ok(text.includes(`- batch size 64 (DataLoader(batch\\_size=...), [line 9](${uri}#L9))`), text);
    assert.ok(text.includes(`- optimizer sgd-momentum (SGD(...), [line 26](${uri}#L26))`), text);
    assert.ok(text.includes(`- training loop: [lines 28-33](${uri}#L28)`), text);
    assert.ok(text.includes('- precision fp32 (default: no autocast or .half())\n'), 'a default has no line');
    assert.ok(!hoverText(result, model).includes('](file:'), 'no links without a URI');
  });

  it('links the class line and values read in another project file into that file', async () => {
    const train = 'import torch\nfrom net import Net, make_optimizer\n\nmodel = Net()\noptimizer = make_optimizer(model)\nx = torch.randn(8, 32)\nmodel(x).sum().backward()\noptimizer.step()\n';
    const net = 'import torch\nimport torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(32, 10)\n\n    def forward(self, x):\n        return self.fc(x)\n\ndef make_optimizer(model):\n    return torch.optim.SGD(model.parameters(), lr=0.1)\n';
    const files = new MemoryProjectFiles([['/home/me/proj/train.py', train], ['/home/me/proj/net.py', net]]);
    const parsed = new ParsedModules(await realParser());
    const result = estimateSource('train.py', train, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1 }, { source: { files, path: '/home/me/proj/train.py', root: '/home/me/proj' }, parse: (p, text) => parsed.parse(p, text) });
    const model = result.models[0]!;
    const docUri = 'file:///home/me/proj/train.py';
    const text = hoverText(result, model, docUri, (p) => `file://${p}`);
    assert.ok(text.includes(`\`model\` ([line 4](${docUri}#L4)) · class in [net.py line 4](file:///home/me/proj/net.py#L4)`), text);
    assert.ok(text.includes('- optimizer sgd (SGD(...), [net.py line 13](file:///home/me/proj/net.py#L13))'), text);
    assert.equal(modelForHover(result, 4, 'other')?.name, 'model');
    assert.equal(modelForHover(result, 13, 'other'), undefined, 'line 13 of net.py is not line 13 of the script');
  });

  it('encodes characters that would end a link target', async () => {
    const result = await estimate(fixture('cnn_cifar'));
    const text = hoverText(result, result.models[0]!, 'file:///tmp/run (2)/train.py');
    assert.ok(text.includes('[line 9](file:///tmp/run%20%282%29/train.py#L9)'), text);
  });

  it('names every utilization class, "not available" where there is none', async () => {
    const result = await estimate(fixture('cnn_cifar'));
    const model = result.models[0]!;
    assert.match(hoverText(result, model), /\nUtilization: SMACT not available, SMOCC not available, DRAMA not available\n/);
    assert.equal(describeUtilization({ ...model, utilization: { smact: 'medium', smocc: 'low', drama: null } }), 'SMACT medium, SMOCC low, DRAMA not available');
  });

  it('shows what the analyzer did not understand, each note linking to its line', async () => {
    const result = await estimate(fixture('unknown_layer'));
    const model = result.models[0]!;
    const text = hoverText(result, model, uri);
    assert.ok(warningsOf(model).some((w) => /^line 6: nn\.FancyNewLayer is not understood/.test(w)), JSON.stringify(warningsOf(model)));
    assert.ok(text.includes(`$(warning) [line 6](${uri}#L6): nn.FancyNewLayer is not understood`), text);
  });

  it('shows the file’s own warnings too', async () => {
    const result = await estimate(`${fixture('cnn_cifar')}\ndef broken(:\n`);
    assert.ok(result.warnings.length > 0);
    const text = hoverText(result, result.models[0]!);
    for (const warning of result.warnings) assert.ok(text.includes(`$(warning) ${warning.replace(/[\\`*_{}[\]<>#|]/g, (c) => `\\${c}`)}`), text);
  });
});
