import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MODEL_FAMILIES } from '../estimators/family';
import { RemoteError } from './errors';
import { fetchBatches, mergeWithoutOverwriting, parseListing, type MergeResult } from './download';
import { hostDirectoryName, normalizeRemoteDir, validateHost } from './host';
import { checkPreflight, parsePreflight, type Device, type PreflightReport, type Scheduler } from './preflight';
import { spawnProcess, type ProcessRunner } from './processRunner';
import { NO_PROGRESS, applyEvents, parseEvents, type Progress } from './progress';
import { CANCEL, LIST_RESULTS, MKDIR, POLL, POLL_STDERR_MARKER, POLL_STDOUT_MARKER, PREFLIGHT, START, keyValues, preflightArgs } from './scripts';
import { runRemote, scpArgs, sshFailure, type SshTarget } from './ssh';

export type RunKind = 'collect' | 'measure' | 'train';
/** running: started and not known to have ended; stopped: ended without finishing (host down, killed). */
export type RunState = 'running' | 'finished' | 'failed' | 'cancelled' | 'stopped';

/** Everything needed to find a run again after a window reload (kept in workspace state). */
export interface RunRecord {
  readonly version: 1;
  readonly runId: string;
  readonly kind: RunKind;
  readonly host: string;
  readonly sshConfigFile?: string;
  readonly python: string;
  /** The run's directory on the host: relative to the remote home, or absolute. */
  readonly remoteDir: string;
  readonly harnessArgs: readonly string[];
  readonly device: Device;
  readonly label: string;
  readonly startedAt: string;
  readonly state: RunState;
  /** train runs: what the training was given (see TrainInputs). */
  readonly training?: TrainingUsed;
}

/** What a train run was given, in words and as files, for the summary after it ends. */
export interface TrainingUsed {
  /** The JSON Lines file trained on, as the user knows it (a local path, or host:path). */
  readonly data: string;
  /** The reference CSVs uploaded (mlp.csv, cnn.csv); empty: --no-reference-data. */
  readonly reference: readonly string[];
  readonly families: readonly string[];
  readonly steps: number;
  readonly utilizationSteps: number;
}

export interface TrainInputs {
  /** The collected rows: a local results.jsonl to upload, or a collect run still on this host (its out/results.jsonl). */
  readonly data: { readonly localFile: string } | { readonly collectRun: RunRecord };
  /**
   * A local folder with GPUMemNet's mlp.csv / cnn.csv (the reference data), uploaded when given and
   * present; without it the host trains on the collected rows only (--no-reference-data).
   */
  readonly referenceDataDir?: string;
  readonly families?: readonly string[];
  /** Optimizer steps per memory member (the pipeline's default is 1000). */
  readonly steps?: number;
  readonly utilizationSteps?: number;
}

export interface RemoteRunnerOptions {
  readonly target: SshTarget;
  /** The interpreter on the host (gpuEstimator.remote.python). */
  readonly python: string;
  /** Where runs live on the host (gpuEstimator.remote.workDir), e.g. ~/.gpu-estimator. */
  readonly workDir: string;
  /** The local harness package to upload (the extension's harness/ folder). */
  readonly harnessDir: string;
  /**
   * featureDefinition.json and analyticalModel.json, which `train` reads at src/core/features/
   * beside the harness (default: `<harnessDir>/../src/core/features`).
   */
  readonly featuresDir?: string;
  readonly runner?: ProcessRunner;
  readonly log?: (message: string) => void;
  readonly pollIntervalMs?: number;
  /** Consecutive failed polls before following gives up with 'connection-lost'. */
  readonly maxPollFailures?: number;
}

export interface PollResult {
  readonly state: 'running' | 'exited' | 'dead' | 'missing';
  readonly exitCode: number | null;
  readonly cancelled: boolean;
  /** New stdout bytes from the offset asked for. */
  readonly chunk: string;
  readonly stderrTail: string;
}

