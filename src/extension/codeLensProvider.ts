import * as vscode from 'vscode';
import { codeLensTitle } from '../core/display/editorText';
import type { EstimationService } from './estimationService';
import type { ErrorReporter } from './logger';
import type { SettingsStore } from './settings';

/**
 * A CodeLens above each model: `~7.9 GiB on A100 40GB (6-8 GiB, 87%) | Horus 21.0 GiB | SMACT high`.
 * Clicking runs "Estimate GPU memory" for that model. Uses the service's estimate of the document's
 * version (cached, so no second parse); VS Code asks again after edits, and a settings change
 * (GPU, margin, on/off) or an edit in a module the script imports asks it to refresh.
 */
export class EstimateCodeLensProvider implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly subscriptions: vscode.Disposable[];
  readonly onDidChangeCodeLenses = this.changed.event;

  constructor(
    private readonly service: EstimationService,
    private readonly settings: SettingsStore,
    private readonly errors: ErrorReporter,
  ) {
    this.subscriptions = [settings.onDidChange(() => this.changed.fire()), service.onDidChangeProject(() => this.changed.fire())];
  }

  async provideCodeLenses(document: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    if (!this.settings.settings.codeLensEnabled) return [];
    try {
      const estimate = await this.service.estimate(document);
      if (token.isCancellationRequested) return [];
      return estimate.models.map((model) => {
        const line = Math.min(Math.max(model.line - 1, 0), document.lineCount - 1);
        return new vscode.CodeLens(new vscode.Range(line, 0, line, 0), {
          title: codeLensTitle(model, estimate.gpu.name),
          tooltip: `GPU Estimator: open the report for ${model.name}`,
          command: 'gpuEstimator.estimateMemory',
          arguments: [document.uri, { model: model.name }],
        });
      });
    } catch (error) {
      this.errors.report('cannot estimate this file', error);
      return [];
    }
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.changed.dispose();
  }
}
