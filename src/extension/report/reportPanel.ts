import * as path from 'node:path';
import * as vscode from 'vscode';
import type { FileEstimate } from '../../core/report/fileEstimate';
import { reportHtml } from './reportHtml';

/** One report panel, reused for each new report so estimates do not pile up as tabs. */
export class ReportPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  show(estimate: FileEstimate): void {
    const title = `GPU estimate: ${path.basename(estimate.file)}`;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('gpuEstimator.report', title, vscode.ViewColumn.Beside, {
        enableScripts: false,
        localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')],
      });
      this.panel.onDidDispose(() => (this.panel = undefined));
    }
    const webview = this.panel.webview;
    this.panel.title = title;
    webview.html = reportHtml(estimate, {
      cspSource: webview.cspSource,
      stylesheetUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'report.css')).toString(),
    });
    this.panel.reveal(undefined, true);
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
