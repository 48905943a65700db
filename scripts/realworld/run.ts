/**
 * `npm run realworld`: runs `gpu-estimate --json --root <project> <entry> [-- <the command's script arguments>]` (dist/cli.js, each in its
 * own process with a time limit) on every project of the real-projects corpus
 * (test/fixtures/realworld/) and prints, per project and model and in total: model found,
 * parameters within 1%, batch size right, optimizer right (read from the source, not the Adam
 * default), precision right, estimate given, crash or hang. A report, not a test: exit code 0
 * whatever the scores (2 when the corpus itself is broken or the CLI is not built).
 *
 *   node out/scripts/realworld/run.js [--only NAME[,NAME]] [--timeout-ms 60000] [--retries 2] [--json FILE]
 *
 * The analyzer's budget is wall-clock time, so on a loaded machine an analysis can stop early and
 * miss what it finds on an idle one: a run whose analysis says it ran out of time is repeated up to
 * --retries times, the first run that did not is scored (else the last), and the report names the
 * projects that ran out of time at first and those that did on every try.
 */
import { existsSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findPackageRoot } from '../../src/core/parsing/parserAssets';
import { checkCorpus, corpusDir, loadCorpus, scriptArgumentsOf, type CorpusProject } from './corpus';
import { runWithTimeout, type CliRun } from './runCli';
import { budgetHit, scoreProject, type ModelScore } from './score';

interface Options {
  readonly only?: readonly string[];
  readonly timeoutMs: number;
  readonly json?: string;
  readonly retries: number;
}

function parseOptions(argv: readonly string[]): Options {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = value('--only');
  return { only: only ? only.split(',') : undefined, timeoutMs: Number(value('--timeout-ms') ?? 60000), json: value('--json'), retries: Number(value('--retries') ?? 2) };
}

