/**
 * `npm run bench`: how long the core takes, outside VS Code. Loads the parser once (cold start),
 * then estimates each example and a generated 1,000-line training script many times and prints
 * p50/p95 latencies. Then the analysis speed table: parse + analyzeSource of realistic 1,000- and
 * 10,000-line scripts (built from the fixture corpus, see generatedScripts.ts), from scratch and
 * incrementally after a one-character edit in the middle; then the learned estimators (one ONNX
 * ensemble inference against a FakeTensor estimate of the same model); then hover latency on a
 * 1,000-line file (the first hover in a fresh process, after an edit, on a cached estimate; see
 * hoverBench); then scripts of multi-file projects (projectBench: the first estimate, which reads
 * and parses the imported modules, and an edit after it). `--projects` runs only that last part.
 * Extension activation is timed inside VS Code: test/e2e/run.sh prints the
 * `activate() took` line that extension.ts logs. Numbers, not assertions:
 * the README records them with this command, and the targets are read off the table.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import * as path from 'node:path';
import type { Tree } from 'web-tree-sitter';
import { analyzeSource, type SyntaxCache } from '../src/core/analysis/analyzeSource';
import { estimateSource } from '../src/core/estimate/incrementalEstimator';
import { EstimationPipeline } from '../src/core/estimate/pipeline';
import { featureVector } from '../src/core/features/features';
import { defaultGpuProfile } from '../src/core/gpus/gpuProfiles';
import { changeBetween, reparse, type TextChange } from '../src/core/parsing/incrementalParse';
import { parseableSource } from '../src/core/parsing/parseableSource';
import { findPackageRoot, packagedParserAssets } from '../src/core/parsing/parserAssets';
import { createPythonParser, type PythonParser } from '../src/core/parsing/pythonParser';
import type { FileEstimate } from '../src/core/estimate/fileEstimate';
import { hoverText } from '../src/core/display/hoverText';
import { realisticScript } from './generatedScripts';
import { warmUpEstimation } from '../src/core/warmUp';
import { diskProjectFiles } from '../src/cli/diskProjectFiles';
import { IncrementalEstimator } from '../src/core/estimate/incrementalEstimator';
import { ParsedModules } from '../src/core/project/parsedModules';
import { normalizePath } from '../src/core/project/projectFiles';

const ROOT = findPackageRoot(__dirname);
const RUNS = 200;

/** A long but ordinary script: a model, then many helper functions and a training loop. */
function thousandLineScript(): string {
  const lines = ['import torch', 'import torch.nn as nn', 'BATCH_SIZE = 256', 'model = nn.Sequential(', ...Array.from({ length: 40 }, (_, i) => `    nn.Linear(${512 + i}, ${513 + i}), nn.ReLU(),`), ')', 'optimizer = torch.optim.Adam(model.parameters())'];
  for (let i = 0; lines.length < 990; i++) {
    lines.push(`def helper_${i}(x, scale=${i}):`, `    y = x * scale + ${i}`, `    return torch.relu(y).mean(dim=-1)`, '');
  }
  lines.push('for step in range(100):', '    x = torch.randn(BATCH_SIZE, 512)', '    loss = model(x).sum()', '    loss.backward()', '    optimizer.step()');
  return lines.join('\n');
}

function quantile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function percentiles(samples: number[]): string {
  return `p50 ${quantile(samples, 0.5).toFixed(2)} ms, p95 ${quantile(samples, 0.95).toFixed(2)} ms`;
}

function time(parser: PythonParser, name: string, source: string): void {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    estimateSource(name, source, parser, { gpu: defaultGpuProfile(), safetyMargin: 0.1 });
    samples.push(performance.now() - start);
  }
  console.log(`  ${name.padEnd(32)} ${String(source.split('\n').length).padStart(5)} lines  ${percentiles(samples)}`);
}

interface Row {
  readonly name: string;
  readonly lines: number;
  readonly runs: number;
  readonly samples: readonly number[];
  readonly target?: number;
}

/** Runs `body` `warmup` times untimed, then `runs` times timed. */
function measure(runs: number, warmup: number, body: () => void): number[] {
  for (let i = 0; i < warmup; i++) body();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    body();
    samples.push(performance.now() - start);
  }
  return samples;
}

/**
 * A one-character edit in the middle of the file, and its undo: a letter typed into the first
 * identifier of the middle line, then deleted again, as a user typing there would send them.
 */
