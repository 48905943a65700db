import * as assert from 'node:assert/strict';
import { estimate, tableOf } from '../../../fixtures';

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

describe('activation-checkpointing wrappers (rule 12)', () => {
  const fsdp = (...lines: string[]) =>
    [
      'import torch',
      'import torch.nn as nn',
      'from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing, checkpoint_wrapper',
      'class Block(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.fc = nn.Linear(64, 64)',
      '        self.act = nn.ReLU()',
      '    def forward(self, x):',
      '        return self.act(self.fc(x))',
      'class Net(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.blocks = nn.ModuleList([Block() for _ in range(3)])',
      '        self.head = nn.Linear(64, 10)',
      '    def forward(self, x):',
      '        for block in self.blocks:',
      '            x = block(x)',
      '        return self.head(x)',
      'model = Net()',
      ...lines,
      'optimizer = torch.optim.Adam(model.parameters())',
      'model(torch.randn(32, 64)).sum().backward()',
      '',
    ].join('\n');

  it('wraps the submodules check_fn accepts (isinstance of the script\'s own class): each call is a segment', async () => {
    assert.equal(await segments(fsdp('apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, Block))')), '0 0 1 1 2 2 -');
    // isinstance against a torch.nn class: the head alone.
    assert.equal(await segments(fsdp('apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, nn.Linear) and m.out_features == 10)')), '- - - - - - 0');
  });

  it('checkpoint_wrapper(block) put back in place checkpoints that block', async () => {
    assert.equal(await segments(fsdp('model.blocks[1] = checkpoint_wrapper(model.blocks[1])')), '- - 0 0 - - -');
  });

  it('says so when check_fn cannot be decided, and wraps nothing it could not decide', async () => {
    const source = fsdp('import os', 'apply_activation_checkpointing(model, check_fn=lambda m: os.environ["WRAP"] == "1")');
    assert.ok((await tableOf(source)).table.rows.every((row) => row.checkpoint === undefined));
    const { warnings } = await estimate(source);
    assert.ok(warnings.some((warning) => /check_fn could not be decided for 11 modules/.test(warning)), JSON.stringify(warnings));
  });
});
