import * as assert from 'node:assert/strict';
import { estimate, tableOf } from '../../../fixtures';

// Two forwards as research code writes them; parameter counts and output shapes were printed by
// PyTorch 2.4.1 with einops 0.8.0 for the same models (batch 4).
const EINOPS_VIT = `import torch
from torch import nn
from einops import rearrange, repeat
from einops.layers.torch import Rearrange


class Attention(nn.Module):
    def __init__(self, dim, heads=8, dim_head=64):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.norm = nn.LayerNorm(dim)
        self.to_qkv = nn.Linear(dim, inner * 3, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x):
        x = self.norm(x)
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), qkv)
        dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        attn = dots.softmax(dim=-1)
        out = torch.matmul(attn, v)
        out = rearrange(out, 'b h n d -> b n (h d)')
        return self.to_out(out)


class ViT(nn.Module):
    def __init__(self, image_size=224, patch_size=16, dim=384, depth=6, heads=6, num_classes=1000):
        super().__init__()
        patch_dim = 3 * patch_size * patch_size
        num_patches = (image_size // patch_size) ** 2
        self.to_patch_embedding = nn.Sequential(
            Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=patch_size, p2=patch_size),
            nn.LayerNorm(patch_dim),
            nn.Linear(patch_dim, dim),
        )
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.layers = nn.ModuleList([Attention(dim, heads) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, img):
        x = self.to_patch_embedding(img)
        b, n, _ = x.shape
        cls = repeat(self.cls_token, '1 1 d -> b 1 d', b=b)
        x = torch.cat((cls, x), dim=1) + self.pos
        for attn in self.layers:
            x = attn(x) + x
        return self.head(x[:, 0])


model = ViT(image_size=64, patch_size=8, dim=96, depth=2, heads=4, num_classes=10).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(10):
    imgs = torch.randn(16, 3, 64, 64, device='cuda')
    labels = torch.randint(0, 10, (16,), device='cuda')
    loss = nn.functional.cross_entropy(model(imgs), labels)
    loss.backward()
    opt.step()
    opt.zero_grad()
`;

const LLAMA_ROPE = `import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis[: xq.shape[1]].view(1, xq.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, freqs_cis):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        xq, xk, xv = (t.transpose(1, 2) for t in (xq, xk, xv))
        out = F.scaled_dot_product_attention(xq, xk, xv, is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(bsz, seqlen, -1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.attention = Attention(dim, n_heads)
        self.feed_forward = FeedForward(dim, 4 * dim)
        self.attention_norm = RMSNorm(dim)
        self.ffn_norm = RMSNorm(dim)

    def forward(self, x, freqs_cis):
        h = x + self.attention(self.attention_norm(x), freqs_cis)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, vocab_size=32000, dim=512, n_layers=8, n_heads=8, max_seq_len=1024):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList([Block(dim, n_heads) for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab_size, bias=False)
        self.freqs_cis = precompute_freqs_cis(dim // n_heads, max_seq_len * 2)

    def forward(self, tokens):
        _, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        freqs_cis = self.freqs_cis[:seqlen].to(h.device)
        for layer in self.layers:
            h = layer(h, freqs_cis)
        return self.output(self.norm(h))


model = Transformer(vocab_size=1000, dim=64, n_layers=2, n_heads=4, max_seq_len=32).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
for it in range(100):
    x = torch.randint(0, 1000, (4, 32), device="cuda")
    y = torch.randint(0, 1000, (4, 32), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
`;

describe('forward through einops and rotary embeddings', () => {
  it('follows einops.rearrange / repeat, the Rearrange layer and map(lambda ...) over a chunk', async () => {
    const { table, notes, orderFromDeclaration } = await tableOf(EINOPS_VIT);
    assert.equal(orderFromDeclaration, false, notes.map((note) => note.message).join('\n'));
    assert.equal(table.totals.params, 223402);
    assert.deepEqual(table.rows.find((row) => row.type === 'Rearrange')?.outputShape, [64, 192]);
    assert.deepEqual(table.rows.find((row) => row.path === 'layers.1.to_out')?.outputShape, [65, 96]);
    assert.deepEqual(table.rows.at(-1)?.outputShape, [10]);
    assert.equal(table.incomplete, false);
  });

  it('follows LLaMA-style rotary embeddings (torch.polar, view_as_complex, view_as_real) to the logits', async () => {
    const { table, notes, orderFromDeclaration } = await tableOf(LLAMA_ROPE);
    assert.equal(orderFromDeclaration, false, notes.map((note) => note.message).join('\n'));
    assert.equal(table.totals.params, 259392);
    assert.deepEqual(table.rows.find((row) => row.path === 'layers.1.attention.wo')?.outputShape, [32, 64]);
    assert.deepEqual(table.rows.find((row) => row.path === 'output')?.outputShape, [32, 1000]);
    assert.equal(table.incomplete, false);
  });
});

describe('tensors sized by a batch the analysis could not follow', () => {
  // A DCGAN's loop as people write it: the loader's dataset is an ImageFolder, so its batches are
  // not followed; the noise is sized by the real batch's first dimension.
  const GAN = (size: string) => `import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

netG = nn.Sequential(nn.ConvTranspose2d(100, 64, 4, 1, 0), nn.ReLU(), nn.ConvTranspose2d(64, 3, 4, 2, 1), nn.Tanh()).cuda()
opt = torch.optim.Adam(netG.parameters())
loader = DataLoader(datasets.ImageFolder("data", transform=transforms.Compose([transforms.Resize(8), transforms.CenterCrop(8), transforms.ToTensor()])), batch_size=32)
for real, _ in loader:
    real = real.cuda()
    b = ${size}
    noise = torch.randn(b, 100, 1, 1, device="cuda")
    loss = netG(noise).mean()
    loss.backward()
    opt.step()
`;

  for (const size of ['real.size(0)', 'real.shape[0]', 'real.size()[0]']) {
    it(`takes \`torch.randn(b, 100, 1, 1)\` with b = ${size} as a batch of (100, 1, 1), not the loader's images`, async () => {
      const [model] = (await estimate(GAN(size))).models;
      assert.deepEqual(model!.inputShape, [100, 1, 1]);
      assert.match(model!.assumptions.find((a) => a.name === 'inputShape')!.origin, /^the tensors passed in netG\(noise\)/);
      assert.equal(model!.batchSize, 32);
    });
  }

  it('leaves a tensor sized by anything else unknown (the images then stand for the input)', async () => {
    const [model] = (await estimate(GAN('real.size(1)'))).models;
    assert.deepEqual(model!.inputShape, [3, 8, 8]);
    const [other] = (await estimate(GAN('len(real)'))).models;
    assert.deepEqual(other!.inputShape, [3, 8, 8]);
  });
});
