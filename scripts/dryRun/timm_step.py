"""The training script behind the dry run's evaluation on the published timm runs: a timm model
trained as GPUMemNet's timm runs were (fp32, SGD, the model's default input size), written the
way a user writes one. `python timm_step.py MODEL C,H,W`; its batch size comes from the dry run."""
import sys

import torch
import torch.nn as nn
import timm
from torch.utils.data import DataLoader, TensorDataset

name = sys.argv[1]
channels, height, width = (int(v) for v in sys.argv[2].split(","))
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = timm.create_model(name, pretrained=False).to(device)
model.train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
data = TensorDataset(torch.randn(64, channels, height, width), torch.randint(0, max(1, model.num_classes), (64,)))
loader = DataLoader(data, batch_size=32, shuffle=True)

for epoch in range(3):
    for images, targets in loader:
        images, targets = images.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = criterion(model(images), targets)
        loss.backward()
        optimizer.step()
