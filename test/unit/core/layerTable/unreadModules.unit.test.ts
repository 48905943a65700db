import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';

// A graph network as PyTorch Geometric's examples write it, with a classifier head of torch's own.
const GCN = `import torch
import torch.nn.functional as F
from torch_geometric.datasets import Planetoid
from torch_geometric.nn import GCNConv
from transformers import AutoTokenizer

dataset = Planetoid(root="data", name="Cora")
data = dataset[0].cuda()


class GCN(torch.nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.conv1 = GCNConv(dataset.num_node_features, hidden)
        self.conv2 = GCNConv(hidden, hidden)
        self.head = torch.nn.Linear(hidden, 7)
        self.scaler = torch.cuda.amp.GradScaler()
        self.tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")

    def forward(self, data):
        x = F.relu(self.conv1(data.x, data.edge_index))
        return self.head(self.conv2(x, data.edge_index))


model = GCN().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(200):
    optimizer.zero_grad()
    F.cross_entropy(model(data), data.y).backward()
    optimizer.step()
`;

const unreadNotes = async (source: string) => (await estimate(source)).models.flatMap((model) => model.notes.map((note) => note.message)).filter((message) => /does not read/.test(message));

describe('modules of libraries the analysis does not read', () => {
  it('names the attributes that hold them and their library, once per model', async () => {
    assert.deepEqual(await unreadNotes(GCN), [
      'model: conv1 (torch_geometric.nn.GCNConv), conv2 (torch_geometric.nn.GCNConv) are objects of torch_geometric, which the analysis does not read: if they are modules, their parameters and activations are not counted (the estimate is low by them; `--dry-run` runs them).',
    ]);
  });

  it("says nothing of torch's own objects, a tokenizer, or a model of torch layers alone", async () => {
    const plain = GCN.replace(/GCNConv\(dataset\.num_node_features, hidden\)/, 'torch.nn.Linear(1433, hidden)').replace('GCNConv(hidden, hidden)', 'torch.nn.Linear(hidden, hidden)');
    assert.deepEqual(await unreadNotes(plain), []);
  });
});
