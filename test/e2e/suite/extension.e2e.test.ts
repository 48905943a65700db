// Runs inside a real VS Code extension host (see test/e2e/run.sh and electron.ts), with a
// copy of test/fixtures/workspace open as the workspace folder.
import * as assert from 'assert';
import * as vscode from 'vscode';
import { hoverMarkdown, poll, sleep } from './waiting';

const EXTENSION_ID = 'gpu-estimator.gpu-estimator';
const FIXTURE = 'train_mlp.py';
const MODEL_POSITION = new vscode.Position(5, 2);  // inside `model` of `model = nn.Sequential(` (line 6)
// nn.Linear(1024, 4096) + nn.Linear(4096, 4096) + nn.Linear(4096, 10), weights and biases.
const MLP_PARAMS = 1024 * 4096 + 4096 + 4096 * 4096 + 4096 + 4096 * 10 + 10;

/** What `gpuEstimator.estimateMemory` resolves to (only the fields these tests rely on). */
interface EstimateResult {
  file: string;
  gpu: { id: string; memoryMiB: number };
  models: Array<{
    name: string;
    line: number;
    params: number;
    batchSize: number;
    memory: { estimateMiB: number };
    horusMiB: number;
    fits: boolean;
    warnings: unknown[];
  }>;
}

function fixtureUri(name: string): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'a copy of test/fixtures/workspace should be open as the workspace folder');
  return vscode.Uri.joinPath(folder.uri, name);
}

/** The command as CodeLens runs it: naming the model, so it does not ask for the GPU. */
function estimate(uri: vscode.Uri): Thenable<EstimateResult | undefined> {
  return vscode.commands.executeCommand<EstimateResult | undefined>('gpuEstimator.estimateMemory', uri, { model: 'model' });
}

