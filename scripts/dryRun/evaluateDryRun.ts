/**
 * How close the CPU dry run comes to the measured peaks (issue 19, item 3): the published timm
 * runs of ../shared/data/gpumemnet-a100 (A100 40 GB), each model as scripts/dryRun/timm_step.py
 * trains it with real timm (pinned, scripts/catalog/requirements-timm.txt) on Debian's torch 1.13,
 * traced on the meta device and replayed through the caching-allocator model. Beside it, on the
 * same runs: FakeTensor's estimate (in the sheet) and the shipped static real-model estimator
 * (fitted on all these runs: in-sample, so flattering to it).
 *
 *   npm run evaluate:dry-run -- [--every K] [--steps N] [--python PATH] [--jobs N]
 *
 * --every K takes every K-th model (by name) of the runs that completed (default 8).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { replayDryRun } from '../../src/core/dryRun/dryRunReplay';
import { parseDryRunOutput } from '../../src/core/dryRun/dryRunTrace';
import { spawnProcess } from '../../src/core/remote/processRunner';
import { realModelPrediction } from '../../src/core/estimators/realModel';
import { referenceDataDir } from '../evaluation/referenceData';
import { loadTimmRuns, type TimmRun } from '../evaluation/timmRuns';

const REPO = path.resolve(__dirname, '..', '..', '..');

interface Scored {
  readonly run: TimmRun;
  readonly predictedMiB: number;
  readonly seconds: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { every: { type: 'string', default: '8' }, steps: { type: 'string', default: '2' }, python: { type: 'string' }, jobs: { type: 'string', default: '2' } } });
  const every = Number(values.every);
  const python = values.python ?? process.env.TIMM_PYTHON ?? '/work/venvs/timm/bin/python';
  const { runs } = loadTimmRuns(referenceDataDir(REPO));
  const completed = runs.filter((run) => !run.lowerBound);
  const models = [...new Set(completed.map((run) => run.model))].sort().filter((_, i) => i % every === 0);
  const chosen = completed.filter((run) => models.includes(run.model));
  console.log(`Dry run on ${chosen.length} completed timm runs of ${models.length} models (every ${every}th of ${new Set(completed.map((r) => r.model)).size}), ${values.steps} steps each, ${python}`);

  const folder = mkdtempSync(path.join(tmpdir(), 'gpu-estimator-dry-run-eval-'));
  const scored: Scored[] = [];
  const failures: string[] = [];
  const started = Date.now();
  try {
    // A process per few models: timm is imported once per process, and a crash costs little.
    const chunks: TimmRun[][] = [];
    for (let i = 0; i < models.length; i += 4) {
      const names = new Set(models.slice(i, i + 4));
      chunks.push(chosen.filter((run) => names.has(run.model)));
    }
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < chunks.length) {
        const chunk = chunks[next++]!;
        const jobsFile = path.join(folder, `jobs-${next}.json`);
        writeFileSync(jobsFile, JSON.stringify(chunk.map((run, i) => ({ id: i, script: path.join(REPO, 'scripts', 'dryRun', 'timm_step.py'), steps: Number(values.steps), spec: { batchSize: run.batchSize, argv: [run.model, run.inputSize.join(',')] } }))));
        const result = await spawnProcess(python, ['-m', 'harness.dry_run', '--jobs', jobsFile, '--memory-mib', '12000'], { timeoutMs: 1_800_000, env: { PYTHONPATH: REPO, PYTHONDONTWRITEBYTECODE: '1' } });
        const lines = result.stdout.split('\n').filter((line) => line.startsWith('{'));
        const seen = new Set<number>();
        for (const line of lines) {
          const id = (JSON.parse(line) as { id?: number }).id;
          const run = id === undefined ? undefined : chunk[id];
          if (!run) continue;
          seen.add(id!);
          const trace = parseDryRunOutput(line);
          if (!trace.ok) {
            failures.push(`${run.model} batch ${run.batchSize}: ${trace.error}`);
            continue;
          }
          scored.push({ run, predictedMiB: replayDryRun(trace).predictedMiB, seconds: trace.seconds });
        }
        chunk.forEach((run, i) => seen.has(i) || failures.push(`${run.model} batch ${run.batchSize}: no result (${result.stderr.trim().split('\n').slice(-1)[0] ?? ''})`));
      }
    };
    await Promise.all(Array.from({ length: Number(values.jobs) }, worker));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }

  const summary = (values: number[]) => {
    const sorted = values.map(Math.abs).sort((a, b) => a - b);
    const median = sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : NaN;
    return `${(median * 100).toFixed(1)}% / ${((values.filter((v) => v < -0.1).length / Math.max(1, values.length)) * 100).toFixed(1)}%`;
  };
  const seconds = scored.map((s) => s.seconds).sort((a, b) => a - b);
  const staticEstimate = (s: Scored) => realModelPrediction({ table: s.run.table, batchSize: s.run.batchSize, optimizer: 'sgd', precision: 'fp32' }).pointMiB;
  console.log(`\n| timm runs: median abs. error / under by >10% | runs | dry run | FakeTensor | static real-model estimator (in-sample) |`);
  console.log('| --- | --- | --- | --- | --- |');
  for (const group of ['all', 'ConvNets', 'vision Transformers', 'MLP-Mixers'] as const) {
    const subset = scored.filter((s) => group === 'all' || s.run.group === group);
    if (subset.length === 0) continue;
    const of = (f: (s: Scored) => number) => summary(subset.map((s) => (f(s) - s.run.measuredMiB) / s.run.measuredMiB));
    console.log(`| ${group} | ${subset.length} | ${of((s) => s.predictedMiB)} | ${of((s) => s.run.fakeTensorMiB)} | ${of(staticEstimate)} |`);
  }
  console.log(`\ntime per run (trace only, in the harness): median ${seconds[Math.floor(seconds.length / 2)]?.toFixed(2)} s, max ${seconds[seconds.length - 1]?.toFixed(2)} s; whole evaluation ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const worst = [...scored].sort((a, b) => (a.predictedMiB - a.run.measuredMiB) / a.run.measuredMiB - (b.predictedMiB - b.run.measuredMiB) / b.run.measuredMiB).slice(0, 8);
  console.log(`most under: ${worst.map((s) => `${s.run.model}@${s.run.batchSize} ${(((s.predictedMiB - s.run.measuredMiB) / s.run.measuredMiB) * 100).toFixed(0)}%`).join(', ')}`);
  console.log(`failed: ${failures.length}${failures.length ? `\n  ${failures.slice(0, 15).join('\n  ')}` : ''}`);
}

void main();
