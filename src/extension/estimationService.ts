import * as vscode from 'vscode';
import * as os from 'node:os';
import * as path from 'node:path';
import { withLearnedEstimates } from '../core/estimators/learned';
import type { ExecutionProviderChoice } from '../core/estimators/onnx/executionProvider';
import { OnnxRunner } from '../core/estimators/onnx/onnxRunner';
import { IncrementalEstimator } from '../core/incrementalEstimator';
import { packagedParserAssets } from '../core/parsing/parserAssets';
import { createPythonParser, type PythonParser } from '../core/parsing/pythonParser';
import type { GpuProfile } from '../core/gpus/gpuProfiles';
import type { FileEstimate } from '../core/report/fileEstimate';
import { warmUpEstimation } from '../core/warmUp';
import { InFlight } from './inFlight';
import type { Logger } from './logger';
import type { SettingsStore } from './settings';

interface CacheEntry {
  readonly version: number;
  readonly settingsKey: string;
  readonly estimate: FileEstimate;
}

/**
 * Estimates open Python documents, at most once per document version and settings, re-parsing
 * only what each edit changed. The parser loads on first use, so activation stays cheap.
 */
export class EstimationService implements vscode.Disposable {
  private parser: Promise<PythonParser> | undefined;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new InFlight<FileEstimate>();
  private readonly estimators = new Map<string, IncrementalEstimator>();
  /** The bundled ONNX ensembles; sessions open on first use and stay until the provider setting changes. */
  private runner: OnnxRunner | undefined;
  /** The user's models folder the runner was made for (undefined: bundled only). */
  private runnerModelsDir: string | undefined;
  /** Bumped by reloadModels, so cached estimates made with older models are not reused. */
  private modelsGeneration = 0;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly settings: SettingsStore,
    private readonly logger: Logger,
  ) {
    this.subscriptions = [vscode.workspace.onDidCloseTextDocument((document) => this.forget(document.uri.toString()))];
  }

  /** `gpu`: another GPU than the configured one (the report's "Change GPU"); such estimates are not cached. */
  estimate(document: vscode.TextDocument, gpu: GpuProfile = this.settings.settings.gpu): Promise<FileEstimate> {
    const key = document.uri.toString();
    const { safetyMargin, executionProvider } = this.settings.settings;
    const settingsKey = `${gpu.id}:${safetyMargin}:${executionProvider}:${this.userModelsDir() ?? ''}:${this.modelsGeneration}`;
    const cached = this.cache.get(key);
    if (cached && cached.version === document.version && cached.settingsKey === settingsKey) return Promise.resolve(cached.estimate);
    return this.inFlight.join(key, `${document.version}:${settingsKey}`, () => this.estimateNow(document, gpu, settingsKey));
  }

  private async estimateNow(document: vscode.TextDocument, gpu: GpuProfile, settingsKey: string): Promise<FileEstimate> {
    const key = document.uri.toString();
    const { safetyMargin, executionProvider } = this.settings.settings;
    const parser = await this.loadParser();
    let estimator = this.estimators.get(key);
    if (!estimator) {
      estimator = new IncrementalEstimator(parser);
      this.estimators.set(key, estimator);
    }
    const started = performance.now();
    const analytical = estimator.estimate(vscode.workspace.asRelativePath(document.uri), document.getText(), { gpu, safetyMargin });
    this.logger.trace(`estimated ${key} v${document.version} in ${(performance.now() - started).toFixed(1)} ms (${estimator.reusedTree ? 'incremental' : 'full'} parse): ${analytical.models.length} model(s)`);
    const estimate = await this.learned(analytical, executionProvider, safetyMargin);
    if (gpu.id === this.settings.settings.gpu.id) this.cache.set(key, { version: document.version, settingsKey, estimate });
    return estimate;
  }

  /**
   * Loads the parser, opens the ensembles' sessions and estimates a built-in script in the
   * background (src/core/warmUp.ts), so the first estimate after activation waits for none of
   * them. Failures are left for that estimate to report.
   */
  async warmUp(): Promise<void> {
    try {
      const started = performance.now();
      const models = await warmUpEstimation(await this.loadParser(), this.currentRunner(this.settings.settings.executionProvider));
      this.logger.trace(`warm-up: ${models} model(s) of the built-in script estimated in ${(performance.now() - started).toFixed(1)} ms`);
    } catch (error) {
      this.logger.trace(`warm-up: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The runner for the current settings, made anew when the provider or the models folder changed. */
  private currentRunner(executionProvider: ExecutionProviderChoice): OnnxRunner {
    const userModelsDir = this.userModelsDir();
    if (!this.runner || this.runner.executionProvider !== executionProvider || this.runnerModelsDir !== userModelsDir) {
      void this.runner?.dispose();
      const log = (level: 'info' | 'warning', message: string) => (level === 'warning' ? this.logger.warn(message) : this.logger.info(message));
      this.runner = new OnnxRunner({ modelsDir: path.join(this.extensionUri.fsPath, 'models'), ...(userModelsDir ? { userModelsDir } : {}), executionProvider, log });
      this.runnerModelsDir = userModelsDir;
      if (userModelsDir) this.logger.info(`learned estimators: your models folder ${userModelsDir} first, then the bundled models`);
    }
    return this.runner;
  }

  /** The learned step (the ensembles); on failure the analytical estimate, with the reason in the log. */
  private async learned(estimate: FileEstimate, executionProvider: ExecutionProviderChoice, safetyMargin: number): Promise<FileEstimate> {
    const runner = this.currentRunner(executionProvider);
    try {
      const started = performance.now();
      const learned = await withLearnedEstimates(estimate, runner, { safetyMargin });
      this.logger.trace(`learned estimates for ${estimate.file} in ${(performance.now() - started).toFixed(1)} ms`);
      return learned;
    } catch (error) {
      this.logger.error(`learned estimators failed, showing the analytical model: ${error instanceof Error ? error.message : String(error)}`);
      return estimate;
    }
  }

  /** Drops the open ONNX sessions and cached estimates, so models just written to the models folder are used. */
  reloadModels(): void {
    void this.runner?.dispose();
    this.runner = undefined;
    this.modelsGeneration += 1;
  }

  /** gpuEstimator.modelsFolder as an absolute path (a relative one from the first workspace folder); undefined when empty. */
  private userModelsDir(): string | undefined {
    const folder = this.settings.settings.modelsFolder;
    if (!folder) return undefined;
    if (folder === '~' || folder.startsWith('~/')) return path.join(os.homedir(), folder.slice(1));
    if (path.isAbsolute(folder)) return folder;
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return root ? path.join(root, folder) : undefined;
  }

  private loadParser(): Promise<PythonParser> {
    this.parser ??= createPythonParser(packagedParserAssets(this.extensionUri.fsPath)).catch((error: unknown) => {
      this.parser = undefined;
      throw error;
    });
    return this.parser;
  }

  private forget(key: string): void {
    this.cache.delete(key);
    this.inFlight.forget(key);
    this.estimators.get(key)?.dispose();
    this.estimators.delete(key);
  }

  dispose(): void {
    this.cache.clear();
    this.inFlight.clear();
    for (const estimator of this.estimators.values()) estimator.dispose();
    this.estimators.clear();
    void this.runner?.dispose();
    this.runner = undefined;
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}
