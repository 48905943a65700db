import * as assert from 'node:assert/strict';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { RemoteError } from '../../../../src/core/remote/errors';
import { RemoteRunner } from '../../../../src/core/remote/remoteRun';
import { REPO_ROOT } from '../../../unit/fixtures';
import { SlurmCluster } from '../../slurmCluster';
import { SshServer, startForSuite, TORCH_PYTHON } from '../../sshServer';

const CONFIG = path.join(REPO_ROOT, 'harness', 'configs', 'cpu-smoke.yaml'); // 3 tiny configurations

/**
 * "Collect training data" aimed at a SLURM login host: over a real OpenSSH server on 127.0.0.1 to
 * a real slurmctld and slurmd on the same machine, the harness submits the configurations as a job
 * array, follows it, and the rows download as from a GPU host.
 */
describe('remote collection through a SLURM login host (real sshd, real SLURM, --device cpu)', function () {
  this.timeout(600_000);
  const server = new SshServer();
  const cluster = new SlurmCluster();
  let workDir = '';
  let workspace = '';
  let python = '';

  before(async function () {
    const missing = SlurmCluster.missing();
    if (missing) throw new Error(`SLURM integration tests: ${missing}`);
    ({ workDir, workspace } = await startForSuite(this, server));
    await cluster.setUp(undefined, 2);
    // A login host's environment finds its SLURM; this one's comes from the test's cluster.
    python = path.join(cluster.dir, 'python-on-login-host');
    writeFileSync(python, `#!/bin/sh\nexport SLURM_CONF='${path.join(cluster.dir, 'slurm.conf')}'\nexec ${TORCH_PYTHON} "$@"\n`);
    chmodSync(python, 0o755);
  });

  after(async () => {
    await cluster.dispose();
    await server.dispose();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  const runner = (): RemoteRunner =>
    new RemoteRunner({ target: { host: 'gpu-test', configFile: server.configFile, connectTimeoutSeconds: 5 }, python, workDir, harnessDir: path.join(REPO_ROOT, 'harness'), pollIntervalMs: 500 });

  it('checks for sbatch instead of a GPU, submits a job array from the host, follows it and downloads the rows', async () => {
    const remote = runner();
    const { notes } = await remote.preflight('cpu', 'slurm');
    assert.match(notes.join(' '), /SLURM login host: the configurations go to a job array/);
    const record = await remote.startCollect(CONFIG, 'cpu', 0.3, { sbatchArgs: ['--time=5'] });
    const result = await remote.follow(record);
    assert.equal(result.state, 'finished', `${result.message ?? ''}\n${result.stderrTail}`);
    assert.equal(result.exitCode, 0);
    assert.equal(result.progress.done, 3);
    const { directory } = await remote.download(record, workspace);
    const rows = readFileSync(path.join(directory, 'out', 'results.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id: string; device: string });
    assert.equal(new Set(rows.map((row) => row.id)).size, 3);
    assert.ok(rows.every((row) => row.device === 'cpu'));
    const events = readFileSync(path.join(directory, 'stdout.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { event: string; tasks?: number });
    assert.ok(events.some((event) => event.event === 'submitted' && (event.tasks ?? 0) >= 1), 'the harness submitted an array');
  });

  it('refuses sbatch options that are not one option each, before anything starts', async () => {
    await assert.rejects(runner().startCollect(CONFIG, 'cpu', 0.3, { sbatchArgs: ['--time=5; rm -rf ~'.replace('=5; ', '=5\n')] }), (error: unknown) => error instanceof RemoteError && error.kind === 'invalid-setting');
    await assert.rejects(runner().startCollect(CONFIG, 'cpu', 0.3, { sbatchArgs: ['-p gpu'] }), /each entry is one sbatch option/);
  });
});
