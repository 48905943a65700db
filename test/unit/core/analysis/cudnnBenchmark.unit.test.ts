import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';

const cnn = (setting: string, model = 'nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))') => `import torch
import torch.nn as nn
from torch.backends import cudnn
${setting}
model = ${model}.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 3, 224, 224)
for step in range(10):
    loss = model(x.cuda()).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
`;

const benchmarkNote = async (source: string) => (await estimate(source)).models[0]!.notes.find((note) => note.message.startsWith('cudnn.benchmark is on'));

describe('cudnn.benchmark in the static estimate', () => {
  it('is said, at its line, for a network with convolutions that turns it on', async () => {
    const note = await benchmarkNote(cnn('torch.backends.cudnn.benchmark = True'));
    assert.ok(note);
    assert.equal(note.severity, 'info');
    assert.match(note.message, /nvidia-smi may show more than the estimate \(up to the whole GPU\)/);
    assert.equal(note.range?.startLine, 3);
    assert.ok(await benchmarkNote(cnn('cudnn.benchmark = True')));
  });

  it('is not said when it is off, turned off again, or the network has no convolution', async () => {
    assert.equal(await benchmarkNote(cnn('')), undefined);
    assert.equal(await benchmarkNote(cnn('torch.backends.cudnn.benchmark = False')), undefined);
    assert.equal(await benchmarkNote(cnn('cudnn.benchmark = True\ncudnn.benchmark = False')), undefined);
    assert.equal(await benchmarkNote(cnn('cudnn.benchmark = True', 'nn.Sequential(nn.Flatten(), nn.Linear(3 * 224 * 224, 10))')), undefined);
  });
});
