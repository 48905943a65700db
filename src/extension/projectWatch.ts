import * as vscode from 'vscode';
import { Importers } from '../core/project/importers';

/** Edits in an imported file re-estimate its importers this long after the last keystroke. */
const DEBOUNCE_MS = 400;

/**
 * Which open scripts read which project files (core/project/importers.ts), and, when one of those
 * files changes (an edit in its open document, a save, or a change on disk
 * seen by the file watcher), which scripts' estimates are stale. A Python file created or deleted
 * can change how any import resolves, so it makes every script with a project stale.
 */
export class ProjectWatch implements vscode.Disposable {
  private readonly importers = new Importers();
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly onStale: (documents: readonly string[]) => void) {
    const watcher = vscode.workspace.createFileSystemWatcher('**/*.py');
    // Configuration files a script loads (yaml.safe_load, json.load...): a change re-estimates the scripts that read them.
    const configs = vscode.workspace.createFileSystemWatcher('**/*.{yaml,yml,json,toml}');
    this.subscriptions.push(
      configs,
      configs.onDidChange((uri) => this.changed(uri)),
      configs.onDidCreate((uri) => this.changed(uri)),
      configs.onDidDelete((uri) => this.changed(uri)),
      watcher,
      watcher.onDidChange((uri) => this.changed(uri)),
      watcher.onDidCreate(() => this.changedAll()),
      watcher.onDidDelete(() => this.changedAll()),
      vscode.workspace.onDidChangeTextDocument((event) => this.changed(event.document.uri)),
      vscode.workspace.onDidSaveTextDocument((document) => this.changed(document.uri)),
    );
  }

  /** What the last estimate of `document` read of its project. */
  track(document: string, files: readonly string[] | undefined): void {
    this.importers.track(document, files);
  }

  forget(document: string): void {
    this.importers.forget(document);
  }

  private changed(uri: vscode.Uri): void {
    if (uri.scheme !== 'file') return;
    for (const document of this.importers.of(uri.fsPath, uri.toString())) this.pending.add(document);
    this.flushLater();
  }

  private changedAll(): void {
    for (const document of this.importers.all()) this.pending.add(document);
    this.flushLater();
  }

  private flushLater(): void {
    if (this.pending.size === 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const stale = [...this.pending];
      this.pending.clear();
      this.onStale(stale);
    }, DEBOUNCE_MS);
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}
