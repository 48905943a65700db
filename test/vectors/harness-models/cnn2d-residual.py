"""Sampled by `python3 -m harness collect`: configuration cnn-6d0cfacbade6 (cnn2d-residual).

Set-up: {"batchSize": 6, "family": "cnn", "optimizer": "rmsprop", "precision": "fp16-mixed"}
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_SIZE = 6


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1, bias=False),
    nn.BatchNorm2d(8),
    nn.ReLU(),
    ResidualBlock(8),
    nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1, bias=False),
    nn.BatchNorm2d(16),
    nn.ReLU(),
    ResidualBlock(16),
    nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1, bias=False),
    nn.BatchNorm2d(32),
    nn.ReLU(),
    ResidualBlock(32),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(32, 2),
)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(device)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.001)
    scaler = torch.cuda.amp.GradScaler()
    x = torch.randn(BATCH_SIZE, 3, 16, 16, device=device)
    y = torch.randint(0, 2, (BATCH_SIZE,), device=device)
    for step in range(100):
        with torch.autocast(device_type=device, dtype=torch.float16):
            output = model(x)
            loss = F.cross_entropy(output, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
