import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';

const MODEL = `import os
import argparse
import torch
import torch.nn as nn

model = nn.Sequential(nn.Embedding(100, 16), nn.Linear(16, 100))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
`;

const batchOf = async (source: string) => {
  const model = (await estimate(source)).models[0]!;
  return { size: model.batchSize, origin: model.assumptions.find((a) => a.name === 'batchSize')?.origin };
};

describe('batch size by name', () => {
  it("reads a micro-batch named as launch scripts name it (an environment variable's default)", async () => {
    const found = await batchOf(`${MODEL}micro_batch = int(os.environ.get("MICRO_BATCH", 8))\n`);
    assert.deepEqual(found, { size: 8, origin: 'constant micro_batch' });
  });

  it('prefers the per-device or micro-batch to a plain batch size that may be the global one', async () => {
    assert.equal((await batchOf(`${MODEL}batch_size = 512\nmicro_batch_size = 4\n`)).size, 4);
    const options = `${MODEL}parser = argparse.ArgumentParser()\nparser.add_argument("--batch-size", type=int, default=256)\nparser.add_argument("--per-gpu-batch-size", type=int, default=32)\nargs = parser.parse_args()\n`;
    assert.deepEqual(await batchOf(options), { size: 32, origin: '--per-gpu-batch-size default' });
    assert.equal((await batchOf(`${MODEL}batch_size = 512\n`)).size, 512);
  });
});
