"""Sampled by `python3 -m harness collect`: configuration mlp-053ae5535a42 (mlp).

Set-up: {"batchSize": 4, "family": "mlp", "optimizer": "sgd", "precision": "fp32"}
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_SIZE = 4


model = nn.Sequential(
    nn.Flatten(),
    nn.Linear(64, 9),
    nn.BatchNorm1d(9),
    nn.ReLU(),
    nn.Dropout(0.2),
    nn.Linear(9, 2),
)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(BATCH_SIZE, 1, 8, 8, device=device)
    y = torch.randint(0, 2, (BATCH_SIZE,), device=device)
    for step in range(100):
        output = model(x)
        loss = F.cross_entropy(output, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
