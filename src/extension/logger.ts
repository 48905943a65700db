import * as vscode from 'vscode';

/** The extension's one log, "GPU Estimator" in the Output panel (a LogOutputChannel). */
export type Logger = vscode.LogOutputChannel;

export function createLogger(): Logger {
  return vscode.window.createOutputChannel('GPU Estimator', { log: true });
}

/**
 * Reports a failure to the user once per distinct message, with a way to the log; repeats go
 * to the log only, so a broken file does not raise a toast on every keystroke.
 */
export class ErrorReporter {
  private readonly shown = new Set<string>();

  constructor(private readonly logger: Logger) {}

  report(context: string, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.logger.error(`${context}: ${message}`);
    if (error instanceof Error && error.stack) this.logger.debug(error.stack);
    const key = `${context}: ${message}`;
    if (this.shown.has(key)) return;
    this.shown.add(key);
    void vscode.window.showErrorMessage(`GPU Estimator: ${context}: ${message}`, 'View Logs').then((choice) => {
      if (choice) this.logger.show();
    });
  }
}
