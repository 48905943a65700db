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

/** `torchvision resnet50`, `transformers bert-base-uncased (BertForSequenceClassification)`; null for a model the script defines itself. */
export function describeArchitecture(model: ModelEstimate): string | null {
  const architecture = model.architecture;
  if (!architecture) return null;
  const byName = architecture.library === 'transformers' && architecture.name !== architecture.className ? ` (${architecture.className})` : '';
  return `${architecture.library} ${architecture.name}${byName}`;
}

/** Which estimator the estimate comes from: `CNN ensemble` or `analytical model`. */
export function describeMethod(model: ModelEstimate): string {
  return model.memory.method === 'ensemble' ? `${model.family.toUpperCase()} ensemble` : 'analytical model';
}

/**
 * What the learned estimators add, in one line: the calibrated range, the memory bin and the
 * utilization classes, or why there are none (Transformers have no training data yet).
 */
export function describeLearned(model: ModelEstimate): string {
  const { memory, utilization } = model;
  const run = memory.ensemble;
  if (memory.method !== 'ensemble' || !run) {
    if (memory.estimateMiB === null) return 'Memory bin and utilization: no estimate';
    return `Memory bin and utilization: no trained ensemble for ${model.family.toUpperCase()} models yet; the analytical model serves them`;
  }
  const [lowQ, highQ] = run.rangeQuantiles.map((q) => Math.round(q * 100));
  const [low, high] = [memory.lowMiB!, memory.highMiB!];
  const range = formatMiB(low) === formatMiB(high) ? `${low} to ${high} MiB` : `${formatMiB(low)} to ${formatMiB(high)}`;
  const parts = [`Range ${range} (${lowQ}th-${highQ}th percentile)`];
  parts.push(memory.bin ? `bin ${formatMiB(memory.bin.lowMiB)} to ${formatMiB(memory.bin.highMiB)} (p ${memory.bin.probability.toFixed(2)})` : 'bin: above the training data');
  const util = (['smact', 'smocc', 'drama'] as const).filter((k) => utilization[k] !== null).map((k) => `${k.toUpperCase()} ${utilization[k]}`);
  if (util.length) parts.push(`utilization ${util.join(', ')}`);
  parts.push(`analytical model ${formatMiB(run.analyticalMiB)}`);
  parts.push(`ran on ${run.executionProvider.toUpperCase()}`);
  return parts.join('; ');
}