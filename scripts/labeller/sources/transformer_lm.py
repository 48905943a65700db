"""A language model on torch.nn.TransformerEncoder, as the PyTorch word-language-model example
builds one: token embedding scaled by sqrt(d_model), sinusoidal positions in a buffer, a causal
mask, a linear decoder; batch-first token blocks, SGD with gradient clipping. A labeller source
(scripts/labeller): its label is the CPU dry run's figure."""
import argparse
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--ntokens", type=int, default=33278)
parser.add_argument("--emsize", type=int, default=512)
parser.add_argument("--nhead", type=int, default=8)
parser.add_argument("--nhid", type=int, default=2048)
parser.add_argument("--nlayers", type=int, default=6)
parser.add_argument("--bptt", type=int, default=128)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--dropout", type=float, default=0.2)
parser.add_argument("--lr", type=float, default=5.0)
parser.add_argument("--epochs", type=int, default=3)
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return self.dropout(x + self.pe[:, : x.size(1)])


class TransformerModel(nn.Module):
    def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
        super().__init__()
        self.embedding = nn.Embedding(ntoken, d_model)
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout, batch_first=True)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers)
        self.decoder = nn.Linear(d_model, ntoken)
        self.d_model = d_model

    def forward(self, src, src_mask):
        src = self.pos_encoder(self.embedding(src) * math.sqrt(self.d_model))
        return self.decoder(self.transformer_encoder(src, src_mask))


model = TransformerModel(args.ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

stream = torch.randint(0, args.ntokens, (400, args.bptt + 1))
loader = DataLoader(TensorDataset(stream[:, :-1], stream[:, 1:]), batch_size=args.batch_size, shuffle=False, drop_last=True)
mask = torch.triu(torch.full((args.bptt, args.bptt), float("-inf")), diagonal=1).to(device)

for epoch in range(args.epochs):
    model.train()
    for data, targets in loader:
        data, targets = data.to(device), targets.to(device)
        output = model(data, mask)
        loss = criterion(output.view(-1, args.ntokens), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