function middleEdits(source: string): [TextChange, TextChange] {
  const lines = source.split('\n');
  let offset = 0;
  const middle = Math.floor(lines.length / 2);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[(middle + i) % lines.length]!;
    const lineStart = lines.slice(0, (middle + i) % lines.length).reduce((sum, l) => sum + l.length + 1, 0);
    const match = /^\s*(?!#)[A-Za-z_]\w*/.exec(line);
    if (match) {
      offset = lineStart + match[0].length;
      break;
    }
  }
  return [
    { offset, length: 0, text: 'x' },
    { offset, length: 1, text: '' },
  ];
}

interface Completeness {
  readonly models: number;
  readonly complete: boolean;
}

function completeness(parser: PythonParser, source: string): Completeness {
  const text = parseableSource(source);
  const tree = parser.parse(text);
  try {
    const analysis = analyzeSource(tree, text);
    return { models: analysis.models.length, complete: !analysis.notes.some((note) => note.message.startsWith('Analysis stopped')) };
  } finally {
    tree.delete();
  }
}

/**
 * Full parse + analyzeSource, and reparse + analyzeSource after a one-character edit, of one
 * script, on the path the editor takes (IncrementalEstimator): comment-only lines emptied
 * (parseableSource), the change found by comparing texts, the previous tree re-parsed, the
 * previous analysis's unchanged statement groups reused.
 */
function analysisRows(parser: PythonParser, label: string, source: string, runs: number, target: number): Row[] {
  const lines = source.split('\n').length;
  const full = measure(runs, 3, () => {
    const text = parseableSource(source);
    const tree = parser.parse(text);
    try {
      analyzeSource(tree, text);
    } finally {
      tree.delete();
    }
  });
  const parseOnly = measure(runs, 3, () => parser.parse(parseableSource(source)).delete());

  // Typing in the middle: each run re-parses against the previous run's tree, alternately adding and removing a letter.
  const [type, undo] = middleEdits(source);
  let raw = source;
  let text = parseableSource(source);
  let tree: Tree = parser.parse(text);
  let step = 0;
  const cache: SyntaxCache = {};
  analyzeSource(tree, text, undefined, cache);
  const edit = (analyze: boolean) => () => {
    const change = step++ % 2 === 0 ? type : undo;
    raw = raw.slice(0, change.offset) + change.text + raw.slice(change.offset + change.length);
    const next = parseableSource(raw);
    const reparsed = reparse(parser, tree, text, [changeBetween(text, next)!]);
    tree.delete();
    tree = reparsed.tree;
    text = reparsed.source;
    if (analyze) analyzeSource(tree, text, undefined, cache);
  };
  const incremental = measure(runs, 4, edit(true));
  const reparseOnly = measure(runs, 4, edit(false));
  tree.delete();

  return [
    { name: `${label}: parse + analyze`, lines, runs, samples: full, target },
    { name: `${label}: 1-char edit, reparse + analyze`, lines, runs, samples: incremental, target },
    { name: `${label}: parse only`, lines, runs, samples: parseOnly },
    { name: `${label}: 1-char edit, reparse only`, lines, runs, samples: reparseOnly },
  ];
}

function printTable(rows: readonly Row[]): void {
  const width = Math.max(...rows.map((row) => row.name.length));
  const header = `  ${'case'.padEnd(width)}  ${'lines'.padStart(6)}  ${'runs'.padStart(4)}  ${'p50 ms'.padStart(7)}  ${'p95 ms'.padStart(7)}  target p95`;
  console.log(header);
  console.log(`  ${'-'.repeat(header.length - 2)}`);
  for (const row of rows) {
    const p95 = quantile(row.samples, 0.95);
    const verdict = row.target === undefined ? '' : `<= ${row.target} ms ${p95 <= row.target ? 'met' : 'MISSED'}`;
    console.log(`  ${row.name.padEnd(width)}  ${row.lines.toLocaleString('en-US').padStart(6)}  ${String(row.runs).padStart(4)}  ${quantile(row.samples, 0.5).toFixed(2).padStart(7)}  ${p95.toFixed(2).padStart(7)}  ${verdict}`);
  }
}

