import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';
import { ASSUMED_IMAGE_SIDE, ASSUMED_SEQUENCE_LENGTH } from '../../../../src/core/layerTable/inputCandidates';

// A GPT-like model fed token ids, as people write them; the tests change only where its length comes from.
const GPT = `import torch
import torch.nn as nn
import torch.nn.functional as F


class GPT(nn.Module):
    def __init__(self, vocab_size=32000, block_size=256, d_model=128):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Parameter(torch.zeros(1, block_size, d_model))
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, idx):
        x = self.tok_emb(idx) + self.pos_emb[:, : idx.size(1)]
        return self.head(x + self.mlp(x))
`;

const TRAIN = `
loader = torch.utils.data.DataLoader(torch.load("tokens.pt"), batch_size=16)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
for x, y in loader:
    loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
    loss.backward()
    optimizer.step()
`;

const inputOf = async (source: string, assume: Record<string, number> = {}) => {
  const model = (await estimate(source, { assume })).models[0]!;
  const input = model.assumptions.find((a) => a.name === 'inputShape');
  return { shape: model.inputShape, origin: input?.origin, line: input?.line };
};

describe('input candidates: tokens into a first nn.Embedding', () => {
  it("takes the length the script passes to its own class by name (GPT(block_size=512))", async () => {
    const found = await inputOf(`${GPT}\nmodel = GPT(vocab_size=32000, block_size=512).cuda()\n${TRAIN}`);
    assert.deepEqual(found.shape, [512]);
    assert.equal(found.origin, '512 tokens into nn.Embedding: block_size=512 in GPT(...)');
  });

  it("takes a keyword bound to a module-level constant, not a tokenizer's length for the targets", async () => {
    const source = `${GPT}\nCONTEXT = 384\ntokenizer = None\nlabels = tokenizer(text_target="summary", max_length=64) if tokenizer else None\nmodel = GPT(block_size=CONTEXT)\n${TRAIN}`;
    assert.deepEqual((await inputOf(source)).shape, [384]);
  });

  it("takes an argparse option parsed inside main(), not only a module-level namespace", async () => {
    const source = `${GPT}
import argparse


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--seq_len", type=int, default=200)
    return p.parse_args()


def main():
    args = parse_args()
    model = GPT().cuda()
    loader = torch.utils.data.DataLoader(torch.load("tokens.pt"), batch_size=16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for x, y in loader:
        F.cross_entropy(model(x).flatten(0, 1), y.flatten()).backward()
        optimizer.step()


if __name__ == "__main__":
    main()
`;
    const found = await inputOf(source);
    assert.deepEqual(found.shape, [200]);
    assert.equal(found.origin, '200 tokens into nn.Embedding: --seq-len default');
  });

  it('takes the length the model keeps when the script names none (self.block_size from **config)', async () => {
    const source = `${GPT}\nconfig = {"vocab_size": 1000, "block_size": 64}\nmodel = GPT(**config)\n${TRAIN}`;
    const found = await inputOf(source);
    assert.deepEqual(found.shape, [64]);
    assert.equal(found.origin, '64 tokens into nn.Embedding: self.block_size, the length GPT is built for');
  });

  it("takes Lightning's self.hparams", async () => {
    const source = `import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L


class LitLM(L.LightningModule):
    def __init__(self, vocab_size=1000, max_seq_len=96, d_model=64):
        super().__init__()
        self.save_hyperparameters()
        self.emb = nn.Embedding(vocab_size, d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, idx):
        return self.head(self.emb(idx))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x).flatten(0, 1), y.flatten())

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters())


model = LitLM()
trainer = L.Trainer(max_steps=10)
trainer.fit(model, torch.utils.data.DataLoader(torch.load("t.pt"), batch_size=8))
`;
    const found = await inputOf(source);
    assert.deepEqual(found.shape, [96]);
    assert.equal(found.origin, '96 tokens into nn.Embedding: self.hparams.max_seq_len, the length LitLM is built for');
  });

  it('assumes the dry run\'s length when nothing names one, says so, and takes the user\'s --set seq_len', async () => {
    const source = `import torch
import torch.nn as nn
import torch.nn.functional as F


class TextCNN(nn.Module):
    def __init__(self, vocab_size, dim=64):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim)
        self.conv = nn.Conv1d(dim, 32, 3)
        self.fc = nn.Linear(32, 5)

    def forward(self, x):
        e = self.embedding(x).transpose(1, 2)
        return self.fc(F.relu(self.conv(e)).max(dim=2).values)


model = TextCNN(20000).cuda()
optimizer = torch.optim.Adadelta(model.parameters())
loader = torch.utils.data.DataLoader(torch.load("sst.pt"), batch_size=50)
for tokens, labels in loader:
    F.cross_entropy(model(tokens), labels).backward()
    optimizer.step()
`;
    const assumed = await inputOf(source);
    assert.deepEqual(assumed.shape, [ASSUMED_SEQUENCE_LENGTH]);
    assert.match(assumed.origin ?? '', /^128 tokens into nn\.Embedding, assumed: the script names no sequence length \(pin it with --set seq_len=N\)$/);
    const model = (await estimate(source)).models[0]!;
    assert.ok(!model.notes.some((note) => /input shape unknown/.test(note.message)), 'activations are counted');
    const pinned = await inputOf(source, { seq_len: 60 });
    assert.deepEqual(pinned.shape, [60]);
    assert.equal(pinned.origin, '60 tokens into nn.Embedding: set by the user (seq_len=60)');
    assert.equal(pinned.line, 9, "the embedding's line, as the script names no length");
  });
});