export interface FollowResult {
  /** detached: the caller stopped following (the job goes on). */
  readonly state: Exclude<RunState, 'running'> | 'detached';
  readonly exitCode: number | null;
  readonly progress: Progress;
  readonly offset: number;
  /** For failed and stopped runs: what went wrong, in a sentence. */
  readonly message: string | null;
  readonly stderrTail: string;
}

export interface FollowOptions {
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: Progress) => void;
}

export interface DownloadResult {
  readonly directory: string;
  readonly merge: MergeResult;
  /** What stayed on the host, each with the reason ("out/data: a symbolic link"). */
  readonly skipped: readonly string[];
}

/**
 * Runs the harness on a host over the system's OpenSSH client: pre-flight, upload, detached
 * start, following, cancel, resume and download. No vscode here; the commands in
 * src/extension/remote*.ts are thin wrappers around it.
 */
export class RemoteRunner {
  readonly host: string;
  private readonly workDir: string;
  private readonly run: ProcessRunner;
  private readonly log: (message: string) => void;

  constructor(private readonly options: RemoteRunnerOptions) {
    this.host = validateHost(options.target.host);
    this.workDir = normalizeRemoteDir(options.workDir);
    if (!options.python.trim() || /[\0\n]/.test(options.python)) throw new RemoteError('invalid-setting', 'gpuEstimator.remote.python is empty or has a line break');
    this.run = options.runner ?? spawnProcess;
    this.log = options.log ?? (() => undefined);
  }

  /** A runner for a stored run, with the host, ssh config and interpreter it was started with. */
  static forRecord(record: RunRecord, options: Omit<RemoteRunnerOptions, 'target' | 'python' | 'workDir'> & { readonly workDir?: string }): RemoteRunner {
    const target: SshTarget = record.sshConfigFile ? { host: record.host, configFile: record.sshConfigFile } : { host: record.host };
    return new RemoteRunner({ ...options, target, python: record.python, workDir: options.workDir ?? path.posix.dirname(path.posix.dirname(record.remoteDir)) });
  }

  async preflight(device: Device, scheduler: Scheduler = 'none'): Promise<{ report: PreflightReport; notes: string[] }> {
    this.log(`pre-flight on ${this.host} (device ${device})`);
    const result = await runRemote(this.run, this.options.target, PREFLIGHT, preflightArgs(this.options.python, this.workDir), 'the pre-flight check', { timeoutMs: 60_000 });
    const report = parsePreflight(result.stdout);
    this.log(`pre-flight: python ${report.python ?? 'missing'} ${report.pythonVersion ?? ''}, torch ${report.torch ?? 'missing'}, nvidia-smi ${report.nvidiaSmi}, ${report.gpus.join('; ')}, free ${report.freeMiB ?? '?'} MiB`);
    const notes = checkPreflight(report, device, this.host, this.options.python, scheduler);
    for (const note of notes) this.log(note);
    return { report, notes };
  }

  /**
   * Uploads the harness and the config, and starts `collect` detached; with `slurm`, collect submits
   * the configurations from the host as a SLURM job array (harness/slurm.py) and follows it.
   */
  startCollect(configFile: string, device: Device, seconds?: number, slurm?: { readonly sbatchArgs: readonly string[] }): Promise<RunRecord> {
    const args = ['collect', '--config', 'config.yaml', '--out', 'out', '--device', device];
    if (seconds !== undefined) args.push('--seconds', String(seconds));
    if (slurm) {
      const bad = slurm.sbatchArgs.find((arg) => !/^--[A-Za-z][\w-]*(=[^\n\r\0]*)?$/.test(arg));
      if (bad !== undefined) return Promise.reject(new RemoteError('invalid-setting', `gpuEstimator.remote.sbatchArgs: each entry is one sbatch option such as --gres=gpu:a100:1 or --partition=gpu; got ${JSON.stringify(bad)}`));
      args.push('--slurm', ...slurm.sbatchArgs.map((arg) => `--sbatch-arg=${arg}`));
    }
    return this.start('collect', device, args, path.basename(configFile), (staging) => copyFileSync(configFile, path.join(staging, 'config.yaml')));
  }