const mark = (ok: boolean) => (ok ? 'yes' : 'NO');
const pct = (n: number, of: number) => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`);
const compact = (n: number | null | undefined) => (n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toLocaleString('en-US'));

function pad(cells: readonly string[], widths: readonly number[]) {
  return cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => pad(row, widths).trimEnd()).join('\n');
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const root = findPackageRoot(__dirname);
  const cli = path.join(root, 'dist', 'cli.js');
  if (!existsSync(cli)) {
    console.error(`${cli} is missing: run npm run build first`);
    process.exitCode = 2;
    return;
  }
  const corpus = loadCorpus(corpusDir(root));
  const problems = checkCorpus(corpus);
  if (problems.length > 0) {
    console.error(`The corpus is broken:\n  ${problems.join('\n  ')}`);
    process.exitCode = 2;
    return;
  }
  const projects = corpus.projects.filter((p) => !options.only || options.only.includes(p.project));
  const loadBefore = os.loadavg()[0]!;
  const runs: { project: CorpusProject; run: CliRun; scores: ModelScore[]; tries: number }[] = [];
  for (const project of projects) {
    const dir = path.join(corpus.dir, project.project);
    let run: CliRun;
    let tries = 0;
    do {
      // The script's arguments from the documented command (LightningCLI's --config, argparse options), as the CLI takes them after `--`.
      const scriptArguments = scriptArgumentsOf(project.command, project.entry);
      const passed = scriptArguments.length > 0 ? ['--', ...scriptArguments] : [];
      run = await runWithTimeout(process.execPath, [cli, '--json', '--root', dir, path.join(dir, project.entry), ...passed], { cwd: dir, timeoutMs: options.timeoutMs });
      tries += 1;
    } while (budgetHit(run) && tries <= options.retries);
    const scores = scoreProject(project, dir, corpus.params.get(project.project), run);
    runs.push({ project, run, scores, tries });
    process.stderr.write(`${project.project}: ${run.outcome} in ${run.ms} ms${tries > 1 ? ` (try ${tries})` : ''}\n`);
  }

  const header = ['project', 'model', 'found', 'params (got / truth)', 'ok', 'batch (got/truth)', 'ok', 'optimizer (got/truth)', 'ok', 'precision (got/truth)', 'ok', 'estimate', 'run'];
  const rows: string[][] = [header];
  for (const { project, run, scores } of runs) {
    for (const s of scores) {
      const got = s.got;
      rows.push([
        project.project,
        s.expected.name,
        s.found ? (s.foundBy === 'class' ? `as ${got!.name}` : 'yes') : 'NO',
        `${compact(got?.params)} / ${compact(s.truthParams)}`,
        mark(s.paramsRight),
        `${got ? compact(got.batchSize) : '-'} / ${s.expected.batchSize}`,
        mark(s.batchRight),
        `${got ? `${got.optimizer}${s.optimizerDefaulted ? '(default)' : ''}` : '-'} / ${s.expected.optimizer}`,
        mark(s.optimizerRight),
        `${got?.precision ?? '-'} / ${s.expected.precision}`,
        mark(s.precisionRight),
        got?.memory?.estimateMiB ? `${got.memory.estimateMiB} MiB` : 'NO',
        run.outcome === 'done' ? `${run.ms} ms${budgetHit(run) ? ', out of time' : ''}` : `${run.outcome.toUpperCase()} (${run.detail})`,
      ]);
    }
  }
  const load = `load average ${loadBefore.toFixed(1)} before, ${os.loadavg()[0]!.toFixed(1)} after, on ${os.cpus().length} cores`;
  console.log(`Real-projects corpus: ${projects.length} projects, ${rows.length - 1} models (test/fixtures/realworld/); ${new Date().toISOString()}, ${load}\n`);
  console.log(table(rows));

  const all = runs.flatMap((r) => r.scores);
  const count = (key: keyof Pick<ModelScore, 'found' | 'paramsRight' | 'batchRight' | 'optimizerRight' | 'precisionRight' | 'estimateGiven'>) => all.filter((s) => s[key]).length;
  const crashes = runs.filter((r) => r.run.outcome === 'crash').length;
  const hangs = runs.filter((r) => r.run.outcome === 'hang').length;
  const totals: [string, number, number, string][] = [
    ['model found', count('found'), all.length, '>= 90%'],
    ['parameters within 1%', count('paramsRight'), all.length, '>= 85%'],
    ['batch size right', count('batchRight'), all.length, '>= 85%'],
    ['optimizer right', count('optimizerRight'), all.length, ''],
    ['precision right', count('precisionRight'), all.length, ''],
    ['estimate given', count('estimateGiven'), all.length, ''],
  ];
  console.log('\nTotals (per model)');
  console.log(table([['', 'right', 'of', 'share', 'target'], ...totals.map(([label, n, of, target]) => [label, String(n), String(of), pct(n, of), target])]));
  console.log(`crashes: ${crashes}, hangs: ${hangs} (of ${runs.length} projects; target none)`);
  const list = (names: string[]) => (names.length === 0 ? 'none' : names.join(', '));
  const outOfTime = runs.filter((r) => budgetHit(r.run)).map((r) => r.project.project);
  const retried = runs.filter((r) => r.tries > 1).map((r) => r.project.project);
  console.log(`analysis out of time at the first try (repeated up to ${options.retries} times): ${list(retried)}`);
  console.log(`analysis out of time on every try (scored as it stopped): ${list(outOfTime)}`);

  if (options.json) {
    const report = {
      projects: runs.map(({ project, run, scores, tries }) => ({
        project: project.project,
        outcome: run.outcome,
        detail: run.detail,
        outOfTime: budgetHit(run),
        tries,
        ms: run.ms,
        models: scores.map((s) => ({
          name: s.expected.name,
          found: s.found,
          foundBy: s.foundBy ?? null,
          params: s.got?.params ?? null,
          truthParams: s.truthParams,
          paramsRight: s.paramsRight,
          batchSize: s.got?.batchSize ?? null,
          truthBatchSize: s.expected.batchSize,
          batchRight: s.batchRight,
          optimizer: s.got?.optimizer ?? null,
          optimizerDefaulted: s.optimizerDefaulted,
          truthOptimizer: s.expected.optimizer,
          optimizerRight: s.optimizerRight,
          precision: s.got?.precision ?? null,
          truthPrecision: s.expected.precision,
          precisionRight: s.precisionRight,
          estimateMiB: s.got?.memory?.estimateMiB ?? null,
        })),
      })),
      totals: Object.fromEntries(totals.map(([label, n, of]) => [label, { right: n, of }])),
      crashes,
      hangs,
    };
    writeFileSync(options.json, JSON.stringify(report, null, 2) + '\n');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 2;
});
