"""Sampled by `python3 -m harness collect`: configuration mlp-e194f70e41ce (mlp-residual).

Set-up: {"batchSize": 4, "family": "mlp", "optimizer": "sgd", "precision": "fp32"}
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_SIZE = 4


class ResidualBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        h = self.fc(self.norm(x))
        return x + self.drop(self.act(h))


model = nn.Sequential(
    nn.Flatten(),
    nn.Linear(64, 9),
    nn.ReLU(),
    ResidualBlock(9),
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
