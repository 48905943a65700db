import * as assert from 'node:assert/strict';
import { tableOf } from '../../../fixtures';

// Attention blocks as vit-pytorch and hand-written decoders write them: the forward unpacks a
// fused projection, iterates a ModuleList of pairs, and sizes layers through `pair(t)`.
const HEADER = `import torch
import torch.nn as nn
import torch.nn.functional as F


def pair(t):
    return t if isinstance(t, tuple) else (t, t)
`;

const RUN = `
model = Net().cuda()
x = torch.randn(8, 3, 32, 32)
model(x).sum().backward()
`;

const sized = async (source: string) => {
  const { table, notes } = await tableOf(source);
  return { rows: table.rows.map((row) => [row.path, row.outputShape, row.params]), incomplete: table.incomplete, notes: notes.map((note) => note.message) };
};

describe('unpacking in forward: tensors, ModuleLists, pair()', () => {
  it('unpacks a tensor along a first dimension of known size (q, k, v = qkv.permute(2, 0, 3, 1, 4))', async () => {
    const source = `${HEADER}

class Net(nn.Module):
    def __init__(self, dim=48, heads=4):
        super().__init__()
        self.heads = heads
        self.patch = nn.Conv2d(3, dim, 4, 4)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, 10)

    def forward(self, img):
        x = self.patch(img).flatten(2).transpose(1, 2)
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, c)
        return self.out(y.mean(dim=1))
${RUN}`;
    const { rows, incomplete, notes } = await sized(source);
    assert.equal(incomplete, false, notes.join('\n'));
    assert.deepEqual(rows.find(([path]) => path === 'out'), ['out', [10], 490]);
    assert.ok(!notes.some((note) => /declaration order/.test(note)), notes.join('\n'));
  });

  it('unpacks a ModuleList of pairs (for attn, ff in self.layers) and sizes layers through pair(t)', async () => {
    const source = `${HEADER}

class Net(nn.Module):
    def __init__(self, image_size=32, patch_size=4, dim=64, depth=2):
        super().__init__()
        ph, pw = pair(patch_size)
        self.ph, self.pw = ph, pw
        self.norm = nn.LayerNorm(3 * ph * pw)
        self.proj = nn.Linear(3 * ph * pw, dim)
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([nn.Linear(dim, dim), nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))]))
        self.head = nn.Linear(dim, 10)

    def forward(self, img):
        b, c, h, w = img.shape
        x = img.reshape(b, c, h // self.ph, self.ph, w // self.pw, self.pw).permute(0, 2, 4, 3, 5, 1)
        x = self.proj(self.norm(x.reshape(b, (h // self.ph) * (w // self.pw), -1)))
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return self.head(x.mean(dim=1))
${RUN}`;
    const { rows, incomplete, notes } = await sized(source);
    assert.equal(incomplete, false, notes.join('\n'));
    assert.deepEqual(rows.find(([path]) => path === 'norm'), ['norm', [64, 48], 96]);
    assert.deepEqual(rows.find(([path]) => path === 'layers.1.1.2'), ['layers.1.1.2', [64, 64], 8256]);
    assert.deepEqual(rows.at(-1), ['head', [10], 650]);
  });

  it('checks isinstance against a tuple of built-in types, a bool counting as an int', async () => {
    const source = `${HEADER}


def as_list(size):
    return size if isinstance(size, (list, tuple)) else [size, size]


class Net(nn.Module):
    def __init__(self, size=8, flag=True):
        super().__init__()
        h, w = as_list(size)
        self.fc = nn.Linear(3 * h * w, 10 if isinstance(flag, int) and not isinstance(flag, str) else 1)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(x, 8).flatten(1))
${RUN}`;
    const { rows } = await sized(source);
    assert.deepEqual(rows[0], ['fc', [10], 1930]);
  });
});
