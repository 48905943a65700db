/**
 * Every estimator the pipeline runs, in the order their results are listed. Adding one is a new
 * file under src/core/estimators that exports an `Estimator`, and a line here.
 */
import { analyticalEstimator } from '../estimators/analyticalEstimator';
import { horusEstimator } from '../estimators/horus';
import { ensembleEstimator } from '../estimators/learned';
import { realModelEstimator } from '../estimators/realModel';
import type { OnnxRunner } from '../estimators/onnx/onnxRunner';
import type { Estimator, EstimatorInput, EstimatorResult, EstimatorResults } from './estimator';

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
