import type { Collocation, CollocatedJob } from '../estimate/collocation';
import { formatMiB } from '../format/units';

/** Words shared by the CLI's `colocate` and the editor's "Check collocation" view. */

export function describeCollocationVerdict(collocation: Collocation): string {
  const { gpu, totalMiB } = collocation;
  const sum = totalMiB === null ? '' : ` (${formatMiB(totalMiB)} together)`;
  switch (collocation.risk) {
    case 'fits':
      return `fit ${gpu.name} together${sum}`;
    case 'tight':
      return `fit ${gpu.name} together, within the ${Math.round(collocation.safetyMargin * 100)}% safety margin${sum}`;
    case 'oom':
      return `do not fit ${gpu.name} together${sum}: out of memory`;
    default:
      return 'unknown: a job has no estimate';
  }
}

/** `3g.20gb (20.0 GiB)`, `none: needs the whole GPU`, or empty for a GPU without MIG. */
export function describeMigProfile(job: CollocatedJob): string {
  if (job.migProfile === null) return '';
  return job.migProfile === 'none' ? 'none: needs more than any MIG slice' : `${job.migProfile.name} (${formatMiB(job.migProfile.memoryMiB)})`;
}

/** `0.412 (16.5 GiB)`: the fraction for torch.cuda.set_per_process_memory_fraction and what it leaves the job; `-` without a cap. */
export function describeMemoryCap(job: CollocatedJob): string {
  return job.memoryCap === null ? '-' : `${job.memoryCap.fraction.toFixed(3)} (${formatMiB(job.memoryCap.mib)})`;
}

export function describeInterference(collocation: Collocation): string {
  const { level, reason } = collocation.interference;
  return `${level} (${reason})`;
}

/** The collocation as Markdown: the verdict, one table row per job, the interference and the notes. */
export function collocationMarkdown(collocation: Collocation): string {
  const cell = (text: string) => text.replace(/[\\`*_[\]<>|]/g, (c) => `\\${c}`);
  const mig = collocation.jobs.some((job) => job.migProfile !== null);
  const capped = collocation.jobs.some((job) => job.memoryCap !== null);
  const lines = [`# Collocation on ${cell(collocation.gpu.name)} (${formatMiB(collocation.gpu.memoryMiB)})`, '', `The jobs ${cell(describeCollocationVerdict(collocation))}.`, ''];
  lines.push(`| Script | Models | Memory | Batch | Largest batch together | SMACT |${capped ? ' Cap (set_per_process_memory_fraction) |' : ''}${mig ? ' Smallest MIG profile alone |' : ''}`);
  lines.push(`| --- | --- | ---: | ---: | ---: | --- |${capped ? ' ---: |' : ''}${mig ? ' --- |' : ''}`);
  for (const job of collocation.jobs) {
    const row = [
      cell(job.file),
      cell(job.models.join(', ') || '-'),
      job.memoryMiB === null ? 'no estimate' : formatMiB(job.memoryMiB),
      job.batchSize === null ? '?' : String(job.batchSize),
      job.maxBatchSizeTogether === null ? '-' : String(job.maxBatchSizeTogether),
      job.smact ?? 'unknown',
      ...(capped ? [describeMemoryCap(job)] : []),
      ...(mig ? [cell(describeMigProfile(job))] : []),
    ];
    lines.push(`| ${row.join(' | ')} |`);
  }
  lines.push('', `Interference: ${cell(describeInterference(collocation))}. This is ${cell(collocation.interference.rule)}.`);
  const notes = [...collocation.notes, ...collocation.jobs.flatMap((job) => job.notes.map((note) => `${job.file}: ${note}`))];
  if (notes.length) lines.push('', '## Notes', '', ...notes.map((note) => `- ${cell(note)}`));
  return lines.join('\n') + '\n';
}
