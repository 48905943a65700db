import { BYTES_PER_MIB } from '../format/units';
import type { Estimator } from '../estimate/estimator';
import type { TrainingJob } from './trainingJob';

/**
 * The Horus formula (Yeung et al., TPDS 2022) exactly as the GPUMemNet study evaluated it:
 * 4 bytes x (B x A + P + B x P) + 800 MiB, with A activations per sample, P parameters and B the
 * batch size. Kept as published, errors included, because it is the baseline users compare with.
 */
export function horusMiB(job: TrainingJob): number {
  const { batchSize: b } = job;
  const { params: p, activations: a } = job.table.totals;
  return (4 * (b * a + p + b * p)) / BYTES_PER_MIB + 800;
}

/** The Horus formula as an estimator, shown beside the others for comparison. */
export const horusEstimator: Estimator<undefined> = {
  id: 'horus',
  label: 'Horus formula',
  short: 'Horus',
  attribution: () => 'Horus formula',
  footnote: 'Horus: the published formula 4 B x (batch x activations + params + batch x params) + 800 MiB, for comparison.',
  jsonKey: 'horusMiB',
  pass: 'analysis',
  estimate({ job }) {
    return { method: 'horus', pointMiB: horusMiB(job), range: null, warnings: [], memoryAt: (batchSize) => horusMiB({ ...job, batchSize }), detail: undefined };
  },
};
