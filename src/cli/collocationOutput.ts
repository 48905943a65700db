import { describeCollocationVerdict, describeInterference, describeMemoryCap, describeMigProfile } from '../core/display/collocationText';
import type { Collocation } from '../core/estimate/collocation';
import { formatMiB } from '../core/format/units';
import { textTable } from './textTable';

/** What `gpu-estimate colocate` prints without --json. */
export function collocationOutput(collocation: Collocation): string {
  const { gpu } = collocation;
  const mig = collocation.jobs.some((job) => job.migProfile !== null);
  const capped = collocation.jobs.some((job) => job.memoryCap !== null);
  const header = ['script', 'models', 'memory', 'batch', 'max batch together', 'SMACT', ...(capped ? ['cap'] : []), ...(mig ? ['MIG alone'] : [])];
  const rows = collocation.jobs.map((job) => [
    job.file,
    job.models.join(', ') || '-',
    job.memoryMiB === null ? 'no estimate' : formatMiB(job.memoryMiB),
    job.batchSize === null ? '?' : String(job.batchSize),
    job.maxBatchSizeTogether === null ? '-' : String(job.maxBatchSizeTogether),
    job.smact ?? 'unknown',
    ...(capped ? [describeMemoryCap(job)] : []),
    ...(mig ? [describeMigProfile(job)] : []),
  ]);
  const out = [`Collocation on ${gpu.name} (${formatMiB(gpu.memoryMiB)}), each job in its own process`, '', textTable(header, rows), ''];
  out.push(`verdict: the jobs ${describeCollocationVerdict(collocation)}`);
  out.push(`interference: ${describeInterference(collocation)}`);
  for (const note of collocation.notes) out.push(`note: ${note}`);
  for (const job of collocation.jobs) for (const note of job.notes) out.push(`note: ${job.file}: ${note}`);
  out.push('', `Interference is ${collocation.interference.rule}.`);
  return out.join('\n');
}
