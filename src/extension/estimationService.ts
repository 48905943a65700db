import * as vscode from 'vscode';
import * as os from 'node:os';
import * as path from 'node:path';
import { EstimationPipeline } from '../core/estimate/pipeline';
import type { RunnerOptions } from '../core/estimators/onnx/onnxRunner';
import { packagedParserAssets } from '../core/parsing/parserAssets';
import { createPythonParser } from '../core/parsing/pythonParser';
import type { GpuProfile } from '../core/gpus/gpuProfiles';
import type { FileEstimate } from '../core/estimate/fileEstimate';
import type { Collocation } from '../core/estimate/collocation';
import type { ModelOutlook } from '../core/estimate/outlook';
import { warmUpEstimation } from '../core/warmUp';
import { InFlight } from './inFlight';
import type { Logger } from './logger';
import type { SettingsStore } from './settings';
import { ProjectWatch } from './projectWatch';
import { WorkspaceProjectFiles } from './workspaceFiles';

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
  /** Made when the parser has loaded; its ONNX sessions open on first use and stay until the provider setting or the models folder changes. */
  private pipeline: Promise<EstimationPipeline> | undefined;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new InFlight<FileEstimate>();
  /** Bumped by reloadModels, so cached estimates made with older models are not reused. */
  private modelsGeneration = 0;
  /** What was last logged about entries of gpuEstimator.assume that were left out (logged once per change). */
  private loggedAssumeProblems = '';
  private readonly subscriptions: vscode.Disposable[];
  private readonly projectFiles = new WorkspaceProjectFiles();
  private readonly projectWatch: ProjectWatch;
  private readonly staleEmitter = new vscode.EventEmitter<readonly vscode.Uri[]>();
  /** Documents whose estimate is stale because a project file they import changed: surfaces estimate them again. */
  readonly onDidChangeProject = this.staleEmitter.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly settings: SettingsStore,
    private readonly logger: Logger,
  ) {
    this.projectWatch = new ProjectWatch((documents) => this.stale(documents));
    this.subscriptions = [vscode.workspace.onDidCloseTextDocument((document) => this.forget(document.uri.toString())), this.projectWatch, this.staleEmitter];
  }

  /** `gpu`: another GPU than the configured one (the report's "Change GPU"); such estimates are not cached. */
  estimate(document: vscode.TextDocument, gpu: GpuProfile = this.settings.settings.gpu): Promise<FileEstimate> {
    const key = document.uri.toString();
    const { safetyMargin, executionProvider, assume, assumeProblems, gpuCount } = this.settings.settings;
    const settingsKey = `${gpu.id}:${safetyMargin}:${executionProvider}:${this.userModelsDir() ?? ''}:${this.modelsGeneration}:${JSON.stringify(assume)}:${gpuCount}`;
    const problems = assumeProblems.join('; ');
    if (problems && problems !== this.loggedAssumeProblems) this.logger.error(problems);
    this.loggedAssumeProblems = problems;
    const cached = this.cache.get(key);
    if (cached && cached.version === document.version && cached.settingsKey === settingsKey) return Promise.resolve(cached.estimate);
    return this.inFlight.join(key, `${document.version}:${settingsKey}`, () => this.estimateNow(document, gpu, settingsKey));
  }

  private async estimateNow(document: vscode.TextDocument, gpu: GpuProfile, settingsKey: string): Promise<FileEstimate> {
    const key = document.uri.toString();
    const { safetyMargin, assume, gpuCount } = this.settings.settings;
    const pipeline = await this.currentPipeline();
    // A saved script's imports of its project's own modules are followed (read through the workspace).
    const project = document.uri.scheme === 'file' ? { files: this.projectFiles, path: document.uri.fsPath } : undefined;
    const estimate = await pipeline.estimate({ file: vscode.workspace.asRelativePath(document.uri), source: document.getText(), options: { gpu, safetyMargin, assume, ...(gpuCount > 0 ? { gpus: gpuCount } : {}) }, document: key, ...(project ? { project } : {}) });
    if (gpu.id === this.settings.settings.gpu.id) {
      this.cache.set(key, { version: document.version, settingsKey, estimate });
      this.projectWatch.track(key, estimate.project?.files);
    }
    return estimate;
  }

  /** Whether these documents' training jobs fit on the configured GPU together (each document estimated as estimate() does). */
  async colocate(documents: readonly vscode.TextDocument[]): Promise<Collocation> {
    const { gpu, safetyMargin, assume } = this.settings.settings;
    const pipeline = await this.currentPipeline();
    const jobs = documents.map((document) => ({ file: vscode.workspace.asRelativePath(document.uri), source: document.getText(), document: document.uri.toString() }));
    return pipeline.colocate(jobs, { gpu, safetyMargin, assume });
  }

  /** The outlook of each model of an estimate (its memory curve, every GPU's verdict), for the report. */
  async outlook(estimate: FileEstimate): Promise<ModelOutlook[]> {
    return (await this.currentPipeline()).outlook(estimate, this.settings.settings.safetyMargin);
  }

  /**
   * Loads the parser, opens the ensembles' sessions and estimates a built-in script in the
   * background (src/core/warmUp.ts), so the first estimate after activation waits for none of
   * them. Failures are left for that estimate to report.
   */
  async warmUp(): Promise<void> {
    try {
      const started = performance.now();
      const models = await warmUpEstimation(await this.currentPipeline());
      this.logger.trace(`warm-up: ${models} model(s) of the built-in script estimated in ${(performance.now() - started).toFixed(1)} ms`);
    } catch (error) {
      this.logger.trace(`warm-up: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The pipeline, its models switched to the current settings (the provider, the models folder). */
  private async currentPipeline(): Promise<EstimationPipeline> {
    this.pipeline ??= createPythonParser(packagedParserAssets(this.extensionUri.fsPath)).then(
      (parser) => {
        const models = this.modelsSetup();
        this.logModels(models);
        return new EstimationPipeline(parser, models, (level, message) => (level === 'error' ? this.logger.error(message) : this.logger.trace(message)));
      },
      (error: unknown) => {
        this.pipeline = undefined;
        throw error;
      },
    );
    const pipeline = await this.pipeline;
    const models = this.modelsSetup();
    if (pipeline.useModels(models)) this.logModels(models);
    return pipeline;
  }

  private logModels(models: RunnerOptions): void {
    if (models.userModelsDir) this.logger.info(`learned estimators: your models folder ${models.userModelsDir} first, then the bundled models`);
  }

  private modelsSetup(): RunnerOptions {
    const userModelsDir = this.userModelsDir();
    const log = (level: 'info' | 'warning', message: string) => (level === 'warning' ? this.logger.warn(message) : this.logger.info(message));
    return { modelsDir: path.join(this.extensionUri.fsPath, 'models'), ...(userModelsDir ? { userModelsDir } : {}), executionProvider: this.settings.settings.executionProvider, log };
  }

  /** Drops the open ONNX sessions and cached estimates, so models just written to the models folder are used. */
  reloadModels(): void {
    void this.pipeline?.then((pipeline) => pipeline.reloadModels(), () => undefined);
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

  /** Drops the kept estimates of documents whose imported files changed, and tells the surfaces. */
  private stale(documents: readonly string[]): void {
    for (const key of documents) {
      this.cache.delete(key);
      this.inFlight.forget(key);
    }
    this.logger.trace(`a project file changed: estimating ${documents.length} importing document(s) again`);
    this.staleEmitter.fire(documents.map((key) => vscode.Uri.parse(key)));
  }

  private forget(key: string): void {
    this.cache.delete(key);
    this.projectWatch.forget(key);
    this.inFlight.forget(key);
    void this.pipeline?.then((pipeline) => pipeline.forget(key), () => undefined);
  }

  dispose(): void {
    this.cache.clear();
    this.inFlight.clear();
    void this.pipeline?.then((pipeline) => pipeline.dispose(), () => undefined);
    this.pipeline = undefined;
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}
