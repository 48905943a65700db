import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { GpuProfile } from '../../core/gpus/gpuProfiles';
import { EXPORT_FORMATS, exportFileName, exportText, isExportFormat, type ExportFormat, type ReportedEstimate } from '../../core/display/reportData';
import type { ReportMessage } from '../../webview/messages';
import type { ErrorReporter } from '../logger';
import { pickGpu } from './pickers';
import { reportHtml } from './reportHtml';

/** What a report needs besides the estimate: where it came from and how to redo it for another GPU. */
export interface ReportContext {
  /** The estimated document, for the export's default folder. */
  readonly documentUri: vscode.Uri;
  /** gpuEstimator.gpu, offered in the GPU pick. */
  readonly configuredGpuId: string;
  /** Share of the GPU's memory kept free (0..1). */
  readonly safetyMargin: number;
  /** The same document and model(s), estimated for another GPU. */
  readonly reestimate: (gpu: GpuProfile) => Promise<ReportedEstimate>;
  readonly errors: ErrorReporter;
}

/** One report panel, reused for each new report so estimates do not pile up as tabs. */
export class ReportPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private shown: { readonly reported: ReportedEstimate; readonly context: ReportContext } | undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  show(reported: ReportedEstimate, context: ReportContext): void {
    const { estimate } = reported;
    const title = `GPU estimate: ${path.basename(estimate.file)}`;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('gpuEstimator.report', title, vscode.ViewColumn.Beside, {
        enableScripts: true,
        localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media'), vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')],
      });
      this.panel.onDidDispose(() => {
        this.panel = undefined;
        this.shown = undefined;
      });
      this.panel.webview.onDidReceiveMessage((message: unknown) => void this.onMessage(message));
    }
    this.shown = { reported, context };
    const webview = this.panel.webview;
    const uri = (...parts: string[]) => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, ...parts)).toString();
    this.panel.title = title;
    webview.html = reportHtml(reported, {
      cspSource: webview.cspSource,
      stylesheetUri: uri('media', 'report.css'),
      chartStylesheetUri: uri('dist', 'webview', 'report.css'),
      scriptUri: uri('dist', 'webview', 'report.js'),
      nonce: randomBytes(18).toString('base64'),
      safetyMargin: context.safetyMargin,
    });
    this.panel.reveal(undefined, true);
  }

  /** Requests from the page's buttons. The page is not trusted: only known requests are acted on. */
  private async onMessage(raw: unknown): Promise<void> {
    const shown = this.shown;
    if (!shown || typeof raw !== 'object' || raw === null) return;
    const message = raw as Partial<ReportMessage>;
    try {
      if (message.type === 'changeGpu') {
        const gpu = await pickGpu(shown.reported.estimate.gpu.id, shown.context.configuredGpuId);
        if (gpu && this.shown === shown) this.show(await shown.context.reestimate(gpu), shown.context);
      } else if (message.type === 'export' && isExportFormat(message.format) && Number.isInteger(message.model)) {
        const index = message.model!;
        const model = shown.reported.estimate.models[index];
        const outlook = shown.reported.outlooks[index];
        if (model && outlook) await this.export(shown.reported.estimate, model, outlook, message.format, shown.context);
      }
    } catch (error) {
      shown.context.errors.report(message.type === 'export' ? 'cannot export the report' : 'cannot estimate for that GPU', error);
    }
  }

  private async export(estimate: ReportedEstimate['estimate'], model: ReportedEstimate['estimate']['models'][number], outlook: ReportedEstimate['outlooks'][number], format: ExportFormat, context: ReportContext): Promise<void> {
    const name = exportFileName(estimate.file, model.name, format);
    const folder = context.documentUri.scheme === 'untitled' ? vscode.workspace.workspaceFolders?.[0]?.uri : vscode.Uri.joinPath(context.documentUri, '..');
    const target = await vscode.window.showSaveDialog({
      title: `Export the estimate of ${model.name} as ${EXPORT_FORMATS[format].label}`,
      ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, name) } : {}),
      filters: { [EXPORT_FORMATS[format].label]: [EXPORT_FORMATS[format].extension] },
    });
    if (!target) return;
    await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(exportText(estimate, model, outlook, format)));
    void vscode.window.showInformationMessage(`GPU Estimator: saved ${vscode.workspace.asRelativePath(target)}`);
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
