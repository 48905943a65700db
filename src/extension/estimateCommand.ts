import * as vscode from 'vscode';
import type { FileEstimate } from '../core/report/fileEstimate';
import type { EstimationService } from './estimationService';
import type { ErrorReporter } from './logger';
import type { ReportPanel } from './report/reportPanel';

/**
 * "Estimate GPU memory": estimates the given or active Python file, opens the report, and
 * returns the estimate (the same object as `gpu-estimate --json`) to callers such as tests.
 */
export function estimateMemoryCommand(service: EstimationService, report: ReportPanel, errors: ErrorReporter) {
  return async (uri?: vscode.Uri): Promise<FileEstimate | undefined> => {
    const document = uri instanceof vscode.Uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
    if (!document || document.languageId !== 'python') {
      void vscode.window.showInformationMessage('GPU Estimator: open a Python training script to estimate its GPU memory.');
      return undefined;
    }
    try {
      const estimate = await service.estimate(document);
      report.show(estimate);
      return estimate;
    } catch (error) {
      errors.report('cannot estimate this file', error);
      return undefined;
    }
  };
}
