import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isConcatenationRow, isFunctionalRow, type LayerRow, type LayerTable } from '../../../../src/core/layerTable/layerTable';
import { layerTraits } from '../../../../src/core/layers/layerTraits';
import { autocastRows } from '../../../../src/core/estimators/autocastBytes';
import { replayTrainingStep } from '../../../../src/core/estimators/trainingStep';
import { tableOf } from '../../fixtures';

const REPO = path.resolve(__dirname, '../../../../..');

const row = (r: LayerRow) => [r.path, r.type, r.outputShape, r.activations, r.params];

// A DenseNet-style model: a torch.cat in each user-defined layer, a torch.stack in a helper
// method of a user module, cats along the batch dimension in the model's own forward, and
// cats and stacks in the training loop.
const DENSE = `
import torch
import torch.nn as nn


class DenseLayer(nn.Module):
    def __init__(self, cin, growth):
        super().__init__()
        self.bn = nn.BatchNorm2d(cin)
        self.conv = nn.Conv2d(cin, growth, 3, padding=1, bias=False)

    def forward(self, x):
        out = self.conv(torch.relu(self.bn(x)))
        return torch.cat([x, out], 1)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(32, 10)
        self.b = nn.Linear(32, 10)

    def merge(self, x):
        return torch.stack([self.a(x), self.b(x)], dim=1)

    def forward(self, x):
        return self.merge(x)


class DenseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.blocks = nn.ModuleList([DenseLayer(16, 8), DenseLayer(24, 8)])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = Head()

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        x = torch.flatten(self.pool(x), 1)
        both = torch.cat((x, x), dim=0)
        return torch.concat([self.head(both), self.head(x)], dim=0)


model = DenseNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    images = torch.cat([torch.randn(4, 3, 32, 32), torch.randn(4, 3, 32, 32)])
    extra = torch.stack([images, images])
    loss = model(images).sum()
    loss.backward()
    optimizer.step()
`;

// The table harness/layer_table.py measures with PyTorch 1.13 for the model of DENSE.
const DENSE_ROWS = [
  ['stem', 'Conv2d', [16, 32, 32], 16384, 448],
  ['blocks.0.bn', 'BatchNorm2d', [16, 32, 32], 16384, 32],
  ['blocks.0.conv', 'Conv2d', [8, 32, 32], 8192, 1152],
  ['blocks.0', 'torch.cat', [24, 32, 32], 24576, 0],
  ['blocks.1.bn', 'BatchNorm2d', [24, 32, 32], 24576, 48],
  ['blocks.1.conv', 'Conv2d', [8, 32, 32], 8192, 1728],
  ['blocks.1', 'torch.cat', [32, 32, 32], 32768, 0],
  ['pool', 'AdaptiveAvgPool2d', [32, 1, 1], 32, 0],
  ['', 'torch.cat', [2, 32], 64, 0],
  ['head.a', 'Linear', [2, 10], 20, 330],
  ['head.b', 'Linear', [2, 10], 20, 330],
  ['head', 'torch.stack', [2, 2, 10], 40, 0],
  ['head.a', 'Linear', [10], 10, 0],
  ['head.b', 'Linear', [10], 10, 0],
  ['head', 'torch.stack', [2, 10], 20, 0],
  ['', 'torch.cat', [3, 2, 10], 60, 0],
];

describe('functional rows (torch.cat, torch.stack)', () => {
  it('gives each concatenation made by forward code a row under the module whose forward made it, in call order', async () => {
    const { table } = await tableOf(DENSE);
    assert.deepEqual(table.rows.map(row), DENSE_ROWS);
    assert.ok(table.rows.filter((r) => isFunctionalRow(r)).every((r) => r.trainable && r.params === 0));
  });

  it('leaves the functional rows out of totals.activations, as PyTorch measured it', async () => {
    const { table } = await tableOf(DENSE);
    assert.equal(table.totals.activations, 73820);
    assert.equal(table.totals.params, 4068);
    assert.equal(table.totals.trainableParams, 4068);
    assert.equal(table.incomplete, false);
  });

  it('makes no row of a torch.cat or torch.stack in the training loop or data preparation', async () => {
    const source = `
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 4), nn.ReLU())
data = torch.stack([torch.randn(8) for _ in range(100)])
for epoch in range(3):
    batch = torch.cat([torch.randn(16, 8), torch.randn(16, 8)], dim=0)
    out = model(batch)
    both = torch.cat([out, out], dim=1)
`;
    const { table } = await tableOf(source);
    assert.deepEqual(table.rows.map((r) => r.type), ['Linear', 'ReLU']);
    assert.equal(table.totals.activations, 8);
  });

  it('makes no row of a concatenation whose shape is unknown, and says why', async () => {
    const source = `
import torch
import torch.nn as nn
import somelib


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        y = torch.cat([x, somelib.features(x)], dim=1)
        z = torch.cat([x, x.sum(dim=1)], dim=1)
        return self.fc(torch.cat([x, x], dim=1))


model = Net()
out = model(torch.randn(2, 8))
`;
    const { table, notes } = await tableOf(source);
    assert.deepEqual(table.rows.map(row), [
      ['', 'torch.cat', [16], 16, 0],
      ['fc', 'Linear', [4], 4, 68],
    ]);
    assert.equal(table.totals.activations, 4);
    assert.ok(notes.some((n) => /torch\.cat of unknown tensors/.test(n.message)), notes.map((n) => n.message).join('; '));
  });

  it('names torch.concat and torch.concatenate torch.cat, and reads dim and axis keywords', async () => {
    const source = `
import torch
from torch import nn, concatenate


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 4)

    def forward(self, x):
        a = torch.concat((x, x), dim=-1)
        b = concatenate([a, x], axis=1)
        return self.fc(b)


net = Net()
out = net(torch.randn(5, 4))
`;
    const { table } = await tableOf(source);
    assert.deepEqual(table.rows.map(row), [
      ['', 'torch.cat', [8], 8, 0],
      ['', 'torch.cat', [12], 12, 0],
      ['fc', 'Linear', [4], 4, 52],
    ]);
  });

  it('isFunctionalRow tells functional rows from module and Parameter rows', () => {
    assert.equal(isFunctionalRow({ type: 'torch.cat' }), true);
    assert.equal(isFunctionalRow({ type: 'torch.stack' }), true);
    assert.equal(isFunctionalRow({ type: 'torch.layer_norm' }), true);
    assert.equal(isFunctionalRow({ type: 'Conv2d' }), false);
    assert.equal(isFunctionalRow({ type: 'Parameter' }), false);
    assert.equal(isConcatenationRow({ type: 'torch.stack' }), true);
    assert.equal(isConcatenationRow({ type: 'torch.scaled_dot_product_attention' }), false);
  });
});

