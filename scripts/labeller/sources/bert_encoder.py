"""A BERT-like encoder pre-trained with masked-language modelling, in plain torch (no
transformers library): word, position and segment embeddings, post-LayerNorm blocks with their
own multi-head attention, and the MLM head with its transform and a decoder tied to the word
embeddings; Adam. A labeller source (scripts/labeller): its label is the CPU dry run's figure."""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--layers", type=int, default=12)
parser.add_argument("--heads", type=int, default=12)
parser.add_argument("--hidden", type=int, default=768)
parser.add_argument("--seq-len", type=int, default=128)
parser.add_argument("--vocab-size", type=int, default=30522)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--lr", type=float, default=1e-4)
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads, dropout=0.1):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(dropout)
        self.dense = nn.Linear(hidden, hidden)
        self.out_dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, attention_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + attention_mask
        probs = self.dropout(F.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(x.shape)
        return self.norm(x + self.out_dropout(self.dense(context)))


class EncoderLayer(nn.Module):
    def __init__(self, hidden, heads, dropout=0.1):
        super().__init__()
        self.attention = SelfAttention(hidden, heads, dropout)
        self.intermediate = nn.Linear(hidden, 4 * hidden)
        self.output = nn.Linear(4 * hidden, hidden)
        self.dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, attention_mask):
        x = self.attention(x, attention_mask)
        return self.norm(x + self.dropout(self.output(F.gelu(self.intermediate(x)))))


class BertForMaskedLM(nn.Module):
    def __init__(self, vocab_size, hidden, layers, heads, max_positions=512):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(2, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.embedding_dropout = nn.Dropout(0.1)
        self.layers = nn.ModuleList([EncoderLayer(hidden, heads) for _ in range(layers)])
        self.transform = nn.Linear(hidden, hidden)
        self.transform_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.decoder = nn.Linear(hidden, vocab_size)
        self.decoder.weight = self.word_embeddings.weight

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.size(1), device=input_ids.device).unsqueeze(0)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions) + self.token_type_embeddings(torch.zeros_like(input_ids))
        x = self.embedding_dropout(self.embedding_norm(x))
        extended = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, extended)
        return self.decoder(self.transform_norm(F.gelu(self.transform(x))))


model = BertForMaskedLM(args.vocab_size, args.hidden, args.layers, args.heads).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
criterion = nn.CrossEntropyLoss(ignore_index=-100)

input_ids = torch.randint(0, args.vocab_size, (256, args.seq_len))
attention_mask = torch.ones(256, args.seq_len, dtype=torch.long)
labels = torch.randint(0, args.vocab_size, (256, args.seq_len))
loader = DataLoader(TensorDataset(input_ids, attention_mask, labels), batch_size=args.batch_size, shuffle=True)

for epoch in range(args.epochs):
    model.train()
    for ids, mask, target in loader:
        ids, mask, target = ids.to(device), mask.to(device), target.to(device)
        logits = model(ids, mask)
        loss = criterion(logits.view(-1, args.vocab_size), target.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
