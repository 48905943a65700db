import { formatMiB } from '../format/units';
import type { Assumption, EstimatorReading, FileEstimate, ModelEstimate, Risk, ScriptProcess } from '../estimate/fileEstimate';

/** Words shared by the CLI table, the hover and the status bar, so they never disagree. */

export function describeEstimate(model: ModelEstimate): string {
  if (model.memory.estimateMiB === null) return 'no estimate';
  return `~${formatMiB(model.memory.estimateMiB)}${model.memory.sharding ? ` per GPU (${model.memory.sharding.gpus})` : ''}`;
}

/**
 * The script's models together in its one process (scriptProcess.ts): `teacher + student (teacher
 * inference only) in one process: ~7.5 GiB; fits A100 40GB; largest shared batch 940`.
 */
export function describeProcess(process: ScriptProcess, gpuName: string): string {
  const inference = process.inferenceOnly.length ? ` (${process.inferenceOnly.join(', ')} inference only)` : '';
  const batch =
    process.maxBatchSize !== null
      ? `; largest batch that fits them together: ${process.maxBatchSize}`
      : process.batchSize === null
        ? '; they take different batch sizes'
        : '';
  return `${process.models.join(' + ')}${inference} in one process: ~${formatMiB(process.estimateMiB)}; ${describeVerdict(process, gpuName)}${batch}`;
}

const gpusText = (n: number) => `${n} GPU${n === 1 ? '' : 's'}`;

/**
 * A fine-tuning job on several GPUs: the strategy and count the per-GPU estimate is for, where
 * each was read, and the per-GPU figure at 1, 2, 4 and 8 GPUs. Undefined for a single-GPU job.
 */
export function describeSharding(model: Pick<ModelEstimate, 'memory'>): string | undefined {
  const sharding = model.memory.sharding;
  if (!sharding) return undefined;
  const where = sharding.line === null ? sharding.origin : `${sharding.origin}, line ${sharding.line}`;
  const table = sharding.perGpu.map((row) => `${gpusText(row.gpus)} ${formatMiB(row.driverMiB)}`).join(', ');
  const host = sharding.hostMiB > 0 ? `; ${formatMiB(sharding.hostMiB)} offloaded to host memory per process` : '';
  return `${sharding.strategy} on ${gpusText(sharding.gpus)} (${sharding.gpusOrigin}), from ${where}; per GPU at ${table}${host}`;
}

export function describeVerdict(model: { readonly risk: Risk | null }, gpuName: string): string {
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
  const where = assumption.line === null ? assumption.origin : `${assumption.origin}, ${assumption.file === undefined ? '' : `${assumption.file} `}line ${assumption.line}`;
  return `${describeAssumptionValue(assumption)} (${where})`;
}

/** `batch size 64`: the assumption without where it came from. */
export function describeAssumptionValue(assumption: Assumption): string {
  if (assumption.name === 'config') return `${assumption.key ?? 'value'} = ${assumption.value}`;
  if (assumption.name === 'dataDerived') return `${assumption.what ?? 'size from the data'} (${assumption.key ?? 'value'}) ${assumption.value}`;
  const label = { batchSize: 'batch size', inputShape: 'input shape', optimizer: 'optimizer', precision: 'precision', gradientCheckpointing: 'gradient checkpointing', compiled: 'torch.compile', gradientAccumulation: 'gradient accumulation', targetLength: 'label tokens (decoder)', loss: 'loss', weightDtype: 'weights loaded in', quantization: 'base weights quantized', adapter: 'adapter', trainer: 'trainer' }[assumption.name];
  return `${label} ${assumption.value}`;
}

/** Whose breakdown the estimate shows: the fine-tuning model's when it is the estimate, else the analytical model's. */
export function breakdownSource(model: Pick<ModelEstimate, 'memory'>): string {
  return model.memory.method === 'fineTuning' ? 'fine-tuning model' : 'analytical model';
}

