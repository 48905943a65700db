// extensionTestsPath entry. VS Code's extension host (code-server's in run.sh, a
// downloaded VS Code in electron.ts) requires this file and awaits run(); a rejection
// makes the run fail. Runs mocha over the compiled suites next to this folder.
import * as fs from 'fs';
import * as path from 'path';
import Mocha from 'mocha';

/** If set, the pass/fail counts are written there as JSON ({ passed, failed, failures }). */
export const RESULT_FILE_ENV = 'GPU_ESTIMATOR_E2E_RESULT_FILE';
/** test/e2e/driver/exthost.mjs echoes the console between these two markers. */
const START = '=== gpu-estimator e2e tests start';
const END = '=== gpu-estimator e2e tests end';

function findSuites(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return findSuites(file);
    return entry.name.endsWith('.e2e.test.js') ? [file] : [];
  });
}

function writeResult(result: { passed: number; failed: number; failures: string[] }): void {
  const file = process.env[RESULT_FILE_ENV];
  if (file) fs.writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
}

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', color: false, timeout: 60000 });
  const suites = findSuites(path.resolve(__dirname, '..', 'suite')).sort();
  for (const file of suites) mocha.addFile(file);
  console.log(`${START} (${suites.length} files) ===`);

  return new Promise((resolve, reject) => {
    const failures: string[] = [];
    const done = (passed: number, failed: number): void => {
      console.log(`${END}: ${passed} passed, ${failed} failed ===`);
      writeResult({ passed, failed, failures });
      if (failed > 0) reject(new Error(`${failed} e2e test(s) failed`));
      else resolve();
    };
    if (suites.length === 0) {
      failures.push(`no *.e2e.test.js under ${path.resolve(__dirname, '..', 'suite')}`);
      done(0, 1);
      return;
    }
    try {
      const runner = mocha.run(() => done(runner.stats?.passes ?? 0, runner.stats?.failures ?? 1));
      runner.on('fail', (test, err: unknown) => {
        failures.push(`${test.fullTitle()}: ${err instanceof Error ? err.message : String(err)}`);
      });
    } catch (err) {
      // A suite that fails to load throws here, before any test runs.
      failures.push(`mocha could not start: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      done(0, 1);
    }
  });
}
