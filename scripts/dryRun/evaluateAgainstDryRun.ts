/**
 * Static estimates against the CPU dry run, where no published measurement has the training set-up:
 * the dry run (harness/dry_run.py: the script's own step on the meta device, replayed through the
 * caching allocator; 3.3% median error on the measured timm runs, README) is the reference. Each
 * script is estimated statically and dry-run with the same reading of the script (batch, input),
 * on the default GPU.
 *
 * - `--set frozen` (default): transfer learning with frozen parameters, the scripts of
 *   test/fixtures/transfer and the corpus's finetune_frozen_stages.py and linear_probe_no_grad.py;
 * - `--set checkpointing`: gradient checkpointing (torch.utils.checkpoint, timm's and transformers'
 *   own), the scripts of test/fixtures/checkpointing and two corpus fixtures, each also without
 *   checkpointing where the script has a switch for it.
 *
 *   npm run evaluate:frozen -- [--python PATH]
 *   npm run evaluate:checkpointing -- [--python PATH]
 *
 * Needs a Python with torch, torchvision and timm: the default is the venv scripts/catalog/timm-venv.cjs makes (timm 1.0.31
 * over Debian's torch 1.13 CPU), which `npm run evaluate:frozen` and `evaluate:checkpointing` make first.
 */
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { spawnProcess } from '../../src/core/remote/processRunner';
import { scriptPeakMiB, type ProcessModel } from '../../src/core/estimate/scriptProcess';
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
  readonly layerTable: { readonly rows: readonly { readonly type: string }[]; readonly totals: { readonly params: number; readonly trainableParams: number } };
  readonly dryRun?: { readonly predictedMiB?: number; readonly error?: string };
}

async function cli(args: readonly string[]): Promise<{ models: CliModel[] }> {
  // --json before the script's own arguments (after `--`).
  const split = args.includes('--') ? args.indexOf('--') : args.length;
  const result = await spawnProcess(process.execPath, [path.join(REPO, 'dist', 'cli.js'), ...args.slice(0, split), '--json', ...args.slice(split)], { timeoutMs: 600_000 });
  return JSON.parse(result.stdout) as { models: CliModel[] };
}

/** One reading per script (with the CLI's `options`: `--set NAME=VALUE`, `-- ARGS`): several models in one script are one process, as the dry run runs it. */
async function read(script: string, python: string, options: readonly string[] = []): Promise<Reading> {
  const [plain, dry] = [await cli([script, ...options]), await cli([script, '--dry-run', '--python', python, ...options])];
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

const CORPUS = path.join(REPO, 'test', 'fixtures', 'corpus');

/** The checkpointing set: each script with the CLI options that turn checkpointing on, and off (null: it has no switch). */
const CHECKPOINTING: readonly { readonly script: string; readonly on: readonly string[]; readonly off: readonly string[] | null }[] = [
  { script: path.join(CORPUS, 'densenet_memory_efficient.py'), on: [], off: ['--', '--no-efficient'] },
  { script: path.join(CORPUS, 'checkpoint_sequential_resnet.py'), on: [], off: ['--', '--segments', '1'] },
  ...[
    { file: 'nanogpt_checkpointed_blocks.py', on: [], off: ['--', '--checkpoint', '0'] },
    { file: 'timm_vit_grad_checkpointing.py', on: ['--', '--grad-checkpointing'], off: [] },
    { file: 'timm_resnet50_grad_checkpointing.py', on: [], off: ['--', '--checkpointing', '0'] },
    { file: 'timm_convnext_grad_checkpointing.py', on: [], off: ['--set', 'GRAD_CHECKPOINTING=0'] },
  ].map(({ file, on, off }) => ({ script: path.join(REPO, 'test', 'fixtures', 'checkpointing', file), on, off })),
];

const percent = (difference: number | null) => (difference === null ? '-' : `${difference >= 0 ? '+' : ''}${(100 * difference).toFixed(1)}%`);
const versus = (r: Reading) => (r.estimateMiB !== null && r.dryRunMiB ? (r.estimateMiB - r.dryRunMiB) / r.dryRunMiB : null);
const dryText = (r: Reading) => (r.dryRunMiB ? `${r.dryRunMiB} MiB` : `none (${r.dryRunError ?? 'no figure'})`);

function summary(differences: readonly number[]): string {
  const absolute = differences.map(Math.abs);
  return `${differences.length} scripts: static vs dry run, median absolute difference ${(100 * median(absolute)).toFixed(1)}%, largest ${(100 * Math.max(...absolute)).toFixed(1)}%; static below the dry run by more than 10%: ${differences.filter((d) => d < -0.1).length}`;
}

async function frozen(python: string): Promise<void> {
  const folder = path.join(REPO, 'test', 'fixtures', 'transfer');
  const scripts = [...readdirSync(folder).filter((f) => f.endsWith('.py')).map((f) => path.join(folder, f)), ...['finetune_frozen_stages.py', 'linear_probe_no_grad.py'].map((f) => path.join(CORPUS, f))];
  console.log('| script | trained / all parameters | batch | static estimate (estimator) | dry run | static vs dry run |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  const differences: number[] = [];
  for (const script of scripts) {
    const r = await read(script, python);
    const share = `${((100 * r.trainable) / Math.max(1, r.params)).toFixed(1)}% of ${(r.params / 1e6).toFixed(1)}M`;
    const difference = versus(r);
    if (difference !== null) differences.push(difference);
    console.log(`| ${path.basename(script)} | ${share} | ${r.batch ?? '-'} | ${r.estimateMiB ?? '-'} MiB (${r.method ?? '-'}) | ${dryText(r)} | ${percent(difference)} |`);
  }
  console.log(`\n${summary(differences)}`);
}

async function checkpointing(python: string): Promise<void> {
  console.log('| script | batch | static estimate (estimator) | dry run | static vs dry run | without checkpointing: options, static / dry run (static vs dry run) |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  const differences: number[] = [];
  const withoutDifferences: number[] = [];
  for (const { script, on, off } of CHECKPOINTING) {
    const r = await read(script, python, on);
    const difference = versus(r);
    if (difference !== null) differences.push(difference);
    const without = off ? await read(script, python, off) : null;
    const withoutDifference = without ? versus(without) : null;
    if (withoutDifference !== null) withoutDifferences.push(withoutDifference);
    const withoutText = without ? `\`${off!.join(' ') || '(none)'}\`: ${without.estimateMiB ?? '-'} MiB / ${dryText(without)} (${percent(withoutDifference)})` : '(no switch)';
    console.log(`| ${path.basename(script)} ${on.join(' ')} | ${r.batch ?? '-'} | ${r.estimateMiB ?? '-'} MiB (${r.method ?? '-'}) | ${dryText(r)} | ${percent(difference)} | ${withoutText} |`);
  }
  console.log(`\nWith checkpointing, ${summary(differences)}`);
  console.log(`Without, ${summary(withoutDifferences)}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { python: { type: 'string' }, set: { type: 'string', default: 'frozen' } } });
  const timmPython = values.python ?? process.env.TIMM_PYTHON ?? path.join(REPO, 'build', 'venvs', 'timm', 'bin', 'python');
  if (values.set === 'checkpointing') await checkpointing(timmPython);
  else if (values.set === 'frozen') await frozen(timmPython);
  else throw new Error(`--set ${values.set}: frozen or checkpointing`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
