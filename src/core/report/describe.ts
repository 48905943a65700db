import { formatMiB } from '../format/units';
import type { Assumption, FileEstimate, ModelEstimate } from './fileEstimate';

/** Words shared by the CLI table, the hover and the status bar, so they never disagree. */

export function describeEstimate(model: ModelEstimate): string {
  return model.memory.estimateMiB === null ? 'no estimate' : `~${formatMiB(model.memory.estimateMiB)}`;
}

export function describeVerdict(model: ModelEstimate, gpuName: string): string {
  switch (model.risk) {
    case 'fits':
      return `fits ${gpuName}`;
    case 'tight':
      return `fits ${gpuName}, within the safety margin`;
    case 'oom':
      return `does not fit ${gpuName} (out of memory)`;
    default:
      return 'unknown: no estimate';
  }
}

export function describeAssumption(assumption: Assumption): string {
  const label = { batchSize: 'batch size', inputShape: 'input shape', optimizer: 'optimizer', precision: 'precision', gradientCheckpointing: 'gradient checkpointing', compiled: 'torch.compile' }[assumption.name];
  const where = assumption.line === null ? assumption.origin : `${assumption.origin}, line ${assumption.line}`;
  return `${label} ${assumption.value} (${where})`;
}

export function describeBreakdown(model: ModelEstimate): string | undefined {
  const b = model.memory.breakdown;
  if (!b) return undefined;
  return [
    `weights ${formatMiB(b.weightsMiB)}`,
    `gradients ${formatMiB(b.gradientsMiB)}`,
    `optimizer ${formatMiB(b.optimizerMiB)}`,
    `activations ${formatMiB(b.activationsMiB)}`,
    `CUDA runtime ${formatMiB(b.overheadMiB)}`,
  ].join(', ');
}

/** The model with the largest estimate: what a status bar shows for the whole file. */
export function largestModel(estimate: FileEstimate): ModelEstimate | undefined {
  let largest: ModelEstimate | undefined;
  for (const model of estimate.models) {
    if (model.memory.estimateMiB === null) continue;
    if (!largest || model.memory.estimateMiB > (largest.memory.estimateMiB ?? 0)) largest = model;
  }
  return largest;
}
