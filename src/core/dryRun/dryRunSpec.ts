/**
 * What the dry run's fake data loader yields, from the static estimate: one batch of the model's
 * input shape (token ids when the model starts with an embedding) and class labels.
 */
import type { AssumedValue } from '../analysis/config/assumedValues';
import type { FileEstimate, ModelEstimate } from '../estimate/fileEstimate';
import type { HubConfigs } from './hubConfigs';
import { ASSUMED_SEQUENCE_LENGTH } from '../layerTable/inputCandidates';

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
  /**
   * The values the user assumes (`--set`, `gpuEstimator.assume`). The harness sets each as an
   * environment variable (as given and upper-case), and replaces, matching names as the static
   * analysis does (case and `-`/`_` aside), argparse options after parsing, literal top-level
   * constants and dataclass field defaults. Config-file keys (dotted or not) are not applied.
   */
  readonly assume?: Readonly<Record<string, AssumedValue>>;
  /** The project root: the script runs from there, with it (and its src/) importable. */
  readonly root?: string;
  /** Configs of the hub checkpoints the script names (hubConfigs.ts), built instead of downloaded. */
  readonly hubConfigs?: HubConfigs;
}


/**
 * `dataShape`: what the script's data gives per sample (FileEstimate's), for a script whose model
 * says no input shape (or was not found: a library model the analysis does not know).
 */
export function dryRunSpecFor(model: ModelEstimate | undefined, options: { batchSize?: number; argv?: readonly string[]; root?: string; assume?: Readonly<Record<string, AssumedValue>>; dataShape?: readonly number[] } = {}): DryRunSpec {
  const tokens = takesTokens(model);
  const perSample = model?.inputShape && model.inputShape.length > 0 ? [...model.inputShape] : tokens ? [ASSUMED_SEQUENCE_LENGTH] : options.dataShape?.length ? [...options.dataShape] : [1];
  const input: DryRunTensorSpec = { shape: perSample, dtype: tokens ? 'int64' : 'float32' };
  // Language models are trained on next tokens of the same length; classifiers (a text classifier too)
  // on one label per sample.
  const labels: DryRunTensorSpec = tokens && scoresEveryToken(model) ? { shape: perSample, dtype: 'int64' } : { shape: segmentationMask(model) ?? [], dtype: 'int64' };
  // --batch-size wins over a --set of the same name, as it does over the loader's batch.
  const assume = { ...options.assume, ...batchSizeByName(model, options.batchSize) };
  return {
    tensors: [input, labels],
    argv: [...(options.argv ?? [])],
    ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
    ...(options.root === undefined ? {} : { root: options.root }),
    ...(Object.keys(assume).length === 0 ? {} : { assume }),
  };
}

const EMBEDDING = /(^|\.)Embedding(Bag)?$/;

/** The output shape of the model's last layer with one (per sample). */
function lastOutputShape(model: ModelEstimate | undefined): readonly number[] | undefined {
  return [...(model?.layerTable.rows ?? [])].reverse().find((row) => row.outputShape)?.outputShape ?? undefined;
}

/**
 * A segmentation network's targets: the model ends in scores per pixel of its input's size, so a
 * mask per sample. Several classes: `[H, W]` class ids, as cross-entropy takes them (and as
 * `F.one_hot(mask, C).permute(0, 3, 1, 2)` expects); one channel (a binary mask for BCE or Dice):
 * `[1, H, W]`, as a mask image loads (a script that squeezes the channel away, or does not, both run).
 */
function segmentationMask(model: ModelEstimate | undefined): number[] | undefined {
  const input = model?.inputShape;
  const last = lastOutputShape(model);
  if (!input || input.length !== 3 || !last || last.length !== 3) return undefined;
  if (last[1] !== input[1] || last[2] !== input[2]) return undefined;
  return last[0]! > 1 ? [input[1]!, input[2]!] : [1, input[1]!, input[2]!];
}

/**
 * Token ids in: the first layer is an embedding, or (a catalog model's rows, which list parameters
 * first) the model has one and its input is a sequence (one dimension per sample) or unknown. A
 * conditional GAN's class embedding beside an image input does not count.
 */
function takesTokens(model: ModelEstimate | undefined): boolean {
  const rows = model?.layerTable.rows ?? [];
  if (EMBEDDING.test(rows[0]?.type ?? '')) return true;
  return rows.some((row) => EMBEDDING.test(row.type)) && (!model?.inputShape || model.inputShape.length <= 1);
}

/**
 * Targets at every position (a language model's next tokens, a translation): a layer gives scores
 * over an embedding's vocabulary at every position, or the model does not end in one row of scores
 * per sample (a text classifier's head, whose targets are one class per sample) or its input shape,
 * and so its layers' output shapes, are unknown (a tagger's targets are one tag per token).
 */
function scoresEveryToken(model: ModelEstimate | undefined): boolean {
  const rows = model?.layerTable.rows ?? [];
  const vocabularies = new Set(
    rows.filter((row) => EMBEDDING.test(row.type) && row.params && row.outputShape?.length).map((row) => row.params! / row.outputShape![row.outputShape!.length - 1]!),
  );
  if (rows.some((row) => !EMBEDDING.test(row.type) && (row.outputShape?.length ?? 0) >= 2 && vocabularies.has(row.outputShape![row.outputShape!.length - 1]!))) return true;
  // Shapes are per sample only where the input's was known; without it a tagger's head looks like a classifier's.
  return !model?.inputShape || lastOutputShape(model)?.length !== 1;
}

/**
 * A batch size asked for (`--batch-size`) under the name the script keeps its own in (the
 * assumption's `key`: `BATCH_SIZE`, an argparse dest): a loop that makes its own batches
 * (`torch.randn(batch_size, ...)`) then runs with it too, not only a DataLoader's.
 */
function batchSizeByName(model: ModelEstimate | undefined, batchSize: number | undefined): Record<string, AssumedValue> {
  const key = batchSize === undefined ? undefined : model?.assumptions.find((a) => a.name === 'batchSize')?.key;
  return key === undefined || batchSize === undefined ? {} : { [key]: batchSize };
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
