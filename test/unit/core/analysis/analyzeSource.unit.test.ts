import * as assert from 'node:assert/strict';
import { analyzeSource } from '../../../../src/core/analysis/analyzeSource';
import type { SourceAnalysis } from '../../../../src/core/analysis/modelDescription';
import { fixture, realParser } from '../../fixtures';

async function analyze(source: string): Promise<SourceAnalysis> {
  const tree = (await realParser()).parse(source);
  try {
    return analyzeSource(tree, source);
  } finally {
    tree.delete();
  }
}

const layerSummary = (analysis: SourceAnalysis, index = 0) =>
  analysis.models[index]?.root
    .namedModules()
    .filter(([, m]) => m.kind === 'layer')
    .map(([path, m]) => `${path}:${m.className}`);
const layerArgs = (analysis: SourceAnalysis, path: string) => analysis.models[0]?.root.namedModules().find(([p]) => p === path)?.[1].layer;

describe('analyzeSource', () => {
  it('reads an nn.Sequential MLP with module constants and its training set-up', async () => {
    const analysis = await analyze(fixture('import_styles'));
    assert.equal(analysis.models.length, 1);
    const [model] = analysis.models;
    assert.equal(model?.name, 'encoder');
    assert.equal(model?.kind, 'sequential');
    assert.deepEqual(layerSummary(analysis), ['0:Linear', '1:ReLU', '2:Linear', '3:Tanh']);
    assert.deepEqual(layerArgs(analysis, '0')?.args, [100, 1024]);
    assert.deepEqual(layerArgs(analysis, '2')?.kwargs, { bias: false });
    assert.equal(analysis.setup.batchSize?.value, 64);
    assert.deepEqual(analysis.setup.inputShape?.value, [100]);
    assert.equal(analysis.setup.optimizer?.value, 'sgd');
    assert.equal(analysis.hasSyntaxErrors, false);
  });

  for (const [style, header, layer] of [
    ['import torch.nn as nn', 'import torch.nn as nn', 'nn.Linear'],
    ['from torch import nn', 'from torch import nn', 'nn.Linear'],
    ['import torch', 'import torch', 'torch.nn.Linear'],
    ['from torch.nn import Linear', 'from torch.nn import Linear, Sequential as Seq', 'Linear'],
    ['from torch.nn import *', 'from torch.nn import *', 'Linear'],
  ] as const) {
    it(`recognises layers under \`${style}\``, async () => {
      const sequential = header.includes('Seq') ? 'Seq' : layer.replace('Linear', 'Sequential');
      const analysis = await analyze(`${header}\nm = ${sequential}(${layer}(4, 8), ${layer}(8, 2))\n`);
      assert.deepEqual(layerSummary(analysis), ['0:Linear', '1:Linear']);
    });
  }

  it('reads a script that starts with blank lines and a comment, with lines counted from the top', async () => {
    const analysis = await analyze('\n\n# a training script\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(4, 2))\n');
    assert.equal(analysis.models.length, 1);
    assert.equal(analysis.models[0]!.range.startLine, 4);
  });

  it('numbers nested Sequential layers as PyTorch does and sees through .to(device)', async () => {
    const analysis = await analyze(fixture('nested_sequential'));
    assert.deepEqual(layerSummary(analysis), ['0.0:Linear', '0.1:GELU', '1:LayerNorm', '2:Linear']);
    assert.equal(analysis.setup.optimizer?.value, 'rmsprop');
  });

  it('reads an nn.Module subclass with call-site arguments overriding __init__ defaults', async () => {
    const analysis = await analyze(fixture('module_mlp'));
    assert.equal(analysis.models.length, 1);
    const [model] = analysis.models;
    assert.equal(model?.name, 'model');
    assert.equal(model?.kind, 'module');
    assert.deepEqual(layerSummary(analysis), ['fc1:Linear', 'bn1:BatchNorm1d', 'fc2:Linear', 'drop:Dropout', 'head:Linear']);
    assert.deepEqual(layerArgs(analysis, 'fc1')?.args, [256, 1024], 'in_dim from the constant, hidden from MLP(hidden=1024)');
    assert.deepEqual(layerArgs(analysis, 'fc2')?.args, [1024, 512]);
    assert.equal(analysis.setup.batchSize?.value, 512);
    assert.equal(analysis.setup.batchSize?.origin, 'DataLoader(batch_size=...)');
    assert.equal(analysis.setup.optimizer?.value, 'adamw');
    assert.equal(analysis.setup.precision?.value, 'fp16-mixed');
  });

  it('reads autocast and GradScaler turned off by a flag whose default is False as fp32, and on by one that is True', async () => {
    const script = (flag: string) =>
      [
        'import argparse, torch',
        'import torch.nn as nn',
        'parser = argparse.ArgumentParser()',
        `parser.add_argument("--amp", action="store_true", default=${flag})`,
        'args = parser.parse_args()',
        'model = nn.Linear(32, 4)',
        'optimizer = torch.optim.SGD(model.parameters(), lr=0.1)',
        'scaler = torch.cuda.amp.GradScaler(enabled=args.amp)',
        'for step in range(10):',
        '    x = torch.randn(16, 32)',
        '    with torch.autocast("cuda", enabled=args.amp):',
        '        loss = model(x).sum()',
        '    scaler.scale(loss).backward()',
        '',
      ].join('\n');
    assert.equal((await analyze(script('False'))).setup.precision, undefined);
    assert.equal((await analyze(script('True'))).setup.precision?.value, 'fp16-mixed');
  });

  it('records where each set-up value came from', async () => {
    const analysis = await analyze(fixture('module_mlp'));
    assert.equal(analysis.setup.batchSize?.range.startLine, 27, 'the DataLoader line, 28 counting from one');
    assert.equal(analysis.setup.optimizer?.range.startLine, 29);
  });

  it('keeps what parses in a half-typed file and says it has syntax errors', async () => {
    const analysis = await analyze(fixture('half_typed'));
    assert.equal(analysis.hasSyntaxErrors, true);
    assert.match(analysis.notes[0]?.message ?? '', /syntax errors/);
    assert.equal(analysis.setup.batchSize?.value, 32);
  });

  it('says so when there is no model', async () => {
    const analysis = await analyze(fixture('no_model'));
    assert.equal(analysis.models.length, 0);
    assert.ok(analysis.notes.some((n) => /No PyTorch model found/.test(n.message)));
  });

  it("keeps no notes of a helper nothing calls with arguments (it ran on unknown parameters), and keeps a function's that runs on known ones", async () => {
    const source = `import os
import torch


def apply_rotary_emb(xq, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return torch.view_as_real(xq_ * freqs_cis).flatten(3)


def main():
    size = int(os.environ["HIDDEN"])
    model = torch.nn.Linear(size, size)


main()
`;
    const messages = (await analyze(source)).notes.map((note) => note.message);
    assert.ok(!messages.some((message) => /could not be expanded/.test(message)), messages.join('\n'));
    assert.ok(messages.some((message) => /Environment variable HIDDEN/.test(message)), messages.join('\n'));
  });

  it('explains arguments it cannot resolve', async () => {
    const analysis = await analyze('import torch.nn as nn\nimport sys\nm = nn.Sequential(nn.Linear(int(sys.argv[1]), 4))\n');
    const arg = layerArgs(analysis, '0')?.args[0];
    assert.ok(arg && typeof arg === 'object' && 'reason' in arg, 'unresolved with a reason');
  });

  it('ignores assignments that only move a model', async () => {
    const analysis = await analyze('import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(4, 4))\nmodel = model.to("cuda")\n');
    assert.equal(analysis.models.length, 1);
  });
});
