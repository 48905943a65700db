/**
 * Transfer learning with frozen parameters, static estimate against the CPU dry run. No published
 * measurement has a frozen backbone, so the dry run (harness/dry_run.py: the script's own step on
 * the meta device, replayed through the caching allocator; 3.3% median error on the measured timm
 * runs, README) is the reference: the scripts of test/fixtures/transfer and the corpus's
 * finetune_frozen_stages.py, each estimated statically and dry-run with the same reading of the
 * script (batch, input), on the default GPU.
 *
 *   npm run evaluate:frozen -- [--python PATH]
 *
 * Needs a Python with torch and torchvision (Debian's /usr/bin/python3: torch 1.13 CPU).
 */
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { spawnProcess } from '../../src/core/remote/processRunner';
import { scriptPeakMiB, type ProcessModel } from '../../src/core/estimate/collocation';
import { REPO } from './dryRunCases';

interface Reading {
  /** The script's models, `teacher + student` for several: the figures are the script's process (scriptPeakMiB). */
  readonly name: string;
  readonly trainable: number;
  readonly params: number;
  readonly batch: number | null;
  readonly estimateMiB: number | null;
  readonly method: string | null;
  readonly dryRunMiB: number | null;
  readonly dryRunError?: string;
}

interface CliModel extends ProcessModel {
  readonly name: string;
  readonly batchSize: number | null;
  readonly layerTable: { readonly totals: { readonly params: number; readonly trainableParams: number } };
  readonly dryRun?: { readonly predictedMiB?: number; readonly error?: string };
}

async function cli(args: readonly string[]): Promise<{ models: CliModel[] }> {
  const result = await spawnProcess(process.execPath, [path.join(REPO, 'dist', 'cli.js'), ...args, '--json'], { timeoutMs: 600_000 });
  return JSON.parse(result.stdout) as { models: CliModel[] };
}

/** One reading per script: several models in one script are one process, as the dry run runs it. */
async function read(script: string, python: string): Promise<Reading> {
  const [plain, dry] = [await cli([script]), await cli([script, '--dry-run', '--python', python])];
  const models = plain.models.filter((model) => model.memory.estimateMiB !== null);
  const run = dry.models.find((m) => m.dryRun)?.dryRun;
  const sum = (figure: (model: CliModel) => number) => plain.models.reduce((total, model) => total + figure(model), 0);
  return {
    name: plain.models.map((model) => model.name).join(' + '),
    trainable: sum((model) => (model.inferenceOnly ? 0 : model.layerTable.totals.trainableParams)),
    params: sum((model) => model.layerTable.totals.params),
    batch: plain.models[0]?.batchSize ?? null,
    estimateMiB: models.length ? Math.round(scriptPeakMiB(models)) : null,
    method: [...new Set(models.map((model) => (model.inferenceOnly ? `${model.memory.method ?? '-'}, inference` : model.memory.method ?? '-')))].join(' + '),
    dryRunMiB: run?.predictedMiB ?? null,
    ...(run?.error ? { dryRunError: run.error } : {}),
  };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { python: { type: 'string', default: '/usr/bin/python3' } } });
  const folder = path.join(REPO, 'test', 'fixtures', 'transfer');
  const scripts = [...readdirSync(folder).filter((f) => f.endsWith('.py')).map((f) => path.join(folder, f)), ...['finetune_frozen_stages.py', 'linear_probe_no_grad.py'].map((f) => path.join(REPO, 'test', 'fixtures', 'corpus', f))];
  console.log('| script | trained / all parameters | batch | static estimate (estimator) | dry run | static vs dry run |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  const differences: number[] = [];
  for (const script of scripts) {
    {
      const r = await read(script, values.python);
      const share = `${((100 * r.trainable) / Math.max(1, r.params)).toFixed(1)}% of ${(r.params / 1e6).toFixed(1)}M`;
      const difference = r.estimateMiB !== null && r.dryRunMiB ? (r.estimateMiB - r.dryRunMiB) / r.dryRunMiB : null;
      if (difference !== null) differences.push(difference);
      const dry = r.dryRunMiB ? `${r.dryRunMiB} MiB` : `none (${r.dryRunError ?? 'no figure'})`;
      console.log(`| ${path.basename(script)} | ${share} | ${r.batch ?? '-'} | ${r.estimateMiB ?? '-'} MiB (${r.method ?? '-'}) | ${dry} | ${difference === null ? '-' : `${difference >= 0 ? '+' : ''}${(100 * difference).toFixed(1)}%`} |`);
    }
  }
  const absolute = differences.map(Math.abs);
  console.log(`\n${differences.length} scripts: static vs dry run, median absolute difference ${(100 * median(absolute)).toFixed(1)}%, largest ${(100 * Math.max(...absolute)).toFixed(1)}%; static below the dry run by more than 10%: ${differences.filter((d) => d < -0.1).length}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
