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
import { findPackageRoot } from '../../src/core/parsing/parserAssets';
import { referenceDataDir } from '../evaluation/referenceData';
import { loadRealModelData, TIMM_OPTIMIZERS } from './realModelData';
import { sampleCsv, sampleRow, type SampleRowInput } from './sampleRows';

const root = findPackageRoot(__dirname);
const out = path.join(root, 'build', 'real-model');
mkdirSync(out, { recursive: true });
for (const optimizer of TIMM_OPTIMIZERS as readonly OptimizerKind[]) {
  const data = loadRealModelData(referenceDataDir(root), optimizer);
  const rows: (string | number)[][] = [];
  const cases: [SampleRowInput['case'], typeof data.timm][] = [['catalog', data.timm], ['table', data.timmTableOnly], ['synthetic', data.synthetic]];
  for (const [name, samples] of cases) {
    for (const s of samples) {
      rows.push(sampleRow({ model: s.model, family: s.family, group: s.group, case: name, job: s.job, measuredMiB: s.measuredMiB, weight: s.weight, features: s.x, ...(s.timm ? { fakeTensorMiB: s.timm.fakeTensorMiB } : {}) }));
    }
  }
  const file = path.join(out, `samples-${optimizer}.csv`);
  writeFileSync(file, sampleCsv(rows));
  console.log(`${path.relative(root, file)}: ${data.timm.length} timm runs, each with measured activations and with the rows alone (${data.lowerBoundRuns} lower bounds left out, ${data.missingModels.length} models without a table), ${data.synthetic.length} synthetic runs`);
}
