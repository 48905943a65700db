import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { estimate, REPO_ROOT } from '../../fixtures';

const script = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'scripts', name), 'utf8');

/** Parameter counts PyTorch gives for the fixtures' models (harness/tests/test_layer_subclass_fixtures.py checks them with torch). */
const PYTORCH = {
  layerSubclasses: { params: 1_619_876 },
  handWrittenLora: { params: 67_831_818, trainable: 681_994 },
};

describe('subclasses of torch.nn layers', () => {
  it('reads LayerNorm2d(nn.LayerNorm), StdConv2d(nn.Conv2d) and a Conv2d carrying its norm and activation as those layers, with PyTorch’s parameter count', async () => {
    const result = await estimate(script('layer_subclasses.py'));
    assert.deepEqual(result.models.map((m) => m.name), ['model'], 'a layer subclass is a part of models, not one');
    const [model] = result.models;
    assert.equal(model!.params, PYTORCH.layerSubclasses.params);
    assert.equal(model!.batchSize, 256);
    assert.ok(!model!.notes.some((note) => /not followed|declaration order|could not be sized|expects/.test(note.message)), JSON.stringify(model!.notes));
    const row = (p: string) => model!.layerTable.rows.find((r) => r.path === p);
    // StdConv2d without an __init__ of its own: the call's arguments build the Conv2d; its forward() is read as the layer's.
    assert.deepEqual([row('stem')?.type, row('stem')?.params, row('stem')?.outputShape], ['Conv2d', 3 * 64 * 9, [64, 32, 32]]);
    // LayerNorm2d normalizes over NCHW's channels in its own forward(): the norm keeps the input's shape.
    assert.deepEqual([row('stem_norm')?.type, row('stem_norm')?.params, row('stem_norm')?.outputShape], ['LayerNorm', 128, [64, 32, 32]]);
    // ConvNormAct(*args, **kwargs) pops norm= and activation= and passes the rest to super().__init__; they run after it, in order.
    const down = model!.layerTable.rows.findIndex((r) => r.path === 'stages.2');
    assert.deepEqual(
      model!.layerTable.rows.slice(down, down + 3).map((r) => [r.path, r.type, r.params, r.outputShape]),
      [
        ['stages.2', 'Conv2d', 64 * 128 * 4 + 128, [128, 16, 16]],
        ['stages.2.norm', 'BatchNorm2d', 256, [128, 16, 16]],
        ['stages.2.activation', 'ReLU', 0, [128, 16, 16]],
      ],
    );
  });

  it('counts a hand-written LoRA: the Linear it derives from frozen by `self.weight.requires_grad = False`, its A and B trained', async () => {
    const [model] = (await estimate(script('hand_written_lora.py'))).models;
    assert.equal(model!.params, PYTORCH.handWrittenLora.params);
    assert.equal(model!.layerTable.totals.trainableParams, PYTORCH.handWrittenLora.trainable);
    const rows = model!.layerTable.rows;
    assert.deepEqual(
      rows.filter((r) => r.path.startsWith('blocks.0.fc1')).map((r) => [r.path, r.type, r.params, r.trainable]),
      [
        ['blocks.0.fc1.lora_A', 'Parameter', 8 * 1024, true],
        ['blocks.0.fc1.lora_B', 'Parameter', 4096 * 8, true],
        ['blocks.0.fc1', 'Linear', 1024 * 4096 + 4096, false],
      ],
    );
    // The batch is the loop's tensor's, not the first dimension of nn.Parameter(torch.zeros(r, in_features)) in __init__.
    assert.equal(model!.batchSize, 64);
  });

  it('leaves a subclass’s own parameters trained when a loop freezes every layer weight by name', async () => {
    const source = script('hand_written_lora.py')
      .replace('        self.weight.requires_grad = False\n        if bias:\n            self.bias.requires_grad = False\n', '')
      .replace('model = Encoder().cuda()\n', 'model = Encoder().cuda()\nfor name, param in model.named_parameters():\n    param.requires_grad = "lora_" in name\n');
    assert.notEqual(source, script('hand_written_lora.py'));
    const [model] = (await estimate(source)).models;
    // The loop freezes the LayerNorms and the head too: the trained parameters are A and B alone.
    assert.equal(model!.layerTable.totals.trainableParams, 8 * 2 * (8 * 1024 + 4096 * 8));
  });

  it('takes no example input from a module’s own tensors (nn.Parameter, register_buffer)', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'class ViT(nn.Module):',
      '    def __init__(self, dim=256, patches=64):',
      '        super().__init__()',
      '        self.patch = nn.Conv2d(3, dim, kernel_size=4, stride=4)',
      '        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))',
      '        self.pos_embed = nn.Parameter(data=torch.zeros(1, patches + 1, dim))',
      '        self.register_buffer("mask", torch.ones(patches + 1, patches + 1))',
      '        self.head = nn.Linear(dim, 10)',
      '    def forward(self, x):',
      '        x = self.patch(x).flatten(2).transpose(1, 2)',
      '        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed',
      '        return self.head(x[:, 0])',
      'model = ViT()',
      'optimizer = torch.optim.Adam(model.parameters())',
      'x = torch.randn(32, 3, 32, 32)',
      'model(x).sum().backward()',
    ].join('\n');
    const [model] = (await estimate(source)).models;
    assert.equal(model!.batchSize, 32);
    assert.deepEqual(model!.inputShape, [3, 32, 32]);
  });
});
