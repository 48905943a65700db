import * as assert from 'node:assert/strict';
import { estimate } from '../../../fixtures';

/** A timm fine-tune: `lines` between building the model and the training loop. */
const script = (...lines: string[]) =>
  [
    'import timm',
    'import torch',
    'import torch.nn as nn',
    'model = timm.create_model("efficientnet_b0", pretrained=True)',
    ...lines,
    'optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()))',
    'x = torch.randn(64, 3, 224, 224)',
    'for step in range(10):',
    '    model(x).sum().backward()',
    '    optimizer.step()',
    '',
  ].join('\n');

// efficientnet_b0: 5,288,548 parameters with its 1280 x 1000 classifier.
const BODY = 5_288_548 - (1280 * 1000 + 1000);

describe('timm models: classifier and width', () => {
  it('reset_classifier(n) puts a Linear of n classes in place of the classifier, sized from the features it receives', async () => {
    const [model] = (await estimate(script('model.reset_classifier(10)'))).models;
    assert.equal(model!.params, BODY + 1280 * 10 + 10);
    assert.deepEqual(model!.layerTable.rows.find((row) => row.path === 'classifier')?.outputShape, [10]);
    assert.equal(model!.layerTable.incomplete, false);
  });

  it('get_classifier() is the classifier: unfreezing it after freezing the model trains the head alone', async () => {
    const [model] = (await estimate(script('model.reset_classifier(10)', 'for p in model.parameters():', '    p.requires_grad = False', 'for p in model.get_classifier().parameters():', '    p.requires_grad = True'))).models;
    assert.equal(model!.layerTable.totals.trainableParams, 1280 * 10 + 10);
  });

  it('num_features sizes a head the script builds', async () => {
    const [model] = (await estimate(script('model.reset_classifier(0)', 'model = nn.Sequential(model, nn.Linear(model.num_features, 3))'))).models;
    assert.equal(model!.params, BODY + 1280 * 3 + 3);
  });

  it('num_features of a model made without a classifier (num_classes=0) is its pooled width', async () => {
    const source = script().replace('pretrained=True)', 'pretrained=True, num_classes=0)\nmodel = nn.Sequential(model, nn.Linear(model.num_features, 3))');
    const [model] = (await estimate(source)).models;
    assert.equal(model!.params, BODY + 1280 * 3 + 3);
    assert.equal(model!.layerTable.incomplete, false);
  });
});

describe('timm models: the data config', () => {
  // A frozen backbone and a head, images from a folder through timm's own transform: the shape of many notebooks.
  const folder = (config: string) =>
    [
      'import timm',
      'import torch',
      'import torch.nn as nn',
      'from timm.data import create_transform, resolve_data_config',
      'from torch.utils.data import DataLoader',
      'from torchvision.datasets import ImageFolder',
      'backbone = timm.create_model("convnext_tiny", pretrained=True, num_classes=0)',
      `config = ${config}`,
      'loader = DataLoader(ImageFolder("data/train", transform=create_transform(**config, is_training=True)), batch_size=32)',
      'model = nn.Sequential(backbone, nn.Linear(backbone.num_features, 5)).cuda()',
      'optimizer = torch.optim.AdamW(model.parameters())',
      'for images, labels in loader:',
      '    loss = nn.functional.cross_entropy(model(images.cuda()), labels.cuda())',
      '    loss.backward()',
      '    optimizer.step()',
      '',
    ].join('\n');

  it("gives create_transform the model's usual input through resolve_data_config", async () => {
    const [model] = (await estimate(folder('resolve_data_config({}, model=backbone)'))).models;
    assert.deepEqual(model!.layerTable.inputShape, [3, 224, 224]);
    const input = model!.assumptions.find((assumption) => assumption.name === 'inputShape');
    assert.match(input?.origin ?? '', /ImageFolder images after create_transform\(224\)/);
    assert.ok(model!.maxBatchSize !== null && model!.maxBatchSize > 32);
  });

  it('takes the size the script asks for, and resolve_model_data_config', async () => {
    const [asked] = (await estimate(folder('resolve_data_config({"input_size": (3, 288, 288)}, model=backbone)'))).models;
    assert.deepEqual(asked!.layerTable.inputShape, [3, 288, 288]);
    const [model] = (await estimate(folder('timm.data.resolve_model_data_config(backbone)'))).models;
    assert.deepEqual(model!.layerTable.inputShape, [3, 224, 224]);
  });

  it("takes the backbone's usual input where the script's transform is not read", async () => {
    const [model] = (await estimate(folder('load_config("pets.yaml")'))).models;
    assert.deepEqual(model!.layerTable.inputShape, [3, 224, 224]);
    assert.match(model!.assumptions.find((assumption) => assumption.name === 'inputShape')?.origin ?? '', /the usual input of convnext_tiny/);
  });
});

