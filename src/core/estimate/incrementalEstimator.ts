import type { Tree } from 'web-tree-sitter';
import { changeBetween, reparse } from '../parsing/incrementalParse';
import { parseableSource } from '../parsing/parseableSource';
import { ParseTimeout, type PythonParser } from '../parsing/pythonParser';
import type { ProjectContext } from '../analysis/analyzeSource';
import { estimateTree, gpuOf, type EstimateCache, type EstimateOptions } from './estimateTree';
import type { FileEstimate } from './fileEstimate';
import { withinLimit } from './sourceLimit';

/** The analysis pass for one file, from scratch (no learned estimators; the pipeline adds them). */
export function estimateSource(file: string, source: string, parser: PythonParser, options: EstimateOptions, project?: ProjectContext): FileEstimate {
  const estimator = new IncrementalEstimator(parser);
  try {
    return estimator.estimate(file, source, options, project);
  } finally {
    estimator.dispose();
  }
}

/**
 * Estimates one document as it is edited: keeps its last syntax tree and re-parses only what an
 * edit changed (tree-sitter's incremental parsing). One per open document; dispose() frees the tree.
 */
export class IncrementalEstimator {
  private tree: Tree | undefined;
  private parsedText = '';
  /** The last analysis: unchanged statements, statement groups and models' layer tables move over to the next. */
  private readonly cache: EstimateCache = { syntax: {}, tables: new Map() };

  constructor(private readonly parser: PythonParser) {}

  estimate(file: string, source: string, options: EstimateOptions, project?: ProjectContext): FileEstimate {
    const { analysed, warning } = withinLimit(source);
    const text = parseableSource(analysed);
    try {
      this.update(text);
    } catch (error) {
      if (!(error instanceof ParseTimeout)) throw error;
      this.dispose();
      return { file, gpu: gpuOf(options), models: [], warnings: [`The file could not be parsed in time (${error.message}); no estimate.`] };
    }
    const estimate = estimateTree(file, text, this.tree!, options, this.cache, project);
    return warning ? { ...estimate, warnings: [warning, ...estimate.warnings] } : estimate;
  }

  /** Whether the last estimate re-used the previous tree (for tests and logs). */
  reusedTree = false;

  private update(text: string): void {
    this.reusedTree = false;
    if (this.tree && text === this.parsedText) {
      this.reusedTree = true;
      return;
    }
    const change = this.tree && changeBetween(this.parsedText, text);
    if (this.tree && change) {
      const previous = this.tree;
      this.tree = undefined;
      try {
        this.tree = reparse(this.parser, previous, this.parsedText, [change]).tree;
        this.reusedTree = true;
      } finally {
        previous.delete();
      }
    } else {
      this.tree?.delete();
      this.tree = undefined;
      this.tree = this.parser.parse(text);
    }
    this.parsedText = text;
  }

  dispose(): void {
    this.tree?.delete();
    this.tree = undefined;
    this.parsedText = '';
    this.cache.syntax.root = undefined;
    this.cache.syntax.groups = undefined;
    this.cache.syntax.project = undefined;
    this.cache.tables = new Map();
  }
}
