import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './sshServer';

/**
 * A throwaway one-node SLURM cluster on 127.0.0.1, started by the test itself: its own MUNGE key and
 * daemon, slurmctld and slurmd in the foreground on free ports, state and logs in a temp dir, and
 * two fake GPU types (`t4`, `a100`: GRES with /dev/null as their device files). Jobs are submitted
 * with SLURM_CONF pointing at its config, so no system SLURM configuration is read or touched.
 */
export class SlurmCluster {
  dir = '';
  private readonly daemons: ChildProcess[] = [];

  static missing(): string | undefined {
    const needs = ['/usr/sbin/slurmctld', '/usr/sbin/slurmd', '/usr/sbin/munged', '/usr/bin/sbatch', '/usr/bin/scontrol'];
    const absent = needs.filter((file) => !existsSync(file));
    if (absent.length) return `missing ${absent.join(', ')}: run node scripts/test-prerequisites.cjs --for slurm as root`;
    if (process.getuid?.() !== 0) return 'slurmd must run as root to start jobs: run the tests as root';
    return undefined;
  }

  get env(): NodeJS.ProcessEnv {
    return { ...process.env, SLURM_CONF: path.join(this.dir, 'slurm.conf') };
  }

  /** Starts the cluster with `jobSubmitLua` as its job_submit plugin and `pluginConf` beside it. */
  async setUp(jobSubmitLua: string, pluginConf: string): Promise<void> {
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'gpu-estimator-slurm-'));
    for (const sub of ['state', 'spool', 'munge']) mkdirSync(path.join(this.dir, sub));
    const key = path.join(this.dir, 'munge', 'munge.key');
    writeFileSync(key, Buffer.from(Array.from({ length: 1024 }, () => Math.floor(Math.random() * 256))), { mode: 0o400 });
    const socket = path.join(this.dir, 'munge', 'munge.socket');
    // --force: munged refuses root otherwise; the key and socket are this test's own.
    this.start('/usr/sbin/munged', ['-F', '--force', `--socket=${socket}`, `--key-file=${key}`, `--pid-file=${path.join(this.dir, 'munge', 'munged.pid')}`, `--seed-file=${path.join(this.dir, 'munge', 'munged.seed')}`, `--log-file=${path.join(this.dir, 'munge', 'munged.log')}`]);
    await this.waitFor(() => existsSync(socket), 'munged to open its socket');
    const [controller, node] = [await freePort(), await freePort()];
    const conf = path.join(this.dir, 'slurm.conf');
    writeFileSync(
      conf,
      [
        'ClusterName=gpuestimatortest',
        `SlurmctldHost=localhost(127.0.0.1)`,
        `SlurmctldPort=${controller}`,
        `SlurmdPort=${node}`,
        'SlurmUser=root',
        'SlurmdUser=root',
        'AuthType=auth/munge',
        `AuthInfo=socket=${socket}`,
        `StateSaveLocation=${path.join(this.dir, 'state')}`,
        `SlurmdSpoolDir=${path.join(this.dir, 'spool')}`,
        `SlurmctldPidFile=${path.join(this.dir, 'slurmctld.pid')}`,
        `SlurmdPidFile=${path.join(this.dir, 'slurmd.pid')}`,
        `SlurmctldLogFile=${path.join(this.dir, 'slurmctld.log')}`,
        `SlurmdLogFile=${path.join(this.dir, 'slurmd.log')}`,
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'SelectType=select/cons_tres',
        'ReturnToService=2',
        'MpiDefault=none',
        'JobSubmitPlugins=lua',
        'GresTypes=gpu',
        'NodeName=localhost NodeAddr=127.0.0.1 CPUs=1 RealMemory=1000 Gres=gpu:t4:1,gpu:a100:1 State=UNKNOWN',
        'PartitionName=debug Nodes=localhost Default=YES MaxTime=5 State=UP',
        '',
      ].join('\n'),
    );
    writeFileSync(path.join(this.dir, 'gres.conf'), 'NodeName=localhost Name=gpu Type=t4 Count=1 File=/dev/null\nNodeName=localhost Name=gpu Type=a100 Count=1 File=/dev/zero\n');
    // The plugin is looked for beside slurm.conf, and reads its settings from beside itself.
    copyFileSync(jobSubmitLua, path.join(this.dir, 'job_submit.lua'));
    writeFileSync(path.join(this.dir, 'gpu_estimate.conf'), pluginConf);
    this.start('/usr/sbin/slurmctld', ['-D', '-i', '-f', conf]);
    this.start('/usr/sbin/slurmd', ['-D', '-N', 'localhost', '-f', conf]);
    await this.waitFor(() => spawnSync('sinfo', ['-h', '-o', '%T'], { env: this.env, encoding: 'utf8' }).stdout.trim() === 'idle', 'the node to be idle');
  }

  /** sbatch as the current user; its exit code and what it printed. */
  sbatch(args: readonly string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
    const result = spawnSync('sbatch', [...args], { cwd, env: this.env, encoding: 'utf8', timeout: 120_000 });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  /** `scontrol show job ID` as key=value pairs. */
  job(id: string): Record<string, string> {
    const text = execFileSync('scontrol', ['show', 'job', id], { env: this.env, encoding: 'utf8' });
    return Object.fromEntries([...text.matchAll(/(\w+)=(\S*)/g)].map((m) => [m[1]!, m[2]!]));
  }

  /** Waits until the job has ended (COMPLETED, FAILED, ...); returns its state. */
  async finished(id: string, timeoutMs = 90_000): Promise<string> {
    let state = '';
    await this.waitFor(() => {
      state = this.job(id).JobState ?? '';
      return !['PENDING', 'RUNNING', 'CONFIGURING', 'COMPLETING'].includes(state);
    }, `job ${id} to end`, timeoutMs);
    return state;
  }

  controllerLog(): string {
    const file = path.join(this.dir, 'slurmctld.log');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }

  /** Cancels every job, stops the daemons (waiting for them to exit) and removes the temp dir. */
  async dispose(): Promise<void> {
    if (this.dir) spawnSync('scancel', ['--full', '--user', os.userInfo().username], { env: this.env, timeout: 10_000 });
    const exits = this.daemons.map((daemon) => (daemon.exitCode !== null || daemon.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => daemon.once('exit', () => resolve()))));
    for (const daemon of [...this.daemons].reverse()) daemon.kill('SIGTERM');
    const stopped = await Promise.race([Promise.all(exits).then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000))]);
    if (!stopped) for (const daemon of this.daemons) daemon.kill('SIGKILL');
    this.daemons.length = 0;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }

  private start(command: string, args: string[]): void {
    const daemon = spawn(command, args, { env: this.env, stdio: 'ignore' });
    daemon.on('error', () => undefined);
    this.daemons.push(daemon);
  }

  private async waitFor(done: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; slurmctld log:\n${this.controllerLog().split('\n').slice(-15).join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
