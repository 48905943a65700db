/**
 * The real-model estimator on the timm runs (A100 40 GB), out of sample: grouped 5-fold
 * cross-validation (no model on both sides) and leave-one-family-out (timm's model module), next
 * to FakeTensor's estimate of the same runs, our analytical model and the Horus formula; then by
 * group (ConvNets, vision Transformers, MLP-Mixers), and on GPUMemNet's synthetic runs.
 */
import { analyticalEstimate } from '../../src/core/estimators/analytical';
import { horusMiB } from '../../src/core/estimators/horus';
import coefficients from '../../src/core/estimators/realModelCoefficients.json';
import type { OptimizerKind } from '../../src/core/analysis/modelDescription';
import { crossValidate, groupedFold, loadRealModelData, summarize, type ErrorSummary, type RealSample } from '../realModel/realModelData';

const pct = (x: number | null) => (x === null ? '' : `${(100 * x).toFixed(1)}%`);
const cell = (s: ErrorSummary) => `${pct(s.medianAbsError)} / ${pct(s.underBy10)}${s.rangeCoverage === null ? '' : ` / ${pct(s.rangeCoverage)}`}`;

export function evaluateRealModel(dataDir: string, repoRoot: string): void {
  const optimizer = coefficients.trainedOn.timmAssumed.optimizer as OptimizerKind;
  const pointQuantile = coefficients.pointQuantile;
  const [lowQ, highQ] = coefficients.rangeQuantiles as [number, number];
  const data = loadRealModelData(dataDir, repoRoot, optimizer);
  const samples = [...data.timm, ...data.synthetic];
  console.log(`\nReal models: ${data.timm.length} timm runs that fit on the A100 (${data.lowerBoundRuns} runs that filled the GPU or crashed left out as lower bounds; ${data.missingModels.length} models without a layer table)`);
  console.log(`  assumed for timm: fp32, ${optimizer} (chosen by grouped CV, scripts/realModel/train.ts); point = quantile ${pointQuantile}, range ${lowQ}-${highQ}`);

  const quantiles = [...new Set([lowQ, pointQuantile, highQ])];
  const grouped = crossValidate(samples, (s) => String(groupedFold(s.model)), quantiles);
  const lofo = crossValidate(samples, (s) => s.family, quantiles);
  const indexOf = new Map(samples.map((s, i) => [s, i]));
  const score = (subset: readonly RealSample[], cv: ReturnType<typeof crossValidate>) => {
    const at = (q: number) => subset.map((s) => Math.exp(cv.byQuantile.get(q)![indexOf.get(s)!]!));
    return summarize(subset.map((s) => s.measuredMiB), at(pointQuantile), at(lowQ), at(highQ));
  };
  const others = (subset: readonly RealSample[]) => ({
    fakeTensor: summarize(subset.map((s) => s.measuredMiB), subset.map((s) => s.timm!.fakeTensorMiB)),
    analytical: summarize(subset.map((s) => s.measuredMiB), subset.map((s) => analyticalEstimate(s.job).totalMiB)),
    horus: summarize(subset.map((s) => s.measuredMiB), subset.map((s) => horusMiB(s.job))),
  });

  console.log('\n| timm runs (median abs. error / under by >10% / 10-90% range holds) | runs | ours, grouped 5-fold CV | ours, leave one family out | FakeTensor | our analytical model | Horus formula |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  const groups = ['all', 'ConvNets', 'vision Transformers', 'MLP-Mixers'] as const;
  for (const group of groups) {
    const subset = group === 'all' ? data.timm : data.timm.filter((s) => s.group === group);
    if (subset.length === 0) continue;
    const o = others(subset);
    console.log(`| ${group} | ${subset.length} | ${cell(score(subset, grouped))} | ${cell(score(subset, lofo))} | ${cell(o.fakeTensor)} | ${cell(o.analytical)} | ${cell(o.horus)} |`);
  }
  const all = score(data.timm, grouped);
  console.log(
    `  targets (grouped CV): median <= 8% ${all.medianAbsError <= 0.08 ? 'met' : 'MISSED'}; under by >10% <= 3% ${all.underBy10 <= 0.03 ? 'met' : 'MISSED'}; range holds >= 80% ${all.rangeCoverage! >= 0.8 ? 'met' : 'MISSED'}`,
  );

  console.log('\n| GPUMemNet synthetic runs (same columns) | runs | ours, grouped 5-fold CV | our analytical model |');
  console.log('| --- | --- | --- | --- |');
  for (const group of ['synthetic MLP', 'synthetic CNN'] as const) {
    const subset = data.synthetic.filter((s) => s.group === group);
    const analytical = summarize(subset.map((s) => s.measuredMiB), subset.map((s) => analyticalEstimate(s.job).totalMiB));
    console.log(`| ${group} | ${subset.length} | ${cell(score(subset, grouped))} | ${cell(analytical)} |`);
  }
}
