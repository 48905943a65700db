import * as vscode from 'vscode';
import type { DryRunResult } from '../core/dryRun/dryRunProcess';

/** A dry run of a document's script, and the version of the document it ran on (saved to disk). */
export interface DocumentDryRun {
  readonly result: DryRunResult;
  readonly version: number;
  readonly python: string;
}

/** The last dry run per document, for the hover; forgotten when the document closes. */
export class DryRunResults implements vscode.Disposable {
  private readonly results = new Map<string, DocumentDryRun>();
  private readonly subscription = vscode.workspace.onDidCloseTextDocument((document) => this.results.delete(document.uri.toString()));

  set(document: vscode.TextDocument, run: DocumentDryRun): void {
    this.results.set(document.uri.toString(), run);
  }

  get(document: vscode.TextDocument): DocumentDryRun | undefined {
    return this.results.get(document.uri.toString());
  }

  dispose(): void {
    this.subscription.dispose();
    this.results.clear();
  }
}
