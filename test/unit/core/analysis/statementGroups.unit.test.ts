import * as assert from 'node:assert/strict';
import { statementGroups } from '../../../../src/core/analysis/statementGroups';
import { copySyntaxTree } from '../../../../src/core/parsing/syntaxTree';
import { realParser } from '../../fixtures';

async function groupsOf(source: string): Promise<string[][]> {
  const tree = (await realParser()).parse(source);
  try {
    return statementGroups(copySyntaxTree(tree, source)).map((group) => group.statements.map((s) => s.text.split('\n')[0]!));
  } finally {
    tree.delete();
  }
}

describe('statementGroups', () => {
  it('puts statements that share a module-level name together, and nothing else', async () => {
    const groups = await groupsOf(
      [
        'import torch',
        'import torch.nn as nn',
        'HIDDEN = 64',
        'class Net(nn.Module):',
        '    def __init__(self):',
        '        super().__init__()',
        '        self.fc = nn.Linear(HIDDEN, 10)',
        'torch.manual_seed(0)',
        'other = nn.Linear(3, 4)',
        'model = Net()',
        'opt = torch.optim.Adam(other.parameters())',
      ].join('\n'),
    );
    assert.deepEqual(groups, [['HIDDEN = 64', 'class Net(nn.Module):', 'model = Net()'], ['torch.manual_seed(0)'], ['other = nn.Linear(3, 4)', 'opt = torch.optim.Adam(other.parameters())']]);
  });

  it('puts every statement in one group when one calls exec() or globals(), which bind names no syntax shows', async () => {
    const source = ['import torch', 'n_layer = 4', 'other = 1', "exec(open('configurator.py').read())", 'model = torch.nn.Linear(n_layer, 2)', ''].join('\n');
    assert.deepEqual(await groupsOf(source), [['n_layer = 4', 'other = 1', "exec(open('configurator.py').read())", 'model = torch.nn.Linear(n_layer, 2)']]);
    assert.deepEqual(await groupsOf(source.replace("exec(open('configurator.py').read())", "globals()['n_layer'] = 8")), [['n_layer = 4', 'other = 1', "globals()['n_layer'] = 8", 'model = torch.nn.Linear(n_layer, 2)']]);
    assert.equal((await groupsOf(source.replace("exec(open('configurator.py').read())", 'print(1)'))).length, 3);
  });

  it('links through names used inside function bodies, global declarations and loop targets', async () => {
    const groups = await groupsOf(
      [
        'def train():',
        '    global step',
        '    model.fit()',
        'for step in range(3): pass',
        'model = make()',
        'def make():',
        '    return 1',
        'unrelated = 2',
      ].join('\n'),
    );
    assert.deepEqual(groups, [['def train():', 'for step in range(3): pass', 'model = make()', 'def make():'], ['unrelated = 2']]);
  });

  it('does not link through attribute names, keyword names or comprehension variables', async () => {
    const groups = await groupsOf(['model = 1', 'net = other.model', 'layer = f(model=3)', 'xs = [model for model in range(3)]'].join('\n'));
    assert.deepEqual(groups, [['model = 1'], ['net = other.model'], ['layer = f(model=3)'], ['xs = [model for model in range(3)]']]);
  });

  it("does not link through a function's own parameters and locals, but does through its free names", async () => {
    const groups = await groupsOf(
      [
        'x = 1',
        'def f(x, y=x):', // the default is evaluated at module level: linked
        '    return x',
        'def g(a):',
        '    x = a', // local to g
        '    return x',
        'def h():',
        '    return x', // free: the module's x
        'def k():',
        '    global x',
        '    x = 2',
      ].join('\n'),
    );
    assert.deepEqual(groups, [['x = 1', 'def f(x, y=x):', 'def h():', 'def k():'], ['def g(a):']]);
  });
});
