import type { Estimator } from '../estimate/estimator';
import { analyticalEstimate, type MemoryBreakdown } from './analytical';

/**
 * Our analytical model as an estimator: a point with its breakdown, no range. Apart from
 * analytical.ts because the features, and through them the ONNX runner that estimators are
 * given, build on that file.
 */
export const analyticalEstimator: Estimator<MemoryBreakdown> = {
  id: 'analytical',
  label: 'Analytical model',
  short: 'analytical',
  attribution: () => 'analytical model',
  pass: 'analysis',
  estimate({ job }) {
    const { totalMiB, breakdown } = analyticalEstimate(job);
    return { method: 'analytical', pointMiB: totalMiB, range: null, warnings: [], memoryAt: (batchSize) => analyticalEstimate({ ...job, batchSize }).totalMiB, detail: breakdown };
  },
};
