import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import * as assert from 'node:assert/strict';
import type { Estimator, EstimatorResult } from '../../../../src/core/estimate/estimator';
import { ESTIMATORS, runAnalysisEstimators, theEstimate } from '../../../../src/core/estimate/estimators';
import { analyticalEstimator } from '../../../../src/core/estimators/analyticalEstimator';
import { horusEstimator } from '../../../../src/core/estimators/horus';
import { ensembleEstimator } from '../../../../src/core/estimators/learned';
import { realModelEstimator } from '../../../../src/core/estimators/realModel';
import { horusMiB, estimate } from '../../fixtures';

const result = (method: string): EstimatorResult => ({ method, pointMiB: 1, range: null, warnings: [], detail: undefined });

describe('estimator registry', () => {
  it('lists the analytical model, Horus, the ensembles, the real-model estimator and the fine-tuning model, each with its own id', () => {
    assert.deepEqual(
      ESTIMATORS.map((e) => [e.id, e.pass]),
      [
        ['analytical', 'analysis'],
        ['horus', 'analysis'],
        ['ensemble', 'learned'],
        ['real-model', 'analysis'],
        ['fineTuning', 'analysis'],
      ],
    );
  });

  it('takes the ensemble as the estimate where it ran, else the analytical model, never Horus alone', () => {
    const results = (...estimators: Estimator[]) => new Map(estimators.map((e) => [e, result(e.id)]));
    assert.equal(theEstimate(results(analyticalEstimator, horusEstimator, ensembleEstimator))?.result.method, 'ensemble');
    assert.equal(theEstimate(results(horusEstimator, analyticalEstimator))?.estimator, analyticalEstimator);
    assert.equal(theEstimate(results(horusEstimator)), undefined);
  });

  it('runs the analysis-pass estimators on a model, each labelled, as the estimate states them', async () => {
    const model = (await estimate('import torch.nn as nn\nimport torch\nmodel = nn.Linear(64, 10)\nx = torch.randn(32, 64)\nloss = model(x).sum()\n')).models[0]!;
    const results = runAnalysisEstimators({ job: { table: model.layerTable, batchSize: model.batchSize!, optimizer: model.optimizer, precision: model.precision }, family: model.family, gpu: defaultGpuProfile() });
    assert.deepEqual([...results.values()].map((r) => r.method), ['analytical', 'horus', 'real-model']);
    // The estimate is the real-model estimator's (a lone Linear is no GPUMemNet network), and says so.
    assert.equal(model.memory.method, 'real-model');
    assert.equal(Math.round(results.get(realModelEstimator)!.pointMiB), model.memory.estimateMiB);
    assert.equal(Math.round(results.get(analyticalEstimator)!.pointMiB), model.estimates.find((e) => e.estimator === 'analytical')?.estimateMiB);
    assert.equal(Math.round(results.get(horusEstimator)!.pointMiB), horusMiB(model));
  });
});
