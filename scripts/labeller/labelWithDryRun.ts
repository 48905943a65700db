/**
 * `npm run label:dry-run`: training rows for architectures with no GPU measurement, labelled by
 * the CPU dry run (issue 19, item 5). For each source of labelSources.ts: the static analysis (as
 * `gpu-estimate` runs it) gives the job of the script's one trained model, the dry run
 * (harness/dry_run.py, Debian's /usr/bin/python3 with torch 1.13 CPU by default) its predicted
 * nvidia-smi peak on the A100 profile. Writes build/real-model/dry-run-rows.csv in the schema of
 * the real-model estimator's samples (scripts/realModel/sampleRows.ts) and prints why each
 * source gave no row.
 *
 *   npm run label:dry-run -- [--python PATH] [--jobs N] [--steps N] [--cache DIR] [--only REGEX]
 *
 * Traces are cached in .cache/dry-run-labels, keyed by the script's text, its arguments, the fake
 * batch, the steps and harness/dry_run.py's text: a second run only replays them (a few seconds).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { dryRunSpecFor, modelFedByLoader, type DryRunSpec } from '../../src/core/dryRun/dryRunSpec';
import { parseDryRunOutput } from '../../src/core/dryRun/dryRunTrace';
import { EstimationPipeline } from '../../src/core/estimate/pipeline';
import type { TrainingJob } from '../../src/core/estimators/trainingJob';
import { findGpuProfile } from '../../src/core/gpus/gpuProfiles';
import { findPackageRoot, packagedParserAssets } from '../../src/core/parsing/parserAssets';
import { createPythonParser } from '../../src/core/parsing/pythonParser';
import { spawnProcess } from '../../src/core/remote/processRunner';
import { diskProjectFiles } from '../../src/cli/diskProjectFiles';
import { sampleCsv } from '../realModel/sampleRows';
import { dryRunLabel, dryRunRow, jobOf, labelledModel, type DryRunLabel } from './dryRunRows';
import { labelSources, type LabelSource } from './labelSources';

const ROOT = findPackageRoot(__dirname);
export const DRY_RUN_ROWS = path.join(ROOT, 'build', 'real-model', 'dry-run-rows.csv');
/** Jobs per harness process: torch and torchvision are imported once per process, a crash costs a few. */
const JOBS_PER_PROCESS = 8;

interface Prepared {
  readonly source: LabelSource;
  readonly job: TrainingJob;
  readonly spec: DryRunSpec;
  readonly cacheFile: string;
}

async function analyse(sources: readonly LabelSource[], cache: string, steps: number, skipped: string[]): Promise<Prepared[]> {
  const parser = await createPythonParser(packagedParserAssets(ROOT));
  const pipeline = new EstimationPipeline(parser, { modelsDir: path.join(ROOT, 'models'), executionProvider: 'cpu' });
  const gpu = findGpuProfile('a100-40gb')!;
  const prepared: Prepared[] = [];
  // A trace is the harness's as much as the script's: a fix there (dropout's mask, a meta kernel) traces again.
  const harness = readFileSync(path.join(ROOT, 'harness', 'dry_run.py'), 'utf8');
  try {
    for (const source of sources) {
      const text = readFileSync(source.script, 'utf8');
      const estimate = await pipeline.estimate({
        file: source.script,
        source: text,
        project: { files: diskProjectFiles, path: source.script, ...(source.root ? { root: source.root } : {}) },
        options: { gpu, safetyMargin: 0.1, scriptArguments: source.argv, ...(source.batchSize === undefined ? {} : { batchSize: source.batchSize }) },
      });
      const model = labelledModel(estimate);
      const job = typeof model === 'string' ? model : jobOf(model);
      if (typeof job === 'string') {
        skipped.push(`${source.key}: ${job}`);
        continue;
      }
      const spec = dryRunSpecFor(modelFedByLoader(estimate), { argv: source.argv, ...(source.batchSize === undefined ? {} : { batchSize: source.batchSize }), root: estimate.project?.root ?? source.root ?? path.dirname(source.script) });
      const hash = createHash('sha1').update(JSON.stringify([text, spec, steps, harness])).digest('hex').slice(0, 12);
      prepared.push({ source, job, spec, cacheFile: path.join(cache, `${source.key}-${hash}.json`) });
    }
  } finally {
    await pipeline.dispose();
  }
  return prepared;
}

