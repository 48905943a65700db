/**
 * Runs one saved input through the pipeline on the main thread, as the CLI would, and prints the
 * time and any exception with its stack: `node out/test/fuzz/repro.js FILE.py|FILE.json ...`
 * (a .json from out/fuzz-failures keeps lone surrogates and the random edits exactly).
 */
import { readFileSync } from 'node:fs';
import { findPackageRoot, packagedParserAssets } from '../../src/core/parsing/parserAssets';
import { createPythonParser } from '../../src/core/parsing/pythonParser';
import { runJob, type Job } from './pipeline';

async function main(): Promise<number> {
  const files = process.argv.slice(2);
  if (files.length === 0) throw new Error('usage: repro.js FILE.py|FILE.json ...');
  Error.stackTraceLimit = 30;
  const parser = await createPythonParser(packagedParserAssets(findPackageRoot(__dirname)));
  let failed = 0;
  for (const [id, file] of files.entries()) {
    const text = readFileSync(file, 'utf8');
    const saved = file.endsWith('.json') ? (JSON.parse(text) as { source: string; edits: Job['edits']; incremental?: boolean }) : { source: text, edits: null };
    const outcome = runJob(parser, { id, source: saved.source, edits: saved.edits, incremental: saved.incremental ?? false });
    const verdict = outcome.error ? `threw in ${outcome.error.stage}: ${outcome.error.name}: ${outcome.error.message}` : (outcome.inconsistency ?? 'ok');
    console.log(`${file}: ${saved.source.length} characters, ${outcome.ms.toFixed(1)} ms (slowest pass ${outcome.passMs.toFixed(1)} ms), ${verdict}`);
    if (outcome.error) console.log(outcome.error.stack.split('\n').slice(1, 12).join('\n'));
    if (outcome.error || outcome.inconsistency) failed += 1;
  }
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 2;
  },
);
