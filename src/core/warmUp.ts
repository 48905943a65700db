/**
 * What activation does in the background so that the first hover is fast: load the parser, open
 * the ensembles' sessions, and estimate a small built-in script once. That last step matters as
 * much as the loading: the first estimate of a process runs the analyzer, the layer-table builder
 * and the learned step through V8's interpreter, about three times slower than once they are
 * compiled, so a throwaway estimate of a script that exercises the same paths (classes with
 * `forward`, Sequential stacks, convolutions, an MLP, argparse, a DataLoader, an optimizer and a
 * training loop) takes that cost before the user's first hover does.
 */
import type { EstimationPipeline } from './estimate/pipeline';
import { defaultGpuProfile } from './gpus/gpuProfiles';

const WARM_UP_FILE = 'gpu-estimator-warm-up.py';
/**
 * Each round estimates the script from scratch. V8 optimises a function after
 * it has run hot for a while, and one round of a 70-line script is not that; a few are
 * (`npm run bench`, first hover after warm-up: see README.md). Each round is ~10-40 ms of work.
 */
const WARM_UP_ROUNDS = 3;

/** A training script as people write them: one CNN, one MLP, the set-up the analyzer reads. */
export const WARM_UP_SCRIPT = `import argparse
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Block(nn.Module):
    def __init__(self, channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class Net(nn.Module):
    def __init__(self, num_classes=10, width=32, depth=2):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(inplace=True))
        self.blocks = nn.Sequential(*[Block(width) for _ in range(depth)])
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = torch.flatten(self.pool(x), 1)
        return self.fc(self.dropout(x))


def mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.GELU(), nn.LayerNorm(b)]
    return nn.Sequential(*layers[:-2])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    images = torch.randn(512, 3, 32, 32)
    labels = torch.randint(0, 10, (512,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=args.batch_size, shuffle=True)
    model = Net(num_classes=10).cuda()
    head = mlp([784, 512, 256, 10]).cuda()
    optimizer = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler()
    for epoch in range(3):
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(x), y) + F.cross_entropy(head(x.view(x.size(0), -1)[:, :784]), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


if __name__ == "__main__":
    main()
`;

/** Opens the pipeline's sessions and estimates WARM_UP_SCRIPT `rounds` times with it; returns how many models it found. */
export async function warmUpEstimation(pipeline: EstimationPipeline, rounds = WARM_UP_ROUNDS): Promise<number> {
  await pipeline.openSessions(['mlp', 'cnn']);
  const options = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };
  let models = 0;
  for (let round = 0; round < rounds; round++) {
    const estimate = await pipeline.estimate({ file: WARM_UP_FILE, source: WARM_UP_SCRIPT, options });
    models = estimate.models.length;
  }
  return models;
}
