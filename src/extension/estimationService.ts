import * as vscode from 'vscode';
import { IncrementalEstimator } from '../core/incrementalEstimator';
import { packagedParserAssets } from '../core/parsing/parserAssets';
import { createPythonParser, type PythonParser } from '../core/parsing/pythonParser';
import type { FileEstimate } from '../core/report/fileEstimate';
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
  private readonly estimators = new Map<string, IncrementalEstimator>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly settings: SettingsStore,
    private readonly logger: Logger,
  ) {
    this.subscriptions = [vscode.workspace.onDidCloseTextDocument((document) => this.forget(document.uri.toString()))];
  }

  async estimate(document: vscode.TextDocument): Promise<FileEstimate> {
    const key = document.uri.toString();
    const { gpu, safetyMargin } = this.settings.settings;
    const settingsKey = `${gpu.id}:${safetyMargin}`;
    const cached = this.cache.get(key);
    if (cached && cached.version === document.version && cached.settingsKey === settingsKey) return cached.estimate;
    const parser = await this.loadParser();
    let estimator = this.estimators.get(key);
    if (!estimator) {
      estimator = new IncrementalEstimator(parser);
      this.estimators.set(key, estimator);
    }
    const started = performance.now();
    const estimate = estimator.estimate(vscode.workspace.asRelativePath(document.uri), document.getText(), { gpu, safetyMargin });
    this.logger.trace(`estimated ${key} v${document.version} in ${(performance.now() - started).toFixed(1)} ms (${estimator.reusedTree ? 'incremental' : 'full'} parse): ${estimate.models.length} model(s)`);
    this.cache.set(key, { version: document.version, settingsKey, estimate });
    return estimate;
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
    this.estimators.get(key)?.dispose();
    this.estimators.delete(key);
  }

  dispose(): void {
    this.cache.clear();
    for (const estimator of this.estimators.values()) estimator.dispose();
    this.estimators.clear();
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}
