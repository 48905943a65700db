/**
 * What the fuzzer runs on one input, inside the worker: the whole pipeline as the CLI runs it
 * (estimateSource with the default GPU, then the JSON and the human-readable output); for a share of the
 * inputs, rounds of incremental re-parsing with random edits, each followed by analyzeSource and
 * a check that the re-parsed tree is consistent with its text; and for some of those, the
 * editor's IncrementalEstimator over the same edits, compared with a fresh estimate.
 */
import type { Tree } from 'web-tree-sitter';
import { humanOutput } from '../../src/cli/humanOutput';
import { analyzeSource } from '../../src/core/analysis/analyzeSource';
import { IncrementalEstimator, estimateSource } from '../../src/core/estimate/incrementalEstimator';
import { defaultGpuProfile } from '../../src/core/gpus/gpuProfiles';
import { reparse, type TextChange } from '../../src/core/parsing/incrementalParse';
import type { PythonParser } from '../../src/core/parsing/pythonParser';
import type { FileEstimate } from '../../src/core/estimate/fileEstimate';

export interface Job {
  readonly id: number;
  readonly source: string;
  /** Rounds of edits for `reparse`, or null to skip incremental re-parsing. */
  readonly edits: readonly (readonly TextChange[])[] | null;
  /** Also estimate the edited text with the editor's IncrementalEstimator and compare with a fresh estimate. */
  readonly incremental?: boolean;
}

export type Stage = 'estimate' | 'render' | 'parse' | 'reparse' | 'analyze-reparsed' | 'incremental-estimate';

export interface JobError {
  readonly stage: Stage;
  readonly name: string;
  readonly message: string;
  readonly stack: string;
}

export interface Outcome {
  readonly id: number;
  /** Time spent in the code under test, all passes together (the consistency check is not counted). */
  readonly ms: number;
  /**
   * The slowest single pass: estimateSource with rendering, or one round of reparse + analyzeSource.
   * One pass is what one keystroke costs the editor; the time bound applies to it.
   */
  readonly passMs: number;
  readonly error?: JobError;
  /** The re-parsed tree disagrees with its text or with a fresh parse of it. */
  readonly inconsistency?: string;
  /** After an exception: whether the parser still gives the right answer for a known script. */
  readonly healthy?: boolean;
}

const OPTIONS = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };

class StageError extends Error {
  constructor(
    readonly stage: Stage,
    readonly cause: unknown,
  ) {
    super(String(cause));
  }
}

function inStage<T>(stage: Stage, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw new StageError(stage, error);
  }
}

function describe(error: StageError): JobError {
  const cause = error.cause;
  // Subclasses that keep the name "Error" (ParseTimeout) go by their class name.
  const name = cause instanceof Error ? (cause.name === 'Error' ? cause.constructor.name : cause.name) : typeof cause;
  if (cause instanceof Error) return { stage: error.stage, name, message: cause.message, stack: cause.stack ?? '' };
  return { stage: error.stage, name: typeof cause, message: String(cause), stack: '' };
}

const CANARY = 'import torch\nimport torch.nn as nn\nBATCH_SIZE = 32\nmodel = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))\noptimizer = torch.optim.Adam(model.parameters())\n';

/** The estimate of a small known script, to tell whether an exception left the parser (wasm) state damaged. */
export function canary(parser: PythonParser): string {
  try {
    return JSON.stringify(estimateSource('canary.py', CANARY, parser, OPTIONS));
  } catch (error) {
    return `threw: ${String(error)}`;
  }
}

/** The full pipeline, as `gpu-estimate FILE --json` and the plain report run it. */
export function estimateAndRender(parser: PythonParser, source: string): void {
  const estimate = inStage('estimate', () => estimateSource('fuzz.py', source, parser, OPTIONS));
  inStage('render', () => {
    JSON.stringify(estimate);
    humanOutput(estimate);
  });
}

export function runJob(parser: PythonParser, job: Job): Outcome {
  let ms = 0;
  let passMs = 0;
  let pass = 0;
  const timed = <T>(run: () => T): T => {
    const start = performance.now();
    try {
      return run();
    } finally {
      const spent = performance.now() - start;
      ms += spent;
      pass += spent;
    }
  };
  const endPass = () => {
    passMs = Math.max(passMs, pass);
    pass = 0;
  };
  const trees: Tree[] = [];
  try {
    timed(() => estimateAndRender(parser, job.source));
    endPass();
    if (!job.edits) return { id: job.id, ms, passMs };
    // The editor already holds this tree: its parse belongs to no pass.
    let tree = timed(() => inStage('parse', () => parser.parse(job.source)));
    pass = 0;
    trees.push(tree);
    let source = job.source;
    for (const changes of job.edits) {
      const next = timed(() => inStage('reparse', () => reparse(parser, tree, source, changes)));
      trees.push(next.tree);
      tree = next.tree;
      source = next.source;
      timed(() => inStage('analyze-reparsed', () => analyzeSource(tree, source)));
      endPass();
      const inconsistency = checkTree(parser, tree, source);
      if (inconsistency) return { id: job.id, ms, passMs, inconsistency };
    }
    if (job.incremental) {
      const estimator = new IncrementalEstimator(parser);
      try {
        timed(() => inStage('incremental-estimate', () => estimator.estimate('fuzz.py', job.source, OPTIONS)));
        endPass();
        const incremental = timed(() => inStage('incremental-estimate', () => estimator.estimate('fuzz.py', source, OPTIONS)));
        endPass();
        const difference = compareEstimates(incremental, estimateSource('fuzz.py', source, parser, OPTIONS));
        if (difference) return { id: job.id, ms, passMs, inconsistency: `IncrementalEstimator after the edits differs from a fresh estimateSource: ${difference}` };
      } finally {
        estimator.dispose();
      }
    }
    return { id: job.id, ms, passMs };
  } catch (error) {
    endPass();
    if (error instanceof StageError) return { id: job.id, ms, passMs, error: describe(error) };
    return { id: job.id, ms, passMs, error: describe(new StageError('estimate', error)) };
  } finally {
    for (const tree of trees) tree.delete();
  }
}

