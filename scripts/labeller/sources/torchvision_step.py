"""Training a torchvision model that timm does not have, written the way a user writes one:
segmentation (FCN, DeepLabV3, LR-ASPP: per-pixel cross-entropy on the "out" head, the auxiliary
head's loss added when there is one), video classification (3D ResNets on 16-frame clips) and
the classic image classifiers. `python torchvision_step.py KIND NAME SIZE [--batch-size N]`.
A labeller source (scripts/labeller): its label is the CPU dry run's figure."""
import argparse

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("kind", choices=["segmentation", "video", "classification"])
parser.add_argument("name")
parser.add_argument("size", type=int)
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--num-classes", type=int, default=21)
parser.add_argument("--lr", type=float, default=0.01)
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

if args.kind == "segmentation":
    model = getattr(torchvision.models.segmentation, args.name)(weights=None, weights_backbone=None, num_classes=args.num_classes)
    images = torch.randn(16, 3, args.size, args.size)
    targets = torch.randint(0, args.num_classes, (16, args.size, args.size))
elif args.kind == "video":
    model = getattr(torchvision.models.video, args.name)(weights=None, num_classes=args.num_classes)
    images = torch.randn(16, 3, 16, args.size, args.size)
    targets = torch.randint(0, args.num_classes, (16,))
else:
    model = getattr(torchvision.models, args.name)(weights=None, num_classes=args.num_classes)
    images = torch.randn(16, 3, args.size, args.size)
    targets = torch.randint(0, args.num_classes, (16,))

model = model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(images, targets), batch_size=args.batch_size, shuffle=True)

for epoch in range(2):
    model.train()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        output = model(x)
        if isinstance(output, dict):
            loss = criterion(output["out"], y)
            if "aux" in output:
                loss = loss + 0.5 * criterion(output["aux"], y)
        elif isinstance(output, tuple):
            loss = criterion(output[0], y)
        else:
            loss = criterion(output, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
