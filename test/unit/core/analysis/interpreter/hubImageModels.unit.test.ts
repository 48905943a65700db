import * as assert from 'node:assert/strict';
import { estimate } from '../../../fixtures';

/** A hub image classifier fine-tuned with a new head: `load` is the from_pretrained call's arguments. */
const script = (load: string) =>
  [
    'import torch',
    'from transformers import AutoModelForImageClassification',
    `model = AutoModelForImageClassification.from_pretrained(${load}).cuda()`,
    'optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)',
    'for step in range(100):',
    '    x = torch.randn(32, 3, 224, 224).cuda()',
    '    model(pixel_values=x).logits.sum().backward()',
    '    optimizer.step()',
    '    optimizer.zero_grad()',
    '',
  ].join('\n');

const warns = (notes: ReadonlyArray<{ readonly message: string }>) => notes.some((n) => /label head.*ignore_mismatched_sizes=True/.test(n.message));
const text = (notes: ReadonlyArray<{ readonly message: string }>) => notes.map((n) => n.message).join('\n');

describe('hub image models: a new label head', () => {
  it('reads ignore_mismatched_sizes=True from the call: no warning, the head has the new labels', async () => {
    const [model] = (await estimate(script('"microsoft/resnet-50", num_labels=10, ignore_mismatched_sizes=True'))).models;
    assert.equal(model!.params, 25_557_032 - 2049 * 1000 + 2049 * 10);
    assert.ok(!warns(model!.notes), text(model!.notes));
  });

  it('warns where the script leaves it out, as from_pretrained then raises', async () => {
    const [model] = (await estimate(script('"facebook/convnext-tiny-224", num_labels=10'))).models;
    assert.ok(warns(model!.notes), text(model!.notes));
  });
});

describe('hub image models: a backbone with a head of the script', () => {
  it("follows last_hidden_state: the class token and the patch tokens' mean size the head", async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'from transformers import AutoModel',
      'class Probe(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.backbone = AutoModel.from_pretrained("facebook/dinov2-small")',
      '        self.head = nn.Linear(2 * 384, 7)',
      '    def forward(self, x):',
      '        tokens = self.backbone(pixel_values=x).last_hidden_state',
      '        return self.head(torch.cat([tokens[:, 0], tokens[:, 1:].mean(dim=1)], dim=-1))',
      'model = Probe().cuda()',
      'optimizer = torch.optim.AdamW(model.parameters())',
      'for step in range(10):',
      '    model(torch.randn(16, 3, 224, 224).cuda()).sum().backward()',
      '    optimizer.step()',
      '',
    ].join('\n');
    const [model] = (await estimate(source)).models;
    assert.equal(model!.layerTable.incomplete, false, text(model!.notes));
    assert.deepEqual(model!.layerTable.rows.find((row) => row.path === 'head')?.outputShape, [7]);
  });

  it('gives a ConvNeXt backbone its last feature map, before pooling', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'from transformers import ConvNextModel',
      'class Segmenter(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.backbone = ConvNextModel.from_pretrained("facebook/convnext-tiny-224")',
      '        self.head = nn.Conv2d(768, 21, 1)',
      '    def forward(self, x):',
      '        return self.head(self.backbone(x).last_hidden_state)',
      'model = Segmenter().cuda()',
      'optimizer = torch.optim.SGD(model.parameters(), lr=0.01)',
      'for step in range(10):',
      '    model(torch.randn(8, 3, 512, 512).cuda()).mean().backward()',
      '    optimizer.step()',
      '',
    ].join('\n');
    const [model] = (await estimate(source)).models;
    assert.deepEqual(model!.layerTable.rows.find((row) => row.path === 'head')?.outputShape, [21, 16, 16], text(model!.notes));
  });
});
