/**
 * A dry-run labelled training row: the static analysis's job for the script's one trained model
 * (its layer table, batch size, optimizer and precision, as the real-model estimator sees it in
 * the editor), with the CPU dry run's predicted nvidia-smi peak on the A100 profile as the label.
 */
import { CUDNN_WORKSPACE } from '../../src/core/dryRun/cudnnWorkspace';
import { replayDryRun } from '../../src/core/dryRun/dryRunReplay';
import type { DryRunTrace } from '../../src/core/dryRun/dryRunTrace';
import type { FileEstimate, ModelEstimate } from '../../src/core/estimate/fileEstimate';
import { realModelFeatures } from '../../src/core/estimators/realModelFeatures';
import type { TrainingJob } from '../../src/core/estimators/trainingJob';
import { sampleRow } from '../realModel/sampleRows';

/** Labels above this are left out: the measured runs that filled the A100 40 GB are lower bounds, kept out of the fit too. */
export const LABEL_CEILING_MIB = 39_000;

/**
 * The model whose job the script's dry-run peak belongs to: the script's only trained model (or
 * its only model). A script training two (a GAN) has one peak for both, so it gives no row.
 */
export function labelledModel(estimate: FileEstimate): ModelEstimate | string {
  const trained = estimate.models.filter((model) => model.trainingLoops.length > 0);
  const candidates = trained.length > 0 ? trained : estimate.models;
  if (candidates.length === 0) return 'the static analysis found no model';
  if (candidates.length > 1) return `${candidates.length} trained models share the script's one peak`;
  return candidates[0]!;
}

/** The job the analysis pass's real-model estimator is given for the model (estimateTree.ts). */
export function jobOf(model: ModelEstimate): TrainingJob | string {
  if (model.batchSize === null) return 'the static analysis found no batch size';
  if (model.layerTable.rows.length === 0) return 'the static analysis built no layer table';
  return { table: model.layerTable, batchSize: model.batchSize, optimizer: model.optimizer, precision: model.precision };
}

export interface DryRunLabel {
  readonly key: string;
  readonly model: string;
  readonly family: string;
  readonly group: string;
  /** The dry run's predicted nvidia-smi peak on the A100 profile (the caching-allocator replay with cuDNN's workspaces, plus the context). */
  readonly labelMiB: number;
  readonly job: TrainingJob;
  readonly features: readonly number[];
}

export function dryRunLabel(source: { key: string; model: string; family: string; group: string }, job: TrainingJob, trace: DryRunTrace): DryRunLabel | string {
  if (!trace.ok) return trace.error ?? 'the dry run did not reach the training step';
  const labelMiB = replayDryRun(trace, CUDNN_WORKSPACE).predictedMiB;
  if (labelMiB > LABEL_CEILING_MIB) return `the dry run's ${Math.round(labelMiB)} MiB would fill the A100 40 GB`;
  return { key: source.key, model: source.model, family: source.family, group: source.group, labelMiB, job, features: realModelFeatures(job).vector };
}

/** The row in the training samples' schema; its weight is set when the fit mixes it with the measured runs (fit.py). */
export function dryRunRow(label: DryRunLabel): (string | number)[] {
  return sampleRow({ model: label.model, family: label.family, group: `dry-run ${label.group}`, case: 'dry-run', job: label.job, measuredMiB: label.labelMiB, weight: 1, features: label.features });
}
