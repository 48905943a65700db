/**
 * Every estimator the pipeline runs, in the order their results are listed. Adding one is a new
 * file under src/core/estimators that exports an `Estimator`, and a line here.
 */
import { analyticalEstimator } from '../estimators/analyticalEstimator';
import { horusEstimator } from '../estimators/horus';
import { ensembleEstimator } from '../estimators/learned';
import { realModelEstimator } from '../estimators/realModel';
import type { OnnxRunner } from '../estimators/onnx/onnxRunner';
import type { ModelFamily } from '../estimators/family';
import type { Estimator, EstimatorInput, EstimatorResult, EstimatorResults } from './estimator';
import type { EstimatorReading } from './fileEstimate';

export const ESTIMATORS: readonly Estimator[] = [analyticalEstimator, horusEstimator, ensembleEstimator, realModelEstimator];

/**
 * Which result is the estimate, first found first: the family's trained ensemble where it ran,
 * else our analytical model. Horus is shown for comparison only.
 */
const THE_ESTIMATE: readonly Estimator[] = [ensembleEstimator, analyticalEstimator];

export function theEstimate(results: EstimatorResults): { estimator: Estimator; result: EstimatorResult } | undefined {
  for (const estimator of THE_ESTIMATE) {
    const result = results.get(estimator);
    if (result) return { estimator, result };
  }
  return undefined;
}

/** Every registered estimator's reading of a model from what ran (a result, or an earlier pass's reading), roles by the rule above. */
export function readingsOf(results: EstimatorResults, family: ModelFamily, earlier: readonly EstimatorReading[] = []): EstimatorReading[] {
  const figure = (estimator: Estimator): Pick<EstimatorReading, 'estimateMiB' | 'lowMiB' | 'highMiB'> | undefined => {
    const result = results.get(estimator);
    if (result) return { estimateMiB: Math.round(result.pointMiB), lowMiB: result.range ? Math.round(result.range.lowMiB) : null, highMiB: result.range ? Math.round(result.range.highMiB) : null };
    const before = earlier.find((reading) => reading.estimator === estimator.id);
    return before && before.estimateMiB !== null ? before : undefined;
  };
  const chosen = THE_ESTIMATE.find((estimator) => figure(estimator) !== undefined);
  return ESTIMATORS.map((estimator) => {
    const { estimateMiB = null, lowMiB = null, highMiB = null } = figure(estimator) ?? {};
    return {
      estimator: estimator.id,
      label: estimator.label,
      short: estimator.short,
      attribution: estimator.attribution(family),
      role: estimator === chosen ? 'estimate' : THE_ESTIMATE.includes(estimator) ? 'candidate' : 'comparison',
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
