/**
 * How close the CPU dry run comes to measured peaks (issue 19, item 3), on the published runs of
 * ../shared/data/gpumemnet-a100 (A100 40 GB, PyTorch 2.4.1):
 * - timm: each model as scripts/dryRun/timm_step.py trains it, with real timm (pinned,
 *   scripts/catalog/requirements-timm.txt) on Debian's torch 1.13;
 * - GPUMemNet's synthetic MLPs and CNNs: each record's network rebuilt by
 *   scripts/dryRun/gpumemnet_step.py (residual and dense CNNs cannot be: their layer lists leave
 *   out additions and concatenations), traced with PyTorch 2.4.1 as they were measured
 *   (build/venvs/torch2; dryRunCases.ts, Tracers).
 * Each run is traced on the meta device (harness/dry_run.py) and replayed through the
 * caching-allocator model with cuDNN's workspace rule. Beside it, on the same runs: without the
 * workspaces, FakeTensor's estimate (timm sheet) and the shipped static estimators (the
 * real-model estimator for timm, fitted on all these runs, so in-sample and flattering to it).
 *
 *   npm run evaluate:dry-run -- [--every K] [--synthetic-every K] [--steps N] [--python PATH] [--synthetic-python PATH] [--jobs N] [--cache DIR] [--csv FILE]
 *
 * --every K takes every K-th timm model by name (default 8), --synthetic-every K every K-th usable
 * synthetic record (default 40). Traces are kept in --cache (default .cache/dry-run-evaluation)
 * and reused by the same PyTorch version: a second run only replays. --python traces timm's runs,
 * --synthetic-python the synthetic ones.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { CUDNN_WORKSPACE } from '../../src/core/dryRun/cudnnWorkspace';
import { replayDryRun } from '../../src/core/dryRun/dryRunReplay';
import { parseDryRunOutput } from '../../src/core/dryRun/dryRunTrace';
import { spawnProcess } from '../../src/core/remote/processRunner';
import { defaultTracers, errorStats, MEASURED_GPU_MIB, REPO, syntheticCases, timmCases, traceFile, tracerFor, type Case, type Tracers } from './dryRunCases';

interface Scored {
  readonly case: Case;
  readonly predictedMiB: number;
  /** Without cuDNN's workspaces. */
  readonly liveOnlyMiB: number;
  readonly seconds: number;
}

async function trace(cases: readonly Case[], cached: (c: Case) => string, tracers: Tracers, steps: number, jobs: number): Promise<string[]> {
  const failures: string[] = [];
  const toTrace = cases.filter((c) => !existsSync(cached(c)));
  const chunks: Case[][] = [];
  // A process per few models (of one tracer): the libraries are imported once per process, and a crash costs little.
  for (const python of new Set(toTrace.map((c) => tracerFor(tracers, c)))) {
    const own = toTrace.filter((c) => tracerFor(tracers, c) === python);
    const models = [...new Set(own.map((c) => c.model))];
    for (let i = 0; i < models.length; i += 4) {
      const names = new Set(models.slice(i, i + 4));
      chunks.push(own.filter((c) => names.has(c.model)));
    }
  }
  console.log(`${cases.length - toTrace.length} traces cached, ${toTrace.length} to trace`);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < chunks.length) {
      const index = next++;
      const chunk = chunks[index]!;
      const jobsFile = path.join(path.dirname(cached(chunk[0]!)), `jobs-${process.pid}-${index}.json`);
      writeFileSync(jobsFile, JSON.stringify(chunk.map((c, i) => ({ id: i, script: c.script, steps, spec: { batchSize: c.batchSize, argv: c.argv } }))));
      const result = await spawnProcess(tracerFor(tracers, chunk[0]!), ['-m', 'harness.dry_run', '--jobs', jobsFile, '--memory-mib', '12000'], { timeoutMs: 1_800_000, env: { PYTHONPATH: REPO, PYTHONDONTWRITEBYTECODE: '1' } }).finally(() => rmSync(jobsFile, { force: true }));
      const seen = new Set<number>();
      for (const line of result.stdout.split('\n').filter((l) => l.startsWith('{'))) {
        const id = (JSON.parse(line) as { id?: number }).id;
        if (id === undefined || !chunk[id]) continue;
        seen.add(id);
        writeFileSync(cached(chunk[id]), line);
      }
      chunk.forEach((c, i) => seen.has(i) || failures.push(`${c.key}: no result (${result.stderr.trim().split('\n').slice(-1)[0] ?? ''})`));
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
  return failures;
}