/** Warnings after which two estimates of one text may differ: time budgets and error recovery. */
const UNSTABLE = /syntax errors|stopped early|ran out of time|could not be parsed in time|too large/;

function compareEstimates(incremental: FileEstimate, fresh: FileEstimate): string | undefined {
  if ([...incremental.warnings, ...fresh.warnings].some((warning) => UNSTABLE.test(warning))) return undefined;
  const summary = (estimate: FileEstimate) => JSON.stringify(estimate.models.map((m) => [m.name, m.line, m.params, m.batchSize, m.memory.estimateMiB]));
  const a = summary(incremental);
  const b = summary(fresh);
  return a === b ? undefined : `${a.slice(0, 200)} vs ${b.slice(0, 200)}`;
}

interface NodeRecord {
  readonly type: string;
  readonly startIndex: number;
  readonly endIndex: number;
  readonly startRow: number;
  readonly startColumn: number;
  readonly endRow: number;
  readonly endColumn: number;
}

function nodesOf(tree: Tree): NodeRecord[] {
  const out: NodeRecord[] = [];
  const cursor = tree.walk();
  try {
    for (;;) {
      const { startPosition: s, endPosition: e } = cursor;
      out.push({ type: cursor.nodeType, startIndex: cursor.startIndex, endIndex: cursor.endIndex, startRow: s.row, startColumn: s.column, endRow: e.row, endColumn: e.column });
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) return out;
      }
    }
  } finally {
    cursor.delete();
  }
}

/** Row and column of every offset, counting rows at '\n' and columns in UTF-16 units as web-tree-sitter does. */
function pointOf(lineStarts: readonly number[], offset: number): { row: number; column: number } {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (lineStarts[middle]! <= offset) low = middle;
    else high = middle - 1;
  }
  return { row: low, column: offset - lineStarts[low]! };
}

/**
 * A re-parsed tree must cover its text with consistent offsets and positions, and, where a fresh
 * parse has no syntax errors, be the fresh parse's tree (tree-sitter's error recovery may differ
 * between a fresh and an incremental parse, so trees with errors are only checked for consistency).
 */
export function checkTree(parser: PythonParser, tree: Tree, source: string): string | undefined {
  const lineStarts = [0];
  for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const nodes = nodesOf(tree);
  const root = nodes[0];
  if (root && (root.endIndex > source.length || root.startIndex < 0)) return `root spans ${root.startIndex}..${root.endIndex} of a ${source.length}-character text`;
  for (const node of nodes) {
    if (node.startIndex > node.endIndex || node.endIndex > source.length) return `${node.type} spans ${node.startIndex}..${node.endIndex} of a ${source.length}-character text`;
    const start = pointOf(lineStarts, node.startIndex);
    const end = pointOf(lineStarts, node.endIndex);
    if (start.row !== node.startRow || start.column !== node.startColumn || end.row !== node.endRow || end.column !== node.endColumn) {
      return `${node.type} at ${node.startIndex}..${node.endIndex} says (${node.startRow},${node.startColumn})-(${node.endRow},${node.endColumn}), the text says (${start.row},${start.column})-(${end.row},${end.column})`;
    }
  }
  const fresh = parser.parse(source);
  try {
    if (fresh.rootNode.hasError) return undefined;
    const expected = nodesOf(fresh);
    if (expected.length !== nodes.length) return `the re-parsed tree has ${nodes.length} nodes, a fresh parse ${expected.length}`;
    for (let i = 0; i < nodes.length; i++) {
      const a = nodes[i]!;
      const b = expected[i]!;
      if (a.type !== b.type || a.startIndex !== b.startIndex || a.endIndex !== b.endIndex) return `node ${i}: re-parsed ${a.type} ${a.startIndex}..${a.endIndex}, fresh ${b.type} ${b.startIndex}..${b.endIndex}`;
    }
    return undefined;
  } finally {
    fresh.delete();
  }
}

/**
 * What makes two exceptions the same bug: the stage, the error's class and its message without
 * numbers or quoted code; for a stack overflow, the functions of the project that keep recurring
 * deep in the stack (where it overflows first is chance).
 */
export function signatureOf(error: JobError): string {
  const message = error.message.replace(/`[^`]*`/g, '`…`').replace(/"[^"]*"/g, '"…"').replace(/\d+/g, 'N');
  const cycle = /Maximum call stack size exceeded/.test(error.message) ? recursionCycle(error.stack) : '';
  return `${error.stage}: ${error.name}: ${message.slice(0, 120)}${cycle ? ` (recursing through ${cycle})` : ''}`;
}

function recursionCycle(stack: string): string {
  const frames = stack
    .split('\n')
    .filter((line) => /^\s+at /.test(line) && /[/\\]src[/\\]/.test(line))
    .map((line) => /^\s+at (?:new )?([^\s(]+) \(/.exec(line)?.[1] ?? `(anonymous in ${/([^/\\]+\.js):\d+/.exec(line)?.[1] ?? '?'})`);
  // Skip the frames nearest the overflow; the rest of a deep stack is the recursion itself.
  const deep = frames.length > 20 ? frames.slice(10) : frames;
  return [...new Set(deep)].sort().join(', ');
}
