import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export const SSHD = '/usr/sbin/sshd';

/**
 * A throwaway OpenSSH server on 127.0.0.1, started by the test itself: its own host key, user key,
 * authorized_keys, known_hosts and client config in a temp dir, so the user's ~/.ssh is never read
 * or written (the client runs with `ssh -F <dir>/ssh_config`, BatchMode, strict host-key checking).
 *
 * Client aliases in ssh_config:
 * - gpu-test: known host key, remote PATH as the login shell sets it;
 * - gpu-unknown: the same server, but an empty known_hosts (ssh must refuse);
 * - gpu-nopython: a second port whose sessions run with PATH limited to a directory holding the
 *   usual tools (sh, df, tail, ...) but no Python.
 *
 * The server config relaxes only what a temp dir needs (StrictModes no, UsePAM no); the client
 * keeps host-key checking.
 */
export class SshServer {
  /** The temp dir with keys and configs; made by setUp, removed by dispose. */
  dir = '';
  get configFile(): string {
    return path.join(this.dir, 'ssh_config');
  }
  get knownHosts(): string {
    return path.join(this.dir, 'known_hosts');
  }
  get emptyKnownHosts(): string {
    return path.join(this.dir, 'known_hosts_empty');
  }
  readonly user = os.userInfo().username;
  private process: ChildProcess | undefined;
  private log = '';
  port = 0;
  noPythonPort = 0;

  static available(): boolean {
    return existsSync(SSHD) && existsSync('/usr/bin/ssh') && existsSync('/usr/bin/scp');
  }

  async setUp(): Promise<void> {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'gpu-estimator-sshd-'));
    this.port = await freePort();
    this.noPythonPort = await freePort();
    const keygen = (file: string): void => {
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'gpu-estimator-test', '-f', file]);
    };
    keygen(path.join(this.dir, 'host_key'));
    keygen(path.join(this.dir, 'user_key'));
    writeFileSync(path.join(this.dir, 'authorized_keys'), readFileSync(path.join(this.dir, 'user_key.pub')));
    const hostKey = readFileSync(path.join(this.dir, 'host_key.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ');
    writeFileSync(this.knownHosts, `[127.0.0.1]:${this.port} ${hostKey}\n[127.0.0.1]:${this.noPythonPort} ${hostKey}\n`);
    writeFileSync(this.emptyKnownHosts, '');
    const bin = path.join(this.dir, 'bin-without-python');
    mkdirSync(bin);
    for (const tool of ['sh', 'cat', 'df', 'tail', 'head', 'wc', 'mkdir', 'rm', 'touch', 'sleep', 'ls', 'setsid', 'nohup', 'env']) {
      const found = ['/usr/bin', '/bin'].map((d) => path.join(d, tool)).find((p) => existsSync(p));
      if (found) symlinkSync(found, path.join(bin, tool));
    }
    writeFileSync(
      path.join(this.dir, 'sshd_config'),
      [
        `Port ${this.port}`,
        `Port ${this.noPythonPort}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${path.join(this.dir, 'host_key')}`,
        `PidFile ${path.join(this.dir, 'sshd.pid')}`,
        `AuthorizedKeysFile ${path.join(this.dir, 'authorized_keys')}`,
        'PubkeyAuthentication yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'StrictModes no',
        'PermitRootLogin prohibit-password',
        `AllowUsers ${this.user}`,
        'Subsystem sftp internal-sftp',
        'LogLevel ERROR',
        `Match LocalPort ${this.noPythonPort}`,
        `  ForceCommand env PATH=${bin} /bin/sh -c "$SSH_ORIGINAL_COMMAND"`,
        '',
      ].join('\n'),
    );
    const client = (alias: string, port: number, knownHosts: string): string =>
      [
        `Host ${alias}`,
        '  HostName 127.0.0.1',
        `  Port ${port}`,
        `  User ${this.user}`,
        `  IdentityFile ${path.join(this.dir, 'user_key')}`,
        '  IdentitiesOnly yes',
        '  IdentityAgent none',
        `  UserKnownHostsFile ${knownHosts}`,
        '  GlobalKnownHostsFile /dev/null',
        '  StrictHostKeyChecking yes',
        '  UpdateHostKeys no',
        '  LogLevel ERROR',
        '',
      ].join('\n');
    writeFileSync(
      this.configFile,
      client('gpu-test', this.port, this.knownHosts) + client('gpu-unknown', this.port, this.emptyKnownHosts) + client('gpu-nopython', this.noPythonPort, this.knownHosts),
    );
    chmodSync(path.join(this.dir, 'user_key'), 0o600);
    if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true }); // sshd's privilege-separation directory
    await this.start();
  }

  /** Starts (or restarts) sshd with the same keys and ports. */
  async start(): Promise<void> {
    this.log = '';
    const child = spawn(SSHD, ['-D', '-e', '-f', path.join(this.dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
    this.process = child;
    const deadline = Date.now() + 15_000;
    while (!(await accepts(this.port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`sshd did not start: ${this.log}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Stops the listening sshd (connections already open may linger; new ones are refused). */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    while (await accepts(this.port)) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  async dispose(): Promise<void> {
    await this.stop();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Debian's Python with torch, which the harness runs with on the test "host". */
export const TORCH_PYTHON = '/usr/bin/python3';

/**
 * Starts `server` for a suite, with a remote work folder and a local workspace. Where sshd or
 * Debian's torch is missing the suite fails with what to install: `npm run test:all` installs
 * them first (scripts/test-prerequisites.cjs), so a missing one is a broken set-up, never a reason
 * to leave the suite silently pending.
 */
export async function startForSuite(_context: Mocha.Context, server: SshServer): Promise<{ workDir: string; workspace: string }> {
  const missing = [
    ...(SshServer.available() ? [] : ['openssh-server and openssh-client (sshd, ssh, scp, ssh-keygen)']),
    ...(existsSync(TORCH_PYTHON) ? [] : ['python3-torch (Debian\'s PyTorch at /usr/bin/python3)']),
  ];
  if (missing.length) throw new Error(`cannot run the remote integration tests: missing ${missing.join(' and ')}; run node scripts/test-prerequisites.cjs --for remote (as root it installs them)`);
  await server.setUp();
  return { workDir: path.join(server.dir, 'remote-home', '.gpu-estimator'), workspace: mkdtempSync(path.join(os.tmpdir(), 'gpu-estimator-workspace-')) };
}

/** Skips a test that does not apply on this machine, saying why in the test output (mocha's "pending" alone says nothing). */
export function skipBecause(context: Mocha.Context, reason: string): never {
  console.log(`      skipped: ${reason}`);
  context.skip();
}
