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
});
