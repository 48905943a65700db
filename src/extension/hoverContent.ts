import * as vscode from 'vscode';
import { hoverText } from '../core/display/hoverText';
import type { FileEstimate, ModelEstimate } from '../core/estimate/fileEstimate';

/** The hover for one model (text: src/core/display/hoverText.ts), its lines linking into the document. */
export function hoverMarkdown(estimate: FileEstimate, model: ModelEstimate, documentUri: vscode.Uri): vscode.MarkdownString {
  // A line of another project file (where the model's class is defined) links into that file.
  const md = new vscode.MarkdownString(hoverText(estimate, model, documentUri.toString(), (path) => documentUri.with({ path: vscode.Uri.file(path).path }).toString()));
  md.supportThemeIcons = true;
  return md;
}
