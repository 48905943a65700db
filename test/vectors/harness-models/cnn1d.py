"""Sampled by `python3 -m harness collect`: configuration cnn-275d34e4d91a (cnn1d).

Set-up: {"batchSize": 6, "family": "cnn", "optimizer": "rmsprop", "precision": "fp16-mixed"}
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_SIZE = 6


model = nn.Sequential(
    nn.Conv1d(2, 8, 3, padding=1, bias=True),
    nn.ReLU(),
    nn.MaxPool1d(2),
    nn.Conv1d(8, 16, 3, padding=1, bias=True),
    nn.ReLU(),
    nn.MaxPool1d(2),
    nn.Conv1d(16, 32, 3, padding=1, bias=True),
    nn.ReLU(),
    nn.AdaptiveAvgPool1d(1),
    nn.Flatten(),
    nn.Linear(32, 2),
)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(device)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.001)
    scaler = torch.cuda.amp.GradScaler()
    x = torch.randn(BATCH_SIZE, 2, 64, device=device)
    y = torch.randint(0, 2, (BATCH_SIZE,), device=device)
    for step in range(100):
        with torch.autocast(device_type=device, dtype=torch.float16):
            output = model(x)
            loss = F.cross_entropy(output, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
