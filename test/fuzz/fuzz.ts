/**
 * Fuzzes the whole analysis pipeline:
 *   node out/test/fuzz/fuzz.js [--runs N] [--seed S] [--out DIR] [--only INDEX] [--workers W] [--bound MS] [--by-kind]
 * (defaults: 10,000 inputs, seed 1, out/fuzz-failures, 2 workers, 250 ms). `--only I` re-runs input I of
 * the seed alone and saves it; `--by-kind` breaks the timing table down by generator.
 *
 * Each input is a pure function of (seed, index): mutated fixture scripts, deep nesting, recursion
 * in the source, huge literals, degenerate and multi-megabyte files, and fast-check generated token
 * soups and grammar-built training scripts. Every input goes through estimateSource (default GPU)
 * and the CLI's renderers; a share also through incremental re-parsing with random edits (and some
 * of those through the editor's IncrementalEstimator). Inputs run in worker processes so that a
 * hang or an out-of-memory kills only that input.
 *
 * An input fails when it throws, takes longer than its time bound, hangs past the hard limit,
 * kills the worker, or leaves an inconsistent re-parsed tree. Failing inputs are saved under
 * DIR/seed-S/ (default out/fuzz-failures) as .json (exact source, edits, error) and .py, with a
 * shrunk .min.py for the first input of each distinct exception; `node out/test/fuzz/repro.js FILE`
 * replays one on the main thread. Exit status 1 when any input failed.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import * as path from 'node:path';
import { MAX_SOURCE_CHARS } from '../../src/core/estimate/sourceLimit';
import { findPackageRoot } from '../../src/core/parsing/parserAssets';
import { loadCorpus, type CorpusFile } from './corpus';
import { bigInput, deepInput, edgeInput, hugeInput, mutationInput, randomEdits, recursionInput, type FuzzInput } from './generators';
import { programArbitrary, sampleOne, soupArbitrary } from './grammar';
import { signatureOf, type Job, type JobError, type Outcome } from './pipeline';
import { Rng, inputSeed } from './rng';
import type { FromWorker, ToWorker } from './worker';

const ROOT = findPackageRoot(__dirname);

/**
 * Time bounds: an input taking longer fails. They follow the analyzer's own guarantees: a parse
 * gives up after 1.5 s (PARSE_TIME_LIMIT_MS) and one file's analysis after 0.4 s (fileBudget),
 * so no input should take 2 s. Large inputs are the few multi-megabyte files (cut to 2 MB).
 */
const DEFAULT_BOUND_MS = 2_000;
/** The bound in force (--bound MS overrides the default). */
let boundMs = DEFAULT_BOUND_MS;
const LARGE_INPUT_CHARS = 1_000_000;
const LARGE_BOUND_MS = 3_000;
/** Past these the worker is killed and the input counts as hung. */
const HARD_LIMIT_MS = 8_000;
const LARGE_HARD_LIMIT_MS = 12_000;
/** An input over its bound but under this many times it runs a second time, keeping the faster time. */
const RETRY_BELOW = 2;
/** The worker's V8 stack: Node's default (984 KB), as the CLI runs. */
const WORKER_STACK_KB = 984;
const WORKER_HEAP_MB = 2_048;
/** Share of inputs (up to REPARSE_MAX_CHARS) that also go through `reparse` with random edits. */
const REPARSE_SHARE = 0.15;
/** Of those, the share that also goes through the editor's IncrementalEstimator (compared with a fresh estimate). */
const INCREMENTAL_ESTIMATOR_SHARE = 0.33;
const REPARSE_MAX_CHARS = 100_000;
/** One multi-megabyte input per this many inputs (3 in a run of 10,000). */
const BIG_EVERY = 3_000;
/** Failing inputs saved: the first few of each distinct failure, up to a total. */
const SAVED_PER_FAILURE = 2;
const SAVED_FAILURES = 30;
/** Distinct exceptions whose first input is shrunk, and the time each may take. */
const MINIMIZED_SIGNATURES = 4;
const MINIMIZE_MS = 5_000;

const FAMILIES: readonly (readonly [string, number])[] = [
  ['mutate', 46],
  ['fc-program', 24],
  ['fc-soup', 21],
  ['recursion', 2],
  ['deep', 2.5],
  ['huge', 2.5],
  ['edge', 2],
];

interface Arguments {
  runs: number;
  seed: number;
  out: string;
  only?: number;
  byKind: boolean;
  workers: number;
  boundMs: number;
}

