/**
 * `npm run realworld:dry-run`: the CPU dry run on every project of the real-projects corpus
 * (test/fixtures/realworld/), each run from its folder with its documented command's arguments
 * (`gpu-estimate --json --root <project> <entry> --dry-run --python PATH [-- <arguments>]`), and
 * which complete: a figure, or the reason the dry run gives (a library this Python lacks, a file
 * the script reads, a device mismatch...). A report, not a test.
 *
 *   node out/scripts/realworld/dryRuns.js [--python /usr/bin/python3] [--only NAME[,NAME]] [--timeout-ms 180000]
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { findPackageRoot } from '../../src/core/parsing/parserAssets';
import { corpusDir, loadCorpus, scriptArgumentsOf } from './corpus';
import { runWithTimeout } from './runCli';

interface DryRunJson {
  readonly models?: readonly {
    readonly name?: string;
    readonly memory?: { readonly estimateMiB?: number | null; readonly method?: string } | null;
    readonly dryRun?: { readonly predictedMiB?: number; readonly scope?: string; readonly error?: string };
  }[];
  readonly dryRun?: { readonly error?: string };
  /** Two or more models with an estimate: the static figure of the script's one process (scriptProcess.ts). */
  readonly process?: { readonly estimateMiB?: number };
}

/** The static estimate beside the dry run, which is the whole script's peak: the script's process where it has several models, else its model's. */
function staticBeside(json: DryRunJson): { staticMiB: number; method: string } | undefined {
  const models = (json.models ?? []).filter((model) => typeof model.memory?.estimateMiB === 'number');
  if (models.length === 0) return undefined;
  const largest = models.reduce((a, b) => ((a.memory!.estimateMiB as number) >= (b.memory!.estimateMiB as number) ? a : b));
  const process = json.process?.estimateMiB;
  return { staticMiB: typeof process === 'number' ? process : (largest.memory!.estimateMiB as number), method: models.map((model) => model.memory!.method ?? '?').join('+') };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** What stopped a dry run, in a few words: the exception's type and first words, or the outcome. */
function reasonOf(json: DryRunJson | undefined, detail: string): string {
  const error = json?.models?.find((model) => model.dryRun?.error)?.dryRun?.error ?? json?.dryRun?.error;
  if (error) return error.replace(/\s+/g, ' ').slice(0, 140);
  return json ? 'no dry-run figure' : detail.slice(0, 140);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { python: { type: 'string', default: '/usr/bin/python3' }, only: { type: 'string' }, 'timeout-ms': { type: 'string', default: '180000' } } });
  const root = findPackageRoot(__dirname);
  const cli = path.join(root, 'dist', 'cli.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  const corpus = loadCorpus(corpusDir(root));
  const only = values.only?.split(',');
  const projects = corpus.projects.filter((project) => !only || only.includes(project.project));
  let completed = 0;
  const reasons: string[] = [];
  const differences: number[] = [];
  for (const project of projects) {
    const dir = path.join(corpus.dir, project.project);
    const scriptArguments = scriptArgumentsOf(project.command, project.entry);
    const run = await runWithTimeout(process.execPath, [cli, '--json', '--root', dir, path.join(dir, project.entry), '--dry-run', '--python', values.python, ...(scriptArguments.length ? ['--', ...scriptArguments] : [])], { cwd: dir, timeoutMs: Number(values['timeout-ms']) });
    const json = run.json as DryRunJson | undefined;
    const figure = json?.models?.find((model) => model.dryRun?.predictedMiB !== undefined)?.dryRun?.predictedMiB;
    if (figure !== undefined) completed += 1;
    else reasons.push(`${project.project}: ${reasonOf(json, run.detail)}`);
    const beside = figure !== undefined && json ? staticBeside(json) : undefined;
    const difference = beside && figure ? (beside.staticMiB - figure) / figure : undefined;
    if (difference !== undefined) differences.push(difference);
    const comparison = beside ? `  static ${Math.round(beside.staticMiB)} MiB (${beside.method}) ${difference! >= 0 ? '+' : ''}${(difference! * 100).toFixed(1)}%` : '';
    console.log(`${project.project.padEnd(28)} ${figure !== undefined ? `${Math.round(figure)} MiB${comparison}` : `not done: ${reasonOf(json, run.detail)}`}`);
  }
  console.log(`\nThe dry run completes for ${completed} of ${projects.length} projects (${values.python}); ${new Date().toISOString()}`);
  if (differences.length) {
    const under = differences.filter((difference) => difference < -0.1).length;
    console.log(`Static estimate against the dry run on ${differences.length} projects (the script's static figure, its models together where it has several, against its peak): median abs. difference ${(median(differences.map(Math.abs)) * 100).toFixed(1)}%, median ${(median(differences) * 100).toFixed(1)}%, under by more than 10%: ${under}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
