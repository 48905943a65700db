import * as assert from 'node:assert/strict';
import { modelForHover } from '../../../../src/core/report/hoverText';
import { estimate } from '../../fixtures';

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
});
