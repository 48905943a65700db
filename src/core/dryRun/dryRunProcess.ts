/**
 * Runs harness/dry_run.py on a script with the user's Python, in a process of its own: a time
 * limit, an address-space limit, and the result read as untrusted output.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { spawnProcess, type ProcessRunner } from '../remote/processRunner';
import { CUDNN_WORKSPACE, cudnnCaveats, capacityCaveats, benchmarkCaveats } from './cudnnWorkspace';
import { replayDryRun, type DryRunFigure } from './dryRunReplay';
import type { DryRunSpec } from './dryRunSpec';
import { hubConfigsNamedIn, type HubConfigs } from './hubConfigs';
import { DryRunOutputError, parseDryRunOutput } from './dryRunTrace';

export interface DryRunRequest {
  readonly script: string;
  /** The folder holding the harness package (`<it>/harness/dry_run.py`). */
  readonly harnessParent: string;
  readonly python: string;
  readonly spec: DryRunSpec;
  /** The GPU the figure is for, as nvidia-smi counts its memory: a cuDNN workspace that would not fit there is not taken (replayDryRun). */
  readonly gpuMemoryMiB?: number;
  readonly steps?: number;
  readonly timeoutMs?: number;
  readonly memoryMiB?: number;
  readonly signal?: AbortSignal;
  readonly runner?: ProcessRunner;
}

export type DryRunResult =
  /** `notes`: what the harness says about the run (where the assumed values went in); `caveats`: where the figure may fall short (cudnnCaveats). */
  | { readonly ok: true; readonly figure: DryRunFigure; readonly torchVersion: string | undefined; readonly notes?: readonly string[]; readonly caveats?: readonly string[] }
  | { readonly ok: false; readonly error: string };

export const DEFAULT_DRY_RUN_STEPS = 3;
export const DEFAULT_DRY_RUN_TIMEOUT_MS = 120_000;
export const DEFAULT_DRY_RUN_MEMORY_MIB = 8192;

/** The hub checkpoints the script, its arguments or the assumed values name; none where it cannot be read (the harness then says what it cannot open). */
function scriptHubConfigs(script: string, spec: DryRunSpec): HubConfigs {
  try {
    return hubConfigsNamedIn(readFileSync(script, 'utf8'), [...spec.argv, ...Object.values(spec.assume ?? {})]);
  } catch {
    return {};
  }
}

/** Never throws: a missing Python, a script that fails, a timeout or garbled output come back as `error`. */
export async function runDryRun(request: DryRunRequest): Promise<DryRunResult> {
  const folder = mkdtempSync(path.join(tmpdir(), 'gpu-estimator-spec-'));
  try {
    const specFile = path.join(folder, 'spec.json');
    writeFileSync(specFile, JSON.stringify({ ...request.spec, hubConfigs: { ...scriptHubConfigs(request.script, request.spec), ...request.spec.hubConfigs } }));
    const args = ['-m', 'harness.dry_run', request.script, '--spec', specFile, '--steps', String(request.steps ?? DEFAULT_DRY_RUN_STEPS), '--memory-mib', String(request.memoryMiB ?? DEFAULT_DRY_RUN_MEMORY_MIB)];
    const timeoutMs = request.timeoutMs ?? DEFAULT_DRY_RUN_TIMEOUT_MS;
    let result;
    try {
      const run = request.runner ?? spawnProcess;
      // The harness is importable as a package (`python -m harness.dry_run`) from the folder that holds it.
      const env = { PYTHONPATH: [request.harnessParent, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter), PYTHONDONTWRITEBYTECODE: '1' };
      result = await run(request.python, args, { timeoutMs, env, ...(request.signal ? { signal: request.signal } : {}) });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return { ok: false, error: code === 'ENOENT' ? `no Python at ${request.python} (choose one with --python)` : `could not start ${request.python}: ${(error as Error).message}` };
    }
    if (request.signal?.aborted) return { ok: false, error: 'the dry run was cancelled' };
    if (result.stderr.includes(`(timed out after ${timeoutMs} ms)`)) return { ok: false, error: `the dry run took longer than ${Math.round(timeoutMs / 1000)} s and was stopped` };
    if (/No module named '?torch'?/.test(result.stderr) && !result.stdout.includes('{')) return { ok: false, error: `PyTorch is not installed for ${request.python}` };
    let trace;
    try {
      trace = parseDryRunOutput(result.stdout);
    } catch (error) {
      if (!(error instanceof DryRunOutputError)) throw error;
      const last = result.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 300);
      return { ok: false, error: `${error.message}${last ? ` (${last})` : ''}` };
    }
    if (!trace.ok) return { ok: false, error: trace.error ?? 'the script did not reach its training step' };
    const figure = replayDryRun(trace, CUDNN_WORKSPACE, request.gpuMemoryMiB === undefined ? {} : { gpuMemoryMiB: request.gpuMemoryMiB });
    return { ok: true, figure, torchVersion: trace.torchVersion, notes: trace.notes, caveats: [...capacityCaveats(figure, request.gpuMemoryMiB), ...cudnnCaveats(trace), ...benchmarkCaveats(trace)] };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