async function main(): Promise<void> {
  const start = performance.now();
  const parser = await createPythonParser(packagedParserAssets(ROOT));
  console.log(`parser load (cold): ${(performance.now() - start).toFixed(1)} ms`);
  if (process.argv.includes('--projects')) {
    projectBench(parser);
    return;
  }
  console.log(`estimate a whole file (parse + analyse + estimate), ${RUNS} runs each:`);
  for (const file of readdirSync(path.join(ROOT, 'examples')).filter((f) => f.endsWith('.py')).sort()) {
    time(parser, `examples/${file}`, readFileSync(path.join(ROOT, 'examples', file), 'utf8'));
  }
  time(parser, 'generated 1,000-line script', thousandLineScript());

  const scripts = [
    { label: '1,000 lines', source: realisticScript(ROOT, 1_000), runs: 300, target: 15 },
    { label: '10,000 lines', source: realisticScript(ROOT, 10_000), runs: 60, target: 100 },
  ];
  console.log('');
  console.log(`analysis speed: parse + analyzeSource of realistic scripts built from the fixture corpus (${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  for (const { label, source } of scripts) {
    const { models, complete } = completeness(parser, source);
    console.log(`  ${label}: ${source.length.toLocaleString('en-US')} characters, ${models} models found, analysis ${complete ? 'complete' : 'stopped early by its budget (times are capped)'}`);
  }
  printTable(scripts.flatMap(({ label, source, runs, target }) => analysisRows(parser, label, source, runs, target)));
  await learnedBench(parser);
  await hoverBench(parser);
  projectBench(parser);
}

const PROJECT_SCRIPTS = [
  { project: 'nanogpt', entry: 'train.py' },
  { project: 'cifar_zoo', entry: 'main.py' },
  { project: 'relative_pkg', entry: 'train.py' },
];

/**
 * Scripts whose model lives in other files of their project (test/fixtures/projects): the first
 * estimate of the script, with a new cache of parsed modules each run, so every imported file is
 * read from disk, parsed and run (what opening the script in the editor costs); then a
 * one-character edit of the script, with the imported files unchanged (what typing costs); then
 * the CLI as a process, parser and ONNX sessions loaded from nothing, learned step included.
 */
function projectBench(parser: PythonParser): void {
  console.log('');
  console.log(`multi-file projects: the analysis pass with the project's imports followed (${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  const rows: Row[] = [];
  for (const { project, entry } of PROJECT_SCRIPTS) {
    const root = path.join(ROOT, 'test', 'fixtures', 'projects', project);
    const file = path.join(root, entry);
    const source = readFileSync(file, 'utf8');
    const lines = source.split('\n').length;
    const projectOf = (parsed: ParsedModules) => ({ source: { files: diskProjectFiles, path: normalizePath(file), root: normalizePath(root) }, parse: (p: string, text: string) => parsed.parse(p, text) });
    let last: FileEstimate | undefined;
    const first = measure(100, 5, () => {
      last = estimateSource(entry, source, parser, HOVER_OPTIONS, projectOf(new ParsedModules(parser)));
    });
    const files = last?.project?.files.length ?? 0;
    const estimator = new IncrementalEstimator(parser);
    const parsed = new ParsedModules(parser);
    const [type, undo] = middleEdits(source);
    let text = source;
    let step = 0;
    estimator.estimate(entry, text, HOVER_OPTIONS, projectOf(parsed));
    const edits = measure(200, 4, () => {
      const change = step++ % 2 === 0 ? type : undo;
      text = text.slice(0, change.offset) + change.text + text.slice(change.offset + change.length);
      estimator.estimate(entry, text, HOVER_OPTIONS, projectOf(parsed));
    });
    estimator.dispose();
    rows.push({ name: `${project}/${entry} (+${files} files): first estimate`, lines, runs: first.length, samples: first, target: 500 });
    rows.push({ name: `${project}/${entry}: 1-char edit, re-estimate`, lines, runs: edits.length, samples: edits, target: 30 });
  }
  printTable(rows);
  const cli = path.join(ROOT, 'dist', 'cli.js');
  for (const { project, entry } of PROJECT_SCRIPTS.slice(0, 1)) {
    const script = path.join('test', 'fixtures', 'projects', project, entry);
    const samples = measure(10, 1, () => {
      spawnSync(process.execPath, [cli, script], { cwd: ROOT, encoding: 'utf8' });
    });
    console.log(`  gpu-estimate ${script} (a fresh process: Node, parser, ONNX sessions, learned step): ${percentiles(samples)}`);
  }
}

const HOVER_FILE = 'hover_1000_lines.py';
const HOVER_OPTIONS = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };

/**
 * What the hover provider does (src/extension/hoverProvider.ts via EstimationService), without
 * VS Code: estimate the document (EstimationPipeline: the analysis, then the ONNX ensembles with the default
 * execution provider), find the model, build the hover's Markdown (hoverText, the same text the
 * editor shows). Runs in a fresh process (`--first-hover`) so the parser, onnxruntime and the
 * sessions load as after activation.
 */
async function firstHover(): Promise<void> {
  const source = realisticScript(ROOT, 1_000);
  const warm = process.argv.includes('--warm');
  const modelsDir = path.join(ROOT, 'models');
  // What activation starts in the background (EstimationService.warmUp): the parser, the ensembles'
  // sessions and one estimate of a built-in script; the service then serves the hover with both.
  const warmStarted = performance.now();
  const models = { modelsDir, executionProvider: 'auto' } as const;
  const warmed = warm ? new EstimationPipeline(await createPythonParser(packagedParserAssets(ROOT)), models) : undefined;
  if (warmed) await warmUpEstimation(warmed);
  const warmUpMs = performance.now() - warmStarted;
  const started = performance.now();
  const pipeline = warmed ?? new EstimationPipeline(await createPythonParser(packagedParserAssets(ROOT)), models);
  const parsed = performance.now();
  const estimate = await pipeline.estimate({ file: HOVER_FILE, source, options: HOVER_OPTIONS, document: HOVER_FILE });
  const analysed = parsed + pipeline.lastTimings.analysisMs;
  const text = hoverText(estimate, estimate.models[0]!);
  const done = performance.now();
  await pipeline.dispose();
  console.log(JSON.stringify({ ...(warm ? { warmUpMs } : {}), totalMs: done - started, parserMs: parsed - started, analysisMs: analysed - parsed, learnedMs: done - analysed, models: estimate.models.length, hoverChars: text.length }));
}

/** The first hover (a fresh process), then hovers after a one-character edit and hovers on a cached estimate. */
async function hoverBench(parser: PythonParser): Promise<void> {
  const source = realisticScript(ROOT, 1_000);
  const lines = source.split('\n').length;
  console.log('');
  console.log(`hover latency on a ${lines.toLocaleString('en-US')}-line file (realistic script, estimate + ONNX ensembles + hover Markdown, no VS Code)`);
  for (const [label, flags] of [
    ['first hover in a fresh process, nothing loaded', ['--first-hover']],
    ['first hover after activation\'s warm-up (parser, sessions, a built-in script estimated three times)', ['--first-hover', '--warm']],
  ] as const) {
    const child = spawnSync(process.execPath, [__filename, ...flags], { cwd: ROOT, encoding: 'utf8' });
    const first = child.status === 0 ? (JSON.parse(child.stdout.trim().split('\n').pop()!) as { warmUpMs?: number; totalMs: number; parserMs: number; analysisMs: number; learnedMs: number; models: number }) : undefined;
    if (first) {
      console.log(`  ${label}: ${first.totalMs.toFixed(1)} ms  target <= 500 ms ${first.totalMs <= 500 ? 'met' : 'MISSED'}`);
      if (first.warmUpMs !== undefined) console.log(`    the warm-up itself, in the background after activation: ${first.warmUpMs.toFixed(1)} ms`);
      console.log(`    parser load ${first.parserMs.toFixed(1)} ms, parse + analysis ${first.analysisMs.toFixed(1)} ms (${first.models} models), ONNX load + learned step + hover text ${first.learnedMs.toFixed(1)} ms`);
    } else console.log(`  ${label}: not measured (${child.stderr.trim().split('\n').pop() ?? `exit ${child.status}`})`);
  }

  const pipeline = new EstimationPipeline(parser, { modelsDir: path.join(ROOT, 'models'), executionProvider: 'auto' });
  try {
    const [type, undo] = middleEdits(source);
    let text = source;
    let step = 0;
    let estimate: FileEstimate | undefined;
    const hover = async (edit: boolean): Promise<void> => {
      if (edit || !estimate) {
        const change = step++ % 2 === 0 ? type : undo;
        if (edit) text = text.slice(0, change.offset) + change.text + text.slice(change.offset + change.length);
        estimate = await pipeline.estimate({ file: HOVER_FILE, source: text, options: HOVER_OPTIONS, document: HOVER_FILE });
      }
      const model = estimate.models.find((m) => m.line === estimate!.models[0]!.line)!;
      hoverText(estimate, model);
    };
    await hover(false);
    const afterEdit = await measureAsync(100, 4, () => hover(true));
    const cached = await measureAsync(1000, 20, () => hover(false));
    printTable([
      { name: 'hover after a 1-char edit (re-estimate)', lines, runs: afterEdit.length, samples: afterEdit, target: 30 },
      { name: 'hover, estimate cached (same version)', lines, runs: cached.length, samples: cached, target: 30 },
    ]);
  } finally {
    await pipeline.dispose();
  }
}