  /** Uploads the harness and the script, and starts `measure` detached. */
  startMeasure(scriptFile: string, steps: number, device: Device): Promise<RunRecord> {
    const name = path.basename(scriptFile).replace(/[^A-Za-z0-9._-]/g, '_');
    const args = ['measure', `script/${name}`, '--steps', String(steps), '--device', device, '--out', 'measurement.jsonl'];
    return this.start('measure', device, args, path.basename(scriptFile), (staging) => {
      mkdirSync(path.join(staging, 'script'));
      copyFileSync(scriptFile, path.join(staging, 'script', name));
    });
  }

  /**
   * Uploads the harness, the feature definition, the collected rows (unless they are a run on this
   * host already) and the reference data when given, and starts `train` detached. It writes
   * `models/<family>.onnx` and cards in the run directory; `downloadModels` fetches them.
   */
  async startTrain(inputs: TrainInputs): Promise<RunRecord> {
    const families = [...(inputs.families ?? MODEL_FAMILIES)];
    if (!families.length || families.some((family) => !/^[a-z]+$/.test(family))) throw new RemoteError('invalid-setting', `families must be names like mlp, cnn, transformer; got ${families.join(',') || 'none'}`);
    const steps = inputs.steps ?? 1000;
    const utilizationSteps = inputs.utilizationSteps ?? 600;
    for (const [name, value] of [['steps', steps], ['utilization steps', utilizationSteps]] as const) {
      if (!Number.isInteger(value) || value < 1) throw new RemoteError('invalid-setting', `${name} must be a positive whole number, got ${value}`);
    }
    const featuresDir = this.options.featuresDir ?? path.join(this.options.harnessDir, '..', 'src', 'core', 'features');
    const featureFiles = ['featureDefinition.json', 'analyticalModel.json'];
    for (const file of featureFiles) {
      if (!existsSync(path.join(featuresDir, file))) throw new RemoteError('local-failed', `${path.join(featuresDir, file)} is missing: training needs the feature definition beside the harness.`);
    }
    let dataArg: string;
    let dataText: string;
    let localData: string | undefined;
    if ('localFile' in inputs.data) {
      localData = inputs.data.localFile;
      if (!existsSync(localData)) throw new RemoteError('local-failed', `${localData} does not exist.`);
      dataArg = 'data/results.jsonl';
      dataText = localData;
    } else {
      const run = inputs.data.collectRun;
      if (run.kind !== 'collect') throw new RemoteError('invalid-setting', `run ${run.runId} is a ${run.kind} run; training needs a collect run's results.jsonl`);
      if (validateHost(run.host) !== this.host) throw new RemoteError('invalid-setting', `run ${run.runId} is on ${run.host}, not ${this.host}`);
      const listed = await runRemote(this.run, this.options.target, 'test -s "$1/out/results.jsonl" && echo present; exit 0', [run.remoteDir], 'looking for the collected rows');
      if (!listed.stdout.includes('present')) throw new RemoteError('remote-failed', `${this.host}:${run.remoteDir}/out/results.jsonl is missing or empty; download the run's results and train from the local copy instead.`);
      // Runs live side by side in <workDir>/runs/, so the train run reaches the collect run through its parent.
      dataArg = run.remoteDir.startsWith('/') ? `${run.remoteDir}/out/results.jsonl` : `../${path.posix.basename(run.remoteDir)}/out/results.jsonl`;
      if (!run.remoteDir.startsWith('/') && path.posix.dirname(run.remoteDir) !== `${this.workDir}/runs`) throw new RemoteError('invalid-setting', `run ${run.runId} lives in ${path.posix.dirname(run.remoteDir)}, outside ${this.workDir}/runs; download it and train from the local copy.`);
      dataText = `${this.host}:${run.remoteDir}/out/results.jsonl`;
    }
    const reference = inputs.referenceDataDir ? ['mlp.csv', 'cnn.csv'].filter((file) => existsSync(path.join(inputs.referenceDataDir!, file))) : [];
    const args = ['train', '--data', dataArg, '--families', families.join(','), '--out', 'models', '--work', 'work', '--steps', String(steps), '--utilization-steps', String(utilizationSteps)];
    args.push(...(reference.length ? ['--reference-data', 'reference'] : ['--no-reference-data']));
    const training: TrainingUsed = { data: dataText, reference: reference.map((file) => path.join(inputs.referenceDataDir!, file)), families, steps, utilizationSteps };
    const label = `${path.basename(dataText)}${reference.length ? ' + reference data' : ''}`;
    const record = await this.start('train', 'cpu', args, label, (staging) => {
      const features = path.join(staging, 'src', 'core', 'features');
      mkdirSync(features, { recursive: true });
      for (const file of featureFiles) copyFileSync(path.join(featuresDir, file), path.join(features, file));
      if (localData) {
        mkdirSync(path.join(staging, 'data'));
        copyFileSync(localData, path.join(staging, 'data', 'results.jsonl'));
      }
      if (reference.length) {
        mkdirSync(path.join(staging, 'reference'));
        for (const file of reference) copyFileSync(path.join(inputs.referenceDataDir!, file), path.join(staging, 'reference', file));
      }
    }, training);
    return record;
  }

