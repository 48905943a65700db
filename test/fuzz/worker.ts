/**
 * The fuzzer's worker process: loads the parser once and runs jobs sent by fuzz.ts. Running in a
 * child process lets the driver kill an input that hangs or exhausts memory and go on with a fresh one.
 */
import { findPackageRoot, packagedParserAssets } from '../../src/core/parsing/parserAssets';
import { createPythonParser } from '../../src/core/parsing/pythonParser';
import { canary, runJob, type Job, type Outcome } from './pipeline';

export type ToWorker = { readonly type: 'run'; readonly job: Job };
export type FromWorker = { readonly type: 'ready' } | { readonly type: 'outcome'; readonly outcome: Outcome };

// Deep enough stacks to tell one runaway recursion from another (see signatureOf).
Error.stackTraceLimit = 60;

if (!process.send) throw new Error('worker.js is started by fuzz.js');

function post(message: FromWorker): void {
  process.send?.(message);
}

void createPythonParser(packagedParserAssets(findPackageRoot(__dirname))).then((parser) => {
  const expected = canary(parser);
  process.on('message', (message: ToWorker) => {
    const outcome = runJob(parser, message.job);
    post({ type: 'outcome', outcome: outcome.error ? { ...outcome, healthy: canary(parser) === expected } : outcome });
  });
  post({ type: 'ready' } satisfies FromWorker);
});
// The driver going away ends the worker too.
process.on('disconnect', () => process.exit(0));