async function trace(prepared: readonly Prepared[], python: string, steps: number, workers: number): Promise<void> {
  const toTrace = prepared.filter((p) => !existsSync(p.cacheFile));
  console.log(`${prepared.length - toTrace.length} traces cached, ${toTrace.length} to trace with ${python}`);
  // A realworld project gets a process of its own: projects name their packages alike (`models`,
  // `data`), and a process keeps the first one it imported.
  const chunks: Prepared[][] = [];
  const projects = new Map<string, Prepared[]>();
  for (const p of toTrace.filter((p) => p.source.root)) projects.set(p.source.family, [...(projects.get(p.source.family) ?? []), p]);
  chunks.push(...projects.values());
  const scripts = toTrace.filter((p) => !p.source.root);
  for (let i = 0; i < scripts.length; i += JOBS_PER_PROCESS) chunks.push(scripts.slice(i, i + JOBS_PER_PROCESS));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < chunks.length) {
      const chunk = chunks[next++]!;
      const jobsFile = path.join(path.dirname(chunk[0]!.cacheFile), `jobs-${process.pid}-${next}.json`);
      writeFileSync(jobsFile, JSON.stringify(chunk.map((p, id) => ({ id, script: p.source.script, steps, spec: p.spec }))));
      const result = await spawnProcess(python, ['-m', 'harness.dry_run', '--jobs', jobsFile, '--memory-mib', '12000'], { timeoutMs: 900_000, env: { PYTHONPATH: ROOT, PYTHONDONTWRITEBYTECODE: '1' } }).finally(() => rmSync(jobsFile, { force: true }));
      for (const line of result.stdout.split('\n').filter((l) => l.startsWith('{'))) {
        const id = (JSON.parse(line) as { id?: number }).id;
        if (id !== undefined && chunk[id]) writeFileSync(chunk[id].cacheFile, line);
      }
      process.stdout.write(`.`);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  if (toTrace.length) process.stdout.write('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      python: { type: 'string', default: '/usr/bin/python3' },
      jobs: { type: 'string', default: '1' },
      steps: { type: 'string', default: '2' },
      cache: { type: 'string', default: path.join(ROOT, '.cache', 'dry-run-labels') },
      only: { type: 'string' },
    },
  });
  mkdirSync(values.cache, { recursive: true });
  const steps = Number(values.steps);
  const only = values.only === undefined ? undefined : new RegExp(values.only);
  const sources = labelSources(ROOT).filter((s) => !only || only.test(s.key));
  const skipped: string[] = [];
  const started = Date.now();
  const prepared = await analyse(sources, values.cache, steps, skipped);
  await trace(prepared, values.python, steps, Number(values.jobs));
  const labels: DryRunLabel[] = [];
  for (const p of prepared) {
    if (!existsSync(p.cacheFile)) {
      skipped.push(`${p.source.key}: the dry run printed no result`);
      continue;
    }
    const label = dryRunLabel(p.source, p.job, parseDryRunOutput(readFileSync(p.cacheFile, 'utf8')));
    if (typeof label === 'string') skipped.push(`${p.source.key}: ${label}`);
    else labels.push(label);
  }
  mkdirSync(path.dirname(DRY_RUN_ROWS), { recursive: true });
  writeFileSync(DRY_RUN_ROWS, sampleCsv(labels.map(dryRunRow)));
  const byGroup = new Map<string, number>();
  for (const label of labels) byGroup.set(label.group, (byGroup.get(label.group) ?? 0) + 1);
  console.log(`${path.relative(ROOT, DRY_RUN_ROWS)}: ${labels.length} rows of ${sources.length} sources (${[...byGroup].map(([group, n]) => `${group} ${n}`).join(', ')}), ${((Date.now() - started) / 1000).toFixed(0)} s`);
  console.log(`no row for ${skipped.length}:\n  ${skipped.join('\n  ')}`);
}

if (require.main === module) void main();
