import * as vscode from 'vscode';
import { riskProblems } from '../core/display/editorText';
import type { EstimationService } from './estimationService';
import type { ErrorReporter } from './logger';
import type { SettingsStore } from './settings';

const DEBOUNCE_MS = 500;

/**
 * `gpuEstimator.diagnostics.enabled`: OOM risk in the Problems panel, on the batch-size line of
 * each open Python file (see riskProblems). One collection; a closed file's entries go, and
 * turning the setting off clears them all.
 */
export class RiskDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('gpuEstimator');
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly service: EstimationService,
    private readonly settings: SettingsStore,
    private readonly errors: ErrorReporter,
  ) {
    this.subscriptions = [
      vscode.workspace.onDidOpenTextDocument((document) => this.schedule(document, 0)),
      vscode.workspace.onDidChangeTextDocument((event) => this.schedule(event.document, DEBOUNCE_MS)),
      vscode.workspace.onDidCloseTextDocument((document) => this.forget(document.uri)),
      settings.onDidChange(() => this.refreshAll()),
      service.onDidChangeProject((uris) => {
        const stale = new Set(uris.map((uri) => uri.toString()));
        for (const document of vscode.workspace.textDocuments) if (stale.has(document.uri.toString())) this.schedule(document, 0);
      }),
    ];
    this.refreshAll();
  }

  private refreshAll(): void {
    if (!this.settings.settings.diagnosticsEnabled) {
      for (const timer of this.timers.values()) clearTimeout(timer);
      this.timers.clear();
      this.collection.clear();
      return;
    }
    for (const document of vscode.workspace.textDocuments) this.schedule(document, 0);
  }

  private schedule(document: vscode.TextDocument, delay: number): void {
    if (!this.settings.settings.diagnosticsEnabled || document.languageId !== 'python') return;
    const key = document.uri.toString();
    clearTimeout(this.timers.get(key));
    this.timers.set(key, setTimeout(() => void this.update(document), delay));
  }

  private async update(document: vscode.TextDocument): Promise<void> {
    const key = document.uri.toString();
    this.timers.delete(key);
    try {
      const version = document.version;
      const estimate = await this.service.estimate(document);
      // A newer edit or a closed file has its own update (or none); a setting may have turned this off meanwhile.
      if (document.isClosed || document.version !== version || this.timers.has(key) || !this.settings.settings.diagnosticsEnabled) return;
      this.collection.set(
        document.uri,
        riskProblems(estimate).map((problem) => {
          const line = document.lineAt(Math.min(Math.max(problem.line - 1, 0), document.lineCount - 1));
          const diagnostic = new vscode.Diagnostic(line.range, problem.message, problem.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning);
          diagnostic.source = 'GPU Estimator';
          return diagnostic;
        }),
      );
    } catch (error) {
      this.errors.report('cannot estimate this file', error);
    }
  }

  private forget(uri: vscode.Uri): void {
    clearTimeout(this.timers.get(uri.toString()));
    this.timers.delete(uri.toString());
    this.collection.delete(uri);
  }

  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.collection.dispose();
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}
