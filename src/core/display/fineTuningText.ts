/**
 * The fine-tuning outlook in words, for the hover, the report and the CLI: the longest sequence
 * that fits at the script's batch, and the changes that make the job fit with their estimates.
 * Plain text (callers escape it for Markdown or HTML).
 */
import type { FineTuningOutlook, Remedy, Risk } from '../estimate/fileEstimate';
import { formatMiB } from '../format/units';

/** `longest sequence that fits at batch 4: 3776 tokens (the model's maximum: 4096)`. */
export function describeLongestSequence(outlook: FineTuningOutlook): string {
  const { tokens, modelMaximum, modelMaximumFits } = outlook.longestSequence;
  const at = `at batch ${outlook.batch}`;
  if (modelMaximumFits) return `the model's maximum sequence, ${modelMaximum} tokens, fits ${at}`;
  if (tokens === 0) return `not even 64 tokens per sequence fit ${at}`;
  return `longest sequence that fits ${at}: ${tokens} tokens${modelMaximum === null ? '' : ` (the model's maximum: ${modelMaximum})`}`;
}

/**
 * The remedies worth showing: for a job out of memory every one that fits the GPU, for one within
 * the safety margin those that leave it outside the margin; in the outlook's order (smallest first).
 */
export function fittingRemedies(outlook: FineTuningOutlook, risk: Risk | null): Remedy[] {
  return outlook.remedies.filter((remedy) => (risk === 'tight' ? remedy.risk === 'fits' : remedy.fits));
}

/** `gradient checkpointing: 18.9 GiB`, `LoRA r=8 instead of full fine-tuning: 17.2 GiB, changes the training`. */
export function describeRemedy(remedy: Remedy): string {
  const notes = [formatMiB(remedy.driverMiB), ...(remedy.risk === 'tight' ? ['within the safety margin'] : []), ...(remedy.sameTraining ? [] : ['changes the training'])];
  return `${remedy.change}: ${notes.join(', ')}`;
}

/**
 * `fits with: gradient checkpointing: 18.9 GiB; batch 2 x 2 accumulation: 21.0 GiB` (at most `limit`
 * changes, then how many more), or what comes closest when nothing fits; null when there is nothing to
 * suggest (the job fits comfortably).
 */
export function describeRemedies(outlook: FineTuningOutlook, risk: Risk | null, limit = Number.POSITIVE_INFINITY): string | null {
  if (outlook.remedies.length === 0) return null;
  const fitting = fittingRemedies(outlook, risk);
  const lead = risk === 'tight' ? 'fits outside the safety margin with' : 'fits with';
  if (fitting.length === 0) {
    const closest = outlook.remedies[0]!;
    return `no single change or pair of changes makes it fit; the closest: ${describeRemedy(closest)}`;
  }
  const shown = fitting.slice(0, limit).map(describeRemedy);
  const more = fitting.length > limit ? ` (and ${fitting.length - limit} more)` : '';
  return `${lead}: ${shown.join('; ')}${more}`;
}

/** How many changes the hover lists; the report and the CLI list them all. */
export const HOVER_REMEDIES = 4;

/** The outlook as sentences: the longest sequence, then the changes (at most `limit` of them). */
export function fineTuningLines(outlook: FineTuningOutlook, risk: Risk | null, limit = HOVER_REMEDIES): string[] {
  const remedies = describeRemedies(outlook, risk, limit);
  return [describeLongestSequence(outlook), ...(remedies ? [remedies] : [])].map(sentence);
}

/** `Fits with: ...` from `fits with: ...`. */
export const sentence = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

const VERDICTS: Readonly<Record<Risk, string>> = { fits: 'fits', tight: 'within the safety margin', oom: 'does not fit' };

/** The report's table of every change tried: what it is, its estimate, its verdict on the GPU, whether the training stays the same. */
export function remedyTable(outlook: FineTuningOutlook): { readonly change: string; readonly estimate: string; readonly verdict: string; readonly risk: Risk; readonly sameTraining: string }[] {
  return outlook.remedies.map((remedy) => ({ change: remedy.change, estimate: formatMiB(remedy.driverMiB), verdict: VERDICTS[remedy.risk], risk: remedy.risk, sameTraining: remedy.sameTraining ? 'yes' : 'no' }));
}
