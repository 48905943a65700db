import * as vscode from 'vscode';
import { collocationMarkdown } from '../core/display/collocationText';
import type { Collocation } from '../core/estimate/collocation';
import type { EstimationService } from './estimationService';
import type { ErrorReporter } from './logger';

/** Folders that hold other people's Python, not the workspace's training scripts. */
const NOT_SCRIPTS = '**/{node_modules,.git,.venv,venv,env,site-packages,__pycache__,.tox,build,dist}/**';
const MAX_OFFERED = 500;

export const COLLOCATION_SCHEME = 'gpu-estimator-collocation';

/** The collocation reports, as read-only Markdown documents (nothing to save, nothing to lose). */
export class CollocationDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private count = 0;

  show(collocation: Collocation): Thenable<vscode.TextEditor> {
    const uri = vscode.Uri.from({ scheme: COLLOCATION_SCHEME, path: `/collocation-${++this.count}.md` });
    this.texts.set(uri.toString(), collocationMarkdown(collocation));
    return vscode.workspace.openTextDocument(uri).then((document) => vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true }));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.texts.clear();
  }
}

/**
 * "Check collocation with…": the active (or given) script and other scripts of the workspace the
 * user picks (or the caller passes, as tests do), estimated on the configured GPU as jobs that
 * share it. Shows the result beside the script and returns it; undefined when dismissed.
 */
export function checkCollocationCommand(service: EstimationService, documents: CollocationDocuments, errors: ErrorReporter) {
  return async (uri?: vscode.Uri, others?: readonly vscode.Uri[]): Promise<Collocation | undefined> => {
    const first = uri instanceof vscode.Uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
    if (!first || first.languageId !== 'python') {
      void vscode.window.showInformationMessage('GPU Estimator: open a Python training script to check which scripts can share its GPU.');
      return undefined;
    }
    try {
      const given = Array.isArray(others) && others.every((other) => other instanceof vscode.Uri) ? others : undefined;
      const picked = given ?? (await pickOtherScripts(first.uri));
      if (!picked?.length) return undefined;
      const jobs = [first, ...(await Promise.all(picked.map((other) => vscode.workspace.openTextDocument(other))))];
      const collocation = await service.colocate(jobs);
      await documents.show(collocation);
      return collocation;
    } catch (error) {
      errors.report('cannot check the collocation', error);
      return undefined;
    }
  };
}

async function pickOtherScripts(first: vscode.Uri): Promise<vscode.Uri[] | undefined> {
  const found = await vscode.workspace.findFiles('**/*.py', NOT_SCRIPTS, MAX_OFFERED);
  const candidates = found.filter((candidate) => candidate.toString() !== first.toString()).sort((a, b) => a.path.localeCompare(b.path));
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage('GPU Estimator: no other Python script in the workspace to share the GPU with.');
    return undefined;
  }
  const items = candidates.map((candidate) => ({ label: vscode.workspace.asRelativePath(candidate), uri: candidate }));
  const chosen = await vscode.window.showQuickPick(items, { canPickMany: true, title: `Check collocation with ${vscode.workspace.asRelativePath(first)}`, placeHolder: 'Pick the scripts whose jobs would share the GPU' });
  return chosen?.map((item) => item.uri);
}
