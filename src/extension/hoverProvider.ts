import * as vscode from 'vscode';
import type { ModelEstimate } from '../core/report/fileEstimate';
import type { EstimationService } from './estimationService';
import { hoverMarkdown } from './hoverContent';
import type { ErrorReporter } from './logger';
import type { SettingsStore } from './settings';

/** Shows a model's estimate when the pointer rests on its name or on the line that builds it. */
export class EstimateHoverProvider implements vscode.HoverProvider {
  constructor(
    private readonly service: EstimationService,
    private readonly settings: SettingsStore,
    private readonly errors: ErrorReporter,
  ) {}

  async provideHover(document: vscode.TextDocument, position: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Hover | undefined> {
    if (!this.settings.settings.hoverEnabled) return undefined;
    const wordRange = document.getWordRangeAtPosition(position);
    if (!wordRange) return undefined;
    try {
      const estimate = await this.service.estimate(document);
      if (token.isCancellationRequested) return undefined;
      const word = document.getText(wordRange);
      const model = estimate.models.find((m: ModelEstimate) => m.line === position.line + 1) ?? estimate.models.find((m) => m.name === word);
      return model && new vscode.Hover(hoverMarkdown(estimate, model), wordRange);
    } catch (error) {
      this.errors.report('cannot estimate this file', error);
      return undefined;
    }
  }
}
