/**
 * The shipped ONNX ensembles scored the way users get them: features computed in TypeScript,
 * the models run by onnxruntime-node through our runner, on the held-out 30% of the reference
 * data the training pipeline never trained on. Printed beside the cross-validation numbers the
 * pipeline recorded in each model card, and the targets.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { analyticalEstimate } from '../../src/core/estimators/analytical';
import { horusMiB } from '../../src/core/estimators/horus';
import { OnnxRunner } from '../../src/core/estimators/onnx/onnxRunner';
import type { ModelCard } from '../../src/core/estimators/onnx/modelCard';
import type { TrainingJob } from '../../src/core/estimators/trainingJob';
import { featureVector } from '../../src/core/features/features';
import type { ReferenceRun } from './referenceData';
import { heldOutSplit } from './split';
import { median } from './statistics';

const UTILIZATION_EDGES = [1 / 3, 2 / 3];
/** The targets (issue 5, "How well"). */
const TARGETS: Record<'mlp' | 'cnn', { bins: Record<number, number>; mae: number; under: number; smact: number; smocc: number }> = {
  mlp: { bins: { 1024: 0.98 }, mae: 0.05, under: 0.02, smact: 0.92, smocc: 0.94 },
  cnn: { bins: { 8192: 0.9, 2048: 0.75 }, mae: 0.05, under: 0.02, smact: 0.77, smocc: 0.71 },
};

interface CardMetrics {
  readonly crossValidation: { readonly mean: Metrics };
  readonly test: Metrics;
}

interface Metrics {
  readonly memory: { readonly median_abs_error: number; readonly under_10pct: number; readonly range_coverage?: number };
  readonly [bins: `bins_${number}`]: number;
  readonly smact: { readonly accuracy: number | null; readonly high_recall: number | null };
  readonly smocc: { readonly accuracy: number | null; readonly high_recall: number | null };
}

const job = (run: ReferenceRun): TrainingJob => ({ table: run.table, batchSize: run.batchSize, optimizer: 'adam', precision: 'fp32' });
const pct = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : `${(100 * x).toFixed(1)}%`);
const acc = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : x.toFixed(3));
/** The verdict on the held-out number, and whether cross-validation agrees. */
const verdict = (ok: boolean, cvOk?: boolean | null) => `${ok ? 'met' : 'MISSED'}${cvOk === false ? ' (3-fold CV: missed)' : cvOk === true && !ok ? ' (3-fold CV: met)' : ''}`;

function memoryScores(runs: readonly ReferenceRun[], estimate: (i: number) => number) {
  const relative = runs.map((run, i) => (estimate(i) - run.measuredMiB) / run.measuredMiB);
  return { mae: median(relative.map(Math.abs)), under: relative.filter((r) => r < -0.1).length / runs.length, over: relative.filter((r) => r > 0.1).length / runs.length };
}

function utilizationClass(value: number): number {
  return UTILIZATION_EDGES.filter((edge) => value >= edge).length;
}

function argmax(values: Float32Array, offset: number, count: number): number {
  let best = 0;
  for (let i = 1; i < count; i++) if (values[offset + i]! > values[offset + best]!) best = i;
  return best;
}

