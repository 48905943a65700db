import type { Assumption, FileEstimate } from '../estimate/fileEstimate';

/** An assumed value the user may pin (a size that comes from the data), as the editor's quick fix offers it. */
export interface PinnableAssumption {
  /** The name it is pinned under in gpuEstimator.assume (the CLI's --set): the name the script binds it to. */
  readonly key: string;
  /** The value assumed now, offered as the starting value. */
  readonly value: string;
  /** The quick fix's title: `Pin the vocabulary size (ntokens, assumed 50257) in the workspace settings`. */
  readonly title: string;
  /** 1-based line of the script it was read on. */
  readonly line: number;
}

/**
 * The sizes from the data assumed on a line of the script (`ntokens = len(corpus.dictionary)`),
 * once each however many models use them: what the quick fix offers to pin.
 */
export function pinnableAssumptionsAt(estimate: FileEstimate, line: number): PinnableAssumption[] {
  const found = new Map<string, PinnableAssumption>();
  for (const model of estimate.models) {
    for (const assumption of model.assumptions) {
      if (!isPinnable(assumption) || assumption.line !== line || assumption.file !== undefined || found.has(assumption.key)) continue;
      found.set(assumption.key, {
        key: assumption.key,
        value: assumption.value,
        title: `Pin the ${assumption.what ?? 'size from the data'} (${assumption.key}, assumed ${assumption.value}) in the workspace settings`,
        line,
      });
    }
  }
  return [...found.values()];
}

function isPinnable(assumption: Assumption): assumption is Assumption & { key: string } {
  return assumption.name === 'dataDerived' && assumption.key !== undefined;
}

/** Whether `text` is a size the quick fix can pin: a positive whole number in decimal digits. */
export function pinnedSizeOf(text: string): number | undefined {
  const trimmed = text.trim().replace(/_/g, '');
  if (!/^[0-9]+$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}
