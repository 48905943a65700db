import type { Placement } from '../core/estimate/collocation';
import { formatMiB } from '../core/format/units';

/** A GRES GPU type of the cluster and the profile it is. */
export interface ClusterGpuType {
  readonly type: string;
  readonly gpuName: string;
  readonly memoryMiB: number;
}

export type SlurmStatus = 'fits' | 'tight' | 'oom' | 'unknown';

/** The type to request: the smallest that fits with room to spare, else the smallest that fits within the safety margin. */
export function slurmChoice(placement: Placement, types: readonly ClusterGpuType[]): { status: SlurmStatus; choice: ClusterGpuType | undefined; fits: ClusterGpuType[]; tight: ClusterGpuType[] } {
  if (placement.memoryMiB === null) return { status: 'unknown', choice: undefined, fits: [], tight: [] };
  const bySize = types.map((type, i) => ({ type, risk: placement.gpus[i]!.risk })).sort((a, b) => a.type.memoryMiB - b.type.memoryMiB);
  const fits = bySize.filter((t) => t.risk === 'fits').map((t) => t.type);
  const tight = bySize.filter((t) => t.risk === 'tight').map((t) => t.type);
  const choice = fits[0] ?? tight[0];
  return { status: fits.length ? 'fits' : tight.length ? 'tight' : 'oom', choice, fits, tight };
}

/**
 * What `gpu-estimate FILE --slurm` prints: comment lines for people, an `#SBATCH --gres` line to
 * paste into a batch script, and one `# gpu-estimate-result:` line of key=value pairs that the
 * job_submit.lua plugin (scheduler/slurm/) reads.
 */
export function slurmOutput(placement: Placement, types: readonly ClusterGpuType[]): { text: string; status: SlurmStatus } {
  const { status, choice, fits, tight } = slurmChoice(placement, types);
  const names = (list: readonly ClusterGpuType[]) => list.map((t) => `${t.type} (${t.gpuName}, ${formatMiB(t.memoryMiB)})`).join(', ');
  const lines: string[] = [];
  if (placement.memoryMiB === null) {
    const why = placement.notes.some((note) => /No model/.test(note)) ? 'no PyTorch model found' : 'batch size or input shape not found; pass --batch-size, or see gpu-estimate without --slurm';
    lines.push(`# gpu-estimate: ${placement.file}: no estimate (${why})`);
  } else {
    const what = `${placement.models.join(' + ')}${placement.batchSize === null ? '' : `, batch ${placement.batchSize}`}`;
    lines.push(`# gpu-estimate: ${placement.file} needs ~${formatMiB(placement.memoryMiB)} of GPU memory (${what})`);
    if (fits.length) lines.push(`# fits: ${names(fits)}`);
    if (tight.length) lines.push(`# fits within the safety margin only: ${names(tight)}`);
    if (!choice) lines.push(`# does not fit any GPU type: ${names(types)}`);
    if (choice) lines.push(`#SBATCH --gres=gpu:${choice.type}:1`);
  }
  const list = (l: readonly ClusterGpuType[]) => l.map((t) => t.type).join(',');
  lines.push(`# gpu-estimate-result: status=${status} choice=${choice?.type ?? ''} fits=${list(fits)} tight=${list(tight)} estimateMiB=${placement.memoryMiB ?? ''}`);
  return { text: lines.join('\n'), status };
}
