import * as vscode from 'vscode';
import { formatMiB } from '../core/format/units';
import { largestModel } from '../core/display/describe';
import { statusTooltipMarkdown } from '../core/display/editorText';
import type { FileEstimate } from '../core/estimate/fileEstimate';
import type { EstimationService } from './estimationService';
import type { ErrorReporter } from './logger';
import type { SettingsStore } from './settings';

const DEBOUNCE_MS = 300;

/** The active Python file's estimate (its models together where it has several), coloured when it nears or passes the GPU's memory. */
export class EstimateStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('gpuEstimator.status', vscode.StatusBarAlignment.Right, 100);
  private readonly subscriptions: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private generation = 0;

  constructor(
    private readonly service: EstimationService,
    private readonly settings: SettingsStore,
    private readonly errors: ErrorReporter,
  ) {
    this.item.name = 'GPU Estimator';
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.schedule(0)),
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document === vscode.window.activeTextEditor?.document) this.schedule(DEBOUNCE_MS);
      }),
      settings.onDidChange(() => this.schedule(0)),
      service.onDidChangeProject((uris) => {
        if (uris.some((uri) => uri.toString() === vscode.window.activeTextEditor?.document.uri.toString())) this.schedule(0);
      }),
    );
    this.schedule(0);
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.update(), delay);
  }

  private async update(): Promise<void> {
    const generation = ++this.generation;
    const editor = vscode.window.activeTextEditor;
    if (!this.settings.settings.statusBarEnabled) {
      this.item.hide();
      return;
    }
    // With the report or another non-text view focused, the last Python file's estimate stays.
    if (!editor) return;
    const document = editor.document;
    if (document.languageId !== 'python') {
      this.item.hide();
      return;
    }
    try {
      const estimate = await this.service.estimate(document);
      if (generation === this.generation) this.render(document, estimate);
    } catch (error) {
      this.item.hide();
      this.errors.report('cannot estimate this file', error);
    }
  }

  private render(document: vscode.TextDocument, estimate: FileEstimate): void {
    const model = largestModel(estimate);
    if (!model || model.memory.estimateMiB === null) {
      this.item.hide();
      return;
    }
    // Several models in one process: the GPU must hold them together.
    const shown = estimate.process ?? { estimateMiB: model.memory.estimateMiB, risk: model.risk };
    const icon = shown.risk === 'fits' ? '$(pulse)' : '$(warning)';
    this.item.text = `${icon} ${formatMiB(shown.estimateMiB)} / ${estimate.gpu.name}`;
    this.item.backgroundColor =
      shown.risk === 'oom' ? new vscode.ThemeColor('statusBarItem.errorBackground') : shown.risk === 'tight' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.tooltip = new vscode.MarkdownString(statusTooltipMarkdown(estimate, model));
    // A click reports on the model and GPU shown here, without asking for either.
    this.item.command = { command: 'gpuEstimator.estimateMemory', title: 'Estimate GPU memory', arguments: [document.uri, { model: model.name, gpu: estimate.gpu.id }] };
    this.item.accessibilityInformation = { label: `Estimated GPU memory${estimate.process ? " of the script's models together" : ''} ${formatMiB(shown.estimateMiB)} on ${estimate.gpu.name}` };
    this.item.show();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.item.dispose();
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}
