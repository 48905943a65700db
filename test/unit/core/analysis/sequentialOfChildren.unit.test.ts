import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { estimate, REPO_ROOT } from '../../fixtures';

const framework = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'frameworks', name), 'utf8');

describe('nn.Sequential(*list(model.children())[:-1]) (issue 18, item 7)', () => {
  it('keeps the ResNet body: one model, the body without fc plus the new head, and the backbone is not a model of its own', async () => {
    const result = await estimate(framework('sequential_of_children.py'));
    assert.deepEqual(
      result.models.map((m) => m.name),
      ['model'],
    );
    const [model] = result.models;
    // ResNet-18 for CIFAR: 11,173,962 parameters, of which fc (512 x 10 + 10) is dropped; the new Linear(512, 100) adds 51,300.
    assert.equal(model!.params, 11_173_962 - 5_130 + 51_300);
    assert.ok(!model!.notes.some((note) => /could not be expanded|declaration order/.test(note.message)), JSON.stringify(model!.notes));
    // The body's convolutions come before the new head in the layer table.
    const types = model!.layerTable.rows.map((row) => row.type);
    assert.ok(types.indexOf('Conv2d') < types.lastIndexOf('Linear'));
  });

  it('lists named_children() as (name, module) pairs in registration order', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'class Net(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.features = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU())',
      '        self.pool = nn.AdaptiveAvgPool2d(1)',
      '        self.head = nn.Linear(16, 4)',
      '    def forward(self, x):',
      '        return self.head(self.pool(self.features(x)).flatten(1))',
      'net = Net()',
      'trunk = nn.Sequential(*[m for name, m in net.named_children() if name != "head"])',
      'out = trunk(torch.randn(8, 3, 32, 32))',
    ].join('\n');
    const result = await estimate(source);
    assert.deepEqual(
      result.models.map((m) => [m.name, m.params]),
      [['trunk', 3 * 16 * 9 + 16]],
    );
  });
});
