/**
 * Every estimator the pipeline runs, in the order their results are listed. Adding one is a new
 * file under src/core/estimators that exports an `Estimator`, and a line here.
 */
import { analyticalEstimator } from '../estimators/analyticalEstimator';
import { fineTuningEstimator } from '../estimators/fineTuningEstimator';
import { horusEstimator } from '../estimators/horus';
import { ensembleEstimator } from '../estimators/learned';
import { realModelEstimator } from '../estimators/realModel';
import type { OnnxRunner } from '../estimators/onnx/onnxRunner';
import type { ModelFamily } from '../estimators/family';
import type { Estimator, EstimatorInput, EstimatorResult, EstimatorResults } from './estimator';
import type { EstimatorReading } from './fileEstimate';

export const ESTIMATORS: readonly Estimator[] = [analyticalEstimator, horusEstimator, ensembleEstimator, realModelEstimator, fineTuningEstimator];

/**
 * Which result is the estimate, first found first, passing over a result outside its estimator's
 * training data: the family's trained ensemble on the networks it was trained on (GPUMemNet's
 * generated MLPs and CNNs, where it is the most accurate); the real-model estimator on every other
 * model (real architectures: measured on 753 timm models, where the ensembles, the analytical model
 * and Horus miss by 22-39%; docs/real-model-estimator.md); our analytical model where neither ran.
 * Horus is shown for comparison only. Before all of them, the fine-tuning model for a pretrained
 * Transformer fine-tuned with an adapter, quantized or 16-bit weights (the others count every
 * parameter as trained in fp32; docs/fine-tuning.md).
 */
const THE_ESTIMATE: readonly Estimator[] = [fineTuningEstimator, ensembleEstimator, realModelEstimator, analyticalEstimator];

export function theEstimate(results: EstimatorResults): { estimator: Estimator; result: EstimatorResult } | undefined {
  for (const estimator of THE_ESTIMATE) {
    const result = results.get(estimator);
    if (result && result.outsideTrainingData === undefined) return { estimator, result };
  }
  return undefined;
}

/** Every registered estimator's reading of a model from what ran (a result, or an earlier pass's reading), roles by the rule above. */
export function readingsOf(results: EstimatorResults, family: ModelFamily, earlier: readonly EstimatorReading[] = []): EstimatorReading[] {
  type Figure = Pick<EstimatorReading, 'estimateMiB' | 'lowMiB' | 'highMiB'> & { readonly eligible: boolean };
  const figure = (estimator: Estimator): Figure | undefined => {
    const result = results.get(estimator);
    if (result) {
      const range = result.range ? { lowMiB: Math.round(result.range.lowMiB), highMiB: Math.round(result.range.highMiB) } : { lowMiB: null, highMiB: null };
      return { estimateMiB: Math.round(result.pointMiB), ...range, eligible: result.outsideTrainingData === undefined };
    }
    // An earlier pass's reading: shown for comparison then means its result was passed over.
    const before = earlier.find((reading) => reading.estimator === estimator.id);
    return before && before.estimateMiB !== null ? { ...before, eligible: before.role !== 'comparison' } : undefined;
  };
  const eligible = (estimator: Estimator) => THE_ESTIMATE.includes(estimator) && figure(estimator)?.eligible === true;
  const chosen = THE_ESTIMATE.find(eligible);
  return ESTIMATORS.filter((estimator) => !estimator.onlyWhereItApplies || figure(estimator) !== undefined).map((estimator) => {
    const { estimateMiB = null, lowMiB = null, highMiB = null } = figure(estimator) ?? {};
    return {
      estimator: estimator.id,
      label: estimator.label,
      short: estimator.short,
      attribution: estimator.attribution(family),
      role: estimator === chosen ? 'estimate' : eligible(estimator) || (THE_ESTIMATE.includes(estimator) && figure(estimator) === undefined) ? 'candidate' : 'comparison',
      estimateMiB,
      lowMiB,
      highMiB,
    };
  });
}

/** The analysis pass: every synchronous estimator. */
export function runAnalysisEstimators(input: EstimatorInput): EstimatorResults {
  const results = new Map<Estimator, EstimatorResult>();
  for (const estimator of ESTIMATORS) {
    if (estimator.pass !== 'analysis') continue;
    const result = estimator.estimate(input);
    if (result) results.set(estimator, result);
  }
  return results;
}

/** The learned pass: every estimator that runs with the ONNX sessions, one after another (they share them). */
export async function runLearnedEstimators(input: EstimatorInput, runner: OnnxRunner): Promise<EstimatorResults> {
  const results = new Map<Estimator, EstimatorResult>();
  for (const estimator of ESTIMATORS) {
    if (estimator.pass !== 'learned') continue;
    const result = await estimator.estimate(input, runner);
    if (result) results.set(estimator, result);
  }
  return results;
}