export function describeBreakdown(model: ModelEstimate): string | undefined {
  const b = model.memory.breakdown;
  if (!b) return undefined;
  return [
    `weights ${formatMiB(b.weightsMiB)}`,
    `gradients ${formatMiB(b.gradientsMiB)}`,
    `optimizer ${formatMiB(b.optimizerMiB)}`,
    `activations ${formatMiB(b.activationsMiB)}`,
    // The fine-tuning model's overhead is the CUDA context and its fitted margin (docs/fine-tuning.md).
    `${model.memory.method === 'fineTuning' ? 'CUDA context and fitted margin' : 'CUDA runtime'} ${formatMiB(b.overheadMiB)}`,
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

/** Which estimator the estimate comes from: `CNN ensemble`, `analytical model`; `no estimator` when none ran. */
export function describeMethod(model: ModelEstimate): string {
  return model.estimates.find((reading) => reading.role === 'estimate')?.attribution ?? 'no estimator';
}

/** The figures shown beside the estimate wherever room is short (hover line, CodeLens, status tooltip): the comparison estimators' that ran. */
export function comparisonReadings(model: ModelEstimate): (EstimatorReading & { readonly estimateMiB: number })[] {
  return model.estimates.filter((reading): reading is EstimatorReading & { estimateMiB: number } => reading.role === 'comparison' && reading.estimateMiB !== null);
}

/** `Analytical model 7.1 GiB, Horus formula 21.0 GiB, Trained ensemble 7.9 GiB (6.2 GiB to 8.4 GiB)`: every estimator, `n/a` where one did not run. */
export function describeReadings(model: ModelEstimate): string {
  return model.estimates
    .map((reading) => {
      if (reading.estimateMiB === null) return `${reading.label} n/a`;
      const range = reading.lowMiB !== null && reading.highMiB !== null ? ` (${formatMiB(reading.lowMiB)} to ${formatMiB(reading.highMiB)})` : '';
      return `${reading.label} ${formatMiB(reading.estimateMiB)}${range}`;
    })
    .join(', ');
}

/**
 * What the estimate adds to its point, in one line: the calibrated range, the memory bin (the
 * ensemble's) and the utilization classes, or why there are none.
 */
export function describeLearned(model: ModelEstimate): string {
  const { memory } = model;
  const run = memory.ensemble;
  if (memory.method === 'ensemble' && run) {
    return [`Range ${describeRange(model) ?? 'unknown'}`, describeBin(model), `utilization ${describeUtilization(model)}`, `analytical model ${formatMiB(run.analyticalMiB)}`, `ran on ${run.executionProvider.toUpperCase()}`].join('; ');
  }
  const range = describeRange(model);
  if (!range) return `Memory bin and utilization: ${describeNoEnsemble(model)}`;
  const utilization = hasUtilization(model) ? `utilization ${describeUtilization(model)}` : `no utilization classes: ${describeNoEnsemble(model)}`;
  return [`Range ${range}`, utilization].join('; ');
}

function hasUtilization(model: ModelEstimate): boolean {
  return Object.values(model.utilization).some((value) => value !== null);
}

/** Why a model has no memory bin or utilization classes. */
export function describeNoEnsemble(model: ModelEstimate): string {
  if (model.memory.estimateMiB === null) return 'no estimate';
  return model.family === 'transformer' ? 'no trained ensemble for TRANSFORMER models yet' : `the ${model.family.toUpperCase()} ensemble has not run`;
}

/** The estimate's calibrated range: `1.2 GiB to 1.9 GiB (5th-95th percentile)`; undefined without one. */
export function describeRange(model: ModelEstimate): string | undefined {
  const { memory } = model;
  const quantiles = memory.rangeQuantiles ?? memory.ensemble?.rangeQuantiles;
  if (!quantiles || memory.lowMiB === null || memory.highMiB === null) return undefined;
  const [lowQ, highQ] = quantiles.map((q) => Math.round(q * 100));
  const [low, high] = [memory.lowMiB, memory.highMiB];
  const range = formatMiB(low) === formatMiB(high) ? `${low} to ${high} MiB` : `${formatMiB(low)} to ${formatMiB(high)}`;
  return `${range} (${lowQ}th-${highQ}th percentile)`;
}

/** The most probable memory bin with its probability: `bin 1.0 GiB to 2.0 GiB (p 0.93)`. */
export function describeBin(model: ModelEstimate): string {
  const { bin } = model.memory;
  return bin ? `bin ${formatMiB(bin.lowMiB)} to ${formatMiB(bin.highMiB)} (p ${bin.probability.toFixed(2)})` : 'bin: above the training data';
}

/** Every utilization class the issue names, `not available` where the ensemble gives none: `SMACT medium, SMOCC low, DRAMA not available`. */
export function describeUtilization(model: ModelEstimate): string {
  return (['smact', 'smocc', 'drama'] as const).map((k) => `${k.toUpperCase()} ${model.utilization[k] ?? 'not available'}`).join(', ');
}
