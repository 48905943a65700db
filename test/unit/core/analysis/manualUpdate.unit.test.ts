import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';

const MODEL = `import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
lr = 0.1
x = torch.randn(32, 8)
`;

const optimizerOf = async (loop: string) => {
  const model = (await estimate(`${MODEL}for step in range(10):\n    loss = model(x).sum()\n    model.zero_grad()\n    loss.backward()\n${loop}`)).models[0]!;
  return model.assumptions.find((a) => a.name === 'optimizer');
};

describe('parameters updated by hand', () => {
  it('is plain SGD, with the update as its origin', async () => {
    const updates = [
      '    for p in model.parameters():\n        p.data.add_(p.grad, alpha=-lr)\n',
      '    with torch.no_grad():\n        for name, param in model.named_parameters():\n            param -= lr * param.grad\n',
      '    for p in model.parameters():\n        p.data.sub_(lr * p.grad.data)\n',
    ];
    for (const update of updates) {
      const optimizer = await optimizerOf(update);
      assert.equal(optimizer?.value, 'sgd', update);
      assert.match(optimizer?.origin ?? '', /parameters updated by hand/);
    }
  });

  it('is not seen in loops that change the gradient or clip the weights, nor over a torch.optim optimizer', async () => {
    for (const loop of ['    for p in model.parameters():\n        p.grad.data.clamp_(-1, 1)\n', '    for p in model.parameters():\n        p.data.clamp_(-0.01, 0.01)\n']) {
      assert.equal((await optimizerOf(loop))?.origin, 'default: none found', loop);
    }
    const withOptim = await optimizerOf('    opt = torch.optim.Adam(model.parameters())\n    for p in model.parameters():\n        p.data.add_(p.grad, alpha=-lr)\n');
    assert.equal(withOptim?.value, 'adam');
  });
});
