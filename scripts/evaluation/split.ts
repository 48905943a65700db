import { createHash } from 'node:crypto';
import type { ReferenceRun } from './referenceData';

/**
 * The held-out test split of the training pipeline (harness/training/data.py `split`), computed
 * the same way so the shipped models are scored here on runs they never saw: per family and
 * memory stratum (floor(peak / 1 GiB) for MLPs, / 8 GiB for CNNs), runs ordered by
 * sha256("family/file name"); the first round(30%) are the test split.
 */
const STRATUM_MIB = { mlp: 1024, cnn: 8192 } as const;
const TEST_SHARE = 0.3;

export function heldOutSplit(runs: readonly ReferenceRun[]): { train: ReferenceRun[]; test: ReferenceRun[] } {
  const groups = new Map<string, { key: string; run: ReferenceRun }[]>();
  for (const run of runs) {
    const stratum = `${run.family}/${Math.floor(run.measuredMiB / STRATUM_MIB[run.family])}`;
    const key = createHash('sha256').update(`${run.family}/${run.file}`).digest('hex');
    if (!groups.has(stratum)) groups.set(stratum, []);
    groups.get(stratum)!.push({ key, run });
  }
  const train: ReferenceRun[] = [];
  const test: ReferenceRun[] = [];
  for (const members of groups.values()) {
    members.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const held = Math.floor(TEST_SHARE * members.length + 0.5);
    members.forEach(({ run }, i) => (i < held ? test : train).push(run));
  }
  return { train, test };
}
