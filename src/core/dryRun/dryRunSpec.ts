/**
 * What the dry run's fake data loader yields, from the static estimate: one batch of the model's
 * input shape (token ids when the model starts with an embedding) and class labels.
 */
import type { FileEstimate, ModelEstimate } from '../estimate/fileEstimate';

export interface DryRunTensorSpec {
  /** Per sample: the loader prepends the batch dimension. */
  readonly shape: readonly number[];
  readonly dtype: 'float32' | 'int64';
}

/** The harness's --spec file (harness/dry_run.py reads the same names). */
export interface DryRunSpec {
  readonly tensors: readonly DryRunTensorSpec[];
  /** Replaces the batch size the script gives its DataLoader (the CLI's --batch-size). */
  readonly batchSize?: number;
  /** The script's command-line arguments. */
  readonly argv: readonly string[];
  /** The project root: the script runs from there, with it (and its src/) importable. */
  readonly root?: string;
}

/** Tokens stand in for a sequence model's input when the analysis found none. */
const DEFAULT_SEQUENCE = 128;

export function dryRunSpecFor(model: ModelEstimate | undefined, options: { batchSize?: number; argv?: readonly string[]; root?: string } = {}): DryRunSpec {
  const first = model?.layerTable.rows[0]?.type ?? '';
  const tokens = /(^|\.)Embedding(Bag)?$/.test(first);
  const perSample = model?.inputShape && model.inputShape.length > 0 ? [...model.inputShape] : tokens ? [DEFAULT_SEQUENCE] : [1];
  const input: DryRunTensorSpec = { shape: perSample, dtype: tokens ? 'int64' : 'float32' };
  // Language models are trained on next tokens of the same length; classifiers on one label per sample.
  const labels: DryRunTensorSpec = tokens ? { shape: perSample, dtype: 'int64' } : { shape: [], dtype: 'int64' };
  return { tensors: [input, labels], argv: [...(options.argv ?? [])], ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }), ...(options.root === undefined ? {} : { root: options.root }) };
}

/** Where an input shape came from when the script made the tensor itself rather than a loader giving it. */
const MADE_BY_THE_SCRIPT = /^(randn|rand|randint|zeros|ones|empty|full)\(|^the tensors passed in/;

/**
 * The model whose batches the script's loader gives, for the fake batches' shape: of the trained
 * models, the first whose input shape was read from a dataset or loader (a GAN's discriminator,
 * not its generator fed noise the script makes), else the first trained, else the first.
 */
export function modelFedByLoader(estimate: FileEstimate): ModelEstimate | undefined {
  const trained = estimate.models.filter((model) => model.trainingLoops.length > 0);
  const fromData = trained.find((model) => model.assumptions.some((a) => a.name === 'inputShape' && !MADE_BY_THE_SCRIPT.test(a.origin)));
  return fromData ?? trained[0] ?? estimate.models[0];
}
