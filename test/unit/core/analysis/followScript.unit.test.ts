import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';
import { warningsOf } from '../../../../src/core/estimate/notes';

/** Rows as compact strings: `path:type:outputShape:params`. */
async function rows(source: string, model = 0): Promise<string[]> {
  const result = await estimate(source);
  const table = result.models[model]?.layerTable;
  assert.ok(table, `a model in:\n${source}\nwarnings: ${result.warnings.join('; ')}`);
  return table.rows.map((r) => `${r.path}:${r.type}:${r.outputShape ? r.outputShape.join('x') : '-'}:${r.params ?? '?'}`);
}

const HEADER = 'import argparse\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom dataclasses import dataclass\n';

describe('following a script (values, containers, forward)', () => {
  it('reads argparse defaults and dataclass configs, and builds ModuleList blocks from a comprehension', async () => {
    const source = `${HEADER}
parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=48)
parser.add_argument("--width", type=int, default=64)
args = parser.parse_args()

@dataclass
class Config:
    n_layer: int = 3
    width: int = 32

class Net(nn.Module):
    def __init__(self, cfg, width):
        super().__init__()
        self.inp = nn.Linear(16, width)
        self.blocks = nn.ModuleList([nn.Linear(width, width) for _ in range(cfg.n_layer)])
        self.out = nn.Linear(width, 2)

    def forward(self, x):
        x = self.inp(x)
        for block in self.blocks:
            x = F.relu(block(x)) + x
        return self.out(x)

model = Net(Config(n_layer=2), args.width)
loader = torch.utils.data.DataLoader(range(100), batch_size=args.batch_size)
`;
    assert.deepEqual(await rows(source), ['inp:Linear:64:1088', 'blocks.0:Linear:64:4160', 'blocks.1:Linear:64:4160', 'out:Linear:2:130']);
    const model = (await estimate(source)).models[0]!;
    assert.equal(model.batchSize, 48);
    assert.match(model.assumptions.find((a) => a.name === 'batchSize')?.origin ?? '', /DataLoader/);
    assert.equal(model.assumptions.find((a) => a.name === 'batchSize')?.line, 8, 'links to the --batch-size option');
  });

  it('follows helper functions and _make_layer loops with nn.Sequential(*layers)', async () => {
    const source = `${HEADER}
def conv_bn(i, o):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU())

class Tiny(nn.Module):
    expansion = 2
    def __init__(self, blocks=(1, 2)):
        super().__init__()
        self.stem = conv_bn(3, 8)
        self.stage = self._make_layer(8, blocks[1])
        self.head = nn.Linear(8 * self.expansion, 10)

    def _make_layer(self, c, n):
        layers = []
        for i in range(n):
            layers.append(conv_bn(c, c))
        layers += [nn.Conv2d(c, c * Tiny.expansion, 1)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.stage(self.stem(x))
        x = F.adaptive_avg_pool2d(x, 1)
        return self.head(torch.flatten(x, 1))

net = Tiny()
x = torch.randn(4, 3, 16, 16)
`;
    const r = await rows(source);
    assert.deepEqual(r.slice(0, 3), ['stem.0:Conv2d:8x16x16:216', 'stem.1:BatchNorm2d:8x16x16:16', 'stem.2:ReLU:8x16x16:0']);
    assert.deepEqual(r.slice(-2), ['stage.2:Conv2d:16x16x16:144', 'head:Linear:10:170']);
    assert.equal(r.length, 11);
  });

  it('counts tied weights once, gives a reused layer two rows, puts parameters first and unused layers last', async () => {
    const source = `${HEADER}
class LM(nn.Module):
    def __init__(self, vocab=100, dim=8, ctx=5):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(1, ctx, dim))
        self.act = nn.GELU()
        self.proj = nn.Linear(dim, dim)
        self.unused = nn.Linear(dim, 3)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tok.weight
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx)))

    def forward(self, idx):
        b, t = idx.size()
        x = self.tok(idx) + self.pos[:, :t, :]
        x = self.act(self.proj(self.act(x)))
        return self.head(x)

model = LM()
tokens = torch.randint(0, 100, (2, 5))
`;
    assert.deepEqual(await rows(source), [
      'pos:Parameter:-:40',
      'tok:Embedding:5x8:800',
      'act:GELU:5x8:0',
      'proj:Linear:5x8:72',
      'act:GELU:5x8:0',
      'head:Linear:5x100:0',
      'unused:Linear:-:27',
    ]);
    assert.equal((await estimate(source)).models[0]!.params, 40 + 800 + 72 + 27);
  });

  it('follows view/size, transpose, matmul attention, torch.cat skips and LSTM tuples', async () => {
    const source = `${HEADER}
class Attn(nn.Module):
    def __init__(self, d=16, h=4):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(d, 3 * d)
        self.lstm = nn.LSTM(d, 8, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(16 + 16, 4)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        att = F.softmax((q @ k.transpose(-2, -1)) / 2.0, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        out, (h, c) = self.lstm(y)
        z = torch.cat([out[:, -1, :], x.mean(dim=1)], dim=1)
        return self.fc(z)

model = Attn()
x = torch.randn(2, 7, 16)
`;
    // The torch.cat in forward() is a row of its own (rule 2 of docs/layer-table.md).
    // The attention written out is rows of its own (rule 2): the two products and the softmax between them.
    assert.deepEqual(await rows(source), ['qkv:Linear:7x48:816', ':torch.matmul:4x7x7:0', ':torch.softmax:4x7x7:0', ':torch.matmul:4x7x4:0', 'lstm:LSTM:7x16:1664', ':torch.cat:32:0', 'fc:Linear:4:132']);
  });

  it('falls back to declaration order, and says so, when forward() cannot be followed', async () => {
    const source = `${HEADER}
class Odd(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 8)
        self.b = nn.Linear(8, 2)

    def forward(self, x):
        return self.b(self.a(some_library.transform(x)))

model = Odd()
x = torch.randn(3, 4)
`;
    const result = await estimate(source);
    const r = result.models[0]!.layerTable.rows.map((row) => `${row.path}:${row.outputShape?.join('x') ?? '-'}`);
    assert.deepEqual(r, ['a:8', 'b:2']);
    assert.ok(warningsOf(result.models[0]!).some((w) => /declaration order/.test(w)), warningsOf(result.models[0]!).join('\n'));
  });

  it('stops on recursion and runaway loops with a note instead of hanging or throwing', async () => {
    const recursive = `${HEADER}
class Loop(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.inner = Loop(n - 1)
        self.fc = nn.Linear(2, 2)

def f(x):
    return g(x)

def g(x):
    return f(x)

model = Loop()
y = f(1)
`;
    const result = await estimate(recursive);
    assert.ok([...result.warnings, ...result.models.flatMap((m) => warningsOf(m))].some((w) => /nest too deeply|recursion/.test(w)));
    const runaway = `${HEADER}\nlayers = []\nfor i in range(9000):\n    for j in range(9000):\n        layers.append(nn.Linear(2, 2))\nmodel = nn.Sequential(*layers)\n`;
    const stopped = await estimate(runaway);
    assert.ok(stopped.warnings.some((w) => /Analysis stopped early/.test(w)), stopped.warnings.join('\n'));
    // The model comes after the loop the analysis stopped in: not "no model in this file".
    const notes = stopped.warnings;
    assert.ok(notes.some((w) => /No PyTorch model found in the part of the file the analysis reached/.test(w)), notes.join('\n'));
    assert.ok(!notes.some((w) => /nn.Module subclass in this file/.test(w)), notes.join('\n'));
  });
});