  private async start(kind: RunKind, device: Device, harnessArgs: string[], label: string, addFiles: (staging: string) => void, training?: TrainingUsed): Promise<RunRecord> {
    const runId = newRunId(kind);
    const runsDir = `${this.workDir}/runs`;
    const remoteDir = `${runsDir}/${runId}`;
    const staging = mkdtempSync(path.join(os.tmpdir(), 'gpu-estimator-upload-'));
    try {
      const runDir = path.join(staging, runId);
      mkdirSync(runDir);
      copyHarness(this.options.harnessDir, path.join(runDir, 'harness'));
      addFiles(runDir);
      await runRemote(this.run, this.options.target, MKDIR, [runsDir], 'creating the run directory');
      this.log(`uploading the harness to ${this.host}:${remoteDir}`);
      await this.scp([runDir], `remote:${runsDir}/`, 'uploading the harness');
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    const record: RunRecord = {
      version: 1,
      runId,
      kind,
      host: this.host,
      ...(this.options.target.configFile ? { sshConfigFile: this.options.target.configFile } : {}),
      python: this.options.python,
      remoteDir,
      harnessArgs,
      device,
      label,
      startedAt: new Date().toISOString(),
      state: 'running',
      ...(training ? { training } : {}),
    };
    await this.launch(record);
    return record;
  }

  private async launch(record: RunRecord): Promise<void> {
    const result = await runRemote(this.run, this.options.target, START, [record.remoteDir, record.python, ...record.harnessArgs], 'starting the harness');
    const pid = keyValues(result.stdout).get('pid');
    if (result.code !== 0 || !pid) throw new RemoteError('remote-failed', `Could not start the harness on ${this.host}: ${result.stderr.trim() || `exit code ${String(result.code)}`}`, result.stderr);
    this.log(`started ${record.kind} run ${record.runId} on ${this.host} (pid ${pid}): python -m harness ${record.harnessArgs.join(' ')}`);
  }

  /** Starts a stopped (or failed) run again in its own directory; `collect` skips what is done. */
  async resume(record: RunRecord): Promise<RunRecord> {
    await this.launch(record);
    return { ...record, state: 'running' };
  }

  async poll(record: RunRecord, offset: number): Promise<PollResult> {
    const result = await runRemote(this.run, this.options.target, POLL, [record.remoteDir, String(offset)], 'checking the run', { timeoutMs: 60_000 });
    const text = result.stdout;
    const outAt = text.indexOf(`${POLL_STDOUT_MARKER}\n`);
    const errAt = text.lastIndexOf(`${POLL_STDERR_MARKER}\n`);
    if (outAt < 0 || errAt < outAt) throw new RemoteError('remote-failed', `Unexpected answer from ${this.host} while checking the run`, text.slice(0, 2000));
    const head = keyValues(text.slice(0, outAt));
    const state = head.get('state');
    if (state !== 'running' && state !== 'exited' && state !== 'dead' && state !== 'missing') throw new RemoteError('remote-failed', `Unexpected run state "${String(state)}" from ${this.host}`, text.slice(0, 2000));
    const size = Number(head.get('size') ?? '0');
    // The chunk is exactly (size - offset) bytes followed by the newline `echo` adds.
    const body = text.slice(outAt + POLL_STDOUT_MARKER.length + 1, errAt);
    const chunk = size > offset ? Buffer.from(body, 'utf8').subarray(0, size - offset).toString('utf8') : '';
    const exitCode = head.get('exitCode');
    return {
      state,
      exitCode: exitCode === undefined || exitCode === '' ? null : Number(exitCode),
      cancelled: head.get('cancelled') === '1',
      chunk,
      stderrTail: text.slice(errAt + POLL_STDERR_MARKER.length + 1).trimEnd(),
    };
  }

  /** Follows a run from the start of its output until it ends or `signal` aborts (detached). */
  async follow(record: RunRecord, options: FollowOptions = {}): Promise<FollowResult> {
    const interval = this.options.pollIntervalMs ?? 2000;
    const maxFailures = this.options.maxPollFailures ?? 4;
    let offset = 0;
    let progress = NO_PROGRESS;
    let failures = 0;
    for (;;) {
      if (options.signal?.aborted) return { state: 'detached', exitCode: null, progress, offset, message: null, stderrTail: '' };
      let polled: PollResult;
      try {
        polled = await this.poll(record, offset);
        failures = 0;
      } catch (error) {
        if (!(error instanceof RemoteError) || !['unreachable', 'ssh-failed'].includes(error.kind)) throw error;
        failures += 1;
        this.log(`poll ${failures}/${maxFailures} of ${record.runId} failed: ${error.message}`);
        if (failures >= maxFailures) {
          throw new RemoteError(
            'connection-lost',
            `Lost the connection to ${this.host} while following run ${record.runId} (${progressText(progress)}): ${error.message} The run goes on unless the host itself went down; re-attach to follow it and fetch its results.`,
            error.detail,
          );
        }
        await delay(interval * failures, options.signal);
        continue;
      }
      const parsed = parseEvents(polled.chunk);
      offset += parsed.consumedBytes;
      if (parsed.events.length) {
        progress = applyEvents(progress, parsed.events);
        options.onProgress?.(progress);
      }
      if (polled.state === 'running') {
        await delay(interval, options.signal);
        continue;
      }
      return finish(record, polled, progress, offset);
    }
  }

  /** Stops the run's process group on the host (TERM, then KILL) and marks it cancelled. */
  async cancel(record: RunRecord): Promise<void> {
    const result = await runRemote(this.run, this.options.target, CANCEL, [record.remoteDir], 'cancelling the run', { timeoutMs: 60_000 });
    this.log(`cancel ${record.runId} on ${this.host}: ${result.stdout.trim().replace(/\n/g, ', ')}`);
  }

  /**
   * Copies the run's regular files into `<workspace>/.gpu-estimator/runs/<host>/<run-id>/` without
   * replacing any file already there (see mergeWithoutOverwriting). Links, FIFOs and paths that are
   * not plain are left on the host and listed in `skipped`; the rest downloads.
   */
  async download(record: RunRecord, workspaceRoot: string): Promise<DownloadResult> {
    const wanted = record.kind === 'collect' ? ['out', 'stdout.jsonl', 'stderr.log'] : record.kind === 'train' ? ['models', 'stdout.jsonl', 'stderr.log'] : ['measurement.jsonl', 'stdout.jsonl', 'stderr.log'];
    const listed = await runRemote(this.run, this.options.target, LIST_RESULTS, [record.remoteDir, ...wanted], 'listing the results');
    if (listed.code === 3) throw new RemoteError('remote-failed', `The run directory ${record.remoteDir} is gone from ${this.host}.`);
    const { files, skipped } = parseListing(listed.stdout, wanted);
    for (const note of skipped) this.log(`download of ${record.runId}: skipped ${note}`);
    const directory = path.join(workspaceRoot, '.gpu-estimator', 'runs', hostDirectoryName(record.host), record.runId);
    const staging = mkdtempSync(path.join(os.tmpdir(), 'gpu-estimator-download-'));
    try {
      const remotePrefix = `remote:${record.remoteDir}/`;
      for (const batch of fetchBatches(files, this.host.length + remotePrefix.length)) {
        const to = path.join(staging, ...batch.folder.split('/'));
        mkdirSync(to, { recursive: true });
        await this.scp(batch.files.map((file) => remotePrefix + file), to, 'downloading the results', false);
      }
      writeFileSync(path.join(staging, 'gpu-estimator-run.json'), JSON.stringify({ ...record, state: undefined }, null, 2) + '\n');
      mkdirSync(directory, { recursive: true });
      const merge = mergeWithoutOverwriting(staging, directory);
      this.log(`downloaded ${record.runId} into ${directory}: ${merge.added.length} new, ${merge.unchanged.length} unchanged, ${merge.kept.length} kept beside existing files, ${skipped.length} skipped`);
      return { directory, merge, skipped };
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  private async scp(sources: string[], destination: string, what: string, recursive = true): Promise<void> {
    const result = await this.run('scp', scpArgs(this.options.target, sources, destination, recursive), { timeoutMs: 600_000 });
    if (result.code !== 0) {
      const error = sshFailure(this.host, result, what);
      throw error.kind === 'ssh-failed' ? new RemoteError('remote-failed', `${what} failed: ${result.stderr.trim() || `scp exit code ${String(result.code)}`}`, result.stderr) : error;
    }
  }
}

function finish(record: RunRecord, polled: PollResult, progress: Progress, offset: number): FollowResult {
  const base = { exitCode: polled.exitCode, progress, offset, stderrTail: polled.stderrTail };
  const lastError = polled.stderrTail.split('\n').filter((line) => line.trim()).pop() ?? '';
  if (polled.cancelled) return { ...base, state: 'cancelled', message: null };
  if (polled.state === 'missing') return { ...base, state: 'failed', message: `The run directory ${record.remoteDir} is gone from ${record.host}.` };
  if (polled.state === 'exited' && polled.exitCode === 0) return { ...base, state: 'finished', message: null };
  if (polled.state === 'exited') {
    return { ...base, state: 'failed', message: progress.error ?? `The harness exited with code ${String(polled.exitCode)}${lastError ? `: ${lastError}` : ''}.` };
  }
  return {
    ...base,
    state: 'stopped',
    message: `The run on ${record.host} stopped without finishing (${progressText(progress)}): its process is gone (host restarted, or killed)${lastError ? `; last error output: ${lastError}` : ''}. Resume to run the rest; finished configurations are kept.`,
  };
}

function progressText(progress: Progress): string {
  return progress.total === null ? 'no progress yet' : `${progress.done} of ${progress.total} done`;
}

/** Copies the harness package: its .py files and shipped configs, without tests or caches. */
function copyHarness(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.name === 'tests' || entry.name === '__pycache__' || entry.name.startsWith('.')) continue;
    const source = path.join(from, entry.name);
    if (entry.isDirectory()) copyHarness(source, path.join(to, entry.name));
    else if (entry.isFile() && (entry.name.endsWith('.py') || entry.name.endsWith('.yaml') || entry.name.endsWith('.json'))) copyFileSync(source, path.join(to, entry.name));
  }
}

export function newRunId(kind: RunKind, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${kind}-${randomBytes(3).toString('hex')}`;
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
