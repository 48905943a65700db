/**
 * Fits the cuDNN workspace rule (src/core/dryRun/convolutionWorkspace.ts) on the dry-run traces
 * that `npm run evaluate:dry-run -- --every 6 --synthetic-every 10` keeps in its cache (the same
 * sample, --timm-every and --synthetic-every, whatever else the cache holds, so that the fit can
 * be repeated): coordinate
 * search over a grid of shares per kind of convolution, scored by 2-fold cross-validation with
 * each model on one side only, then fitted on all. Prints the coefficients to put in
 * src/core/dryRun/cudnnWorkspace.ts and the out-of-fold figures.
 *
 *   npm run compile-tests && node out/scripts/dryRun/fitWorkspace.js [--cache DIR] [--python PATH] [--synthetic-python PATH] [--steps N] [--timm-every K] [--synthetic-every K] [--every K] [--runs all|timm|synthetic]
 *
 * Each try replays every run (about 0.1 s a run on this machine), so --every K fits on every K-th.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { replayDryRun } from '../../src/core/dryRun/dryRunReplay';
import { parseDryRunOutput, type DryRunTrace } from '../../src/core/dryRun/dryRunTrace';
import { workspaceWith, type ConvolutionKind, type WorkspaceCoefficients } from '../../src/core/dryRun/convolutionWorkspace';
import { NO_WORKSPACE } from '../../src/core/dryRun/cudnnWorkspace';
import { defaultTracers, errorStats, MEASURED_GPU_MIB, REPO, syntheticCases, timmCases, traceFile } from './dryRunCases';
const GRID = [0, 0.25, 0.5, 1, 1.5, 2];
/** What an under-estimate by more than 10% costs against a point of median error. */
const UNDER_WEIGHT = 2;

interface Case {
  readonly model: string;
  readonly measuredMiB: number;
  readonly trace: DryRunTrace;
}

function score(cases: readonly Case[], coefficients: WorkspaceCoefficients): { median: number; under: number; loss: number } {
  const workspace = workspaceWith(coefficients);
  const { median, under } = errorStats(cases.map((c) => (replayDryRun(c.trace, workspace, { gpuMemoryMiB: MEASURED_GPU_MIB }).predictedMiB - c.measuredMiB) / c.measuredMiB));
  return { median, under, loss: median + UNDER_WEIGHT * under };
}

/**
 * A share of the input and one of the output per kind, by coordinate search (two passes, a replay
 * per run per try: the search is kept small).
 */
function fit(cases: readonly Case[]): WorkspaceCoefficients {
  let best: WorkspaceCoefficients = NO_WORKSPACE;
  let bestLoss = score(cases, best).loss;
  for (let pass = 0; pass < 2; pass++) {
    for (const kind of ['spatial', 'pointwise', 'grouped'] as ConvolutionKind[]) {
      for (const term of ['input', 'output'] as const) {
        for (const value of GRID) {
          const candidate = { ...best, [kind]: { ...best[kind], [term]: value } } as WorkspaceCoefficients;
          const { loss } = score(cases, candidate);
          if (loss < bestLoss - 1e-9) {
            best = candidate;
            bestLoss = loss;
          }
        }
      }
    }
  }
  return best;
}

function main(): void {
  const { values } = parseArgs({ options: { cache: { type: 'string', default: path.join(REPO, '.cache', 'dry-run-evaluation') }, steps: { type: 'string', default: '2' }, 'timm-every': { type: 'string', default: '6' }, 'synthetic-every': { type: 'string', default: '10' }, every: { type: 'string', default: '1' }, runs: { type: 'string', default: 'all' }, python: { type: 'string' }, 'synthetic-python': { type: 'string' } } });
  // The evaluation's sample whose traces are cached (timm and the synthetic CNNs: convolutions), by the evaluation's Pythons.
  const tracers = defaultTracers(values.python, values['synthetic-python']);
  const cases: Case[] = [];
  const wanted = { all: ['timm', 'synthetic'], timm: ['timm'], synthetic: ['synthetic'] }[values.runs as 'all' | 'timm' | 'synthetic'] ?? ['timm', 'synthetic'];
  const candidates = [...(wanted.includes('timm') ? timmCases(Number(values['timm-every'])) : []), ...(wanted.includes('synthetic') ? syntheticCases(Number(values['synthetic-every']), values.cache).filter((s) => s.group === 'synthetic CNN') : [])].filter((c) => existsSync(traceFile(values.cache, c, Number(values.steps), tracers)));
  for (const c of candidates.filter((_, i) => i % Number(values.every) === 0)) {
    const file = traceFile(values.cache, c, Number(values.steps), tracers);
    if (!existsSync(file)) continue;
    const trace = parseDryRunOutput(readFileSync(file, 'utf8'));
    if (trace.ok) cases.push({ model: c.model, measuredMiB: c.measuredMiB, trace });
  }
  const models = [...new Set(cases.map((c) => c.model))].sort();
  const fold = (model: string) => models.indexOf(model) % 2;
  console.log(`${cases.length} traced runs of ${models.length} models`);
  const none = score(cases, NO_WORKSPACE);
  console.log(`no workspace: median ${(none.median * 100).toFixed(1)}%, under by >10% ${(none.under * 100).toFixed(1)}%`);
  const outOfFold: { case: Case; error: number }[] = [];
  for (const side of [0, 1]) {
    const coefficients = fit(cases.filter((c) => fold(c.model) !== side));
    const workspace = workspaceWith(coefficients);
    for (const c of cases.filter((c) => fold(c.model) === side)) outOfFold.push({ case: c, error: (replayDryRun(c.trace, workspace, { gpuMemoryMiB: MEASURED_GPU_MIB }).predictedMiB - c.measuredMiB) / c.measuredMiB });
    console.log(`fold ${side} held out: fitted ${JSON.stringify(coefficients)}`);
  }
  const crossValidated = errorStats(outOfFold.map((o) => o.error));
  console.log(`2-fold grouped CV: median ${(crossValidated.median * 100).toFixed(1)}%, under by >10% ${(crossValidated.under * 100).toFixed(1)}%`);
  const all = fit(cases);
  const fitted = score(cases, all);
  console.log(`fitted on all: ${JSON.stringify(all)}: median ${(fitted.median * 100).toFixed(1)}%, under ${(fitted.under * 100).toFixed(1)}%`);
}

main();
