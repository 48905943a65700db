"""A residual-free deep MLP for tabular regression, defined as an nn.Module, trained with AdamW."""
import torch
from torch import nn

N_FEATURES = 512
BATCH_SIZE = 4096


class TabularRegressor(nn.Module):
    def __init__(self, n_features=N_FEATURES, width=2048, dropout=0.1):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_features, width),
            nn.LayerNorm(width),
            nn.SiLU(),
            nn.Dropout(dropout),
            nn.Linear(width, width),
            nn.LayerNorm(width),
            nn.SiLU(),
            nn.Dropout(dropout),
            nn.Linear(width, width // 2),
            nn.SiLU(),
        )
        self.head = nn.Linear(width // 2, 1)

    def forward(self, x):
        return self.head(self.net(x)).squeeze(-1)


model = TabularRegressor(width=4096).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(1000):
    x = torch.randn(BATCH_SIZE, N_FEATURES, device="cuda")
    y = torch.randn(BATCH_SIZE, device="cuda")
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