describe('functional rows (norms and attention written as functions)', () => {
  const fixture = path.join(REPO, 'test/fixtures/scripts/functional_layers.py');
  // Measured by harness/layer_table.py with PyTorch 2.4.1 (harness/tests/test_functional_rows.py).
  const vector = JSON.parse(readFileSync(path.join(REPO, 'test/vectors/functional-rows/functional_layers.json'), 'utf8')) as LayerTable;

  it("gives F.layer_norm, F.group_norm and F.scaled_dot_product_attention in the script's modules the rows PyTorch records", async () => {
    const { table } = await tableOf(readFileSync(fixture, 'utf8'));
    assert.deepEqual(table.rows.map(row), vector.rows.map(row));
    assert.deepEqual(table.totals, vector.totals);
  });

  it('makes rows of products and softmax of activations, and none of a product of weights (as harness/tests/test_functional_rows.py)', async () => {
    const source = readFileSync(path.join(REPO, 'test/fixtures/scripts/attention_products.py'), 'utf8');
    const { table } = await tableOf(source);
    assert.deepEqual(
      table.rows.filter((r) => r.type !== 'Parameter').map((r) => [r.type, r.outputShape]),
      [
        ['Linear', [16, 96]],
        ['torch.matmul', [16, 16]],
        ['torch.softmax', [16, 16]],
        ['torch.softmax', [16, 16]],
        ['torch.matmul', [16, 32]],
        ['torch.matmul', [16, 32]],
      ],
    );
  });

  it('keeps for backward what the modules would: a norm its input, attention its input and output', () => {
    assert.deepEqual([layerTraits('torch.layer_norm')?.savesInput, layerTraits('torch.layer_norm')?.savesOutput], [true, false]);
    assert.deepEqual([layerTraits('torch.scaled_dot_product_attention')?.savesInput, layerTraits('torch.scaled_dot_product_attention')?.savesOutput], [true, true]);
  });

  it('runs them as autocast does: the norms in fp32, attention in half precision', () => {
    const rows: LayerRow[] = ['Linear', 'torch.layer_norm', 'torch.scaled_dot_product_attention', 'torch.batch_norm'].map((type) => ({ path: '', type, outputShape: [4], activations: 4, params: 0, trainable: true }));
    assert.deepEqual(autocastRows(rows, 'bf16-mixed', 2).outputBytes, [2, 4, 2, 2]);
  });

  it("adds what they keep to the estimate of a script that writes them so", async () => {
    const source = readFileSync(fixture, 'utf8');
    const { table } = await tableOf(source);
    const { table: modulesOnly } = await tableOf(source.replace('return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)', 'return x * self.weight + self.bias'));
    assert.equal(table.rows.filter((r) => r.type === 'torch.layer_norm').length, 5);
    assert.equal(modulesOnly.rows.filter((r) => r.type === 'torch.layer_norm').length, 0);
    // Each norm's output is a new tensor the Linear after it keeps: 5 x 8 x 512 fp32 elements more.
    const saved = (t: LayerTable) => replayTrainingStep({ table: t, batchSize: 8, optimizer: 'adamw', precision: 'fp32' }).savedBytes;
    assert.ok(saved(table) - saved(modulesOnly) >= 5 * 8 * 512 * 4, `${saved(table)} vs ${saved(modulesOnly)}`);
  });
});
