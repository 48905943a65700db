/**
 * Scores the estimators against the published A100 measurements: `npm run evaluate`.
 * Prints the relative error (|estimate - measured| / measured) of our analytical model and of the
 * Horus formula per family, and the runtime overhead the data implies; then the shipped learned
 * ensembles on the held-out split (learnedEvaluation.ts), and the real-model estimator on the timm
 * runs (realModelEvaluation.ts).
 */
import { analyticalEstimate, RUNTIME_OVERHEAD_MIB } from '../../src/core/estimators/analytical';
import { horusMiB } from '../../src/core/estimators/horus';
import type { TrainingJob } from '../../src/core/estimators/trainingJob';
import { findPackageRoot } from '../../src/core/parsing/parserAssets';
import * as path from 'node:path';
import { evaluateLearned } from './learnedEvaluation';
import { evaluateRealModel } from './realModelEvaluation';
import { loadReferenceRuns, referenceDataDir, type ReferenceRun } from './referenceData';

/** Linear interpolation between the closest ranks, as numpy's default. */
function quantile(sorted: readonly number[], q: number): number {
  const index = (sorted.length - 1) * q;
  const low = Math.floor(index);
  const high = Math.min(low + 1, sorted.length - 1);
  return sorted[low]! + (index - low) * (sorted[high]! - sorted[low]!);
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

function errors(runs: readonly ReferenceRun[], estimate: (run: ReferenceRun) => number): string {
  const relative = runs.map((run) => Math.abs(estimate(run) - run.measuredMiB) / run.measuredMiB).sort((a, b) => a - b);
  return `median ${percent(quantile(relative, 0.5))}, p90 ${percent(quantile(relative, 0.9))}, max ${percent(relative[relative.length - 1]!)}`;
}

// The generator trains every model with Adam in fp32 (GPUMemNet's training scripts).
const job = (run: ReferenceRun): TrainingJob => ({ table: run.table, batchSize: run.batchSize, optimizer: 'adam', precision: 'fp32' });

const root = findPackageRoot(__dirname);
const dir = referenceDataDir(root);
console.log(`Reference data: ${dir}`);
const runsByFamily = { mlp: loadReferenceRuns(dir, 'mlp'), cnn: loadReferenceRuns(dir, 'cnn') };
for (const family of ['mlp', 'cnn'] as const) {
  const runs = runsByFamily[family];
  const analytical = (run: ReferenceRun) => analyticalEstimate(job(run)).totalMiB;
  const overheads = runs.map((run) => run.measuredMiB - (analytical(run) - RUNTIME_OVERHEAD_MIB)).sort((a, b) => a - b);
  console.log(`\n${family.toUpperCase()}: ${runs.length} successful runs`);
  console.log(`  analytical model: ${errors(runs, analytical)}`);
  console.log(`  Horus formula:    ${errors(runs, (run) => horusMiB(job(run)))}`);
  console.log(`  implied runtime overhead (measured - modelled tensors): median ${quantile(overheads, 0.5).toFixed(0)} MiB (model uses ${RUNTIME_OVERHEAD_MIB})`);
}

evaluateLearned(path.join(root, 'models'), runsByFamily)
  .then(() => evaluateRealModel(dir, path.join(root, 'models')))
  .catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
