import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RemoteError } from '../../../../src/core/remote/errors';
import { spawnProcess, type ProcessRunner } from '../../../../src/core/remote/processRunner';
import type { Progress } from '../../../../src/core/remote/progress';
import { RemoteRunner, type RunRecord } from '../../../../src/core/remote/remoteRun';
import { sshArgs } from '../../../../src/core/remote/ssh';
import { REPO_ROOT } from '../../../unit/fixtures';
import { SshServer, skipBecause, startForSuite, TORCH_PYTHON } from '../../sshServer';

/**
 * The "Collect training data on a remote GPU host" flow end to end against a real OpenSSH server
 * on 127.0.0.1 (test/integration/sshServer.ts), with the real harness and `--device cpu`:
 * pre-flight, upload, progress, cancel, re-attach, download, and the fault cases.
 */

const CONFIG = path.join(REPO_ROOT, 'harness', 'configs', 'cpu-smoke.yaml'); // 3 tiny configurations
const SECONDS = 0.3;

interface Invocation {
  readonly command: string;
  readonly args: readonly string[];
}

describe('remote data collection over a real OpenSSH server', function () {
  this.timeout(180_000);
  const server = new SshServer();
  const invocations: Invocation[] = [];
  const log: string[] = [];
  let workDir: string;
  let workspace: string;
  const homeSsh = path.join(os.homedir(), '.ssh');
  const homeSshBefore = existsSync(homeSsh) ? readdirSync(homeSsh).sort() : null;

  const recording: ProcessRunner = (command, args, options) => {
    invocations.push({ command, args });
    return spawnProcess(command, args, options);
  };

  function runner(host = 'gpu-test', python = TORCH_PYTHON): RemoteRunner {
    return new RemoteRunner({
      target: { host, configFile: server.configFile, connectTimeoutSeconds: 5 },
      python,
      workDir,
      harnessDir: path.join(REPO_ROOT, 'harness'),
      runner: recording,
      log: (line) => log.push(line),
      pollIntervalMs: 250,
      maxPollFailures: 2,
    });
  }

  /** Follows until `until` holds for the progress, then detaches (as a closed window would). */
  async function followUntil(remote: RemoteRunner, record: RunRecord, until: (p: Progress) => boolean): Promise<Progress> {
    const controller = new AbortController();
    let seen: Progress | undefined;
    const result = await remote.follow(record, {
      signal: controller.signal,
      onProgress: (progress) => {
        seen = progress;
        if (until(progress)) controller.abort();
      },
    });
    assert.equal(result.state, 'detached', `the run ended before the test detached: ${result.message ?? ''} ${result.stderrTail}`);
    return seen!;
  }

  const remoteRunDir = (record: RunRecord): string => path.join(record.remoteDir); // absolute: workDir is absolute
  const remoteRows = (record: RunRecord): string[] => {
    const file = path.join(remoteRunDir(record), 'out', 'results.jsonl');
    return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
  };
  const remotePid = (record: RunRecord): number => Number(readFileSync(path.join(remoteRunDir(record), 'pid'), 'utf8'));
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  before(async function () {
    ({ workDir, workspace } = await startForSuite(this, server));
  });

  after(async () => {
    await server.dispose(); // also after a skip: nothing to remove then
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  afterEach(() => {
    // Whatever a test did, the client never turned host-key checking off and never used a shell.
    for (const { command, args } of invocations) {
      assert.ok(command === 'ssh' || command === 'scp', command);
      assert.ok(!args.some((arg) => /StrictHostKeyChecking\s*=?\s*no/i.test(arg)), args.join(' '));
      assert.ok(args.includes('BatchMode=yes'));
    }
  });

  it('runs pre-flight, upload and progress, re-attaches after a reload and a dropped connection, and downloads without overwriting', async () => {
    const remote = runner();
    const { report, notes } = await remote.preflight('cpu');
    assert.equal(report.python, TORCH_PYTHON);
    assert.ok(report.torch, 'torch version');
    assert.ok(notes.some((note) => note.startsWith('CPU test run: the GPU checks are skipped')));

    const record = await remote.startCollect(CONFIG, 'cpu', SECONDS);
    assert.ok(existsSync(path.join(remoteRunDir(record), 'harness', 'collect.py')), 'harness uploaded');
    assert.ok(!existsSync(path.join(remoteRunDir(record), 'harness', 'tests')), 'tests are not uploaded');
    const stored = JSON.stringify(record); // what the extension keeps in workspace state

    const early = await followUntil(remote, record, (p) => p.done >= 1);
    assert.equal(early.total, 3);
    assert.ok(early.etaSeconds !== null && early.etaSeconds > 0, 'ETA after the first configuration');

    // The window reloads and the connection drops: sshd goes away for a moment. The job, in its
    // own session on the host, goes on.
    await server.stop();
    assert.ok(alive(remotePid(record)), 'the job survives the dropped connection');
    await new Promise((resolve) => setTimeout(resolve, 500));
    await server.start();

    const reattached = RemoteRunner.forRecord(JSON.parse(stored) as RunRecord, {
      harnessDir: path.join(REPO_ROOT, 'harness'),
      runner: recording,
      log: (line) => log.push(line),
      pollIntervalMs: 250,
    });
    const dones: number[] = [];
    const result = await reattached.follow(record, { onProgress: (p) => dones.push(p.done) });
    assert.equal(result.state, 'finished', `${result.message ?? ''}\n${result.stderrTail}`);
    assert.equal(result.exitCode, 0);
    assert.equal(result.progress.done, 3);
    assert.equal(result.progress.ok, 3);
    assert.deepEqual([...dones].sort((a, b) => a - b), dones, 'progress only moves forward');

    const first = await reattached.download(record, workspace);
    assert.equal(first.directory, path.join(workspace, '.gpu-estimator', 'runs', 'gpu-test', record.runId));
    const rows = readFileSync(path.join(first.directory, 'out', 'results.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { device: string; status: string; layerTable: unknown });
    assert.equal(rows.length, 3);
    assert.ok(rows.every((row) => row.device === 'cpu' && row.status === 'ok' && row.layerTable));
    assert.ok(first.merge.added.includes(path.join('out', 'results.jsonl')));
    assert.ok(first.merge.added.includes('stdout.jsonl') && first.merge.added.includes('gpu-estimator-run.json'));

    const again = await reattached.download(record, workspace);
    assert.deepEqual(again.merge.added, []);
    assert.deepEqual(again.merge.kept, []);

    // A local edit is never overwritten: the downloaded copy lands beside it.
    const local = path.join(first.directory, 'out', 'results.jsonl');
    writeFileSync(local, 'my notes\n');
    const third = await reattached.download(record, workspace);
    assert.deepEqual(third.merge.kept, [[path.join('out', 'results.jsonl'), path.join('out', 'results.2.jsonl')]]);
    assert.equal(readFileSync(local, 'utf8'), 'my notes\n');
  });

  it('cancel stops the remote job, and what finished before downloads', async () => {
    const remote = runner();
    const record = await remote.startCollect(CONFIG, 'cpu', SECONDS);
    await followUntil(remote, record, (p) => p.done >= 1);
    const pid = remotePid(record);
    await remote.cancel(record);
    assert.ok(!alive(pid), 'the harness process is gone');
    assert.throws(() => process.kill(-pid, 0), 'its whole process group (the worker too) is gone');
    const result = await remote.follow(record);
    assert.equal(result.state, 'cancelled');
    const { directory } = await remote.download(record, workspace);
    const rows = readFileSync(path.join(directory, 'out', 'results.jsonl'), 'utf8').split('\n').filter(Boolean);
    assert.ok(rows.length >= 1 && rows.length < 3, `${rows.length} rows`);
  });

  it('when the host goes down mid-run: a clear error, finished rows kept, and resume completes the run', async () => {
    const remote = runner();
    const record = await remote.startCollect(CONFIG, 'cpu', SECONDS);
    await followUntil(remote, record, (p) => p.done >= 1);
    // The host "stops": sshd and the job die together.
    process.kill(-remotePid(record), 'SIGKILL');
    await server.stop();

    await assert.rejects(remote.follow(record), (error: unknown) => {
      assert.ok(error instanceof RemoteError);
      assert.equal(error.kind, 'connection-lost');
      assert.match(error.message, /^Lost the connection to gpu-test while following run .*Cannot reach gpu-test \(.*Connection refused\)/);
      return true;
    });
    const kept = remoteRows(record);
    assert.ok(kept.length >= 1, 'the finished configurations are kept on the host');

    await server.start();
    const stopped = await remote.follow(record);
    assert.equal(stopped.state, 'stopped');
    assert.match(stopped.message ?? '', /stopped without finishing \(\d of 3 done\).*Resume to run the rest/);

    const resumed = await remote.resume(record);
    const result = await remote.follow(resumed);
    assert.equal(result.state, 'finished', `${result.message ?? ''}\n${result.stderrTail}`);
    assert.equal(result.progress.done, 3);
    const rows = remoteRows(record);
    assert.equal(rows.length, 3);
    assert.deepEqual(rows.slice(0, kept.length), kept, 'rows from before the outage are untouched');
    assert.equal(new Set(rows.map((row) => (JSON.parse(row) as { id: string }).id)).size, 3, 'no configuration ran twice');
    const stdout = readFileSync(path.join(remoteRunDir(record), 'stdout.jsonl'), 'utf8');
    assert.equal((stdout.match(/"status":"skipped"/g) ?? []).length, kept.length);
  });

  it('downloads the regular files of a run folder holding a linked folder, a linked file and a FIFO, and names what it left', async () => {
    const record = await runner().startCollect(CONFIG, 'cpu', SECONDS);
    assert.equal((await runner().follow(record)).state, 'finished');
    // What a host might hold besides the harness's files: links to folders and files outside the run, a FIFO.
    const run = remoteRunDir(record);
    symlinkSync(server.dir, path.join(run, 'out', 'linked-folder'));
    symlinkSync(path.join(server.dir, 'user_key'), path.join(run, 'out', 'linked-key'));
    execFileSync('mkfifo', [path.join(run, 'out', 'pipe')]);
    log.length = 0;
    const { directory, merge, skipped } = await runner().download(record, workspace);
    assert.deepEqual(skipped, ['out/linked-folder: a symbolic link', 'out/linked-key: a symbolic link', 'out/pipe: not a regular file']);
    assert.ok(log.some((line) => line.endsWith('skipped out/linked-folder: a symbolic link')), log.join('\n'));
    assert.equal(readFileSync(path.join(directory, 'out', 'results.jsonl'), 'utf8').split('\n').filter(Boolean).length, 3);
    assert.ok(merge.added.includes(path.join('out', 'run.json')) && merge.added.some((file) => file.startsWith(path.join('out', 'scripts', ''))));
    assert.deepEqual(readdirSync(path.join(directory, 'out')).sort(), ['results.jsonl', 'run.json', 'scripts']);
  });

  it('refuses a host whose key is not in known_hosts, and never adds it', async () => {
    const before = readFileSync(server.emptyKnownHosts, 'utf8');
    await assert.rejects(runner('gpu-unknown').preflight('cpu'), (error: unknown) => {
      assert.ok(error instanceof RemoteError);
      assert.equal(error.kind, 'host-key');
      assert.match(error.message, /gpu-unknown's host key is not in your known_hosts.*never accepts host keys by itself/);
      assert.match(error.detail, /Host key verification failed/);
      return true;
    });
    assert.equal(readFileSync(server.emptyKnownHosts, 'utf8'), before);
    assert.deepEqual(existsSync(homeSsh) ? readdirSync(homeSsh).sort() : null, homeSshBefore, '~/.ssh untouched');
  });

  it('says plainly when the host has no Python', async () => {
    await assert.rejects(runner('gpu-nopython', 'python3').preflight('cpu'), (error: unknown) => {
      assert.ok(error instanceof RemoteError);
      assert.equal(error.kind, 'no-python');
      assert.match(error.message, /^No Python on gpu-nopython: "python3" is not on its PATH \(.*bin-without-python\)\. Install Python 3\.9\+ with PyTorch/);
      return true;
    });
  });

  it('a GPU run needs nvidia-smi on the host', async function () {
    if (existsSync('/usr/bin/nvidia-smi')) skipBecause(this, 'this machine has nvidia-smi, so the host cannot be shown without one');
    await assert.rejects(runner().preflight('cuda'), (error: unknown) => error instanceof RemoteError && error.kind === 'no-gpu' && /nvidia-smi was not found on gpu-test/.test(error.message));
  });

  it('rejects host names with shell metacharacters before any process starts, and quotes every value it sends', async () => {
    const marker = path.join(server.dir, 'executed');
    const count = invocations.length;
    for (const host of [`gpu-test;touch ${marker}`, `$(touch ${marker})`, `\`touch ${marker}\``, `-oProxyCommand=touch ${marker}`, 'gpu test', 'a|b', "gpu'x", 'gpu-test\nhost', 'h:/tmp']) {
      assert.throws(() => runner(host), (error: unknown) => error instanceof RemoteError && error.kind === 'invalid-host', host);
      assert.throws(() => sshArgs({ host }, 'true'), RemoteError);
    }
    assert.equal(invocations.length, count, 'no ssh or scp was started');

    // Values are quoted, never executed: an interpreter setting full of shell syntax is looked up
    // on the host as one (missing) command name.
    await assert.rejects(runner('gpu-test', `python3'; touch ${marker}; echo '`).preflight('cpu'), (error: unknown) => error instanceof RemoteError && error.kind === 'no-python');
    assert.ok(!existsSync(marker), 'nothing was executed');
  });
});