/**
 * The learned estimators: one ensemble inference (the bundled ONNX graph, one feature row, CPU),
 * the whole learned step of an estimate (inference plus the largest-batch search), and a
 * FakeTensor-based estimate of the same model with Debian's torch (harness/training/faketensor.py,
 * run as a subprocess), with the ratio of the two.
 */
async function learnedBench(parser: PythonParser): Promise<void> {
  const fixture = 'mlp_mnist_sequential.py';
  const source = readFileSync(path.join(ROOT, 'test', 'fixtures', 'corpus', fixture), 'utf8');
  const lines = source.split('\n').length;
  const pipeline = new EstimationPipeline(parser, { modelsDir: path.join(ROOT, 'models'), executionProvider: 'cpu' });
  const request = { file: fixture, source, options: { gpu: defaultGpuProfile(), safetyMargin: 0.1 } };
  const model = estimateSource(request.file, source, parser, request.options).models[0]!;
  const features = featureVector({ table: model.layerTable, batchSize: model.batchSize!, optimizer: model.optimizer, precision: model.precision });
  const runner = pipeline.onnx;
  console.log('');
  console.log(`learned estimators: test/fixtures/corpus/${fixture} (${model.family.toUpperCase()}, batch ${model.batchSize}, ${model.optimizer})`);
  try {
    const cold = performance.now();
    await runner.run(model.family, [features]);
    console.log(`  session load + first inference (cold): ${(performance.now() - cold).toFixed(1)} ms`);
    const inference = await measureAsync(2000, 50, () => runner.run(model.family, [features]));
    // Each estimate without a document key builds new layer tables, so the learned pass meets a new model every time (learned estimates are kept per table object).
    const learned: number[] = [];
    for (let i = 0; i < 105; i++) {
      await pipeline.estimate(request);
      if (i >= 5) learned.push(pipeline.lastTimings.learnedMs);
    }
    const rows: Row[] = [
      { name: 'one ensemble inference (1 row, CPU)', lines, runs: inference.length, samples: inference, target: 1 },
      { name: 'learned step of a new model (+ max batch)', lines, runs: learned.length, samples: learned },
    ];
    const fake = fakeTensorTimes(fixture);
    if (fake.samples) rows.push({ name: 'FakeTensor estimate (torch 1.13, in process)', lines, runs: fake.samples.length, samples: fake.samples });
    printTable(rows);
    if (fake.samples) {
      const ratio = quantile(fake.samples, 0.5) / quantile(inference, 0.5);
      console.log(`  FakeTensor: ${fake.detail}; median ${ratio.toFixed(0)}x one ensemble inference`);
    } else console.log(`  FakeTensor: not measured (${fake.detail})`);
  } finally {
    await pipeline.dispose();
  }
}

async function measureAsync(runs: number, warmup: number, body: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await body();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await body();
    samples.push(performance.now() - start);
  }
  return samples;
}

/** Times of the FakeTensor estimate (ms, measured inside Python), and what it said. */
function fakeTensorTimes(fixture: string): { samples?: number[]; detail: string } {
  const started = performance.now();
  const result = spawnSync('/usr/bin/python3', ['-m', 'harness.training.faketensor', '--fixture', fixture, '--runs', '20'], { cwd: ROOT, encoding: 'utf8' });
  const wall = performance.now() - started;
  if (result.status !== 0) return { detail: (result.error?.message ?? result.stderr.trim().split('\n').pop()) || `exit ${result.status}` };
  const report = JSON.parse(result.stdout) as { peakMiB: number; seconds: number[]; torch: string };
  return {
    samples: report.seconds.map((s) => s * 1000),
    detail: `${report.peakMiB.toFixed(1)} MiB of tensors (no CUDA context or allocator reserve); the subprocess took ${(wall / 1000).toFixed(1)} s with Python start-up and torch ${report.torch} import`,
  };
}

if (process.argv.includes('--first-hover')) void firstHover();
else void main();
