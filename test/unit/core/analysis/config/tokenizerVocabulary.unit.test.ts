import * as assert from 'node:assert/strict';
import { estimate } from '../../../fixtures';
import type { FileEstimate } from '../../../../../src/core/estimate/fileEstimate';

const script = (checkpoint: string, size: string) => `import torch
import torch.nn as nn
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained(${checkpoint})

class Classifier(nn.Module):
    def __init__(self, vocab_size, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.head = nn.Linear(dim, 2)

    def forward(self, ids):
        return self.head(self.embed(ids).mean(1))

model = Classifier(vocab_size=${size})
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ids = torch.randint(0, 100, (4, 16))
loss = model(ids).sum()
loss.backward()
optimizer.step()
`;

const vocabulary = (result: FileEstimate) => result.models[0]?.assumptions.find((a) => (a.name === 'config' || a.name === 'dataDerived') && a.key === 'vocab_size');
const HEAD = 8 * 2 + 2;

describe('the vocabulary of a from_pretrained tokenizer', () => {
  it("is the catalog checkpoint's vocab_size, read from tokenizer.vocab_size or len(tokenizer), with its origin", async () => {
    for (const size of ['tokenizer.vocab_size', 'len(tokenizer)']) {
      const result = await estimate(script('"bert-base-uncased"', size));
      assert.equal(result.models[0]?.params, 30_522 * 8 + HEAD, size);
      const reading = vocabulary(result)!;
      assert.equal(reading.name, 'config');
      assert.equal(reading.value, '30522');
      assert.match(reading.origin, /bert-base-uncased/);
    }
  });

  it('is the named data-derived assumption for a checkpoint the catalog does not know, or one not named by a constant, and the user can pin it', async () => {
    for (const checkpoint of ['"my-org/private-tokenizer"', 'CHECKPOINT']) {
      const result = await estimate(`CHECKPOINT = input()\n${script(checkpoint, 'tokenizer.vocab_size')}`);
      assert.equal(result.models[0]?.params, 50_257 * 8 + HEAD, checkpoint);
      assert.equal(vocabulary(result)?.name, 'dataDerived');
      assert.equal(vocabulary(result)?.what, 'vocabulary size');
    }
    const pinned = await estimate(script('"bert-base-uncased"', 'len(tokenizer)'), { assume: { vocab_size: 1000 } });
    assert.equal(pinned.models[0]?.params, 1000 * 8 + HEAD);
  });
});