function parseArguments(argv: readonly string[]): Arguments {
  const args: Arguments = { runs: 10_000, seed: 1, out: path.join(ROOT, 'out', 'fuzz-failures'), byKind: false, workers: Math.min(2, availableParallelism()), boundMs: DEFAULT_BOUND_MS };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--by-kind') {
      args.byKind = true;
      continue;
    }
    const value = argv[i + 1];
    const number = Number(value);
    if ((flag === '--runs' || flag === '--seed' || flag === '--only' || flag === '--workers' || flag === '--bound') && (value === undefined || !Number.isInteger(number) || number < 0)) {
      throw new Error(`${flag} needs a non-negative integer`);
    }
    if (flag === '--runs') args.runs = number;
    else if (flag === '--seed') args.seed = number;
    else if (flag === '--only') args.only = number;
    else if (flag === '--workers') args.workers = Math.max(1, number);
    else if (flag === '--bound') args.boundMs = Math.max(1, number);
    else if (flag === '--out' && value) args.out = path.resolve(value);
    else throw new Error(`unknown argument ${flag} (usage: fuzz.js [--runs N] [--seed S] [--out DIR] [--only INDEX] [--workers W] [--bound MS] [--by-kind])`);
    i += 1;
  }
  return args;
}

interface Generated extends FuzzInput {
  readonly index: number;
  readonly edits: Job['edits'];
  readonly incremental: boolean;
}

/** Input `index` of the run with `seed`: the same pair always gives the same input. */
function generate(seed: number, index: number, runs: number, corpus: readonly CorpusFile[]): Generated {
  const rng = new Rng(inputSeed(seed, index));
  let input: FuzzInput;
  if (index % BIG_EVERY === BIG_EVERY / 2 && runs >= BIG_EVERY) {
    input = bigInput(Math.floor(index / BIG_EVERY), rng, corpus, MAX_SOURCE_CHARS);
  } else {
    const family = rng.weighted(FAMILIES);
    if (family === 'mutate') input = mutationInput(rng, corpus);
    else if (family === 'fc-program') input = { kind: 'fc:program', source: sampleOne(programArbitrary, inputSeed(seed, index) ^ 0x5eed) };
    else if (family === 'fc-soup') input = { kind: 'fc:soup', source: sampleOne(soupArbitrary, inputSeed(seed, index) ^ 0x50a9) };
    else if (family === 'recursion') input = recursionInput(rng);
    else if (family === 'deep') input = deepInput(rng);
    else if (family === 'huge') input = hugeInput(rng);
    else input = edgeInput(rng);
  }
  const edits = input.source.length <= REPARSE_MAX_CHARS && rng.chance(REPARSE_SHARE) ? randomEdits(rng, input.source) : null;
  return { ...input, index, edits, incremental: edits !== null && rng.chance(INCREMENTAL_ESTIMATOR_SHARE) };
}

type RunResult = { readonly outcome: Outcome } | { readonly hung: true } | { readonly crashed: string };

/**
 * The worker: a child process, restarted after it is killed or dies. A process, not a thread,
 * because some failures (V8's "invalid table size" out-of-memory) abort the whole process, and
 * because a thread stuck in a long builtin loop does not stop when terminated; a process is killed.
 */
class Runner {
  private child: ChildProcess | undefined;
  private ready: Promise<void> | undefined;