/** Prints the learned ensembles' scores on the held-out split. */
export async function evaluateLearned(modelsDir: string, runsByFamily: Readonly<Record<'mlp' | 'cnn', readonly ReferenceRun[]>>): Promise<void> {
  const runner = new OnnxRunner({ modelsDir, executionProvider: 'cpu' });
  console.log('\nLearned ensembles (models/*.onnx via onnxruntime-node on the CPU), held-out 30% test split of the reference data.');
  console.log('"onnxruntime (test)" is measured now; "torch (test)" and "3-fold CV" (on the training split) are what the training pipeline recorded in the model card.');
  try {
    for (const family of ['mlp', 'cnn'] as const) {
      const loaded = await runner.model(family);
      if (!loaded) {
        console.log(`\n${family.toUpperCase()}: no bundled model (run npm run train:models)`);
        continue;
      }
      const card = JSON.parse(readFileSync(path.join(modelsDir, `${family}.card.json`), 'utf8')) as ModelCard & { metrics: CardMetrics; training: { runs: { test: number } } };
      const { test } = heldOutSplit(runsByFamily[family]);
      const started = performance.now();
      const result = (await runner.run(family, test.map((run) => featureVector(job(run)))))!;
      const seconds = (performance.now() - started) / 1000;
      const memory = result.outputs[card.outputs.memory.name]!;
      const point = (i: number) => memory[3 * i + 1]!;
      const ours = memoryScores(test, point);
      const analytical = memoryScores(test, (i) => analyticalEstimate(job(test[i]!)).totalMiB);
      const horus = memoryScores(test, (i) => horusMiB(job(test[i]!)));
      const covered = test.filter((run, i) => memory[3 * i]! <= run.measuredMiB && run.measuredMiB <= memory[3 * i + 2]!).length / test.length;
      const target = TARGETS[family];
      const python = card.metrics;
      console.log(`\n${family.toUpperCase()}: ${test.length} held-out runs (the card's pipeline held out ${card.training.runs.test}), inference ${(seconds * 1000).toFixed(0)} ms for all of them`);
      console.log(`  ${'metric'.padEnd(44)}${'onnxruntime (test)'.padEnd(21)}${'torch (test)'.padEnd(15)}${'3-fold CV'.padEnd(12)}target`);
      const line = (name: string, here: string, torch: string, cv: string, goal: string) => console.log(`  ${name.padEnd(44)}${here.padEnd(21)}${torch.padEnd(15)}${cv.padEnd(12)}${goal}`.trimEnd());
      for (const bins of card.outputs.bins) {
        const probabilities = result.outputs[bins.name]!;
        const hits = test.filter((run, i) => argmax(probabilities, i * bins.count, bins.count) === Math.min(Math.floor(run.measuredMiB / bins.widthMiB), bins.count - 1)).length;
        const accuracy = hits / test.length;
        const goal = target.bins[bins.widthMiB];
        const cv = python.crossValidation.mean[`bins_${bins.widthMiB}`]!;
        line(`${bins.widthMiB / 1024} GiB bins: accuracy`, acc(accuracy), acc(python.test[`bins_${bins.widthMiB}`]), acc(cv), goal === undefined ? '' : `>= ${goal} ${verdict(accuracy >= goal, cv >= goal)}`);
      }
      line(`point estimate (q${card.outputs.memory.pointQuantile}): median |error|`, pct(ours.mae), pct(python.test.memory.median_abs_error), pct(python.crossValidation.mean.memory.median_abs_error), `<= ${pct(target.mae)} ${verdict(ours.mae <= target.mae, python.crossValidation.mean.memory.median_abs_error <= target.mae)}`);
      line('under-estimates by more than 10%', pct(ours.under), pct(python.test.memory.under_10pct), pct(python.crossValidation.mean.memory.under_10pct), `<= ${pct(target.under)} ${verdict(ours.under <= target.under, python.crossValidation.mean.memory.under_10pct <= target.under)}`);
      line(`range q${card.outputs.memory.range.quantiles.join('-q')}: runs inside`, pct(covered), pct(python.test.memory.range_coverage), pct(python.crossValidation.mean.memory.range_coverage), '80% by construction');
      for (const metric of ['smact', 'smocc'] as const) {
        const output = card.outputs.utilization[metric];
        const labelled = test.map((run, i) => ({ value: run[metric], i })).filter((x): x is { value: number; i: number } => x.value !== null);
        if (!output || labelled.length === 0) continue;
        const probabilities = result.outputs[output]!;
        const predicted = labelled.map(({ i }) => argmax(probabilities, i * 3, 3));
        const actual = labelled.map(({ value }) => utilizationClass(value));
        const accuracy = predicted.filter((p, k) => p === actual[k]).length / labelled.length;
        const high = actual.map((a, k) => (a === 2 ? predicted[k] === 2 : null)).filter((x): x is boolean => x !== null);
        const recall = high.length ? high.filter(Boolean).length / high.length : null;
        const goal = target[metric];
        const cv = python.crossValidation.mean[metric].accuracy;
        line(`${metric.toUpperCase()} class: accuracy (${labelled.length} runs)`, acc(accuracy), acc(python.test[metric].accuracy), acc(cv), `>= ${goal} ${verdict(accuracy >= goal, cv === null ? null : cv >= goal)}`);
        line(`${metric.toUpperCase()} high class: recall (${high.length} runs)`, acc(recall), acc(python.test[metric].high_recall), acc(python.crossValidation.mean[metric].high_recall), '');
      }
      console.log(`  same held-out runs: analytical model median |error| ${pct(analytical.mae)}, under by >10% ${pct(analytical.under)}; Horus ${pct(horus.mae)}, under by >10% ${pct(horus.under)}`);
    }
  } finally {
    await runner.dispose();
  }
}
