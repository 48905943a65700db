"""Sampled by `python3 -m harness collect`: configuration transformer-d60869dab7ef (encoder).

Set-up: {"batchSize": 5, "family": "transformer", "optimizer": "adamw", "precision": "bf16-mixed"}
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_SIZE = 5
VOCAB_SIZE = 94
SEQ_LEN = 8


class EncoderClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB_SIZE, 18)
        self.pos = nn.Embedding(SEQ_LEN, 18)
        layer = nn.TransformerEncoderLayer(18, 2, 36, 0.032, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(18, 4)

    def forward(self, tokens):
        positions = torch.arange(tokens.size(1), device=tokens.device)
        x = self.embed(tokens) + self.pos(positions)
        x = self.encoder(x)
        return self.head(x.mean(dim=1))


model = EncoderClassifier()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.001)
    x = torch.randint(0, VOCAB_SIZE, (BATCH_SIZE, 8), device=device)
    y = torch.randint(0, 4, (BATCH_SIZE,), device=device)
    for step in range(100):
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            output = model(x)
            loss = F.cross_entropy(output, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
