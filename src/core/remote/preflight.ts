import { RemoteError } from './errors';
import { keyValues } from './scripts';

export type Device = 'cuda' | 'cpu';

/** Where the harness runs: on the host itself, or as a SLURM job array submitted from it (a login host). */
export type Scheduler = 'none' | 'slurm';

/** What the pre-flight script found on the host. */
export interface PreflightReport {
  /** The interpreter's full path on the host, or null when it was not found. */
  readonly python: string | null;
  readonly pythonVersion: string | null;
  readonly torch: string | null;
  readonly torchError: string | null;
  readonly cudaAvailable: boolean | null;
  readonly nvidiaSmi: 'ok' | 'missing' | 'failed';
  /** nvidia-smi's "name, memory" lines, or its error output when it failed. */
  readonly gpus: readonly string[];
  readonly dcgmi: boolean;
  readonly setsid: boolean;
  /** SLURM's sbatch on the PATH (a login host). */
  readonly sbatch: boolean;
  readonly freeMiB: number | null;
  readonly remotePath: string;
}

export function parsePreflight(stdout: string): PreflightReport {
  const values = keyValues(stdout);
  const python = values.get('python');
  const smiExit = values.get('nvidiaSmiExit');
  const df = (values.get('df') ?? '').trim().split(/\s+/);
  // df -Pk: Filesystem 1024-blocks Used Available Capacity Mounted-on
  const availableKiB = df.length >= 6 ? Number(df[3]) : NaN;
  const cuda = values.get('cudaAvailable');
  return {
    python: python && python !== 'missing' ? python : null,
    pythonVersion: values.get('pythonVersion') ?? null,
    torch: values.get('torch') && values.get('torch') !== 'missing' ? values.get('torch')! : null,
    torchError: values.get('torchError') ?? null,
    cudaAvailable: cuda === undefined ? null : cuda === 'True',
    nvidiaSmi: values.get('nvidiaSmi') === 'missing' ? 'missing' : smiExit === '0' ? 'ok' : smiExit === undefined ? 'missing' : 'failed',
    gpus: values.all('gpu'),
    dcgmi: values.get('dcgmi') === 'present',
    setsid: values.get('setsid') === 'present',
    sbatch: values.get('sbatch') === 'present',
    freeMiB: Number.isFinite(availableKiB) ? Math.floor(availableKiB / 1024) : null,
    remotePath: values.get('path') ?? '',
  };
}

/** Disk a run needs at least: the harness, the rows and the sampled scripts stay small. */
export const MIN_FREE_MIB = 200;

/**
 * The first problem that stops a run, as a RemoteError with a plain message; notes for what is
 * fine but worth saying (a CPU run skips the GPU checks; no DCGM means coarser utilization).
 */
export function checkPreflight(report: PreflightReport, device: Device, host: string, pythonSetting: string, scheduler: Scheduler = 'none'): string[] {
  if (!report.python) {
    throw new RemoteError(
      'no-python',
      `No Python on ${host}: "${pythonSetting}" is not on its PATH (${report.remotePath || 'empty'}). Install Python 3.9+ with PyTorch there, or set gpuEstimator.remote.python to the interpreter's full path.`,
    );
  }
  const version = (report.pythonVersion ?? '0.0').split('.').map(Number);
  if ((version[0] ?? 0) < 3 || ((version[0] ?? 0) === 3 && (version[1] ?? 0) < 9)) {
    throw new RemoteError('old-python', `${report.python} on ${host} is Python ${report.pythonVersion ?? 'of unknown version'}; the harness needs 3.9 or newer.`);
  }
  if (!report.torch) {
    throw new RemoteError('no-torch', `PyTorch is not installed for ${report.python} on ${host} (${report.torchError ?? 'import torch failed'}).`);
  }
  if (!report.setsid) {
    throw new RemoteError('no-setsid', `${host} has no setsid (util-linux), which the harness needs to keep running after the connection drops.`);
  }
  if (report.freeMiB !== null && report.freeMiB < MIN_FREE_MIB) {
    throw new RemoteError('disk', `Only ${report.freeMiB} MiB free on ${host} for the run directory; the harness needs at least ${MIN_FREE_MIB} MiB.`);
  }
  const notes: string[] = [];
  if (scheduler === 'slurm') {
    if (!report.sbatch) throw new RemoteError('no-slurm', `${host} has no sbatch on its PATH (${report.remotePath || 'empty'}): it is not a SLURM login host, or SLURM's commands are elsewhere. Set gpuEstimator.remote.scheduler to "none" to run on the host itself.`);
    notes.push(`SLURM login host: the configurations go to a job array; the GPU checks happen on the compute nodes, and each row names the GPU it ran on.`);
    return notes;
  }
  if (device === 'cpu') {
    notes.push(`CPU test run: the GPU checks are skipped and every row is labelled "device": "cpu" (never GPU training data).`);
    return notes;
  }
  if (report.nvidiaSmi === 'missing') throw new RemoteError('no-gpu', `nvidia-smi was not found on ${host}: no NVIDIA driver there (or not on the PATH).`);
  if (report.nvidiaSmi === 'failed') throw new RemoteError('no-gpu', `nvidia-smi fails on ${host}: ${report.gpus.join(' ') || 'no output'}`);
  if (report.cudaAvailable === false) throw new RemoteError('no-gpu', `PyTorch ${report.torch} on ${host} sees no CUDA device (a CPU-only build, or the driver is too old).`);
  if (!report.dcgmi) notes.push(`No dcgmi on ${host}: utilization comes from nvidia-smi (no SMACT/SMOCC/DRAMA).`);
  return notes;
}
