import * as vscode from 'vscode';
import { DRY_RUN_DIFFERENCE_NOTE, dryRunSummary } from '../core/display/dryRunText';
import { escapeMarkdown, hoverText } from '../core/display/hoverText';
import type { FileEstimate, ModelEstimate } from '../core/estimate/fileEstimate';
import type { DocumentDryRun } from './dryRunResults';

/**
 * The hover for one model (text: src/core/display/hoverText.ts), its lines linking into the
 * document; with the last dry run of the document's script beside the static estimate.
 */
export function hoverMarkdown(estimate: FileEstimate, model: ModelEstimate, documentUri: vscode.Uri, dryRun?: { run: DocumentDryRun; documentVersion: number }): vscode.MarkdownString {
  // A line of another project file (where the model's class is defined) links into that file.
  let text = hoverText(estimate, model, documentUri.toString(), (path) => documentUri.with({ path: vscode.Uri.file(path).path }).toString());
  if (dryRun) {
    const stale = dryRun.run.version !== dryRun.documentVersion ? ' (before your later edits)' : '';
    text += `\n\n---\n\n${escapeMarkdown(dryRunSummary(dryRun.run.result, model.memory.estimateMiB, estimate.gpu))}${stale}`;
    if (dryRun.run.result.ok) text += `\n\n_${escapeMarkdown(DRY_RUN_DIFFERENCE_NOTE)}_`;
  }
  const md = new vscode.MarkdownString(text);
  md.supportThemeIcons = true;
  return md;
}