describe('GPU Estimator in a real VS Code', () => {
  let uri: vscode.Uri;

  before(async () => {
    uri = fixtureUri(FIXTURE);
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
  });

  it('is installed and activates when a Python file opens', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} should be loaded from extensionDevelopmentPath`);
    // onLanguage:python activation is asynchronous; the test does not call activate() itself.
    const active = await poll(() => extension.isActive, (isActive) => isActive, 30000);
    assert.ok(active, `${EXTENSION_ID} did not activate within 30 s of opening ${FIXTURE}`);
    // isActive is also true after activate() threw; activate() rethrows that error.
    await extension.activate();
  });

  it('shows the estimate when hovering over `model`', async () => {
    const markdown = await poll(
      async () => hoverMarkdown(await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, MODEL_POSITION)),
      (text) => text.includes('Estimated peak GPU memory'),
      20000,
    );
    assert.ok(markdown.includes('Estimated peak GPU memory'), `hover markdown was:\n${markdown || '(no hover)'}`);
  });

  it('shows the estimate when hovering inside the training loop, every line it names linking into the file', async () => {
    const position = new vscode.Position(21, 11);  // `backward` of `loss.backward()` (line 22), in the loop on lines 17-23
    const markdown = await poll(
      async () => hoverMarkdown(await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, position)),
      (text) => text.includes('Estimated peak GPU memory'),
      20000,
    );
    const link = (line: number) => `(${uri.toString()}#L${line})`;
    for (const expected of ['Estimated peak GPU memory', 'Horus formula: ', 'fits A100 40GB', 'largest batch that fits: ', 'DRAMA ', `\`model\` ([line 6]${link(6)})`, `[line 4]${link(4)}`, `- training loop: [lines 17-23]${link(17)}`]) {
      assert.ok(markdown.includes(expected), `hover lacks ${JSON.stringify(expected)}:\n${markdown}`);
    }
    assert.match(markdown, /Utilization: SMACT (low|medium|high|not available), SMOCC (low|medium|high|not available), DRAMA (low|medium|high|not available)/);
    const outside = hoverMarkdown(await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, new vscode.Position(14, 2)));
    assert.ok(!outside.includes('Estimated peak GPU memory'), `no hover on \`loss_fn = ...\` (line 15), outside the loop:\n${outside}`);
  });

  it('run as from the palette (no options), asks for the GPU, the configured one first; dismissing cancels', async () => {
    await estimate(uri);  // estimated and cached: the pick opens at once
    const run = () => {
      const state: { settled: boolean; result?: Promise<EstimateResult | undefined> } = { settled: false };
      state.result = Promise.resolve(vscode.commands.executeCommand<EstimateResult | undefined>('gpuEstimator.estimateMemory', uri)).finally(() => (state.settled = true));
      return state;
    };
    const first = run();
    await sleep(1500);
    assert.strictEqual(first.settled, false, 'waits for the GPU pick');
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    assert.strictEqual((await first.result)?.gpu.id, 'a100-40gb', 'the configured GPU is the first item');

    const second = run();
    await sleep(1500);
    await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    const other = await second.result;
    assert.ok(other && other.gpu.id !== 'a100-40gb', `the second item is another GPU: ${JSON.stringify(other?.gpu)}`);
    assert.strictEqual(other.models[0]?.name, 'model');

    const dismissed = run();
    await sleep(1500);
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    assert.strictEqual(await dismissed.result, undefined);
  });

  it('shows a CodeLens above the model with its estimate, Horus and the report command', async () => {
    const lenses = await poll(
      async () => (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? [],
      (found) => found.some((l) => l.command?.command === 'gpuEstimator.estimateMemory'),
      20000,
    );
    const ours = lenses.filter((l) => l.command?.command === 'gpuEstimator.estimateMemory');
    assert.strictEqual(ours.length, 1, `lenses: ${JSON.stringify(lenses.map((l) => l.command?.title))}`);
    const lens = ours[0]!;
    assert.strictEqual(lens.range.start.line, 5, 'on the line of `model = nn.Sequential(`');
    assert.match(lens.command!.title, /^~\d+(\.\d+)? (GiB|MiB) on A100 40GB \(.+\) \| Horus \d+(\.\d+)? (GiB|MiB)/);
    assert.strictEqual(String(lens.command!.arguments?.[0]), uri.toString());
    assert.deepStrictEqual(lens.command!.arguments?.[1], { model: 'model' }, 'the report opens for this model');

    const config = vscode.workspace.getConfiguration('gpuEstimator');
    await config.update('codeLens.enabled', false, vscode.ConfigurationTarget.Global);
    try {
      const off = await poll(
        async () => ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? []).filter((l) => l.command?.command === 'gpuEstimator.estimateMemory'),
        (found) => found.length === 0,
        10000,
      );
      assert.strictEqual(off.length, 0, 'gpuEstimator.codeLens.enabled = false hides the CodeLens without a reload');
    } finally {
      await config.update('codeLens.enabled', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('with gpuEstimator.diagnostics.enabled, reports OOM risk on the batch-size line, and clears it when turned off', async () => {
    const config = vscode.workspace.getConfiguration('gpuEstimator');
    const document = await vscode.workspace.openTextDocument(uri);
    const ours = () => vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'GPU Estimator');
    const setBatch = (text: string) => {
      const change = new vscode.WorkspaceEdit();
      change.replace(uri, document.lineAt(3).range, text);
      return vscode.workspace.applyEdit(change);
    };
    assert.strictEqual(ours().length, 0, 'off by default');
    await config.update('diagnostics.enabled', true, vscode.ConfigurationTarget.Global);
    try {
      assert.ok(await setBatch('batch_size = 2000000'));
      const found = await poll(ours, (d) => d.length > 0, 15000);
      assert.strictEqual(found.length, 1, JSON.stringify(found));
      assert.strictEqual(found[0]!.severity, vscode.DiagnosticSeverity.Error);
      assert.strictEqual(found[0]!.range.start.line, 3);
      assert.match(found[0]!.message, /batch size 2000000: does not fit A100 40GB/);
      assert.ok(await setBatch('batch_size = 256'));
      assert.strictEqual((await poll(ours, (d) => d.length === 0, 15000)).length, 0, 'gone once the batch fits again');
      assert.ok(await setBatch('batch_size = 2000000'));
      assert.strictEqual((await poll(ours, (d) => d.length > 0, 15000)).length, 1);
      await config.update('diagnostics.enabled', undefined, vscode.ConfigurationTarget.Global);
      assert.strictEqual((await poll(ours, (d) => d.length === 0, 10000)).length, 0, 'cleared when the setting is turned off');
    } finally {
      await config.update('diagnostics.enabled', undefined, vscode.ConfigurationTarget.Global);
      if (document.lineAt(3).text !== 'batch_size = 256') assert.ok(await setBatch('batch_size = 256'));
    }
  });

  it('estimateMemory returns the estimate for the file and the configured GPU', async () => {
    const result = await estimate(uri);
    assert.ok(result, 'gpuEstimator.estimateMemory resolved to nothing');
    assert.strictEqual(typeof result.file, 'string');
    assert.ok(result.file.endsWith(FIXTURE), `file: ${result.file}`);
    assert.strictEqual(result.gpu.id, 'a100-40gb');
    assert.strictEqual(result.gpu.memoryMiB, 40960);
    assert.deepStrictEqual(result.models.map((m) => m.name), ['model']);

    const model = result.models[0]!;
    assert.strictEqual(model.line, 6);
    assert.strictEqual(model.params, MLP_PARAMS);
    assert.strictEqual(model.batchSize, 256);
    assert.strictEqual(typeof model.memory.estimateMiB, 'number');
    assert.ok(model.memory.estimateMiB > 0, `memory.estimateMiB: ${model.memory.estimateMiB}`);
    assert.strictEqual(typeof model.horusMiB, 'number');
    assert.strictEqual(model.fits, true);
    assert.ok(Array.isArray(model.warnings), `warnings: ${JSON.stringify(model.warnings)}`);
  });

  it('follows the gpuEstimator.gpu setting without a reload', async () => {
    const config = vscode.workspace.getConfiguration('gpuEstimator');
    await config.update('gpu', 't4-16gb', vscode.ConfigurationTarget.Global);
    try {
      // The configuration change reaches the extension host as an event; allow it a moment.
      const result = await poll(() => estimate(uri), (r) => r?.gpu.id === 't4-16gb', 10000);
      assert.strictEqual(result?.gpu.id, 't4-16gb');
    } finally {
      await config.update('gpu', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('re-estimates as the script is edited, and says when the new batch does not fit', async () => {
    const document = await vscode.workspace.openTextDocument(uri);
    assert.strictEqual(document.lineAt(3).text, 'batch_size = 256');
    const edit = (text: string) => {
      const change = new vscode.WorkspaceEdit();
      change.replace(uri, document.lineAt(3).range, text);
      return vscode.workspace.applyEdit(change);
    };
    assert.ok(await edit('batch_size = 2000000'));
    try {
      const result = await estimate(uri);
      assert.strictEqual(result?.models[0]?.batchSize, 2000000);
      assert.strictEqual(result?.models[0]?.fits, false);
    } finally {
      assert.ok(await edit('batch_size = 256'));
    }
    assert.strictEqual((await estimate(uri))?.models[0]?.batchSize, 256);
  });

  it('checks collocation with another script of the workspace: both jobs, their sum, shown beside as read-only Markdown', async () => {
    const second = fixtureUri('second_job.py');
    // The workspace is a copy made for this run: writing into it changes no fixture.
    const text = 'import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 10))\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(64, 512)\nloss = model(x).sum()\n';
    await vscode.workspace.fs.writeFile(second, new TextEncoder().encode(text));
    const result = await vscode.commands.executeCommand<{
      gpu: { id: string; memoryMiB: number };
      jobs: { file: string; memoryMiB: number; batchSize: number; maxBatchSizeTogether: number }[];
      totalMiB: number;
      fits: boolean;
      interference: { level: string; rule: string };
    } | undefined>('gpuEstimator.checkCollocation', uri, [second]);
    assert.ok(result, 'gpuEstimator.checkCollocation resolved to nothing');
    assert.strictEqual(result.gpu.id, 'a100-40gb');
    assert.deepStrictEqual(result.jobs.map((job) => job.file), [FIXTURE, 'second_job.py']);
    assert.deepStrictEqual(result.jobs.map((job) => job.batchSize), [256, 64]);
    assert.strictEqual(result.totalMiB, result.jobs[0]!.memoryMiB + result.jobs[1]!.memoryMiB);
    assert.strictEqual(result.fits, true);
    assert.ok(result.jobs.every((job) => job.maxBatchSizeTogether > job.batchSize));
    assert.match(result.interference.rule, /^a rule, not a measurement/);
    const shown = await poll(() => vscode.window.visibleTextEditors.find((editor) => editor.document.uri.scheme === 'gpu-estimator-collocation'), (editor) => editor !== undefined, 10000);
    assert.ok(shown, 'the collocation should be shown beside the script');
    assert.strictEqual(shown.document.languageId, 'markdown');
    assert.match(shown.document.getText(), /^# Collocation on A100 40GB/);
    // Markdown-escaped: `train\_mlp.py` renders as train_mlp.py.
    assert.match(shown.document.getText(), /\| train\\_mlp\.py \| model \| [\d.]+ GiB \| 256 \|/);
  });

  it('says in the hover what makes a fine-tune fit: a full fine-tune of a 7B model on the A100 40GB', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    // The extension runs from the repository (extensionDevelopmentPath), so its fixtures are beside it.
    const fixture = vscode.Uri.joinPath(extension.extensionUri, 'test', 'fixtures', 'llm', 'full_finetune_7b_eager.py');
    const content = new TextDecoder().decode(await vscode.workspace.fs.readFile(fixture));
    const document = await vscode.workspace.openTextDocument({ language: 'python', content });
    await vscode.window.showTextDocument(document);
    try {
      const model = new vscode.Position(11, 2); // `model = AutoModelForCausalLM.from_pretrained(...)`, line 12
      const markdown = await poll(
        async () => hoverMarkdown(await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', document.uri, model)),
        (text) => text.includes('Fits with:'),
        30000,
      );
      for (const expected of ['does not fit A100 40GB', 'Not even 64 tokens per sequence fit at batch 4', 'Fits with: gradient checkpointing + QLoRA (4-bit NF4 and LoRA r=8): ']) {
        assert.ok(markdown.includes(expected), `hover lacks ${JSON.stringify(expected)}:\n${markdown || '(no hover)'}`);
      }
    } finally {
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    }
  });
});
