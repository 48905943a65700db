import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';

const WORKER = `import argparse
import torch
import torch.nn as nn
import torch.multiprocessing as mp

class Net(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.fc(x)
`;

describe('torch.multiprocessing.spawn', () => {
  it('follows the worker with the arguments spawn passes after the rank', async () => {
    const source = `${WORKER}
def worker(rank, world_size, args):
    model = Net(args.num_classes).to(rank)
    loader = torch.utils.data.DataLoader(range(1000), batch_size=args.batch_size // world_size)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = model(x.to(rank)).sum()
        loss.backward()
        optimizer.step()

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-classes", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--gpus", type=int, default=4)
    args = parser.parse_args()
    mp.spawn(worker, args=(args.gpus, args), nprocs=args.gpus, join=True)
`;
    const model = (await estimate(source)).models[0]!;
    assert.equal(model.params, 32 * 10 + 10);
    assert.equal(model.batchSize, 64);
  });

  it('splits a global batch by torch.cuda.device_count() as one process on one GPU does', async () => {
    const source = `${WORKER}
parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--classes", type=int, default=7)

def main_worker(gpu, ngpus_per_node, args):
    args.batch_size = int(args.batch_size / ngpus_per_node)
    model = Net(args.classes).cuda(gpu)
    loader = torch.utils.data.DataLoader(range(1000), batch_size=args.batch_size)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()

def main():
    args = parser.parse_args()
    ngpus_per_node = torch.cuda.device_count()
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))

if __name__ == "__main__":
    main()
`;
    const model = (await estimate(source)).models[0]!;
    assert.equal(model.params, 32 * 7 + 7);
    assert.equal(model.batchSize, 256);
  });
});