// A small U-Net-like segmentation network trained on tensors loaded from disk, as Pytorch-UNet's users write it.
const SEGMENTER = `import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, n_channels=3, n_classes=2):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(n_channels, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.up = nn.ConvTranspose2d(16, 16, 2, stride=2)
        self.out = nn.Conv2d(16, n_classes, 1)

    def forward(self, x):
        return self.out(self.up(self.down(x)))


model = Net().cuda()
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-5)
loader = torch.utils.data.DataLoader(torch.load("data/tensors.pt"), batch_size=4)
for images, masks in loader:
    F.cross_entropy(model(images.cuda()), masks.cuda()).backward()
    optimizer.step()
`;

describe('input candidates: images into a first nn.Conv2d', () => {
  it("assumes ImageNet's 224 x 224 crop when the script names no size, and says so", async () => {
    const found = await inputOf(SEGMENTER);
    assert.deepEqual(found.shape, [3, ASSUMED_IMAGE_SIDE, ASSUMED_IMAGE_SIDE]);
    assert.equal(found.origin, '224 x 224 images into nn.Conv2d, assumed: the script names no image size (pin it with --set image_size=N)');
    assert.deepEqual((await inputOf(SEGMENTER, { image_size: 96 })).shape, [3, 96, 96]);
  });

  it('takes a side the script names (IMG_SIZE, albumentations height= and width=)', async () => {
    const named = await inputOf(SEGMENTER.replace('model = Net()', 'IMG_SIZE = 320\nmodel = Net()'));
    assert.deepEqual(named.shape, [3, 320, 320]);
    assert.equal(named.origin, '320 x 320 images into nn.Conv2d: constant IMG_SIZE');
    const albumentations = SEGMENTER.replace('import torch\n', 'import albumentations as A\nimport torch\n').replace('model = Net()', 'train_tf = A.Compose([A.Resize(height=256, width=256), A.HorizontalFlip()])\nmodel = Net()');
    assert.deepEqual((await inputOf(albumentations)).shape, [3, 256, 256]);
  });

  it("assumes nothing where the forward does not take 224 x 224 (eight halvings), or the script's own tensor does not fit", async () => {
    const deep = SEGMENTER.replace('self.up = nn.ConvTranspose2d(16, 16, 2, stride=2)', 'self.up = nn.Sequential(*[nn.MaxPool2d(2) for _ in range(7)], *[nn.ConvTranspose2d(16, 16, 2, stride=2) for _ in range(8)])');
    const model = (await estimate(deep)).models[0]!;
    assert.equal(model.inputShape, null);
    assert.ok(model.notes.some((note) => /input shape unknown/.test(note.message)));
    const mismatch = SEGMENTER.replace('model = Net().cuda()', 'model = Net().cuda()\nx = torch.randn(4, 1, 64, 64)\nmodel(x)');
    assert.deepEqual((await inputOf(mismatch)).shape, [1, 64, 64]);
  });
});

