import { RemoteError } from './errors';

/**
 * A host as `ssh` takes it: an alias from the ssh config or a host name, optionally with `user@`.
 * Anything else is refused before a process starts: shell metacharacters, spaces, a leading `-`
 * (which ssh would read as an option, e.g. `-oProxyCommand=...`), `:` (scp's host:path
 * separator), and empty parts.
 */
const HOST = /^(?:[A-Za-z0-9._][A-Za-z0-9._-]{0,63}@)?[A-Za-z0-9_][A-Za-z0-9._-]{0,252}$/;

export function validateHost(host: string): string {
  const trimmed = host.trim();
  if (!HOST.test(trimmed)) {
    throw new RemoteError(
      'invalid-host',
      `"${printable(host)}" is not a host name GPU Estimator can pass to ssh: use an alias from your ssh config or a host name (letters, digits, ".", "_", "-", optionally user@).`,
    );
  }
  return trimmed;
}

/** The host as a single path segment for `.gpu-estimator/runs/<host>/`. */
export function hostDirectoryName(host: string): string {
  return validateHost(host).replace(/@/g, '_at_');
}

function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this replaces
  return text.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, 80);
}

/** POSIX shell single quoting: the result is one word whose value is exactly `value`. */
export function shellQuote(value: string): string {
  if (value.includes('\0')) throw new RemoteError('invalid-setting', 'a value sent to the remote shell contains a NUL byte');
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * A remote directory from a setting: `~/x` and `x` are relative to the remote home (where ssh,
 * scp and sftp start), `/x` is absolute. Only path characters that need no quoting in scp's
 * host:path form are accepted, and no `..` segments.
 */
export function normalizeRemoteDir(dir: string): string {
  let path = dir.trim();
  if (path === '~') path = '.';
  if (path.startsWith('~/')) path = path.slice(2);
  path = path.replace(/\/+$/, '');
  if (!path || !/^[A-Za-z0-9._/+-]+$/.test(path) || path.split('/').includes('..') || path.startsWith('-')) {
    throw new RemoteError(
      'invalid-setting',
      `"${printable(dir)}" is not a usable remote directory: use ~/name or an absolute path made of letters, digits and . _ / + -`,
    );
  }
  return path;
}
