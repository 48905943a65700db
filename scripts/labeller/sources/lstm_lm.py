"""An LSTM language model as the AWD-LSTM / PyTorch-example family writes one: embedding,
multi-layer nn.LSTM, dropout, a decoder optionally tied to the embedding; batch-first blocks of
token ids, truncated backpropagation through time with the hidden state carried over, Adam.
A labeller source (scripts/labeller): its label is the CPU dry run's figure."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--ntokens", type=int, default=33278)
parser.add_argument("--emsize", type=int, default=650)
parser.add_argument("--nhid", type=int, default=650)
parser.add_argument("--nlayers", type=int, default=2)
parser.add_argument("--bptt", type=int, default=35)
parser.add_argument("--batch-size", type=int, default=20)
parser.add_argument("--dropout", type=float, default=0.5)
parser.add_argument("--tied", action="store_true")
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class LSTMLanguageModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout, tie_weights):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.nlayers = nlayers
        self.nhid = nhid

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(tokens)), hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


model = LSTMLanguageModel(args.ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

stream = torch.randint(0, args.ntokens, (200, args.bptt + 1))
loader = DataLoader(TensorDataset(stream[:, :-1], stream[:, 1:]), batch_size=args.batch_size, drop_last=True)

for epoch in range(args.epochs):
    model.train()
    hidden = model.init_hidden(args.batch_size)
    for data, targets in loader:
        data, targets = data.to(device), targets.to(device)
        hidden = tuple(h.detach() for h in hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, args.ntokens), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
