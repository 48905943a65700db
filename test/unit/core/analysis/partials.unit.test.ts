import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';

/** Rows as compact strings: `path:type:params`. */
async function rows(source: string): Promise<string[]> {
  const result = await estimate(source);
  const table = result.models[0]?.layerTable;
  assert.ok(table, `a model in:\n${source}\nwarnings: ${result.warnings.join('; ')}`);
  return table.rows.map((r) => `${r.path}:${r.type}:${r.params ?? '?'}`);
}

const NETWORK = `import functools
from functools import partial
import torch
import torch.nn as nn

def get_norm_layer(norm_type):
    if norm_type == "batch":
        return functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
    return partial(nn.InstanceNorm2d, affine=False)

class Block(nn.Module):
    def __init__(self, cin, cout, norm_layer=nn.BatchNorm2d):
        super().__init__()
        if type(norm_layer) == functools.partial:
            use_bias = norm_layer.func == nn.InstanceNorm2d
        else:
            use_bias = norm_layer == nn.InstanceNorm2d
        same = norm_layer.func is nn.InstanceNorm2d if isinstance(norm_layer, functools.partial) else norm_layer is nn.InstanceNorm2d
        assert same == use_bias
        layers = [nn.Conv2d(cin, cout, 3, padding=1, bias=use_bias), norm_layer(cout)]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)
`;

describe('functools.partial (norm-layer factories)', () => {
  it('calls the bound class with its bound keywords and reads .func for the bias choice', async () => {
    const batch = await rows(`${NETWORK}\nmodel = Block(3, 8, norm_layer=get_norm_layer("batch"))\nx = torch.randn(2, 3, 16, 16)\nmodel(x)\n`);
    // Conv2d(3, 8, 3, bias=False): 216; BatchNorm2d(8, affine=True): 16.
    assert.deepEqual(batch, ['model.0:Conv2d:216', 'model.1:BatchNorm2d:16']);
    const instance = await rows(`${NETWORK}\nmodel = Block(3, 8, norm_layer=get_norm_layer("instance"))\nx = torch.randn(2, 3, 16, 16)\nmodel(x)\n`);
    // Conv2d with bias: 224; InstanceNorm2d(8, affine=False): no parameters.
    assert.deepEqual(instance, ['model.0:Conv2d:224', 'model.1:InstanceNorm2d:0']);
  });

  it('compares a plain class argument by name, and lets the call override a bound keyword', async () => {
    const plain = await rows(`${NETWORK}\nmodel = Block(3, 8, norm_layer=nn.InstanceNorm2d)\nx = torch.randn(2, 3, 16, 16)\nmodel(x)\n`);
    assert.deepEqual(plain, ['model.0:Conv2d:224', 'model.1:InstanceNorm2d:0']);
    const overridden = await rows(`import functools\nimport torch\nimport torch.nn as nn\nmake = functools.partial(functools.partial(nn.Linear, 4), bias=False)\nmodel = nn.Sequential(make(6), make(2, bias=True))\nx = torch.randn(2, 4)\nmodel(x[:, :4])\n`);
    assert.deepEqual(overridden.map((r) => r.split(':')[2]), ['24', '10']);
  });
});
