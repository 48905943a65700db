/**
 * Runs one analysis in a child process with a time limit, so that a crash or a hang of the analyzer
 * is a row of the report rather than the end of the run.
 */
import { spawn } from 'node:child_process';

export type Outcome = 'done' | 'crash' | 'hang';

export interface CliRun {
  readonly outcome: Outcome;
  /** The parsed JSON output (outcome done). */
  readonly json?: unknown;
  /** Why a run is a crash or a hang: the exit code or signal, the start of stderr, a parse error. */
  readonly detail: string;
  readonly ms: number;
}

/** Runs `command args` in `cwd`; kills it (SIGKILL) after `timeoutMs`. Exit 0 or 3 with JSON on stdout is done. */
export function runWithTimeout(command: string, args: readonly string[], options: { cwd: string; timeoutMs: number }): Promise<CliRun> {
  const start = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, [...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    let settled = false;
    const finish = (run: Omit<CliRun, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...run, ms: Date.now() - start });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => finish({ outcome: 'crash', detail: `could not start: ${error.message}` }));
    child.on('close', (code, signal) => {
      const errorText = Buffer.concat(stderr).toString('utf8').trim().split('\n').slice(0, 3).join(' | ');
      if (timedOut) return finish({ outcome: 'hang', detail: `killed after ${options.timeoutMs} ms` });
      if (code !== 0 && code !== 3) return finish({ outcome: 'crash', detail: `exit ${code ?? signal ?? '?'}${errorText ? `: ${errorText}` : ''}` });
      try {
        finish({ outcome: 'done', json: JSON.parse(Buffer.concat(stdout).toString('utf8')), detail: '' });
      } catch (error) {
        finish({ outcome: 'crash', detail: `output is not JSON: ${(error as Error).message}` });
      }
    });
  });
}
