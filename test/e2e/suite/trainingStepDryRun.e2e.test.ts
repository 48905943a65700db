// "Dry-run on CPU" in a real VS Code (issue 19): the script's own training step, run with the
// Python the settings name (Debian's python3-torch, installed by test-prerequisites), beside the
// static estimate in the hover; a Python that is not there is said plainly.
import * as assert from 'assert';
import * as vscode from 'vscode';
import { hoverMarkdown } from './waiting';

interface DryRunResult {
  ok: boolean;
  error?: string;
  figure?: { predictedMiB: number; peakReservedMiB: number; peakAllocatedMiB: number; peakPhase: string; steps: number; outOfMemory: boolean; breakdown: { contextMiB: number } };
  caveats?: string[];
}

const SCRIPT = `import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
data = TensorDataset(torch.randn(1000, 512), torch.randint(0, 10, (1000,)))
loader = DataLoader(data, batch_size=128, shuffle=True)
model = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 10)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(10):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
`;

describe('Dry-run on CPU in a real VS Code', () => {
  let script: vscode.Uri;
  const config = () => vscode.workspace.getConfiguration('gpuEstimator');

  before(async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'a copy of test/fixtures/workspace should be open');
    script = vscode.Uri.joinPath(folder.uri, 'dry_run_mlp.py');
    await vscode.workspace.fs.writeFile(script, new TextEncoder().encode(SCRIPT));
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(script));
    // Opening a Python file activates the extension (onLanguage:python), asynchronously.
    const extension = vscode.extensions.getExtension('gpu-estimator.gpu-estimator');
    for (let waited = 0; !extension?.isActive && waited < 30000; waited += 200) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok(extension?.isActive, 'the extension is active');
  });

  afterEach(async () => {
    await config().update('dryRun.python', undefined, vscode.ConfigurationTarget.Global);
    await config().update('gpu', undefined, vscode.ConfigurationTarget.Global);
  });

  it('runs the training step with the configured Python and shows the figure beside the static estimate in the hover', async () => {
    assert.ok(vscode.workspace.isTrusted, 'the e2e workspace is trusted');
    await config().update('dryRun.python', '/usr/bin/python3', vscode.ConfigurationTarget.Global);
    const result = await vscode.commands.executeCommand<DryRunResult | undefined>('gpuEstimator.dryRun', script);
    assert.ok(result?.ok, `dry run: ${JSON.stringify(result)}`);
    const figure = result.figure!;
    assert.strictEqual(figure.steps, 3);
    // Weights, gradients and Adam's two moments of 512*2048 + 2048 + 2048*10 + 10 parameters are live at the peak.
    const params = 512 * 2048 + 2048 + 2048 * 10 + 10;
    assert.ok(figure.peakAllocatedMiB >= (4 * 4 * params) / 2 ** 20, JSON.stringify(figure));
    assert.strictEqual(figure.predictedMiB, Math.round((figure.peakReservedMiB + figure.breakdown.contextMiB) * 10) / 10);

    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', script, new vscode.Position(7, 2));
    const markdown = hoverMarkdown(hovers);
    assert.match(markdown, /Dry run on CPU: [\d.]+ (MiB|GiB)/, markdown);
    assert.match(markdown, /static estimate [\d.]+ (MiB|GiB), dry run [+-]\d+%/, markdown);
  });

  it("replays the step on the chosen GPU: tensors beyond a T4's memory are out of memory, in the result and the hover", async () => {
    // Two 40000 x 40000 layers: 12.8 GB of fp32 weights, their gradients and Adam's moments, on meta tensors (no RAM).
    const large = vscode.Uri.joinPath(script, '..', 'dry_run_large.py');
    await vscode.workspace.fs.writeFile(large, new TextEncoder().encode(SCRIPT.replace('nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 10)', 'nn.Linear(512, 40000), nn.ReLU(), nn.Linear(40000, 40000), nn.ReLU(), nn.Linear(40000, 40000), nn.ReLU(), nn.Linear(40000, 10)')));
    await config().update('dryRun.python', '/usr/bin/python3', vscode.ConfigurationTarget.Global);
    await config().update('gpu', 't4-16gb', vscode.ConfigurationTarget.Global);
    const result = await vscode.commands.executeCommand<DryRunResult | undefined>('gpuEstimator.dryRun', large);
    assert.ok(result?.ok, `dry run: ${JSON.stringify(result)?.slice(0, 500)}`);
    assert.strictEqual(result.figure!.outOfMemory, true, JSON.stringify(result.figure));
    assert.match((result.caveats ?? []).join(' '), /^Out of memory: the step's tensors alone do not fit in the GPU's 15\.0 GiB/);
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', large, new vscode.Position(7, 2));
    assert.match(hoverMarkdown(hovers), /Out of memory: the step's tensors alone do not fit/);
  });

  it('says plainly when the Python is not there, and keeps the hover safe', async () => {
    await config().update('dryRun.python', '/nonexistent/python3', vscode.ConfigurationTarget.Global);
    const result = await vscode.commands.executeCommand<DryRunResult | undefined>('gpuEstimator.dryRun', script);
    assert.strictEqual(result?.ok, false);
    assert.match(result.error ?? '', /no Python at \/nonexistent\/python3/);
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', script, new vscode.Position(7, 2));
    const markdown = hoverMarkdown(hovers);
    assert.match(markdown, /Dry run on CPU: not done: no Python at/, markdown);
    assert.match(markdown, /Estimated peak GPU memory/, 'the static estimate is still shown');
  });
});