function summary(errors: readonly number[]): string {
  const { median, under } = errorStats(errors);
  return `${(median * 100).toFixed(1)}% / ${(under * 100).toFixed(1)}%`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      every: { type: 'string', default: '8' },
      'synthetic-every': { type: 'string', default: '40' },
      steps: { type: 'string', default: '2' },
      python: { type: 'string' },
      'synthetic-python': { type: 'string' },
      jobs: { type: 'string', default: '2' },
      cache: { type: 'string', default: path.join(REPO, '.cache', 'dry-run-evaluation') },
      csv: { type: 'string' },
    },
  });
  const cache = values.cache;
  mkdirSync(cache, { recursive: true });
  const steps = Number(values.steps);
  const tracers = defaultTracers(values.python, values['synthetic-python']);
  const cached = (c: Case) => traceFile(cache, c, steps, tracers);
  const cases = [...timmCases(Number(values.every)), ...syntheticCases(Number(values['synthetic-every']), cache)];
  console.log(`Dry run of ${cases.length} measured runs (${values.steps} steps each; timm: every ${values.every}th model, ${tracers.timm}; synthetic: every ${values['synthetic-every']}th usable record, ${tracers.synthetic})`);
  const started = Date.now();
  const failures = await trace(cases, cached, tracers, steps, Number(values.jobs));

  const scored: Scored[] = [];
  for (const c of cases) {
    if (!existsSync(cached(c))) continue;
    const result = parseDryRunOutput(readFileSync(cached(c), 'utf8'));
    if (!result.ok) {
      failures.push(`${c.key}: ${result.error}`);
      continue;
    }
    scored.push({ case: c, predictedMiB: replayDryRun(result, CUDNN_WORKSPACE, { gpuMemoryMiB: MEASURED_GPU_MIB }).predictedMiB, liveOnlyMiB: replayDryRun(result, undefined, { gpuMemoryMiB: MEASURED_GPU_MIB }).predictedMiB, seconds: result.seconds });
  }
  const error = (s: Scored, estimate: number | null) => (estimate === null ? null : (estimate - s.case.measuredMiB) / s.case.measuredMiB);
  const cell = (subset: readonly Scored[], estimate: (s: Scored) => number | null) => {
    const errors = subset.map((s) => error(s, estimate(s))).filter((e): e is number => e !== null);
    return errors.length ? summary(errors) : '-';
  };
  console.log('\n| median abs. error / under by >10% | runs | dry run | dry run without cuDNN workspaces | FakeTensor | static estimator (timm: real-model, in-sample) | time per run, median / max |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  const groups = ['timm', ...new Set(scored.map((s) => s.case.group))];
  for (const group of groups) {
    const subset = scored.filter((s) => (group === 'timm' ? s.case.group.startsWith('timm ') : s.case.group === group));
    if (subset.length === 0) continue;
    const seconds = subset.map((s) => s.seconds).sort((a, b) => a - b);
    console.log(`| ${group === 'timm' ? 'timm, all' : group} | ${subset.length} | ${cell(subset, (s) => s.predictedMiB)} | ${cell(subset, (s) => s.liveOnlyMiB)} | ${cell(subset, (s) => s.case.fakeTensorMiB)} | ${cell(subset, (s) => s.case.staticMiB())} | ${seconds[Math.floor(seconds.length / 2)]!.toFixed(2)} s / ${seconds[seconds.length - 1]!.toFixed(1)} s |`);
  }
  const worst = [...scored].sort((a, b) => error(a, a.predictedMiB)! - error(b, b.predictedMiB)!).slice(0, 8);
  const under = scored.filter((s) => s.case.group.startsWith('timm ') && error(s, s.predictedMiB)! < -0.1);
  const falling = under.filter((s) => s.case.largerBatchMeasuredMiB !== undefined);
  if (under.length) console.log(`\ntimm runs under by more than 10%: ${under.length}; ${falling.length} of them measured more than the same model at a larger batch (${falling.map((s) => `${s.case.key} ${s.case.measuredMiB} MiB, ${s.case.largerBatchMeasuredMiB} MiB at a larger batch`).join('; ') || 'none'})`);
  console.log(`most under: ${worst.map((s) => `${s.case.key} ${(error(s, s.predictedMiB)! * 100).toFixed(0)}%`).join(', ')}`);
  console.log(`whole evaluation ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (values.csv) writeFileSync(values.csv, ['key,group,batch,measuredMiB,dryRunMiB,liveOnlyMiB,fakeTensorMiB,staticMiB,seconds', ...scored.map((s) => [s.case.key, s.case.group, s.case.batchSize, s.case.measuredMiB, s.predictedMiB, s.liveOnlyMiB, s.case.fakeTensorMiB ?? '', s.case.staticMiB() ?? '', s.seconds].join(','))].join('\n') + '\n');
  console.log(`failed: ${failures.length}${failures.length ? `\n  ${failures.slice(0, 15).join('\n  ')}` : ''}`);
}

void main();
