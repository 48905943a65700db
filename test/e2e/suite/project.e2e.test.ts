// A project of several files in a real VS Code (issue 18): the model's class lives in a package of
// the project, the vocabulary size comes from the data. Runs after extension.e2e.test.ts, in the
// same copy of test/fixtures/workspace; the project is written into that copy, so no fixture changes.
import * as assert from 'assert';
import * as vscode from 'vscode';
import { hoverMarkdown, poll, sleep } from './waiting';

const SECTION = 'gpuEstimator';

const MODEL_SOURCE = `import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp=200, nhid=200, nlayers=2):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, x):
        out, _ = self.rnn(self.encoder(x))
        return self.decoder(out)
`;

const SCRIPT_SOURCE = `import torch
import torch.nn as nn

import data
from lm import RNNModel

corpus = data.Corpus('./data/wikitext-2')
ntokens = len(corpus.dictionary)
batch_size = 20
model = RNNModel(ntokens, 200, 200, 2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
for step in range(100):
    x = torch.randint(0, ntokens, (35, batch_size))
    optimizer.zero_grad()
    out = model(x)
    loss = criterion(out.view(-1, ntokens), x.view(-1))
    loss.backward()
    optimizer.step()
`;

/** Parameters of RNNModel(ntoken, 200, 200, 2): embedding, two LSTM layers, decoder (with or without its bias). */
function rnnParams(ntoken: number, decoderBias = true): number {
  const lstm = 2 * (4 * 200 * (200 + 200) + 2 * 4 * 200);
  return ntoken * 200 + lstm + 200 * ntoken + (decoderBias ? ntoken : 0);
}

interface Estimate {
  models: Array<{ name: string; params: number; assumptions: Array<{ name: string; key?: string; value: string; origin: string }> }>;
}

describe('GPU Estimator on a project of several files, in a real VS Code', () => {
  let folder: vscode.Uri;
  let script: vscode.Uri;
  let modelFile: vscode.Uri;
  const estimate = () => vscode.commands.executeCommand<Estimate | undefined>('gpuEstimator.estimateMemory', script, { model: 'model' });
  const params = async () => (await estimate())?.models[0]?.params;

  before(async () => {
    const workspace = vscode.workspace.workspaceFolders?.[0];
    assert.ok(workspace, 'a copy of test/fixtures/workspace should be open');
    folder = vscode.Uri.joinPath(workspace.uri, 'word_lm');
    script = vscode.Uri.joinPath(folder, 'train_lm.py');
    modelFile = vscode.Uri.joinPath(folder, 'lm', 'model.py');
    const write = (uri: vscode.Uri, text: string) => vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(text));
    await write(vscode.Uri.joinPath(folder, 'pyproject.toml'), '[project]\nname = "word-lm"\n');
    await write(vscode.Uri.joinPath(folder, 'lm', '__init__.py'), 'from .model import RNNModel\n');
    await write(modelFile, MODEL_SOURCE);
    await write(script, SCRIPT_SOURCE);
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(script));
  });

  after(async () => {
    await vscode.workspace.getConfiguration(SECTION, script).update('assume', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it('finds the model whose class is in the project package, assumes the vocabulary with its origin, and the hover links into the class file', async () => {
    const result = await poll(estimate, (r) => r?.models[0]?.params === rnnParams(50257), 20000);
    assert.strictEqual(result?.models[0]?.params, rnnParams(50257), JSON.stringify(result?.models[0]));
    const vocabulary = result.models[0].assumptions.find((a) => a.name === 'dataDerived');
    assert.ok(vocabulary, JSON.stringify(result.models[0].assumptions));
    assert.strictEqual(vocabulary.key, 'ntokens');
    assert.match(vocabulary.origin, /len\(corpus\.dictionary\)/);

    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', script, new vscode.Position(9, 2));
    const markdown = hoverMarkdown(hovers);
    assert.ok(markdown.includes(`](${modelFile.toString()}#L4)`), `the hover should link to lm/model.py line 4:\n${markdown}`);
    assert.match(markdown, /vocabulary size/);
  });

  it('offers a quick fix on the line the vocabulary is read, which pins it in the workspace settings; a changed setting takes effect at once', async () => {
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', script, new vscode.Range(7, 0, 7, 0));
    const pin = (actions ?? []).find((a) => a.title.startsWith('Pin the vocabulary size (ntokens, assumed 50257)'));
    assert.ok(pin?.command, `actions: ${JSON.stringify((actions ?? []).map((a) => a.title))}`);
    const none = await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', script, new vscode.Range(8, 0, 8, 0));
    assert.ok(!(none ?? []).some((a) => a.title.startsWith('Pin ')), 'no pin on `batch_size = 20`');

    // The command asks for the value, the assumed one filled in; accepting it pins that value.
    const pinned = Promise.resolve(vscode.commands.executeCommand(pin.command.command, ...((pin.command.arguments ?? []) as unknown[])));
    await sleep(1500);
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    await pinned;
    const config = () => vscode.workspace.getConfiguration(SECTION, script);
    assert.deepStrictEqual(config().inspect('assume')?.workspaceValue, { ntokens: 50257 });
    const userSet = (r: Estimate | undefined) => r?.models[0]?.assumptions.find((a) => a.key === 'ntokens' && /set by the user/.test(a.origin));
    const settled = await poll(estimate, (r) => userSet(r) !== undefined, 10000);
    assert.ok(userSet(settled), `the vocabulary is the user's now: ${JSON.stringify(settled?.models[0]?.assumptions)}`);
    assert.strictEqual(userSet(settled)?.value, '50257');
    assert.strictEqual(settled?.models[0]?.params, rnnParams(50257));

    await config().update('assume', { ntokens: 1000 }, vscode.ConfigurationTarget.Workspace);
    assert.strictEqual(await poll(params, (p) => p === rnnParams(1000), 10000), rnnParams(1000), 'the new value is used without a reload');
  });

  it('re-estimates the script when the imported model file is edited, before it is saved', async () => {
    const before = await poll(params, (p) => p === rnnParams(1000), 10000);
    assert.strictEqual(before, rnnParams(1000));
    const document = await vscode.workspace.openTextDocument(modelFile);
    const line = document.getText().split('\n').findIndex((text) => text.includes('nn.Linear(nhid, ntoken)'));
    const edit = new vscode.WorkspaceEdit();
    edit.replace(modelFile, document.lineAt(line).range, '        self.decoder = nn.Linear(nhid, ntoken, bias=False)');
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(document.isDirty, 'the edit is not saved');
    assert.strictEqual(await poll(params, (p) => p === rnnParams(1000, false), 10000), rnnParams(1000, false));
  });
});
