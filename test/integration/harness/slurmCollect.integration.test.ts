import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../../unit/fixtures';
import { SlurmCluster } from '../slurmCluster';

const PYTHON = '/usr/bin/python3';
const CONFIG = path.join(REPO_ROOT, 'harness', 'configs', 'cpu-smoke.yaml');

interface Event {
  readonly event: string;
  readonly [key: string]: unknown;
}

/** `python3 -m harness collect --slurm` as a process: its progress lines as they come, and its exit code. */
function collect(cluster: SlurmCluster, out: string, extra: readonly string[], onEvent: (event: Event) => void = () => undefined): Promise<{ code: number | null; events: Event[]; stderr: string }> {
  const child = spawn(PYTHON, ['-m', 'harness', 'collect', '--config', CONFIG, '--out', out, '--device', 'cpu', '--seconds', '1', '--slurm', ...extra], { cwd: REPO_ROOT, env: cluster.env });
  const events: Event[] = [];
  let pending = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const event = JSON.parse(pending.slice(0, newline)) as Event;
      pending = pending.slice(newline + 1);
      events.push(event);
      onEvent(event);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, events, stderr })));
}

const rows = (out: string) =>
  readFileSync(path.join(out, 'results.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { id: string; status: string; device: string });

describe('harness collect --slurm on a real SLURM cluster (--device cpu)', function () {
  this.timeout(600_000);
  const cluster = new SlurmCluster();
  let out = '';

  before(async function () {
    const missing = SlurmCluster.missing();
    if (missing) throw new Error(`SLURM integration tests: ${missing}`);
    out = mkdtempSync(path.join(os.tmpdir(), 'gpu-estimator-collect-'));
    await cluster.setUp(undefined, 2);
  });

  after(async () => {
    await cluster.dispose();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('submits one array task per share, merges their rows, and resumes only what a failed task left undone', async () => {
    // Held at submission, so the test can break one task's share before the array runs.
    const first = await collect(cluster, out, ['--tasks', '2', '--sbatch-arg=--hold'], (event) => {
      if (event.event !== 'submitted') return;
      const folder = event.folder as string;
      unlinkSync(path.join(folder, 'share-1.ids'));
      execFileSync('scontrol', ['release', String(event.jobId)], { env: cluster.env });
    });
    const submitted = first.events.find((e) => e.event === 'submitted')!;
    assert.ok(submitted, first.stderr);
    assert.equal(submitted.tasks, 2);
    const total = first.events.find((e) => e.event === 'start')!.total as number;
    assert.equal(submitted.configs, total);
    assert.equal(first.code, 4, first.stderr);
    const end = first.events.find((e) => e.event === 'end')!;
    assert.ok((end.missing as number) > 0 && (end.done as number) > 0, JSON.stringify(end));
    assert.match(first.stderr, /task\(s\) 1 left \d+ configuration\(s\) undone \(see \S+task-1\.log\); run the same command again to resume them/);
    const afterFirst = rows(out);
    assert.equal(afterFirst.length, end.done);
    assert.ok(first.events.filter((e) => e.event === 'config').length === afterFirst.length);

    const second = await collect(cluster, out, ['--tasks', '2']);
    assert.equal(second.code, 0, second.stderr);
    const resubmitted = second.events.find((e) => e.event === 'submitted')!;
    assert.equal(resubmitted.configs, end.missing, 'only the undone configurations go to the second array');
    const all = rows(out);
    assert.equal(all.length, total);
    assert.equal(new Set(all.map((row) => row.id)).size, total, 'each configuration once');
    assert.ok(all.every((row) => row.device === 'cpu' && ['ok', 'oom', 'error'].includes(row.status)), JSON.stringify(all.map((r) => r.status)));
    assert.equal(readdirSync(path.join(out, 'slurm')).length, 2, 'one folder per submission');

    const third = await collect(cluster, out, ['--tasks', '2']);
    assert.equal(third.code, 0);
    assert.equal(third.events.some((e) => e.event === 'submitted'), false, 'nothing left to submit');
  });
});
