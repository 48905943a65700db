import * as assert from 'node:assert/strict';
import { tableOf } from '../../../fixtures';

/** A model of four Linear+ReLU blocks and a head, whose forward runs `lines` over the blocks. */
const script = (...lines: string[]) =>
  [
    'import functools',
    'import torch',
    'import torch.nn as nn',
    'import torch.utils.checkpoint',
    'from torch.utils.checkpoint import checkpoint, checkpoint_sequential',
    'class Net(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(64, 64), nn.ReLU()) for _ in range(4)])',
    '        self.act = lambda t: t * torch.sigmoid(t)',
    '        self.head = nn.Linear(64, 10)',
    '    def forward(self, x):',
    ...lines.map((line) => `        ${line}`),
    '        return self.head(self.act(x))',
    'model = Net()',
    'optimizer = torch.optim.Adam(model.parameters())',
    'x = torch.randn(32, 64)',
    'model(x).sum().backward()',
    '',
  ].join('\n');

/** Each row's segment, `-` outside every checkpoint. */
async function segments(source: string): Promise<string> {
  const { table } = await tableOf(source);
  return table.rows.map((row) => (row.checkpoint === undefined ? '-' : String(row.checkpoint))).join(' ');
}

describe('checkpoint calls in forward (rule 12)', () => {
  it('follows the function checkpoint runs, however the script passes it', async () => {
    const each = '0 0 1 1 2 2 3 3 -';
    assert.equal(await segments(script('for block in self.blocks:', '    x = checkpoint(block, x, use_reentrant=False)')), each);
    assert.equal(await segments(script('for block in self.blocks:', '    x = checkpoint(lambda t: block(t), x)')), each);
    assert.equal(await segments(script('for block in self.blocks:', '    x = checkpoint(functools.partial(block), x)')), each);
    // Hugging Face's older pattern: a closure made per module.
    const custom = ['def create_custom_forward(module):', '    def custom_forward(*inputs):', '        return module(*inputs)', '    return custom_forward', 'for block in self.blocks:', '    x = torch.utils.checkpoint.checkpoint(create_custom_forward(block), x)'];
    assert.equal(await segments(script(...custom)), each);
  });

  it('splits checkpoint_sequential as PyTorch does: the last segment is not checkpointed', async () => {
    assert.equal(await segments(script('x = checkpoint_sequential(list(self.blocks), 2, x)')), '0 0 0 0 - - - - -');
    assert.equal(await segments(script('x = checkpoint_sequential(nn.Sequential(*self.blocks), 4, x)')), '0 0 1 1 2 2 - - -');
  });

  it('runs the blocks without checkpointing when the segments are not known, and says so', async () => {
    const { table, notes } = await tableOf(script('import os', 'x = checkpoint_sequential(list(self.blocks), int(os.environ["SEGMENTS"]), x)'));
    assert.ok(table.rows.every((row) => row.checkpoint === undefined));
    assert.equal(table.rows.filter((row) => row.type === 'Linear').length, 5);
    assert.ok(notes.some((note) => /checkpoint_sequential: its functions or number of segments are not known/.test(note.message)), JSON.stringify(notes));
  });

  it('evaluates a lambda the model holds (an activation): the head is sized from it', async () => {
    const { table } = await tableOf(script('for block in self.blocks:', '    x = block(x)'));
    assert.deepEqual(table.rows.at(-1)?.outputShape, [10]);
    assert.equal(table.incomplete, false);
  });
});
