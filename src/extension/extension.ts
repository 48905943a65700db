import * as vscode from 'vscode';
import { EstimateCodeLensProvider } from './codeLensProvider';
import { checkCollocationCommand, COLLOCATION_SCHEME, CollocationDocuments } from './collocationCommand';
import { EstimationService } from './estimationService';
import { dryRunCommand } from './dryRunCommand';
import { DryRunResults } from './dryRunResults';
import { estimateMemoryCommand } from './estimateCommand';
import { EstimateHoverProvider } from './hoverProvider';
import { ErrorReporter, createLogger } from './logger';
import { RemoteCommands } from './remoteCommands';
import { ReportPanel } from './report/reportPanel';
import { RiskDiagnostics } from './riskDiagnostics';
import { SettingsStore } from './settings';
import { EstimateStatusBar } from './statusBar';
import { PIN_ASSUMPTION_COMMAND, PinAssumptionActions, pinAssumption } from './pinAssumptionAction';

const PYTHON: vscode.DocumentSelector = [{ language: 'python' }];

export function activate(context: vscode.ExtensionContext): void {
  const started = performance.now();
  const logger = createLogger();
  context.subscriptions.push(logger);
  try {
    const settings = new SettingsStore();
    const errors = new ErrorReporter(logger);
    const service = new EstimationService(context.extensionUri, settings, logger);
    const report = new ReportPanel(context.extensionUri);
    const collocations = new CollocationDocuments();
    const dryRuns = new DryRunResults();
    logger.info(`GPU Estimator ${String((context.extension.packageJSON as { version?: unknown }).version)} activated; GPU ${settings.settings.gpu.id}, safety margin ${settings.settings.safetyMargin * 100}%`);
    context.subscriptions.push(
      settings,
      service,
      report,
      new EstimateStatusBar(service, settings, errors),
      dryRuns,
      vscode.languages.registerHoverProvider(PYTHON, new EstimateHoverProvider(service, settings, errors, dryRuns)),
      new RiskDiagnostics(service, settings, errors),
      vscode.commands.registerCommand('gpuEstimator.estimateMemory', estimateMemoryCommand(service, report, errors, settings, dryRuns)),
      vscode.commands.registerCommand('gpuEstimator.showLogs', () => logger.show()),
      collocations,
      vscode.workspace.registerTextDocumentContentProvider(COLLOCATION_SCHEME, collocations),
      vscode.commands.registerCommand('gpuEstimator.checkCollocation', checkCollocationCommand(service, collocations, errors)),
      vscode.languages.registerCodeActionsProvider(PYTHON, new PinAssumptionActions(service, errors), { providedCodeActionKinds: PinAssumptionActions.kinds }),
      vscode.commands.registerCommand(PIN_ASSUMPTION_COMMAND, pinAssumption),
      vscode.commands.registerCommand('gpuEstimator.dryRun', dryRunCommand(context.extensionUri, service, dryRuns, settings, logger, errors)),
    );
    const remote = new RemoteCommands(context, settings, service, logger);
    context.subscriptions.push(remote, ...remote.register());
    remote.offerReattach();
    const codeLens = new EstimateCodeLensProvider(service, settings, errors);
    context.subscriptions.push(codeLens, vscode.languages.registerCodeLensProvider(PYTHON, codeLens));
    logger.info(`activate() took ${(performance.now() - started).toFixed(1)} ms`);
    // After activation returns: the parser and the ensembles' sessions load while the user reads.
    setTimeout(() => void service.warmUp(), 0);
  } catch (error) {
    logger.error(`activation failed: ${String(error)}`);
    void vscode.window.showErrorMessage(`GPU Estimator could not start: ${String(error)}`);
  }
}

export function deactivate(): void {}
