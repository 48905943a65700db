/**
 * The one schema of the real-model estimator's training rows (build/real-model/samples-*.csv):
 * the timm runs, GPUMemNet's synthetic runs and the dry-run labelled rows of scripts/labeller all
 * go through sampleRow, so fit.py reads every row the same way.
 */
import { analyticalEstimate } from '../../src/core/estimators/analytical';
import { horusMiB } from '../../src/core/estimators/horus';
import { REAL_MODEL_FEATURES } from '../../src/core/estimators/realModelFeatures';
import type { TrainingJob } from '../../src/core/estimators/trainingJob';

/** fit.py's META_COLUMNS are the columns before the features. */
export const SAMPLE_COLUMNS = ['model', 'family', 'group', 'case', 'batch', 'measured_mib', 'weight', 'faketensor_mib', 'analytical_mib', 'horus_mib', ...REAL_MODEL_FEATURES] as const;

/**
 * case: 'catalog' (timm runs with autograd's measured activations), 'table' (the same runs, rows
 * alone), 'synthetic' (GPUMemNet), 'dry-run' (labelled by the CPU dry run, scripts/labeller).
 * measured_mib is the label: nvidia-smi's peak, or the dry run's prediction of it.
 */
export interface SampleRowInput {
  readonly model: string;
  readonly family: string;
  readonly group: string;
  readonly case: 'catalog' | 'table' | 'synthetic' | 'dry-run';
  readonly job: TrainingJob;
  readonly measuredMiB: number;
  readonly weight: number;
  readonly fakeTensorMiB?: number;
  /** The feature vector when the caller has it already (REAL_MODEL_FEATURES order). */
  readonly features: readonly number[];
}

export function sampleRow(input: SampleRowInput): (string | number)[] {
  if (input.features.length !== REAL_MODEL_FEATURES.length) throw new Error(`${input.model}: ${input.features.length} features, the schema has ${REAL_MODEL_FEATURES.length}`);
  const fake = input.fakeTensorMiB === undefined ? '' : String(input.fakeTensorMiB);
  return [input.model, input.family, input.group, input.case, input.job.batchSize, input.measuredMiB, input.weight, fake, analyticalEstimate(input.job).totalMiB, horusMiB(input.job), ...input.features];
}

export function sampleCsv(rows: readonly (readonly (string | number)[])[]): string {
  return `${[SAMPLE_COLUMNS.join(','), ...rows.map((row) => row.join(','))].join('\n')}\n`;
}
