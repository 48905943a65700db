import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';

const script = (...lines: string[]) => ['import torch', 'import torch.nn as nn', 'import torchvision', 'from torchvision import models', ...lines].join('\n');

// resnet18: 11,689,512 parameters, of which fc (512 x 1000 + 1000) 513,000.
const RESNET18 = 11_689_512;
const RESNET18_FC = 513_000;

describe('parts of standard architectures, listed and called', () => {
  it('calls the stages of a held ResNet one by one (an FPN-style backbone): rows under the holder, fc listed as uncalled, every parameter counted', async () => {
    const result = await estimate(
      script(
        'class Multiscale(nn.Module):',
        '    def __init__(self):',
        '        super().__init__()',
        '        self.backbone = models.resnet18()',
        '        self.head = nn.Conv2d(512, 4, 1)',
        '    def forward(self, x):',
        '        b = self.backbone',
        '        x = b.maxpool(b.relu(b.bn1(b.conv1(x))))',
        '        c2 = b.layer1(x)',
        '        c3 = b.layer2(c2)',
        '        c4 = b.layer3(c3)',
        '        c5 = b.layer4(c4)',
        '        return self.head(c5)',
        'model = Multiscale()',
        'out = model(torch.randn(4, 3, 256, 192))',
      ),
    );
    const [model] = result.models;
    assert.equal(model!.params, RESNET18 + 512 * 4 + 4);
    const rows = model!.layerTable.rows;
    assert.deepEqual(rows.find((row) => row.path === 'backbone.layer4.1.bn2')?.outputShape, [512, 8, 6]);
    assert.deepEqual(rows.find((row) => row.path === 'head')?.outputShape, [4, 8, 6]);
    const fc = rows.find((row) => row.path === 'backbone.fc');
    assert.equal(fc?.params, RESNET18_FC);
    assert.equal(fc?.activations, 0);
    assert.ok(!model!.notes.some((note) => /not followed|not listed/.test(note.message)), JSON.stringify(model!.notes.map((n) => n.message)));
  });

  it('counts a part run twice once (a siamese network on VGG-11 features)', async () => {
    const result = await estimate(
      script(
        'class Siamese(nn.Module):',
        '    def __init__(self):',
        '        super().__init__()',
        '        self.features = models.vgg11().features',
        '    def forward(self, a, b):',
        '        return (self.features(a) - self.features(b)).abs().mean()',
        'model = Siamese()',
        'loss = model(torch.randn(8, 3, 64, 64), torch.randn(8, 3, 64, 64))',
      ),
    );
    const [model] = result.models;
    // vgg11.features: 9,220,480 parameters.
    assert.equal(model!.params, 9_220_480);
    const convs = model!.layerTable.rows.filter((row) => row.path === 'features.0');
    assert.deepEqual(convs.map((row) => row.params), [1_792, 0]);
  });

  it('lists named_children() of a standard architecture in PyTorch order, and takes model.classifier[-1]', async () => {
    const result = await estimate(
      script(
        'backbone = models.resnet50()',
        'names = [name for name, _ in backbone.named_children()]',
        'assert names[4] == "layer1"',
        'body = nn.Sequential(*[m for name, m in backbone.named_children() if name not in ("avgpool", "fc")])',
        'vgg = models.vgg16()',
        'last = vgg.classifier[-1]',
        'probe = nn.Linear(last.in_features, 10)',
        'out = body(torch.randn(2, 3, 224, 224))',
      ),
    );
    const body = result.models.find((m) => m.name === 'body');
    // resnet50 without fc (2048 x 1000 + 1000).
    assert.equal(body?.params, 25_557_032 - 2_049_000);
    assert.deepEqual(body.layerTable.rows.at(-1)!.outputShape, [2048, 7, 7]);
    assert.equal(body.layerTable.rows[0]!.path, '0');
    const probe = result.models.find((m) => m.name === 'probe');
    assert.equal(probe?.params, 4096 * 10 + 10);
  });

  it('freezes the parts of an architecture frozen before its children were listed', async () => {
    const result = await estimate(
      script(
        'backbone = models.resnet18()',
        'for p in backbone.parameters():',
        '    p.requires_grad = False',
        'model = nn.Sequential(*list(backbone.children())[:-1], nn.Flatten(), nn.Linear(512, 5))',
        'out = model(torch.randn(2, 3, 224, 224))',
      ),
    );
    const model = result.models.find((m) => m.name === 'model');
    assert.equal(model!.layerTable.totals.params, RESNET18 - RESNET18_FC + 512 * 5 + 5);
    assert.equal(model!.layerTable.totals.trainableParams, 512 * 5 + 5);
  });

  it('sizes a timm part from the whole model\'s rows (no graph in its data), and says so', async () => {
    const result = await estimate(
      [
        'import torch, timm',
        'import torch.nn as nn',
        'class Net(nn.Module):',
        '    def __init__(self):',
        '        super().__init__()',
        '        self.backbone = timm.create_model("resnet18", num_classes=0)',
        '        self.stem = nn.Sequential(*list(self.backbone.children())[:4])',
        '        self.body = self.backbone.layer1',
        '    def forward(self, x):',
        '        return self.body(self.stem(x))',
        'model = Net()',
        'out = model(torch.randn(2, 3, 256, 256))',
      ].join('\n'),
    );
    const model = result.models.find((m) => m.name === 'model')!;
    assert.ok(model.notes.some((note) => /no graph of resnet18's forward: `layer1` is sized from the whole model's rows/.test(note.message)), JSON.stringify(model.notes.map((n) => n.message)));
    // The parts keep the names PyTorch gives them: their first path, under the backbone registered before them.
    assert.deepEqual(model.layerTable.rows.find((row) => row.path === 'backbone.conv1')?.outputShape, [64, 128, 128]);
    assert.deepEqual(model.layerTable.rows.find((row) => row.path === 'backbone.layer1.1.act2')?.outputShape, [64, 64, 64]);
    assert.ok(!model.layerTable.rows.some((row) => row.path.startsWith('stem.') || row.path.startsWith('body.')));
    // timm's resnet18 without its classifier: 11,176,512 parameters, layer2 to layer4 held but never called.
    assert.equal(model.params, 11_176_512);
    assert.equal(model.layerTable.rows.find((row) => row.path === 'backbone.layer4.1.conv2')?.activations, 0);
  });

  it("runs timm's forward_features: the model without its head, returning the last feature map or token sequence", async () => {
    const held = (name: string, rest: string, features = 'self.backbone.forward_features(x)') =>
      estimate(
        [
          'import timm',
          'import torch',
          'import torch.nn as nn',
          'class Net(nn.Module):',
          '    def __init__(self):',
          '        super().__init__()',
          `        self.backbone = timm.create_model("${name}", pretrained=False, num_classes=0)`,
          '        self.head = nn.Linear(768, 5)',
          '    def forward(self, x):',
          `        f = ${features}`,
          `        return self.head(${rest})`,
          'model = Net()',
          'out = model(torch.randn(8, 3, 224, 224))',
        ].join('\n'),
      );
    const convnext = (await held('convnext_tiny', 'f.mean((2, 3))')).models[0]!;
    const rows = convnext.layerTable.rows;
    assert.ok(rows.some((row) => row.path.startsWith('backbone.stages.3.') && row.activations! > 0));
    assert.ok(!rows.some((row) => row.path.startsWith('backbone.head.') && (row.activations ?? 0) > 0), 'the head does not run');
    assert.deepEqual(rows.find((row) => row.path === 'head')?.outputShape, [5]);
    assert.equal(convnext.layerTable.incomplete, false);
    const vit = (await held('vit_base_patch16_224', 'f[:, 0]')).models[0]!;
    // timm's own norm is a Parameter row (not a torch.nn layer): the last call is the last block's, on 197 tokens.
    assert.deepEqual(vit.layerTable.rows.find((row) => row.path === 'backbone.blocks.11.drop_path2')?.outputShape, [197, 768]);
    assert.equal(vit.layerTable.rows.find((row) => row.path === 'backbone.head_drop')?.activations, 0);
    assert.deepEqual(vit.layerTable.rows.find((row) => row.path === 'head')?.outputShape, [5]);
    // The whole backbone's activations, without its head: as many as the model called whole, less than a tenth more.
    const whole = (await held('convnext_tiny', 'f', 'self.backbone(x)')).models[0]!;
    const ratio = convnext.layerTable.totals.activations / whole.layerTable.totals.activations;
    assert.ok(ratio > 0.9 && ratio <= 1, String(ratio));
  });
});
