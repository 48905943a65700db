"""Sampled by `python3 -m harness collect`: configuration transformer-25605af62393 (gpt).

Set-up: {"batchSize": 9, "family": "transformer", "optimizer": "adam", "precision": "bf16-mixed"}
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_SIZE = 9
VOCAB_SIZE = 94
SEQ_LEN = 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(18)
        self.attn = nn.MultiheadAttention(18, 2, dropout=0.032, batch_first=True)
        self.ln2 = nn.LayerNorm(18)
        self.mlp = nn.Sequential(
            nn.Linear(18, 36),
            nn.GELU(),
            nn.Linear(36, 18),
            nn.Dropout(0.032),
        )
        self.register_buffer("mask", torch.triu(torch.ones(SEQ_LEN, SEQ_LEN, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, attn_mask=self.mask, need_weights=False)
        x = x + attended
        x = x + self.mlp(self.ln2(x))
        return x


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB_SIZE, 18)
        self.pos = nn.Embedding(SEQ_LEN, 18)
        self.drop = nn.Dropout(0.032)
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.ln_f = nn.LayerNorm(18)
        self.head = nn.Linear(18, VOCAB_SIZE, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        positions = torch.arange(idx.size(1), device=idx.device)
        x = self.drop(self.tok(idx) + self.pos(positions))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


model = GPT()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    x = torch.randint(0, VOCAB_SIZE, (BATCH_SIZE, 8), device=device)
    y = torch.randint(0, VOCAB_SIZE, (BATCH_SIZE, 8), device=device)
    for step in range(100):
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            output = model(x)
            loss = F.cross_entropy(output.view(-1, output.size(-1)), y.view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
