/**
 * The estimate stage in one object: made once with the parser and the ONNX models (folders and
 * execution provider), it turns a file's source into its estimate: the analysis pass (syntax tree,
 * models, layer tables, the synchronous estimators) and then the learned pass (the ensembles). For
 * a document that is edited it keeps the last syntax tree and analysis, so the next estimate
 * re-parses and re-analyses only what the edit changed.
 */
import { OnnxRunner, type RunnerOptions } from '../estimators/onnx/onnxRunner';
import type { ModelFamily } from '../estimators/family';
import type { PythonParser } from '../parsing/pythonParser';
import type { EstimateOptions } from './estimateTree';
import type { FileEstimate } from './fileEstimate';
import type { GpuProfile } from '../gpus/gpuProfiles';
import { collocationOf, placementOf, type Collocation, type Placement } from './collocation';
import { IncrementalEstimator } from './incrementalEstimator';
import { withLearnedEstimates } from './learnedPass';
import { outlookOf, type ModelOutlook } from './outlook';
import { withScriptProcess } from './scriptProcess';
import type { ProjectContext } from '../analysis/analyzeSource';
import { findProjectRoot, normalizePath, type ProjectFiles } from '../project/projectFiles';
import { ParsedModules } from '../project/parsedModules';

/** The project a script is part of: how to read its other files, and where the script is among them. */
export interface ProjectRequest {
  readonly files: ProjectFiles;
  /** The script's own path (absolute; '/' or '\\' separated). */
  readonly path: string;
  /** The project root; without it, the nearest folder upward with .git, pyproject.toml, setup.py or setup.cfg, else the script's folder. */
  readonly root?: string;
}

export interface EstimateRequest {
  /** The name the estimate reports the file under. */
  readonly file: string;
  readonly source: string;
  readonly options: EstimateOptions;
  /**
   * A key for a document that will be estimated again after edits (the editor's URI): its syntax
   * tree and analysis are kept until forget(). Without it the estimate starts from scratch.
   */
  readonly document?: string;
  /** The script's project: its imports of the project's own modules are followed. Without it the script is read alone. */
  readonly project?: ProjectRequest;
}

/** What the pipeline reports about its own work (timings, a learned pass that failed). */
export type PipelineLog = (level: 'trace' | 'error', message: string) => void;

export class EstimationPipeline {
  private runner: OnnxRunner;
  private readonly documents = new Map<string, IncrementalEstimator>();
  private readonly parsedModules: ParsedModules;
  /** How long the last estimate's two passes took (ms), for logs and the benchmark. */
  lastTimings = { analysisMs: 0, learnedMs: 0 };

  constructor(
    private readonly parser: PythonParser,
    private models: RunnerOptions,
    private readonly log: PipelineLog = () => undefined,
  ) {
    this.runner = new OnnxRunner(models);
    this.parsedModules = new ParsedModules(parser);
  }

  /** The ONNX sessions the learned estimators run with. */
  get onnx(): OnnxRunner {
    return this.runner;
  }

  /** The file's estimate: the analysis pass, then the learned pass; if the learned pass fails, the analysis pass's estimate (the reason goes to the log). */
  async estimate(request: EstimateRequest): Promise<FileEstimate> {
    const analysisStarted = performance.now();
    const analysed = this.analyse(request);
    const started = performance.now();
    this.lastTimings = { analysisMs: started - analysisStarted, learnedMs: 0 };
    try {
      const learned = await withLearnedEstimates(analysed, this.runner, { safetyMargin: request.options.safetyMargin });
      this.lastTimings = { ...this.lastTimings, learnedMs: performance.now() - started };
      this.log('trace', `learned estimates for ${request.file} in ${this.lastTimings.learnedMs.toFixed(1)} ms`);
      return withScriptProcess(learned, request.options.safetyMargin);
    } catch (error) {
      this.log('error', `learned estimators failed, showing the analytical model: ${error instanceof Error ? error.message : String(error)}`);
      return withScriptProcess(analysed, request.options.safetyMargin);
    }
  }

  /**
   * Each model's outlook (outlook.ts): its memory curve over batch sizes and the verdict on every
   * GPU profile. For the report, on request: it is many times the work of the estimate itself.
   */
  outlook(estimate: FileEstimate, safetyMargin: number): ModelOutlook[] {
    return outlookOf(estimate, safetyMargin);
  }

  /** Whether these scripts' training jobs fit on one GPU together (collocation.ts), each estimated as estimate() does. */
  async colocate(jobs: readonly { readonly file: string; readonly source: string; readonly document?: string; readonly project?: ProjectRequest }[], options: EstimateOptions): Promise<Collocation> {
    const estimates: FileEstimate[] = [];
    for (const job of jobs) estimates.push(await this.estimate({ ...job, options }));
    return collocationOf(estimates, options.gpu, options.safetyMargin);
  }

  /** The job of one estimated script against each of these GPUs (a scheduler's choice of GPU type). */
  place(estimate: FileEstimate, gpus: readonly GpuProfile[], safetyMargin: number): Placement {
    return placementOf(estimate, gpus, safetyMargin);
  }

  /** Opens the sessions of these families now rather than on their first estimate. */
  async openSessions(families: readonly ModelFamily[]): Promise<void> {
    await Promise.all(families.map((family) => this.runner.model(family)));
  }

  /**
   * Runs the learned estimators from now on with these models (another execution provider or user
   * models folder); returns whether anything changed. Sessions open again on first use.
   */
  useModels(models: RunnerOptions): boolean {
    if (models.executionProvider === this.models.executionProvider && models.userModelsDir === this.models.userModelsDir && models.modelsDir === this.models.modelsDir) return false;
    this.models = models;
    this.reloadModels();
    return true;
  }

  /** Closes the ONNX sessions, so models just written to the models folder are used from the next estimate on. */
  reloadModels(): void {
    void this.runner.dispose();
    this.runner = new OnnxRunner(this.models);
  }

  /** Drops what is kept for a document (it was closed). */
  forget(document: string): void {
    this.documents.get(document)?.dispose();
    this.documents.delete(document);
  }

  /** Frees every kept syntax tree and closes the ONNX sessions. The parser stays its owner's. */
  async dispose(): Promise<void> {
    for (const estimator of this.documents.values()) estimator.dispose();
    this.documents.clear();
    await this.runner.dispose();
  }

  private projectContext(project: ProjectRequest): ProjectContext {
    const path = normalizePath(project.path);
    const root = project.root === undefined ? findProjectRoot(path, project.files) : normalizePath(project.root);
    return { source: { files: project.files, path, root }, parse: (file, text) => this.parsedModules.parse(file, text) };
  }

  private analyse({ file, source, options, document, project }: EstimateRequest): FileEstimate {
    const kept = document === undefined ? undefined : this.documents.get(document);
    const estimator = kept ?? new IncrementalEstimator(this.parser);
    if (document !== undefined && !kept) this.documents.set(document, estimator);
    const started = performance.now();
    try {
      const estimate = estimator.estimate(file, source, options, project && this.projectContext(project));
      this.log('trace', `estimated ${document ?? file} in ${(performance.now() - started).toFixed(1)} ms (${estimator.reusedTree ? 'incremental' : 'full'} parse): ${estimate.models.length} model(s)`);
      return estimate;
    } finally {
      if (document === undefined) estimator.dispose();
    }
  }
}
