import { readFileSync, statSync } from 'node:fs';
import * as vscode from 'vscode';
import { normalizePath, type ProjectFiles } from '../core/project/projectFiles';

/** Imported files past this size are not read (an editor's script stops at 2 MB too). */
const MAX_READ_BYTES = 8 * 1024 * 1024;

/**
 * The project's files as the editor sees them: an open document's text, unsaved edits included,
 * before the file on disk. The analysis is synchronous, so the disk is read with node:fs (the
 * extension host runs where the workspace's files are, remote workspaces included); files of
 * other schemes than `file` are not followed.
 */
export class WorkspaceProjectFiles implements ProjectFiles {
  read(path: string): string | undefined {
    const open = this.openDocument(path);
    if (open) return open.getText();
    try {
      const stat = statSync(path);
      return stat.isFile() && stat.size <= MAX_READ_BYTES ? readFileSync(path, 'utf8') : undefined;
    } catch {
      return undefined;
    }
  }

  exists(path: string): boolean {
    if (this.openDocument(path)) return true;
    try {
      statSync(path);
      return true;
    } catch {
      return false;
    }
  }

  private openDocument(path: string): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((document) => document.uri.scheme === 'file' && !document.isClosed && normalizePath(document.uri.fsPath) === path);
  }
}
