/**
 * The measured runs the dry run is judged on (../shared/data/gpumemnet-a100): timm models as
 * scripts/dryRun/timm_step.py trains them, and GPUMemNet's synthetic networks as
 * scripts/dryRun/gpumemnet_step.py rebuilds them.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { findGpuProfile } from '../../src/core/gpus/gpuProfiles';
import { realModelPrediction } from '../../src/core/estimators/realModel';
import { parseCsv, referenceDataDir } from '../evaluation/referenceData';
import { loadTimmRuns, type TimmRun } from '../evaluation/timmRuns';

export const REPO = path.resolve(__dirname, '..', '..', '..');

/** The A100 40GB the runs were measured on, as nvidia-smi counts its memory: a workspace that does not fit beside the tensors is not taken. */
export const MEASURED_GPU_MIB = findGpuProfile('a100-40gb')!.memoryMiB;

/**
 * The Pythons that trace the runs. The synthetic runs were measured with PyTorch 2.4.1, whose Adam
 * on CUDA takes its foreach step (a temporary the size of all the parameters, which torch 1.13's
 * per-parameter loop does not hold): they are traced with that version (build/venvs/torch2, made by
 * scripts/venvs/torch2-venv.cjs). timm needs its own pinned venv (Debian's torch 1.13); its runs
 * train with plain SGD, whose step holds nothing more in either version.
 */
export interface Tracers {
  readonly timm: string;
  readonly synthetic: string;
}

export function defaultTracers(timm?: string, synthetic?: string): Tracers {
  return {
    timm: timm ?? process.env.TIMM_PYTHON ?? path.join(REPO, 'build', 'venvs', 'timm', 'bin', 'python'),
    synthetic: synthetic ?? path.join(REPO, 'build', 'venvs', 'torch2', 'bin', 'python'),
  };
}

export function tracerFor(tracers: Tracers, c: Pick<Case, 'group'>): string {
  return c.group.startsWith('timm') ? tracers.timm : tracers.synthetic;
}

const versions = new Map<string, string>();

/** The PyTorch version a Python has, asked once. */
export function torchVersion(python: string): string {
  let version = versions.get(python);
  if (version === undefined) {
    version = execFileSync(python, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    versions.set(python, version);
  }
  return version;
}

/** Where a case's trace is cached: a trace is only reused by the same PyTorch version. */
export function traceFile(cache: string, c: Pick<Case, 'key' | 'group'>, steps: number, tracers: Tracers): string {
  return path.join(cache, `${c.key}-steps${steps}-torch${torchVersion(tracerFor(tracers, c))}.json`);
}

/** One measured run to dry-run. */
export interface Case {
  readonly key: string;
  /** Cases of one model share a process (timm imported once). */
  readonly model: string;
  readonly group: string;
  readonly batchSize: number;
  readonly measuredMiB: number;
  readonly fakeTensorMiB: number | null;
  /**
   * The least the same model measured at a larger batch (timm), where that is no more than this
   * run's own measurement: memory that falls as the batch grows is no shape's doing (an algorithm
   * cuDNN chose on the GPU, or noise), and no estimate that grows with the batch can meet both.
   */
  readonly largerBatchMeasuredMiB?: number;
  /** The shipped static estimator's figure (computed on demand: it replays the layer table). */
  readonly staticMiB: () => number | null;
  readonly script: string;
  readonly argv: readonly string[];
}

export function timmCases(every: number): Case[] {
  const { runs } = loadTimmRuns(referenceDataDir(REPO));
  const completed = runs.filter((run) => !run.lowerBound);
  // Every n-th of all the sheet's models, so that which runs count as completed does not move the sample.
  const models = new Set([...new Set(runs.map((run) => run.model))].sort().filter((_, i) => i % every === 0));
  // Only a larger batch that completed its step counts (timmRuns.ts's lowerBound).
  const atLargerBatch = (run: TimmRun): Pick<Case, 'largerBatchMeasuredMiB'> => {
    const lower = completed.filter((other) => other.model === run.model && other.batchSize > run.batchSize && other.measuredMiB <= run.measuredMiB).map((other) => other.measuredMiB);
    return lower.length ? { largerBatchMeasuredMiB: Math.min(...lower) } : {};
  };
  return completed
    .filter((run) => models.has(run.model))
    .map((run) => ({
      ...atLargerBatch(run),
      key: `timm-${run.model}@${run.batchSize}`,
      model: run.model,
      group: `timm ${run.group}`,
      batchSize: run.batchSize,
      measuredMiB: run.measuredMiB,
      fakeTensorMiB: run.fakeTensorMiB,
      staticMiB: () => realModelPrediction({ table: run.table, batchSize: run.batchSize, optimizer: 'sgd', precision: 'fp32' }).pointMiB,
      script: path.join(REPO, 'scripts', 'dryRun', 'timm_step.py'),
      argv: [run.model, run.inputSize.join(',')],
    }));
}

export function syntheticCases(every: number, cache: string): Case[] {
  const cases: Case[] = [];
  for (const family of ['mlp', 'cnn'] as const) {
    const [header, ...records] = parseCsv(readFileSync(path.join(referenceDataDir(REPO), `${family}.csv`), 'utf8'));
    const usable = records
      .map((r) => Object.fromEntries(header!.map((name, i) => [name, r[i] ?? ''])))
      .filter((r) => Number(r['Depth']) > 0 && (r['Status'] === undefined || r['Status'] === 'SUCCESSFUL') && !/arch:(residual|dense)_/.test(r['Filename']!));
    usable.forEach((record, i) => {
      if (i % every !== 0) return;
      const file = record['Filename']!;
      const key = `${family}-${createHash('sha1').update(file).digest('hex').slice(0, 16)}`;
      // Absolute: the harness runs the step script in a temporary folder of its own.
      const recordFile = path.resolve(cache, `${key}.record.json`);
      if (!existsSync(recordFile)) writeFileSync(recordFile, JSON.stringify({ family, file, layers: record['Activations-Params'] }));
      cases.push({ key, model: key, group: `synthetic ${family.toUpperCase()}`, batchSize: Number(record['Batch Size']), measuredMiB: Number(record['Max GPU Memory (MiB)']), fakeTensorMiB: null, staticMiB: () => null, script: path.join(REPO, 'scripts', 'dryRun', 'gpumemnet_step.py'), argv: [recordFile] });
    });
  }
  return cases;
}

/**
 * How relative errors (estimate - measured) / measured score: the median absolute error (the lower
 * middle value) and the share under-estimated by more than 10%.
 */
export function errorStats(errors: readonly number[]): { median: number; under: number } {
  const sorted = errors.map(Math.abs).sort((a, b) => a - b);
  const median = sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : NaN;
  return { median, under: errors.filter((e) => e < -0.1).length / Math.max(1, errors.length) };
}
