#!/usr/bin/env node
/**
 * Behaviour checks for refactors: runs the built CLI (`dist/cli.js --json`) on every example,
 * fixture and corpus script, on two GPUs, and writes one JSON file per run; with --compare it diffs
 * the runs against an earlier snapshot and exits 1 on any difference.
 *
 *   npm run build && node scripts/cli-json-snapshot.mjs --out /tmp/before
 *   (change the code) npm run build && node scripts/cli-json-snapshot.mjs --out /tmp/after --compare /tmp/before
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCRIPT_FOLDERS = ['examples', 'test/fixtures'];
const GPUS = ['a100-40gb', 't4-16gb'];

function parseArgs(argv) {
  const args = { out: undefined, compare: undefined, jobs: 2 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--out' && value) (args.out = value), i++;
    else if (flag === '--compare' && value) (args.compare = value), i++;
    else if (flag === '--jobs' && value && /^[1-9]\d*$/.test(value)) (args.jobs = Number(value)), i++;
    else throw new Error(`unknown argument ${flag} (usage: --out DIR [--compare DIR] [--jobs N])`);
  }
  if (!args.out) throw new Error('--out DIR is required');
  return args;
}

function pythonScripts(folder) {
  const found = [];
  for (const entry of readdirSync(path.join(ROOT, folder), { withFileTypes: true })) {
    const relative = path.posix.join(folder, entry.name);
    if (entry.isDirectory()) found.push(...pythonScripts(relative));
    else if (entry.isFile() && entry.name.endsWith('.py')) found.push(relative);
  }
  return found.sort();
}

function runCli(script, gpu) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), script, '--gpu', gpu, '--json'], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(path.join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: npm run build first');
  const runs = SCRIPT_FOLDERS.flatMap(pythonScripts).flatMap((script) => GPUS.map((gpu) => ({ script, gpu })));
  mkdirSync(args.out, { recursive: true });
  const fileName = (run) => `${run.script.replaceAll('/', '__')}.${run.gpu}.json`;
  const snapshot = async (run) => {
    const { code, stdout, stderr } = await runCli(run.script, run.gpu);
    writeFileSync(path.join(args.out, fileName(run)), `${JSON.stringify({ exitCode: code, stderr, report: code === 0 ? JSON.parse(stdout) : stdout }, null, 2)}\n`);
  };
  let next = 0;
  const worker = async () => {
    while (next < runs.length) await snapshot(runs[next++]);
  };
  await Promise.all(Array.from({ length: args.jobs }, worker));
  console.log(`cli-json-snapshot: ${runs.length} runs (${runs.length / GPUS.length} scripts x ${GPUS.length} GPUs) in ${args.out}`);
  if (!args.compare) return 0;
  const differs = (name) => !existsSync(path.join(args.compare, name)) || readFileSync(path.join(args.compare, name), 'utf8') !== readFileSync(path.join(args.out, name), 'utf8');
  // The analysis has a time budget per file, so on a loaded machine a run can stop early and print
  // less: a run that differs is run again, alone, before it counts.
  let differing = readdirSync(args.out).filter((name) => name.endsWith('.json') && differs(name));
  for (let retry = 0; retry < 2 && differing.length; retry++) {
    for (const name of differing) await snapshot(runs.find((run) => fileName(run) === name));
    differing = differing.filter(differs);
  }
  const gone = readdirSync(args.compare).filter((name) => name.endsWith('.json') && !existsSync(path.join(args.out, name)));
  for (const name of [...differing, ...gone]) console.log(`differs: ${name}`);
  console.log(`cli-json-snapshot: ${differing.length + gone.length} of ${runs.length} differ from ${args.compare}`);
  return differing.length + gone.length ? 1 : 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error) => {
    console.error(`cli-json-snapshot: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 2;
  },
);
