import * as vscode from 'vscode';
import { pinnableAssumptionsAt, pinnedSizeOf, type PinnableAssumption } from '../core/display/pinnableAssumptions';
import type { EstimationService } from './estimationService';
import type { ErrorReporter } from './logger';
import { SECTION } from './settings';

export const PIN_ASSUMPTION_COMMAND = 'gpuEstimator.pinAssumption';

/**
 * A quick fix on a line where a size comes from the data (`ntokens = len(corpus.dictionary)`):
 * pin it in the workspace's gpuEstimator.assume setting, which the next estimate reads.
 */
export class PinAssumptionActions implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  constructor(
    private readonly service: EstimationService,
    private readonly errors: ErrorReporter,
  ) {}

  async provideCodeActions(document: vscode.TextDocument, range: vscode.Range | vscode.Selection, _context: vscode.CodeActionContext, token: vscode.CancellationToken): Promise<vscode.CodeAction[]> {
    try {
      const estimate = await this.service.estimate(document);
      if (token.isCancellationRequested) return [];
      return pinnableAssumptionsAt(estimate, range.start.line + 1).map((pin) => {
        const action = new vscode.CodeAction(pin.title, vscode.CodeActionKind.QuickFix);
        action.command = { command: PIN_ASSUMPTION_COMMAND, title: pin.title, arguments: [document.uri, pin] };
        return action;
      });
    } catch (error) {
      this.errors.report('cannot estimate this file', error);
      return [];
    }
  }
}

/** Asks for the size (the assumed one offered) and writes it into the workspace's gpuEstimator.assume. */
export async function pinAssumption(uri: vscode.Uri, pin: PinnableAssumption): Promise<void> {
  const text = await vscode.window.showInputBox({
    title: pin.title,
    prompt: `The value of ${pin.key} for this workspace's estimates (gpuEstimator.assume)`,
    value: pin.value,
    validateInput: (input) => (pinnedSizeOf(input) === undefined ? 'A positive whole number' : undefined),
  });
  const value = text === undefined ? undefined : pinnedSizeOf(text);
  if (value === undefined) return;
  const config = vscode.workspace.getConfiguration(SECTION, uri);
  const current = config.inspect<Record<string, unknown>>('assume')?.workspaceValue ?? {};
  await config.update('assume', { ...current, [pin.key]: value }, vscode.ConfigurationTarget.Workspace);
}
