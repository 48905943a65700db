import { spawn } from 'node:child_process';

export interface ProcessResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  /** Written to the process's stdin, which is then closed. */
  readonly input?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Variables added to (or replacing) this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The one seam to local processes: a command and its arguments as an array, run without a shell.
 * Tests can pass their own to see every command that would start.
 */
export type ProcessRunner = (command: string, args: readonly string[], options?: RunOptions) => Promise<ProcessResult>;

export const spawnProcess: ProcessRunner = (command, args, options = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { shell: false, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, ...(options.env ? { env: { ...process.env, ...options.env } } : {}) });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let timedOut = false;
    const timer = options.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          child.kill('SIGTERM');
        }, options.timeoutMs)
      : undefined;
    const abort = (): void => {
      child.kill('SIGTERM');
    };
    options.signal?.addEventListener('abort', abort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
      reject(error);
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
      const err = Buffer.concat(stderr).toString('utf8');
      resolve({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: timedOut ? `${err}\n(timed out after ${options.timeoutMs} ms)` : err,
      });
    });
    child.stdin.on('error', () => undefined); // the process may exit before reading its input
    child.stdin.end(options.input ?? '');
  });