  private start(): { child: ChildProcess; ready: Promise<void> } {
    if (!this.child || !this.ready) {
      const child = fork(path.join(__dirname, 'worker.js'), [], {
        execArgv: [`--stack-size=${WORKER_STACK_KB}`, `--max-old-space-size=${WORKER_HEAP_MB}`],
        // Structured clone, not JSON: lone surrogates and NULs reach the worker exactly.
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      // V8's fatal out-of-memory report goes to stderr; keep only its first line for the failure record.
      child.stderr?.on('data', (chunk: Buffer) => {
        const line = chunk.toString().split('\n').find((l) => /FATAL|Error/.test(l));
        if (line) this.lastError = line.trim();
      });
      this.child = child;
      this.ready = new Promise((resolve, reject) => {
        const onMessage = (message: FromWorker) => {
          if (message.type !== 'ready') return;
          child.off('message', onMessage);
          child.off('exit', onExit);
          resolve();
        };
        const onExit = (code: number | null, signal: string | null) => reject(new Error(`the fuzz worker exited while starting (code ${code}, signal ${signal}): ${this.lastError}`));
        child.on('message', onMessage);
        child.once('exit', onExit);
      });
    }
    return { child: this.child, ready: this.ready };
  }

  private lastError = '';

  /** Sends one message and waits for the reply it names, the hard limit, or the worker's death. */
  async request<T>(message: ToWorker, accept: (reply: FromWorker) => T | undefined, hardMs: number): Promise<T | { hung: true } | { crashed: string }> {
    const { child, ready } = this.start();
    await ready;
    this.lastError = '';
    return new Promise((resolve) => {
      const finish = (result: T | { hung: true } | { crashed: string }, dead: boolean) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (dead) this.discard();
        resolve(result);
      };
      const onMessage = (reply: FromWorker) => {
        const accepted = accept(reply);
        if (accepted !== undefined) finish(accepted, false);
      };
      const onExit = (code: number | null, signal: string | null) => {
        // Let the rest of stderr arrive before naming the cause.
        setTimeout(() => finish({ crashed: `worker died (${signal ?? `exit code ${code}`})${this.lastError ? `: ${this.lastError}` : ''}` }, true), 50);
      };
      const timer = setTimeout(() => finish({ hung: true }, true), hardMs);
      child.on('message', onMessage);
      child.on('exit', onExit);
      child.send(message);
    });
  }

  run(job: Job, hardMs: number): Promise<RunResult> {
    return this.request(message(job), (reply) => (reply.type === 'outcome' && reply.outcome.id === job.id ? { outcome: reply.outcome } : undefined), hardMs);
  }

  /** Kills the worker (after a hang, a crash, or an exception that left the parser's wasm state damaged). */
  discard(): void {
    const child = this.child;
    this.child = undefined;
    this.ready = undefined;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

function message(job: Job): ToWorker {
  return { type: 'run', job };
}

/**
 * Shrinks a source that makes the pipeline throw, keeping the same exception (signature): whole
 * lines first, then characters (delta debugging), within a time budget. Each candidate runs as a
 * job of its own, so a candidate that hangs or kills the worker only counts as not failing the same way.
 */
async function shrink(runner: Runner, source: string, signature: string, budgetMs: number): Promise<string> {
  const deadline = performance.now() + budgetMs;
  let id = -1;
  const fails = async (candidate: string): Promise<boolean> => {
    const result = await runner.run({ id: id--, source: candidate, edits: null }, HARD_LIMIT_MS);
    return 'outcome' in result && result.outcome.error !== undefined && signatureOf(result.outcome.error) === signature;
  };
  const reduce = async (units: string[], join: string): Promise<string[]> => {
    let granularity = 2;
    while (units.length >= 2 && performance.now() < deadline) {
      const chunk = Math.ceil(units.length / granularity);
      let reduced = false;
      for (let start = 0; start < units.length && performance.now() < deadline; start += chunk) {
        const candidate = [...units.slice(0, start), ...units.slice(start + chunk)];
        if (await fails(candidate.join(join))) {
          units = candidate;
          granularity = Math.max(granularity - 1, 2);
          reduced = true;
          break;
        }
      }
      if (!reduced) {
        if (granularity >= units.length) break;
        granularity = Math.min(units.length, granularity * 2);
      }
    }
    return units;
  };
  const byLines = (await reduce(source.split('\n'), '\n')).join('\n');
  return byLines.length <= 20_000 ? (await reduce([...byLines], '')).join('') : byLines;
}

type FailureReason = 'threw' | 'slow' | 'hung' | 'crashed' | 'inconsistent';

interface Failure {
  readonly input: Generated;
  readonly reason: FailureReason;
  readonly detail: string;
  readonly error?: JobError;
  readonly ms?: number;
}

interface Sample {
  readonly ms: number;
  readonly kind: string;
  readonly index: number;
  readonly chars: number;
}

function family(kind: string): string {
  return kind.split(':')[0]!;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function boundFor(input: FuzzInput): number {
  return input.source.length >= LARGE_INPUT_CHARS ? LARGE_BOUND_MS : boundMs;
}

function passLimitFor(input: FuzzInput): number {
  return input.source.length >= LARGE_INPUT_CHARS ? LARGE_HARD_LIMIT_MS : Math.max(HARD_LIMIT_MS, 4 * boundMs);
}

/** The hard limit covers every pass of an input: the estimate and each round of edits. */
function hardLimitFor(input: Generated): number {
  return (1 + (input.edits?.length ?? 0) + (input.incremental ? 2 : 0)) * passLimitFor(input);
}

/** What makes two failures the same finding. */
function failureKey(failure: Failure): string {
  const kind = failure.input.kind.startsWith('mutate:') ? 'mutate' : failure.input.kind;
  return failure.reason === 'threw' || failure.reason === 'inconsistent' ? `${failure.reason}: ${failure.detail}` : `${failure.reason}: ${kind}`;
}

function fmt(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

function save(dir: string, seed: number, failure: Failure, minimized?: string): string {
  const { input } = failure;
  const base = path.join(dir, `${String(input.index).padStart(5, '0')}-${input.kind.replace(/[^A-Za-z0-9_+-]+/g, '_').slice(0, 60)}`);
  const record = {
    reproduce: `node out/test/fuzz/fuzz.js --seed ${seed} --only ${input.index}`,
    seed,
    index: input.index,
    kind: input.kind,
    reason: failure.reason,
    detail: failure.detail,
    ms: failure.ms,
    error: failure.error,
    chars: input.source.length,
    edits: input.edits,
    incremental: input.incremental,
    // JSON keeps lone surrogates and NULs exactly; the .py copy is UTF-8 (lone surrogates become U+FFFD).
    source: input.source,
    minimized,
  };
  writeFileSync(`${base}.json`, JSON.stringify(record, null, 1));
  writeFileSync(`${base}.py`, input.source);
  if (minimized !== undefined) writeFileSync(`${base}.min.py`, minimized);
  return base;
}

async function main(): Promise<number> {
  const args = parseArguments(process.argv.slice(2));
  boundMs = args.boundMs;
  const corpus = loadCorpus(ROOT);
  if (corpus.length === 0) throw new Error(`no fixture scripts found under ${ROOT}`);
  const failureDir = path.join(args.out, `seed-${args.seed}`);
  // A full run starts a clean folder; --only adds to it.
  if (args.only === undefined) rmSync(failureDir, { recursive: true, force: true });

  const indices = args.only !== undefined ? [args.only] : Array.from({ length: args.runs }, (_, i) => i);
  const runs = args.only !== undefined ? Math.max(args.runs, args.only + 1) : args.runs;
  console.log(`fuzz: seed ${args.seed}, ${indices.length} inputs on ${Math.min(args.workers, indices.length)} worker process(es), corpus of ${corpus.length} scripts (${[...new Set(corpus.map((f) => path.dirname(f.name)))].join(', ')})`);
  console.log(`time per input = its slowest pass (estimateSource + rendering, one reparse + analyzeSource round, or one IncrementalEstimator.estimate)`);
  console.log(`time bound per input: ${boundMs} ms, ${LARGE_BOUND_MS} ms for inputs of ${LARGE_INPUT_CHARS.toLocaleString('en-US')}+ characters; hard limit ${Math.max(HARD_LIMIT_MS, 4 * boundMs)} ms and ${LARGE_HARD_LIMIT_MS} ms per pass (worker killed); worker processes with a ${WORKER_STACK_KB} KB stack and ${WORKER_HEAP_MB} MB heap`);

  const samples: Sample[] = [];
  const failures: Failure[] = [];
  let reparsed = 0;
  let incrementalEstimates = 0;
  let unhealthy = 0;
  let parseTimeouts = 0;
  // A digest of every input in index order: the same seed (and corpus) must give the same digest.
  const digests: string[] = new Array<string>(indices.length);
  const wallStart = performance.now();

  const runInput = async (runner: Runner, input: Generated): Promise<void> => {
    const job = { id: input.index, source: input.source, edits: input.edits, incremental: input.incremental };
    let result = await runner.run(job, hardLimitFor(input));
    // A slightly slow input runs once more and keeps its faster time: one GC pause or a busy machine is not a finding.
    if ('outcome' in result && !result.outcome.error && result.outcome.passMs > boundFor(input) && result.outcome.passMs < RETRY_BELOW * boundFor(input)) {
      const first = result.outcome;
      const again = await runner.run(job, hardLimitFor(input));
      if ('outcome' in again && again.outcome.passMs < first.passMs) result = again;
    }
    if (input.edits) reparsed += 1;
    if (input.incremental) incrementalEstimates += 1;
    if ('hung' in result) {
      failures.push({ input, reason: 'hung', detail: `no answer within ${hardLimitFor(input) / 1000} s` });
      samples.push({ ms: passLimitFor(input), kind: input.kind, index: input.index, chars: input.source.length });
    } else if ('crashed' in result) {
      failures.push({ input, reason: 'crashed', detail: result.crashed });
    } else {
      const { outcome } = result;
      samples.push({ ms: outcome.passMs, kind: input.kind, index: input.index, chars: input.source.length });
      if (outcome.error?.name === 'ParseTimeout') {
        // The parser's documented time limit (PARSE_TIME_LIMIT_MS) when a raw tree-sitter parse
        // (the editor's re-parse) meets pathological input: a bounded refusal, counted as timing.
        parseTimeouts += 1;
        if (outcome.passMs > boundFor(input)) failures.push({ input, reason: 'slow', detail: `${outcome.error.stage}: ParseTimeout (${outcome.error.message}) after ${fmt(outcome.passMs)} ms`, ms: outcome.passMs });
      } else if (outcome.error) {
        failures.push({ input, reason: 'threw', detail: signatureOf(outcome.error), error: outcome.error, ms: outcome.passMs });
        if (outcome.healthy === false) {
          unhealthy += 1;
          runner.discard();
        }
      } else if (outcome.inconsistency) {
        failures.push({ input, reason: 'inconsistent', detail: outcome.inconsistency, ms: outcome.passMs });
      } else if (outcome.passMs > boundFor(input)) {
        failures.push({ input, reason: 'slow', detail: `${fmt(outcome.passMs)} ms > ${boundFor(input)} ms (${input.source.length.toLocaleString('en-US')} characters)`, ms: outcome.passMs });
      }
    }
  };

  // One lane per worker; each takes the next index, generates its input, and runs it.
  let cursor = 0;
  let done = 0;
  const lane = async (runner: Runner): Promise<void> => {
    while (cursor < indices.length) {
      const position = cursor++;
      const input = generate(args.seed, indices[position]!, runs, corpus);
      digests[position] = createHash('sha1').update(input.kind).update('\0').update(input.source).update('\0').update(JSON.stringify(input.edits)).update(String(input.incremental)).digest('hex');
      await runInput(runner, input);
      done += 1;
      if (indices.length >= 1000 && done % 2000 === 0) {
        console.log(`  ${done}/${indices.length} inputs, ${failures.length} failed, ${((performance.now() - wallStart) / 1000).toFixed(1)} s`);
      }
    }
  };
  const runners = Array.from({ length: Math.min(args.workers, indices.length) }, () => new Runner());
  await Promise.all(runners.map(lane));
  for (const other of runners.slice(1)) other.discard();
  const runner = runners[0]!;
  // Lanes finish out of order; report in index order so a seed always prints the same "first" inputs.
  failures.sort((a, b) => a.input.index - b.input.index);
  const wallSeconds = (performance.now() - wallStart) / 1000;

  // Save the first failures, minimizing one input per distinct exception.
  mkdirSync(failureDir, { recursive: true });
  const minimizedSignatures = new Set<string>();
  const savedPaths: string[] = [];
  const savedPerKey = new Map<string, number>();
  const toSave = failures.filter((failure) => {
    const count = savedPerKey.get(failureKey(failure)) ?? 0;
    savedPerKey.set(failureKey(failure), count + 1);
    return args.only !== undefined || count < SAVED_PER_FAILURE;
  });
  for (const failure of toSave.slice(0, args.only !== undefined ? undefined : SAVED_FAILURES)) {
    let minimized: string | undefined;
    if (failure.reason === 'threw' && failure.error && failure.input.source.length <= 300_000 && !minimizedSignatures.has(failure.detail) && minimizedSignatures.size < MINIMIZED_SIGNATURES) {
      minimizedSignatures.add(failure.detail);
      minimized = await shrink(runner, failure.input.source, failure.detail, MINIMIZE_MS);
    }
    savedPaths.push(save(failureDir, args.seed, failure, minimized));
  }
  if (args.only !== undefined && failures.length === 0) {
    const input = generate(args.seed, args.only, runs, corpus);
    writeFileSync(path.join(failureDir, `${String(args.only).padStart(5, '0')}-input.py`), input.source);
    console.log(`input ${args.only}: ${input.kind}, ${input.source.length} characters, ${samples[0] ? fmt(samples[0].ms) : '?'} ms, passed (saved to ${failureDir})`);
  }
  runner.discard();

  const saveSeconds = (performance.now() - wallStart) / 1000 - wallSeconds;
  console.log(`inputs digest (same seed and corpus, same digest): ${createHash('sha1').update(digests.join('')).digest('hex').slice(0, 16)}; machine: ${availableParallelism()} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  report(samples, failures, `${reparsed} also re-parsed incrementally with random edits, ${incrementalEstimates} of them also estimated by IncrementalEstimator; ${parseTimeouts} reached the parser's time limit (a bounded, reported refusal)`, wallSeconds, saveSeconds, failureDir, savedPaths, args.byKind);
  if (unhealthy > 0) console.log(`${unhealthy} exceptions left the parser answering a known script wrongly; the worker was restarted after each`);
  const failed = failures.length;
  console.log(`fuzz: ${indices.length - failed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

function report(samples: readonly Sample[], failures: readonly Failure[], reparsed: string, wallSeconds: number, saveSeconds: number, failureDir: string, savedPaths: readonly string[], byKind: boolean): void {
  const group = (kind: string) => (byKind ? kind.replace(/^mutate:.*/, 'mutate') : family(kind));
  const byFamily = new Map<string, number[]>();
  for (const sample of samples) {
    const list = byFamily.get(group(sample.kind)) ?? [];
    list.push(sample.ms);
    byFamily.set(group(sample.kind), list);
  }
  const failedByFamily = new Map<string, number>();
  for (const failure of failures) failedByFamily.set(group(failure.input.kind), (failedByFamily.get(group(failure.input.kind)) ?? 0) + 1);
  console.log('');
  const width = Math.max(12, ...[...byFamily.keys()].map((name) => name.length));
  console.log(`${(byKind ? 'kind' : 'family').padEnd(width)} ${'inputs'.padStart(6)} ${'failed'.padStart(6)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'total s'.padStart(8)}`);
  for (const [name, times] of [...byFamily.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const sorted = [...times].sort((a, b) => a - b);
    console.log(`${name.padEnd(width)} ${String(times.length).padStart(6)} ${String(failedByFamily.get(name) ?? 0).padStart(6)} ${fmt(quantile(sorted, 0.5)).padStart(8)} ${fmt(quantile(sorted, 0.99)).padStart(8)} ${fmt(sorted[sorted.length - 1] ?? 0).padStart(8)} ${(times.reduce((a, b) => a + b, 0) / 1000).toFixed(1).padStart(8)}`);
  }
  const all = samples.map((s) => s.ms).sort((a, b) => a - b);
  console.log('');
  console.log(`inputs: ${samples.length + failures.filter((f) => f.reason === 'crashed').length} (${reparsed}); wall time ${wallSeconds.toFixed(1)} s running + ${saveSeconds.toFixed(1)} s saving and shrinking failures`);
  console.log(`time per input: p50 ${fmt(quantile(all, 0.5))} ms, p99 ${fmt(quantile(all, 0.99))} ms`);
  const slowest = [...samples].sort((a, b) => b.ms - a.ms).slice(0, 5);
  console.log(`slowest: ${slowest.map((s) => `#${s.index} ${s.kind} (${s.chars.toLocaleString('en-US')} chars) ${fmt(s.ms)} ms`).join('; ')}`);
  const count = (reason: FailureReason) => failures.filter((f) => f.reason === reason).length;
  console.log(`exceptions: ${count('threw')}; over the time bound: ${count('slow')}; hung: ${count('hung')}; worker crashed: ${count('crashed')}; inconsistent re-parsed trees or incremental estimates: ${count('inconsistent')}`);
  const distinct = new Map<string, Failure[]>();
  for (const failure of failures) distinct.set(failureKey(failure), [...(distinct.get(failureKey(failure)) ?? []), failure]);
  for (const [key, list] of distinct) {
    const first = list[0]!;
    console.log(`  ${list.length} x ${key}`);
    console.log(`      first: #${first.input.index} ${first.input.kind} (${first.input.source.length.toLocaleString('en-US')} chars)${first.reason === 'slow' || first.reason === 'hung' ? `, ${first.detail}` : ''}`);
    const frame = first.error?.stack.split('\n').find((line) => line.includes('/src/'));
    if (frame) console.log(`      at ${frame.trim().replace(/^at /, '')}`);
  }
  if (savedPaths.length > 0) console.log(`saved ${savedPaths.length} failing inputs (.json with edits and error, .py, .min.py when minimized) to ${failureDir}`);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 2;
  },
);