describe('timm models: set_grad_checkpointing', () => {
  const pointOf = (model: { memory: { estimateMiB: number | null } }) => model.memory.estimateMiB ?? NaN;

  it('makes each block a checkpointed segment (rule 12): the stem and the head are not, and the estimate falls', async () => {
    const [plain] = (await estimate(script())).models;
    const [checkpointed] = (await estimate(script('model.set_grad_checkpointing(True)'))).models;
    const rows = checkpointed!.layerTable.rows;
    // efficientnet_b0's blocks are blocks.<stage>.<block>: sixteen of them, numbered in call order.
    const segments = [...new Set(rows.flatMap((row) => (row.checkpoint === undefined ? [] : [row.checkpoint])))];
    assert.deepEqual(segments, Array.from({ length: 16 }, (_, i) => i));
    assert.equal(rows.find((row) => row.path === 'blocks.1.0.conv_pw')?.checkpoint, 1);
    assert.equal(rows.find((row) => row.path === 'conv_stem')?.checkpoint, undefined);
    assert.equal(rows.find((row) => row.path === 'classifier')?.checkpoint, undefined);
    assert.ok(pointOf(checkpointed!) < 0.8 * pointOf(plain!), `${pointOf(checkpointed!)} vs ${pointOf(plain!)}`);
    // The assumptions say so, with the segments the analysis followed.
    assert.deepEqual(checkpointed!.assumptions.find((a) => a.name === 'gradientCheckpointing')?.value, 'on (16 checkpointed segments)');
    assert.equal(plain!.assumptions.find((a) => a.name === 'gradientCheckpointing'), undefined);
  });

  it('set_grad_checkpointing(False), or a flag it cannot read, leaves the blocks as they are', async () => {
    const [off] = (await estimate(script('model.set_grad_checkpointing(True)', 'model.set_grad_checkpointing(enable=False)'))).models;
    assert.ok(off!.layerTable.rows.every((row) => row.checkpoint === undefined));
    const unread = await estimate(script('import os', 'model.set_grad_checkpointing(os.environ["CKPT"] == "1")'));
    assert.ok(unread.models[0]!.layerTable.rows.every((row) => row.checkpoint === undefined));
    assert.ok(unread.warnings.some((warning) => /whether it turns checkpointing on is not a constant/.test(warning)), JSON.stringify(unread.warnings));
  });
});

describe('timm models: set_grad_checkpointing on a model with stages', () => {
  it('checkpoints the blocks of each stage, not the downsampling between stages', async () => {
    const source = script().replace('"efficientnet_b0"', '"convnext_tiny"').replace('model = timm', 'model = timm').replace('optimizer = ', 'model.set_grad_checkpointing()\noptimizer = ');
    const rows = (await estimate(source)).models[0]!.layerTable.rows;
    // ConvNeXt-T: 3 + 3 + 9 + 3 blocks.
    assert.equal(new Set(rows.flatMap((row) => (row.checkpoint === undefined ? [] : [row.checkpoint]))).size, 18);
    assert.ok(rows.some((row) => row.path.startsWith('stages.1.downsample')));
    assert.ok(rows.filter((row) => row.path.startsWith('stages.1.downsample')).every((row) => row.checkpoint === undefined));
    assert.ok(rows.filter((row) => row.type !== 'Parameter' && row.path.startsWith('stages.2.blocks.4.')).every((row) => row.checkpoint !== undefined));
  });
});
