import { RemoteError } from './errors';
import { shellQuote, validateHost } from './host';
import type { ProcessResult, ProcessRunner, RunOptions } from './processRunner';

/** Where to connect: the user's ssh config, agent, ProxyJump and known_hosts apply as they are. */
export interface SshTarget {
  readonly host: string;
  /** An ssh config file to use instead of ~/.ssh/config (`-F`); optional. */
  readonly configFile?: string;
  readonly connectTimeoutSeconds?: number;
}

/**
 * Options for every ssh/scp call. BatchMode: nobody can answer a prompt from the editor, so a
 * password or passphrase prompt, or an unknown host key, fails instead of hanging. Host-key
 * checking stays as the user's config has it (never `StrictHostKeyChecking=no`).
 */
function commonOptions(target: SshTarget): string[] {
  const options = ['-o', 'BatchMode=yes', '-o', `ConnectTimeout=${target.connectTimeoutSeconds ?? 15}`];
  if (target.configFile) options.push('-F', target.configFile);
  return options;
}

/** `ssh` arguments that run `script` with `sh` on the host, with `args` as its $1, $2, ... */
export function sshArgs(target: SshTarget, script: string, args: readonly string[] = []): string[] {
  const host = validateHost(target.host);
  // ssh joins everything after the host into one string for the remote login shell, so the
  // command is built as one string of single-quoted words: sh -c 'SCRIPT' sh 'ARG1' ...
  const remote = ['sh', '-c', shellQuote(script), 'sh', ...args.map(shellQuote)].join(' ');
  return [...commonOptions(target), '-o', 'ServerAliveInterval=15', '-o', 'ServerAliveCountMax=4', '--', host, remote];
}

/**
 * `scp` arguments; remote paths are written `remote:PATH` and get the host prefixed. Uploads copy
 * folders (`recursive`); downloads fetch listed files only, so nothing the host swaps in between
 * listing and fetching (a folder, a link) is copied recursively.
 */
export function scpArgs(target: SshTarget, sources: readonly string[], destination: string, recursive = true): string[] {
  const host = validateHost(target.host);
  const spec = (path: string): string => (path.startsWith('remote:') ? `${host}:${path.slice('remote:'.length)}` : path);
  return ['-B', '-q', ...(recursive ? ['-r'] : []), ...commonOptions(target), '--', ...sources.map(spec), spec(destination)];
}

/** Turns a failed ssh/scp run into a RemoteError with a message a user can act on. */
export function sshFailure(host: string, result: ProcessResult, what: string): RemoteError {
  const stderr = result.stderr.trim();
  const last = stderr.split('\n').filter((line) => line.trim()).pop() ?? '';
  if (/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No \S+ host key is known/i.test(stderr)) {
    return new RemoteError(
      'host-key',
      `${host}'s host key is not in your known_hosts (or it changed), so ssh refused to connect. Connect once in a terminal (ssh ${host}) to check and accept the key; GPU Estimator never accepts host keys by itself.`,
      stderr,
    );
  }
  if (/Permission denied|Too many authentication failures/i.test(stderr)) {
    return new RemoteError('auth', `ssh could not log in to ${host} without a prompt (${last}). Load your key into ssh-agent or use a key without a passphrase.`, stderr);
  }
  if (/Connection refused|Connection timed out|timed out|No route to host|Could not resolve hostname|Network is unreachable|Connection closed|Connection reset|Broken pipe|kex_exchange_identification/i.test(stderr)) {
    return new RemoteError('unreachable', `Cannot reach ${host} (${last}).`, stderr);
  }
  return new RemoteError('ssh-failed', `${what} on ${host} failed (${last || `exit code ${String(result.code)}`}).`, stderr);
}

/** Runs a script on the host; ssh's own failures (exit 255) become RemoteErrors. */
export async function runRemote(
  runner: ProcessRunner,
  target: SshTarget,
  script: string,
  args: readonly string[],
  what: string,
  options: RunOptions = {},
): Promise<ProcessResult> {
  const result = await runner('ssh', sshArgs(target, script, args), { timeoutMs: 120_000, ...options });
  if (result.code === 255 || result.code === null) throw sshFailure(target.host, result, what);
  return result;
}
