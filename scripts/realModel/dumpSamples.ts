/**
 * First step of `npm run train:real-model`: writes the real-model estimator's training samples,
 * with the feature vectors TypeScript computes (src/core/estimators/realModelFeatures.ts), to
 * build/real-model/samples-<optimizer>.csv, one file per optimizer the timm runs may have used
 * (the data does not say; GPUMemNet's synthetic runs used Adam). scripts/realModel/fit.py fits
 * on them. Reads the shared data in place; the layer tables come from the timm catalog.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { OptimizerKind } from '../../src/core/analysis/modelDescription';
import { analyticalEstimate } from '../../src/core/estimators/analytical';
import { horusMiB } from '../../src/core/estimators/horus';
import { REAL_MODEL_FEATURES } from '../../src/core/estimators/realModelFeatures';
import { findPackageRoot } from '../../src/core/parsing/parserAssets';
import { referenceDataDir } from '../evaluation/referenceData';
import { loadRealModelData, TIMM_OPTIMIZERS } from './realModelData';

const root = findPackageRoot(__dirname);
const out = path.join(root, 'build', 'real-model');
mkdirSync(out, { recursive: true });
for (const optimizer of TIMM_OPTIMIZERS as readonly OptimizerKind[]) {
  const data = loadRealModelData(referenceDataDir(root), optimizer);
  // case: 'catalog' (timm runs with autograd's measured activations), 'table' (the same runs, rows alone), 'synthetic'.
  const header = ['model', 'family', 'group', 'case', 'batch', 'measured_mib', 'weight', 'faketensor_mib', 'analytical_mib', 'horus_mib', ...REAL_MODEL_FEATURES];
  const lines = [header.join(',')];
  const cases: [string, typeof data.timm][] = [['catalog', data.timm], ['table', data.timmTableOnly], ['synthetic', data.synthetic]];
  for (const [name, samples] of cases) {
    for (const s of samples) {
      const fake = s.timm ? String(s.timm.fakeTensorMiB) : '';
      lines.push([s.model, s.family, s.group, name, s.job.batchSize, s.measuredMiB, s.weight, fake, analyticalEstimate(s.job).totalMiB, horusMiB(s.job), ...s.x].join(','));
    }
  }
  const file = path.join(out, `samples-${optimizer}.csv`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  console.log(`${path.relative(root, file)}: ${data.timm.length} timm runs, each with measured activations and with the rows alone (${data.lowerBoundRuns} lower bounds left out, ${data.missingModels.length} models without a table), ${data.synthetic.length} synthetic runs`);
}
