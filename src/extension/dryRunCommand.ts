import * as vscode from 'vscode';
import { runDryRun, type DryRunResult } from '../core/dryRun/dryRunProcess';
import { dryRunSpecFor, modelFedByLoader } from '../core/dryRun/dryRunSpec';
import { dryRunSummary } from '../core/display/dryRunText';
import type { DryRunResults } from './dryRunResults';
import type { EstimationService } from './estimationService';
import type { ErrorReporter, Logger } from './logger';
import { dryRunInterpreter } from './pythonInterpreter';
import type { SettingsStore } from './settings';

/**
 * "Dry-run on CPU": runs the script's own model and training step with the user's Python
 * (harness/dry_run.py: the meta device, fake batches, no network, writes only in a temporary
 * folder), with progress and Cancel, and keeps the figure for the hover beside the static
 * estimate. Trusted workspaces only: it runs the workspace's code. Resolves to the result (for
 * tests), undefined when there was nothing to run.
 */
export function dryRunCommand(extensionUri: vscode.Uri, service: EstimationService, results: DryRunResults, settings: SettingsStore, logger: Logger, errors: ErrorReporter) {
  return async (uri?: vscode.Uri): Promise<DryRunResult | undefined> => {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('GPU Estimator: a dry run runs the script\'s own code, so it needs a trusted workspace.');
      return undefined;
    }
    const document = uri instanceof vscode.Uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
    if (!document || document.languageId !== 'python' || document.uri.scheme !== 'file') {
      void vscode.window.showInformationMessage('GPU Estimator: open a Python training script saved on disk to dry-run it.');
      return undefined;
    }
    try {
      const estimate = await service.estimate(document);
      const trained = modelFedByLoader(estimate);
      const python = await dryRunInterpreter(settings.settings.dryRun, document.uri);
      if (document.isDirty) void vscode.window.showInformationMessage('GPU Estimator: the dry run runs the file as saved on disk; save it to include your latest edits.');
      logger.info(`dry run of ${document.uri.fsPath} with ${python.path} (${python.source})`);
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `GPU Estimator: dry run of ${vscode.workspace.asRelativePath(document.uri)} on the CPU`, cancellable: true },
        async (_progress, token) => {
          const abort = new AbortController();
          const subscription = token.onCancellationRequested(() => abort.abort());
          try {
            return await runDryRun({
              script: document.uri.fsPath,
              harnessParent: extensionUri.fsPath,
              python: python.path,
              spec: dryRunSpecFor(trained, { assume: settings.settings.assume, ...(estimate.project ? { root: estimate.project.root } : {}), ...(estimate.dataShape ? { dataShape: estimate.dataShape } : {}) }),
              gpuMemoryMiB: estimate.gpu.memoryMiB,
              steps: settings.settings.dryRun.steps,
              timeoutMs: settings.settings.dryRun.timeoutSeconds * 1000,
              signal: abort.signal,
            });
          } finally {
            subscription.dispose();
          }
        },
      );
      results.set(document, { result, version: document.version, python: python.path });
      const summary = dryRunSummary(result, trained?.memory.estimateMiB ?? null, estimate.gpu);
      logger.info(summary);
      // The step's tensors alone do not fit the chosen GPU: a warning, as the static verdict's would be.
      if (result.ok && result.figure.outOfMemory) void vscode.window.showWarningMessage(`GPU Estimator: ${summary}`);
      else if (result.ok) void vscode.window.showInformationMessage(`GPU Estimator: ${summary}`);
      else if (result.error !== 'the dry run was cancelled') void vscode.window.showWarningMessage(`GPU Estimator: ${summary} (Python: ${python.path}, from ${python.source})`);
      return result;
    } catch (error) {
      errors.report('cannot dry-run this file', error);
      return undefined;
    }
  };
}
