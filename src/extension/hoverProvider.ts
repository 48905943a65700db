import * as vscode from 'vscode';
import { modelForHover } from '../core/display/hoverText';
import type { DryRunResults } from './dryRunResults';
import type { EstimationService } from './estimationService';
import { hoverMarkdown } from './hoverContent';
import type { ErrorReporter } from './logger';
import type { SettingsStore } from './settings';

/**
 * Shows a model's estimate when the pointer rests on its name, the line that builds it, its class's
 * `class` line, a line its assumptions were read from (the batch size), or its training loop.
 */
export class EstimateHoverProvider implements vscode.HoverProvider {
  constructor(
    private readonly service: EstimationService,
    private readonly settings: SettingsStore,
    private readonly errors: ErrorReporter,
    private readonly dryRuns?: DryRunResults,
  ) {}

  async provideHover(document: vscode.TextDocument, position: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Hover | undefined> {
    if (!this.settings.settings.hoverEnabled) return undefined;
    const wordRange = document.getWordRangeAtPosition(position);
    if (!wordRange) return undefined;
    try {
      const estimate = await this.service.estimate(document);
      if (token.isCancellationRequested) return undefined;
      const word = document.getText(wordRange);
      const model = modelForHover(estimate, position.line + 1, word);
      const run = this.dryRuns?.get(document);
      return model && new vscode.Hover(hoverMarkdown(estimate, model, document.uri, run && { run, documentVersion: document.version }), wordRange);
    } catch (error) {
      this.errors.report('cannot estimate this file', error);
      return undefined;
    }
  }
}
