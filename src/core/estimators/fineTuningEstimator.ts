import type { TrainingSetup } from '../analysis/modelDescription';
import type { CatalogArchitecture } from '../catalog/catalog';
import type { Estimator } from '../estimate/estimator';
import { BYTES_PER_MIB } from '../format/units';
import type { MemoryBreakdown } from './analytical';
import { estimateFineTuning, shapeFromConfig, type FineTuningAdapter, type FineTuningEstimate, type FineTuningJob, type OptimizerState } from './fineTuning';
import { shardingSpec, estimateShardedAt } from './shardedFineTuning';
import type { TrainingJob } from './trainingJob';

/**
 * The fine-tuning job of a transformers model the catalog knows, when the script fine-tunes it the
 * way people fine-tune language models: a PEFT adapter, quantized or 16-bit loaded weights. Undefined
 * for every other model (the other estimators then decide). `seq` is the tokens per sample the
 * layer table was built for.
 */
export function fineTuningSpec(setup: TrainingSetup, architecture: CatalogArchitecture | undefined, seq: number | undefined, gpus?: number): TrainingJob['fineTuning'] {
  const hf = architecture?.hfConfig;
  const adapter = setup.adapter?.value.applied ? setup.adapter.value : undefined;
  if (!hf || seq === undefined || !(adapter || setup.quantization || setup.weightDtype)) return undefined;
  const head = /ForSequenceClassification$/.test(hf.className) ? { kind: 'classifier' as const, labels: typeof hf.config.num_labels === 'number' ? hf.config.num_labels : 2 } : { kind: 'lm' as const };
  const shape = shapeFromConfig(hf.modelType, hf.config, head);
  if (typeof shape === 'string') return undefined;
  const notes: string[] = [];
  const quantization = adapter ? setup.quantization?.value : undefined;
  if (setup.quantization && !adapter) notes.push('The weights are quantized but no adapter is applied: a quantized model cannot be fully fine-tuned; its weights are counted at 16 bits.');
  const dtype = setup.weightDtype?.value;
  if (!dtype && !quantization) notes.push("The weights' dtype is not given (from_pretrained(torch_dtype=...)): fp32 is assumed, transformers 4's default (transformers 5 loads the checkpoint's dtype).");
  const weightBits: FineTuningJob['weightBits'] = quantization ? quantization.bits : dtype === 'bf16' || dtype === 'fp16' ? 16 : 32;
  const precision = setup.precision?.value ?? 'fp32';
  const mixed = precision === 'bf16-mixed' || precision === 'fp16-mixed';
  const computeBytes = mixed || weightBits !== 32 || precision === 'bf16' || precision === 'fp16' ? 2 : 4;
  const name = setup.optimizerName?.value ?? '';
  const optimizer: OptimizerState = /8bit/.test(name) ? 'adamw-8bit' : /adafactor/.test(name) ? 'adafactor' : /^sgd/.test(name) || setup.optimizer?.value === 'sgd' || setup.optimizer?.value === 'sgd-momentum' ? 'sgd' : 'adamw';
  let fineTuningAdapter: FineTuningAdapter | undefined;
  if (adapter) {
    if (adapter.method === 'lora' || adapter.method === 'adalora') {
      fineTuningAdapter = { method: 'lora', ...(adapter.rank === undefined ? {} : { rank: adapter.rank }), ...(adapter.targetModules === undefined ? {} : { targetModules: adapter.targetModules }), dora: adapter.dora };
      if (adapter.rank === undefined) notes.push("The adapter's rank is not readable; PEFT's default 8 is assumed.");
    } else {
      fineTuningAdapter = { method: 'other' };
      notes.push(`The ${adapter.method} adapter's parameters are not counted (only LoRA's are); they are few, so the estimate is close.`);
    }
  }
  const job: Omit<FineTuningJob, 'batch'> = {
    shape,
    seq,
    ...(fineTuningAdapter ? { adapter: fineTuningAdapter } : {}),
    weightBits,
    doubleQuant: quantization?.doubleQuant ?? false,
    computeBytes,
    autocast: mixed && weightBits === 32,
    optimizer,
    paged: /paged/.test(name),
    checkpointing: setup.gradientCheckpointing?.value ?? false,
    // transformers' default is SDPA where the model supports it; "eager" keeps the probabilities.
    eagerAttention: setup.attentionImplementation?.value === 'eager',
    ...(setup.gradientAccumulation ? { accumulation: setup.gradientAccumulation.value } : {}),
    kbitPrepared: setup.kbitPrepared !== undefined,
  };
  // Several GPUs (shardedFineTuning.ts): the strategy and count, estimated per GPU.
  const sharding = shardingSpec(setup, shape, gpus, notes);
  return { job, notes, ...(sharding ? { sharding } : {}) };
}

/** The fine-tuning estimate as the parts the estimate's breakdown shows. */
export function fineTuningBreakdown(estimate: FineTuningEstimate): MemoryBreakdown {
  const mib = (bytes: number) => bytes / BYTES_PER_MIB;
  return {
    weightsMiB: mib(estimate.baseWeights + estimate.trainableWeights),
    gradientsMiB: mib(estimate.gradients),
    optimizerMiB: mib(estimate.optimizerState),
    activationsMiB: mib(estimate.driver - estimate.context - estimate.baseWeights - estimate.trainableWeights - estimate.gradients - estimate.optimizerState),
    overheadMiB: mib(estimate.context),
  };
}

/**
 * The fine-tuning model (fineTuning.ts) as an estimator: for a pretrained Transformer fine-tuned
 * with an adapter or loaded quantized or in 16 bits, the driver's figure of its physical model.
 */
export const fineTuningEstimator: Estimator<MemoryBreakdown> = {
  id: 'fineTuning',
  label: 'Fine-tuning model',
  short: 'Fine-tune',
  attribution: () => 'fine-tuning model',
  onlyWhereItApplies: true,
  pass: 'analysis',
  estimate({ job }) {
    const spec = job.fineTuning;
    if (!spec) return null;
    const { sharding } = spec;
    const at = (batch: number) => (sharding ? estimateShardedAt(spec.job, sharding, batch) : estimateFineTuning({ ...spec.job, batch }));
    const estimate = at(job.batchSize);
    return {
      method: 'fineTuning',
      pointMiB: estimate.driver / BYTES_PER_MIB,
      range: null,
      warnings: [...spec.notes, ...estimate.notes],
      memoryAt: (batchSize) => at(batchSize).driver / BYTES_PER_MIB,
      detail: fineTuningBreakdown(estimate),
    };
  },
};
