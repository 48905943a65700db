import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { RemoteError } from '../core/remote/errors';
import { plainMessage } from '../core/remote/plainMessage';
import { describeProgress, type Progress } from '../core/remote/progress';
import { RemoteRunner, type FollowResult, type RunRecord, type TrainInputs } from '../core/remote/remoteRun';
import { installModels, summarizeTraining } from '../core/remote/retrain';
import { sshConfigHosts } from '../core/remote/sshConfigHosts';
import type { EstimationService } from './estimationService';
import type { Logger } from './logger';
import type { SettingsStore } from './settings';

const RUNS_KEY = 'gpuEstimator.remoteRuns';
/** Where "Retrain estimator" installs models when gpuEstimator.modelsFolder is empty (relative to the workspace). */
const DEFAULT_MODELS_FOLDER = '.gpu-estimator/models';
/** Where the command looks for GPUMemNet's mlp.csv / cnn.csv: GPUMEMNET_DATA, else .gpu-estimator/reference-data/. */
const REFERENCE_FOLDERS = (folder: string): string[] => [...(process.env.GPUMEMNET_DATA ? [process.env.GPUMEMNET_DATA] : []), path.join(folder, '.gpu-estimator', 'reference-data')];

/** `<runs>/<host>/<run-id>/out/results.jsonl` files (downloaded collect runs), newest run first. */
function findResults(runsDir: string): string[] {
  if (!existsSync(runsDir)) return [];
  const found: string[] = [];
  for (const host of readdirSync(runsDir, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    for (const run of readdirSync(path.join(runsDir, host.name), { withFileTypes: true }).filter((e) => e.isDirectory())) {
      const file = path.join(runsDir, host.name, run.name, 'out', 'results.jsonl');
      if (existsSync(file)) found.push(file);
    }
  }
  return found.sort((a, b) => path.basename(path.dirname(path.dirname(b))).localeCompare(path.basename(path.dirname(path.dirname(a)))));
}

/**
 * "Collect training data on a remote GPU host", "Measure on remote GPU host", "Retrain estimator
 * from collected data" and "Remote runs":
 * prompts, notifications and workspace state around src/core/remote (which does the work).
 */
export class RemoteCommands implements vscode.Disposable {
  private readonly following = new Map<string, AbortController>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly settings: SettingsStore,
    private readonly service: EstimationService,
    private readonly logger: Logger,
  ) {}

  register(): vscode.Disposable[] {
    return [
      vscode.commands.registerCommand('gpuEstimator.collectRemote', () => this.guard('collect training data', () => this.collect())),
      vscode.commands.registerCommand('gpuEstimator.measureRemote', () => this.guard('measure on the remote host', () => this.measure())),
      vscode.commands.registerCommand('gpuEstimator.remoteRuns', () => this.guard('remote runs', () => this.manageRuns())),
      vscode.commands.registerCommand('gpuEstimator.retrainRemote', () => this.guard('retrain the estimators', () => this.retrain())),
    ];
  }

  /** After a window reload: offers to re-attach to runs that were still going. */
  offerReattach(): void {
    if (!vscode.workspace.isTrusted) return;
    for (const record of this.runs().filter((run) => run.state === 'running')) {
      void vscode.window
        .showInformationMessage(`GPU Estimator: a ${record.kind} run on ${record.host} (${record.label}) was still going when the window closed.`, 'Re-attach', 'Cancel Run', 'Forget')
        .then((choice) => this.guard('remote run', () => this.onRunChoice(record, choice)));
    }
  }

  dispose(): void {
    for (const controller of this.following.values()) controller.abort(); // detaches; remote jobs go on
  }

  // ------------------------------------------------------------------ commands

  private async collect(): Promise<void> {
    const folder = this.workspaceFolder();
    const host = await this.pickHost();
    if (!host) return;
    const config = this.ensureConfig(folder);
    await vscode.window.showTextDocument(vscode.Uri.file(config), { preview: false });
    const { device, scheduler, sbatchArgs } = this.settings.settings.remote;
    const start = await vscode.window.showInformationMessage(
      `Collect training data ${scheduler === 'slurm' ? `on the SLURM cluster of ${host} (a job array${sbatchArgs.length ? ` with ${sbatchArgs.join(' ')}` : ''})` : `on ${host}`}${device === 'cpu' ? ' (CPU test run)' : ''} with ${path.relative(folder, config)}? Edit the ranges first if you like; each configuration trains for the config's \`seconds\`.`,
      'Start',
      'Cancel',
    );
    if (start !== 'Start') return;
    const runner = this.runner(host);
    const record = await this.withProgress(`Collecting on ${host}`, async (report) => {
      report('pre-flight checks…');
      const { notes } = await runner.preflight(device, scheduler);
      for (const note of notes) report(note);
      report('uploading the harness…');
      return runner.startCollect(config, device, undefined, scheduler === 'slurm' ? { sbatchArgs } : undefined);
    });
    if (!record) return;
    await this.saveRun(record);
    await this.follow(record);
  }

  private async measure(): Promise<void> {
    const folder = this.workspaceFolder();
    const document = vscode.window.activeTextEditor?.document;
    if (!document || document.languageId !== 'python' || document.isUntitled) {
      void vscode.window.showInformationMessage('GPU Estimator: open a saved Python training script to measure it.');
      return;
    }
    if (document.isDirty) await document.save();
    const host = await this.pickHost();
    if (!host) return;
    const { device, measureSteps } = this.settings.settings.remote;
    const runner = this.runner(host);
    const record = await this.withProgress(`Measuring ${path.basename(document.fileName)} on ${host}`, async (report) => {
      report('pre-flight checks…');
      await runner.preflight(device);
      report('uploading…');
      return runner.startMeasure(document.fileName, measureSteps, device);
    });
    if (!record) return;
    await this.saveRun(record);
    const result = await this.follow(record, folder);
    const measured = result?.progress.measurement;
    if (!measured) return;
    const estimate = await this.service.estimate(document);
    const estimated = estimate.models.map((model) => `${model.name}: ${model.memory.estimateMiB === null ? 'no estimate' : `${Math.round(model.memory.estimateMiB)} MiB`}`).join(', ');
    const mib = (value: unknown): string => (typeof value === 'number' ? `${Math.round(value)} MiB` : 'n/a');
    const text = `Measured on ${record.host} (${typeof measured.gpu === 'string' ? measured.gpu : record.device}), ${String(measured.steps)} steps, ${String(measured.status)}: peak ${mib(measured.peakMiB)} (nvidia-smi), ${mib(measured.torchMaxAllocatedMiB)} allocated / ${mib(measured.torchMaxReservedMiB)} reserved (PyTorch). Estimated: ${estimated || 'no model found'}.`;
    this.logger.info(text);
    this.showFromHostWithLog('info', text);
  }

  /**
   * Trains the estimators on the host from collected rows (a collect run still there, or a
   * results.jsonl in the workspace), then installs the models into the user's models folder.
   */
  private async retrain(): Promise<void> {
    const folder = this.workspaceFolder();
    const host = await this.pickHost();
    if (!host) return;
    const data = await this.pickTrainingData(folder, host);
    if (!data) return;
    const reference = REFERENCE_FOLDERS(folder).find((dir) => existsSync(path.join(dir, 'mlp.csv')) || existsSync(path.join(dir, 'cnn.csv')));
    let referenceDataDir: string | undefined;
    if (reference) {
      const use = await vscode.window.showInformationMessage(`Also train on the GPUMemNet reference data in ${reference}? It is uploaded to ${host}.`, 'Use It', 'Collected Rows Only');
      if (!use) return;
      if (use === 'Use It') referenceDataDir = reference;
    }
    const what = 'localFile' in data.inputs.data ? path.relative(folder, data.inputs.data.localFile) : data.description;
    const referenceText = referenceDataDir ? ' and the GPUMemNet reference data' : reference ? ' only (reference data left out)' : ` only (no GPUMemNet reference data: put mlp.csv / cnn.csv in ${path.join('.gpu-estimator', 'reference-data')} or set GPUMEMNET_DATA)`;
    const start = await vscode.window.showInformationMessage(
      `Train the estimators on ${host} from ${what}${referenceText}? A family needs 200 successful GPU runs for a model; CPU test rows never count.`,
      'Start',
      'Cancel',
    );
    if (start !== 'Start') return;
    const runner = this.runner(host);
    const record = await this.withProgress(`Training on ${host}`, async (report) => {
      report('pre-flight checks…');
      await runner.preflight('cpu'); // training needs Python and PyTorch, not the GPU
      report('uploading the harness and the data…');
      return runner.startTrain({ ...data.inputs, ...(referenceDataDir ? { referenceDataDir } : {}) });
    });
    if (!record) return;
    this.logger.info(`train run ${record.runId}: data ${record.training?.data ?? '?'}, reference ${record.training?.reference.join(', ') || 'none'}`);
    await this.saveRun(record);
    await this.follow(record, folder);
  }

  /** Finished collect runs on the host, results.jsonl files in the workspace, or one picked from disk. */
  private async pickTrainingData(folder: string, host: string): Promise<{ inputs: Pick<TrainInputs, 'data'>; description: string } | undefined> {
    type Item = vscode.QuickPickItem & { data?: TrainInputs['data'] };
    const items: Item[] = [];
    for (const run of this.runs().filter((r) => r.kind === 'collect' && r.host === host && r.state !== 'running')) {
      items.push({ label: `$(remote) ${run.runId}`, description: `on ${host} · ${run.state}`, detail: `${run.remoteDir}/out/results.jsonl (${run.label})`, data: { collectRun: run } });
    }
    const runsDir = path.join(folder, '.gpu-estimator', 'runs');
    for (const file of findResults(runsDir)) items.push({ label: `$(file) ${path.relative(folder, file)}`, description: 'uploaded', data: { localFile: file } });
    items.push({ label: '$(folder-opened) Choose a results.jsonl…' });
    const picked = await vscode.window.showQuickPick(items, { placeHolder: 'The collected rows to train on' });
    if (!picked) return undefined;
    if (picked.data) return { inputs: { data: picked.data }, description: picked.detail ?? picked.label };
    const chosen = await vscode.window.showOpenDialog({ canSelectMany: false, defaultUri: vscode.Uri.file(folder), filters: { 'JSON Lines': ['jsonl'] } });
    const file = chosen?.[0]?.fsPath;
    return file ? { inputs: { data: { localFile: file } }, description: file } : undefined;
  }

  /** After a train run's download: says what it trained from, and installs its models (asking before replacing any file). */
  private async installTrained(record: RunRecord, directory: string, folder: string, leftOnHost: readonly string[]): Promise<void> {
    const summary = summarizeTraining(directory, record, leftOnHost);
    this.logger.info(`${record.runId}: ${summary.text}`);
    if (!summary.trained.length) {
      this.showFromHostWithLog('warning', summary.text);
      return;
    }
    const configured = this.settings.settings.modelsFolder;
    const target = configured ? (path.isAbsolute(configured) ? configured : configured === '~' || configured.startsWith('~/') ? path.join(os.homedir(), configured.slice(1)) : path.join(folder, configured)) : path.join(folder, DEFAULT_MODELS_FOLDER);
    const families = summary.trained.map((t) => t.family).join(', ');
    const question = configured
      ? `Install the trained ${families} model(s) into ${target}?`
      : `Install the trained ${families} model(s) into ${DEFAULT_MODELS_FOLDER} and set gpuEstimator.modelsFolder to it (this workspace), so the estimators use them?`;
    if ((await vscode.window.showInformationMessage(`GPU Estimator: ${plainMessage(summary.text)} ${question}`, 'Install', 'Not Now')) !== 'Install') return;
    const result = await installModels(summary.trained, target, async (files) => {
      const replace = await vscode.window.showWarningMessage(`GPU Estimator: replace ${files.map((file) => path.basename(file)).join(', ')} in ${target}? They differ from the new models.`, { modal: true }, 'Replace');
      return replace === 'Replace';
    });
    if (!configured) await vscode.workspace.getConfiguration('gpuEstimator').update('modelsFolder', DEFAULT_MODELS_FOLDER, vscode.ConfigurationTarget.Workspace);
    this.service.reloadModels();
    const declined = result.declined.length ? `; kept your ${result.declined.join(', ')} (not replaced)` : '';
    const message = `installed ${result.installed.join(', ') || 'nothing new'} into ${target}${declined}. Estimates of these families now name the file that ran (memory.ensemble.model).`;
    this.logger.info(`${record.runId}: ${message}`);
    void vscode.window.showInformationMessage(`GPU Estimator: ${message}`);
  }

  private async manageRuns(): Promise<void> {
    const runs = this.runs();
    if (!runs.length) {
      void vscode.window.showInformationMessage('GPU Estimator: no remote runs in this workspace yet.');
      return;
    }
    const picked = await vscode.window.showQuickPick(
      runs.map((run) => ({ label: `${run.kind} on ${run.host}`, description: `${run.state} · ${run.label}`, detail: `${run.runId} · started ${run.startedAt}`, run })),
      { placeHolder: 'A remote run' },
    );
    if (!picked) return;
    const actions = picked.run.state === 'running' ? ['Re-attach', 'Cancel Run', 'Forget'] : ['Download', 'Resume', 'Forget'];
    const choice = await vscode.window.showQuickPick(actions, { placeHolder: `${picked.label} (${picked.run.state})` });
    await this.onRunChoice(picked.run, choice);
  }

  private async onRunChoice(record: RunRecord, choice: string | undefined): Promise<void> {
    const runner = RemoteRunner.forRecord(record, this.runnerOptions());
    if (choice === 'Re-attach') await this.follow(record);
    else if (choice === 'Cancel Run') {
      await runner.cancel(record);
      await this.saveRun({ ...record, state: 'cancelled' });
      void vscode.window.showInformationMessage(`GPU Estimator: cancelled the run on ${record.host}.`, 'Download Partial Results').then((c) => c && this.guard('download', () => this.download(record)));
    } else if (choice === 'Resume') {
      await this.saveRun(await runner.resume(record));
      await this.follow({ ...record, state: 'running' });
    } else if (choice === 'Download') await this.download(record);
    else if (choice === 'Forget') await this.forgetRun(record.runId);
  }

  // ------------------------------------------------------------------ following

  /** Follows a run in a cancellable notification; downloads the results when it ends. */
  private async follow(record: RunRecord, folder = this.workspaceFolder()): Promise<FollowResult | undefined> {
    this.following.get(record.runId)?.abort();
    const controller = new AbortController();
    this.following.set(record.runId, controller);
    const runner = RemoteRunner.forRecord(record, this.runnerOptions());
    let cancelled = false;
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `GPU Estimator: ${record.kind} on ${record.host}`, cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => {
            cancelled = true;
            controller.abort();
          });
          let done = 0;
          return runner.follow(record, {
            signal: controller.signal,
            onProgress: (p: Progress) => {
              const increment = p.total ? ((p.done - done) / p.total) * 100 : undefined;
              done = p.done;
              progress.report({ message: describeProgress(p), ...(increment ? { increment } : {}) });
              if (p.last) this.logger.info(`${record.runId}: ${JSON.stringify(p.last)}`);
            },
          });
        },
      );
      if (result.state === 'detached') {
        if (cancelled) {
          await runner.cancel(record);
          await this.saveRun({ ...record, state: 'cancelled' });
          const choice = await vscode.window.showInformationMessage(`GPU Estimator: stopped the run on ${record.host} (${describeProgress(result.progress)}).`, 'Download Partial Results');
          if (choice) await this.download(record, folder);
        }
        return result;
      }
      await this.saveRun({ ...record, state: result.state });
      if (result.state === 'finished') await this.download(record, folder);
      else if (result.state === 'stopped' || result.state === 'failed') {
        this.logger.error(`${record.runId}: ${result.message ?? result.state}\n${result.stderrTail}`);
        const choice = await this.showFromHost('error', result.message ?? `the run ${result.state}`, 'Resume', 'Download Partial Results', 'View Logs');
        if (choice === 'Resume') await this.onRunChoice(record, 'Resume');
        else if (choice === 'Download Partial Results') await this.download(record, folder);
        else if (choice) this.logger.show();
      }
      return result;
    } catch (error) {
      if (error instanceof RemoteError && error.kind === 'connection-lost') {
        this.logger.error(`${error.message}\n${error.detail}`);
        const choice = await this.showFromHost('error', error.message, 'Re-attach', 'View Logs');
        if (choice === 'Re-attach') await this.follow(record, folder);
        else if (choice) this.logger.show();
        return undefined;
      }
      throw error;
    } finally {
      if (this.following.get(record.runId) === controller) this.following.delete(record.runId);
    }
  }

  private async download(record: RunRecord, folder = this.workspaceFolder()): Promise<void> {
    const runner = RemoteRunner.forRecord(record, this.runnerOptions());
    const { directory, merge, skipped } = await runner.download(record, folder);
    if (record.kind === 'train') return this.installTrained(record, directory, folder, skipped);
    const kept = merge.kept.length ? `; ${merge.kept.length} file(s) kept beside existing ones (nothing overwritten)` : '';
    const left = skipped.length ? `; ${skipped.length} link(s) or special file(s) left on the host (listed in the log)` : '';
    const choice = await vscode.window.showInformationMessage(
      `GPU Estimator: results of ${record.runId} are in ${path.relative(folder, directory)} (${merge.added.length} new file(s)${kept}${left}).`,
      'Reveal',
      ...(skipped.length ? ['View Logs'] : []),
    );
    if (choice === 'Reveal') await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(directory));
    else if (choice) this.logger.show();
  }

  // ------------------------------------------------------------------ helpers

  /**
   * A notification whose text may carry what the host printed (its errors, the harness's output, a
   * training summary): shown as one plain line of bounded length (plainMessage); the whole text is
   * in the log.
   */
  private showFromHost<T extends string>(level: 'info' | 'warning' | 'error', text: string, ...items: T[]): Thenable<T | undefined> {
    const shown = `GPU Estimator: ${plainMessage(text)}`;
    if (level === 'error') return vscode.window.showErrorMessage(shown, ...items);
    return level === 'warning' ? vscode.window.showWarningMessage(shown, ...items) : vscode.window.showInformationMessage(shown, ...items);
  }

  /** showFromHost with a View Logs button that opens the log. */
  private showFromHostWithLog(level: 'info' | 'warning' | 'error', text: string): void {
    void this.showFromHost(level, text, 'View Logs').then((choice) => choice && this.logger.show());
  }

  private async guard(what: string, action: () => Promise<void>): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('GPU Estimator: the remote commands run ssh and your scripts on a remote host, so they need a trusted workspace.');
      return;
    }
    try {
      await action();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.error(`${what}: ${message}${error instanceof RemoteError && error.detail ? `\n${error.detail}` : ''}`);
      this.showFromHostWithLog('error', message);
    }
  }

  private workspaceFolder(): string {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!folder) throw new RemoteError('local-failed', 'open a folder first: results go to .gpu-estimator/runs/ inside it.');
    return folder;
  }

  /** The host setting, else a quick pick of the ssh config's hosts (or one typed in). */
  private async pickHost(): Promise<string | undefined> {
    const { host, sshConfigFile } = this.settings.settings.remote;
    if (host) return host;
    const file = sshConfigFile || path.join(os.homedir(), '.ssh', 'config');
    const hosts = existsSync(file) ? sshConfigHosts(readFileSync(file, 'utf8')) : [];
    const other = '$(edit) Enter a host…';
    const picked = hosts.length ? await vscode.window.showQuickPick([...hosts, other], { placeHolder: `GPU host (from ${file}; set gpuEstimator.remote.host to skip this)` }) : other;
    if (picked !== other) return picked;
    return vscode.window.showInputBox({ prompt: 'GPU host: a host name or ssh alias (user@host works too)', ignoreFocusOut: true });
  }

  private runnerOptions() {
    return {
      harnessDir: vscode.Uri.joinPath(this.context.extensionUri, 'harness').fsPath,
      workDir: this.settings.settings.remote.workDir,
      log: (line: string) => this.logger.info(line),
    };
  }

  private runner(host: string): RemoteRunner {
    const { sshConfigFile, python, workDir } = this.settings.settings.remote;
    return new RemoteRunner({ ...this.runnerOptions(), target: sshConfigFile ? { host, configFile: sshConfigFile } : { host }, python, workDir });
  }

  /** `.gpu-estimator/collect.yaml` in the workspace, copied from the harness's default the first time. */
  private ensureConfig(folder: string): string {
    const config = path.join(folder, '.gpu-estimator', 'collect.yaml');
    if (!existsSync(config)) {
      mkdirSync(path.dirname(config), { recursive: true });
      const source = vscode.Uri.joinPath(this.context.extensionUri, 'harness', 'configs', 'default.yaml').fsPath;
      copyFileSync(source, config);
    }
    return config;
  }

  private async withProgress<T>(title: string, task: (report: (message: string) => void) => Promise<T>): Promise<T | undefined> {
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `GPU Estimator: ${title}` }, (progress) =>
      task((message) => {
        this.logger.info(message);
        progress.report({ message: plainMessage(message) }); // pre-flight notes quote the host's Python and nvidia-smi
      }),
    );
  }

  private runs(): RunRecord[] {
    return this.context.workspaceState.get<RunRecord[]>(RUNS_KEY, []);
  }

  private saveRun(record: RunRecord): Thenable<void> {
    return this.context.workspaceState.update(RUNS_KEY, [record, ...this.runs().filter((run) => run.runId !== record.runId)].slice(0, 50));
  }

  private forgetRun(runId: string): Thenable<void> {
    return this.context.workspaceState.update(RUNS_KEY, this.runs().filter((run) => run.runId !== runId));
  }
}
