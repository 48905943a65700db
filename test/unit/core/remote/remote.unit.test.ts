import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as fc from 'fast-check';
import { fetchBatches, mergeWithoutOverwriting, parseListing } from '../../../../src/core/remote/download';
import { RemoteError } from '../../../../src/core/remote/errors';
import { hostDirectoryName, normalizeRemoteDir, shellQuote, validateHost } from '../../../../src/core/remote/host';
import { checkPreflight, parsePreflight } from '../../../../src/core/remote/preflight';
import { NO_PROGRESS, applyEvents, describeProgress, parseEvents } from '../../../../src/core/remote/progress';
import { newRunId } from '../../../../src/core/remote/remoteRun';
import { LIST_RESULTS } from '../../../../src/core/remote/scripts';
import { scpArgs, sshArgs, sshFailure } from '../../../../src/core/remote/ssh';
import { sshConfigHosts } from '../../../../src/core/remote/sshConfigHosts';
import { readManifest } from '../../fixtures';

describe('remote: hosts, quoting and ssh arguments', () => {
  it('accepts ssh aliases, host names and user@host', () => {
    for (const host of ['gpu-box', 'a100.example.org', 'me@gpu-1', 'node_7', '10.0.0.5']) assert.equal(validateHost(host), host);
    assert.equal(hostDirectoryName('me@gpu-1'), 'me_at_gpu-1');
  });

  it('refuses anything a shell or ssh would read as more than a host', () => {
    for (const host of ['', ' ', 'a;b', 'a&&b', '$(id)', '`id`', 'a b', '-oProxyCommand=x', 'a|b', "a'b", 'a"b', 'h:/p', 'a\nb', 'a/b', '@h', 'u@', 'a>b']) {
      assert.throws(() => validateHost(host), (error: unknown) => error instanceof RemoteError && error.kind === 'invalid-host', JSON.stringify(host));
    }
  });

  it('single-quotes any value so that sh reads it back unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\0')), (value) => {
        assert.equal(execFileSync('sh', ['-c', `printf %s ${shellQuote(value)}`], { encoding: 'utf8' }), value);
      }),
      { numRuns: 60 },
    );
  });

  it('builds ssh and scp arguments as arrays, ending options before the host, with BatchMode and no host-key override', () => {
    const args = sshArgs({ host: 'gpu', configFile: '/tmp/cfg' }, 'echo "$1"', ["it's"]);
    assert.deepEqual(args.slice(-3), ['--', 'gpu', `sh -c 'echo "$1"' sh 'it'\\''s'`]);
    assert.ok(args.includes('BatchMode=yes') && args.includes('-F') && args.includes('/tmp/cfg'));
    assert.ok(!args.join(' ').includes('StrictHostKeyChecking'));
    assert.deepEqual(scpArgs({ host: 'me@gpu' }, ['remote:runs/x/out', '/local/a'], '/local/dest').slice(-4), ['--', 'me@gpu:runs/x/out', '/local/a', '/local/dest']);
  });

  it('normalizes remote directories and refuses odd ones', () => {
    assert.equal(normalizeRemoteDir('~/.gpu-estimator/'), '.gpu-estimator');
    assert.equal(normalizeRemoteDir('/scratch/me/runs'), '/scratch/me/runs');
    for (const dir of ['', '~/a b', '/x/../y', "~/a'b", '-rf', '$HOME/x']) assert.throws(() => normalizeRemoteDir(dir), RemoteError, dir);
  });

  it('classifies ssh failures into plain messages', () => {
    const fail = (stderr: string) => sshFailure('gpu', { code: 255, signal: null, stdout: '', stderr }, 'x');
    assert.equal(fail('Host key verification failed.').kind, 'host-key');
    assert.equal(fail('@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@').kind, 'host-key');
    assert.equal(fail('me@gpu: Permission denied (publickey).').kind, 'auth');
    assert.equal(fail('ssh: connect to host 10.0.0.5 port 22: Connection refused').kind, 'unreachable');
    assert.match(fail('ssh: Could not resolve hostname gpu: Name or service not known').message, /^Cannot reach gpu \(ssh: Could not resolve hostname/);
    assert.equal(fail('something else').kind, 'ssh-failed');
  });

  it('lists concrete hosts of an ssh config, without patterns', () => {
    const text = 'Host *\n  ForwardAgent no\nHost gpu-a gpu-b\n  HostName 10.0.0.1\nhost=lab\nHost !bad *.corp gpu-a\n  Port 2222\n';
    assert.deepEqual(sshConfigHosts(text), ['gpu-a', 'gpu-b', 'lab']);
  });

  it('names runs by time, kind and a random suffix', () => {
    assert.match(newRunId('collect', new Date('2025-03-04T05:06:07Z')), /^20250304-050607-collect-[0-9a-f]{6}$/);
  });
});

describe('remote: pre-flight', () => {
  const ok = 'ssh=ok\npath=/usr/bin:/bin\npython=/usr/bin/python3\npythonVersion=3.11.2\ntorch=2.3.1\ncudaAvailable=True\nnvidiaSmiExit=0\ngpu=NVIDIA A100-SXM4-40GB, 40960 MiB\ndcgmi=present\nsetsid=present\ndf=/dev/sda1 100000000 2000000 97948000 3% /home\n';

  it('parses what the script prints', () => {
    const report = parsePreflight(ok);
    assert.deepEqual(report, {
      python: '/usr/bin/python3', pythonVersion: '3.11.2', torch: '2.3.1', torchError: null, cudaAvailable: true, nvidiaSmi: 'ok',
      gpus: ['NVIDIA A100-SXM4-40GB, 40960 MiB'], dcgmi: true, setsid: true, sbatch: false, freeMiB: 95652, remotePath: '/usr/bin:/bin',
    });
    assert.deepEqual(checkPreflight(report, 'cuda', 'gpu', 'python3'), []);
  });

  const problem = (text: string, device: 'cuda' | 'cpu' = 'cuda') => {
    try {
      checkPreflight(parsePreflight(text), device, 'gpu', 'python3');
    } catch (error) {
      return error as RemoteError;
    }
    return undefined;
  };

  it('says what is missing, in order', () => {
    assert.match(problem('path=/bin\npython=missing\n')!.message, /^No Python on gpu: "python3" is not on its PATH \(\/bin\)/);
    assert.equal(problem(ok.replace('3.11.2', '3.8.10'))!.kind, 'old-python');
    assert.match(problem(ok.replace('torch=2.3.1', "torch=missing\ntorchError=ModuleNotFoundError: No module named 'torch'"))!.message, /PyTorch is not installed for \/usr\/bin\/python3 on gpu \(ModuleNotFoundError/);
    assert.equal(problem(ok.replace('setsid=present\n', ''))!.kind, 'no-setsid');
    assert.equal(problem(ok.replace('97948000', '1000'))!.kind, 'disk');
    assert.match(problem(ok.replace('nvidiaSmiExit=0\ngpu=NVIDIA A100-SXM4-40GB, 40960 MiB', 'nvidiaSmi=missing'))!.message, /nvidia-smi was not found on gpu/);
    assert.match(problem(ok.replace('nvidiaSmiExit=0\ngpu=NVIDIA A100-SXM4-40GB, 40960 MiB', 'nvidiaSmiExit=9\ngpu=NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver.'))!.message, /nvidia-smi fails on gpu: NVIDIA-SMI has failed/);
    assert.equal(problem(ok.replace('cudaAvailable=True', 'cudaAvailable=False'))!.kind, 'no-gpu');
  });

  it('a SLURM login host needs sbatch, not a GPU: the GPU checks happen on the compute nodes', () => {
    const login = ok.replace('nvidiaSmiExit=0\ngpu=NVIDIA A100-SXM4-40GB, 40960 MiB', 'nvidiaSmi=missing').replace('cudaAvailable=True', 'cudaAvailable=False');
    const noSbatch = (() => {
      try {
        checkPreflight(parsePreflight(login), 'cuda', 'login', 'python3', 'slurm');
      } catch (error) {
        return error as RemoteError;
      }
      return undefined;
    })();
    assert.equal(noSbatch?.kind, 'no-slurm');
    assert.match(noSbatch.message, /^login has no sbatch on its PATH \(\/usr\/bin:\/bin\)/);
    const notes = checkPreflight(parsePreflight(`${login}sbatch=present\n`), 'cuda', 'login', 'python3', 'slurm');
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, /^SLURM login host: the configurations go to a job array; the GPU checks happen on the compute nodes/);
    assert.equal(problem(`${login}sbatch=present\n`)!.kind, 'no-gpu', 'without the scheduler the same host has no GPU');
  });

  it('a CPU run skips the GPU checks and says so', () => {
    const notes = checkPreflight(parsePreflight(ok.replace('nvidiaSmiExit=0', 'nvidiaSmi=missing')), 'cpu', 'gpu', 'python3');
    assert.match(notes[0]!, /^CPU test run: the GPU checks are skipped/);
  });
});

describe('remote: progress lines', () => {
  it('keeps a partial last line for the next poll and counts bytes', () => {
    const chunk = '{"event":"start","total":3,"done":1}\n{"event":"config","index":2,"total":3,"done":2,"status":"oom","etaSeconds":61}\n{"event":"con';
    const { events, consumedBytes } = parseEvents(chunk);
    assert.equal(events.length, 2);
    assert.equal(consumedBytes, chunk.lastIndexOf('\n') + 1);
    const progress = applyEvents(NO_PROGRESS, events);
    assert.deepEqual([progress.done, progress.total, progress.oom, progress.etaSeconds], [2, 3, 1, 61]);
    assert.equal(describeProgress(progress), '2 of 3 configurations, 1 OOM, about 1 min left');
    const ended = applyEvents(progress, [{ event: 'config', done: 3, total: 3, status: 'ok', etaSeconds: 0 }, { event: 'end' }]);
    assert.equal(ended.ended, true);
    assert.equal(describeProgress(ended), '3 of 3 configurations, 1 OOM');
  });
});

describe('remote: downloads never overwrite', () => {
  it('adds new files, leaves identical ones, and writes changed ones beside the old', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'merge-'));
    try {
      const source = path.join(root, 'src');
      const destination = path.join(root, 'dst');
      mkdirSync(path.join(source, 'out'), { recursive: true });
      mkdirSync(path.join(destination, 'out'), { recursive: true });
      writeFileSync(path.join(source, 'out', 'results.jsonl'), 'new\n');
      writeFileSync(path.join(source, 'same.txt'), 'same');
      writeFileSync(path.join(source, 'fresh.txt'), 'fresh');
      writeFileSync(path.join(destination, 'out', 'results.jsonl'), 'old\n');
      writeFileSync(path.join(destination, 'out', 'results.2.jsonl'), 'older\n');
      writeFileSync(path.join(destination, 'same.txt'), 'same');
      const merge = mergeWithoutOverwriting(source, destination);
      assert.deepEqual(merge.added, ['fresh.txt']);
      assert.deepEqual(merge.unchanged, ['same.txt']);
      assert.deepEqual(merge.kept, [[path.join('out', 'results.jsonl'), path.join('out', 'results.3.jsonl')]]);
      assert.equal(readFileSync(path.join(destination, 'out', 'results.jsonl'), 'utf8'), 'old\n');
      assert.equal(readFileSync(path.join(destination, 'out', 'results.3.jsonl'), 'utf8'), 'new\n');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('remote: the results listing is untrusted', () => {
  const wanted = ['out', 'models', 'stdout.jsonl'];

  it('lists regular files and tags links, FIFOs and linked folders without following them', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'listing-'));
    try {
      mkdirSync(path.join(root, 'out', 'scripts'), { recursive: true });
      mkdirSync(path.join(root, 'models'));
      writeFileSync(path.join(root, 'out', 'results.jsonl'), '{}\n');
      writeFileSync(path.join(root, 'out', 'scripts', 'mlp-1.py'), '');
      writeFileSync(path.join(root, 'out', 'two\nlines'), '');
      writeFileSync(path.join(root, 'stdout.jsonl'), '');
      symlinkSync('/etc', path.join(root, 'out', 'etc'));
      symlinkSync('/etc/hostname', path.join(root, 'models', 'mlp.onnx'));
      execFileSync('mkfifo', [path.join(root, 'out', 'pipe')]);
      const stdout = execFileSync('sh', ['-c', LIST_RESULTS, 'sh', root, ...wanted, 'stderr.log'], { encoding: 'utf8' });
      const listing = parseListing(stdout, wanted);
      assert.deepEqual(listing.files, ['out/results.jsonl', 'out/scripts/mlp-1.py', 'stdout.jsonl']);
      assert.deepEqual(listing.skipped.sort(), ['"out/two\\nlines": not a plain relative path in the run folder', 'models/mlp.onnx: a symbolic link', 'out/etc: a symbolic link', 'out/pipe: not a regular file']);
      const gone = spawnSync('sh', ['-c', LIST_RESULTS, 'sh', path.join(root, 'gone'), ...wanted], { encoding: 'utf8' });
      assert.deepEqual([gone.status, gone.stdout], [3, '']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('fetches nothing that could leave the destination or that scp could read as another path', () => {
    const hostile = ['/etc/passwd', '../x', 'out/../../x', 'out/./x', 'out//x', 'other/x', 'out/.ssh/x', 'out/*', 'out/a b', "out/a'b", 'out/\u001b[31mred', 'out/x\\y', 'out/'];
    const listing = parseListing(hostile.map((name) => `f${name}\0`).join('') + 'fout/ok.jsonl\0fout/-dash\0', wanted);
    // A leading dash is harmless: every source reaches scp as host:<run directory>/<path>.
    assert.deepEqual(listing.files, ['out/-dash', 'out/ok.jsonl']);
    assert.equal(listing.skipped.length, hostile.length);
    assert.ok(listing.skipped.every((note) => note.endsWith(': not a plain relative path in the run folder')));
  });

  it('fetches each folder with as few scp calls as fit a Windows command line', () => {
    const files = ['out/a', 'out/scripts/s1', 'out/b', 'out/scripts/s2', 'stdout.jsonl'];
    assert.deepEqual(fetchBatches(files, 10), [
      { folder: 'out', files: ['out/a', 'out/b'] },
      { folder: 'out/scripts', files: ['out/scripts/s1', 'out/scripts/s2'] },
      { folder: '.', files: ['stdout.jsonl'] },
    ]);
    const many = Array.from({ length: 1000 }, (_, i) => `out/scripts/cnn-${String(i).padStart(12, '0')}.py`);
    const batches = fetchBatches(many, 60);
    assert.deepEqual(batches.flatMap((b) => b.files), many);
    assert.ok(batches.length > 1 && batches.every((b) => b.files.reduce((sum, f) => sum + 60 + f.length + 1, 0) <= 24_000));
    assert.ok(!scpArgs({ host: 'gpu' }, ['remote:x'], '/d', false).includes('-r'));
  });
});

describe('remote commands in package.json', () => {
  const manifest = readManifest();
  it('are contributed, need a trusted workspace, and the manifest says trust is limited', () => {
    const titles = Object.fromEntries(manifest.contributes.commands.map((c) => [c.command, [c.title, c.enablement]]));
    assert.deepEqual(titles['gpuEstimator.collectRemote'], ['Collect training data on a remote GPU host', 'isWorkspaceTrusted']);
    assert.deepEqual(titles['gpuEstimator.measureRemote'], ['Measure on remote GPU host', 'isWorkspaceTrusted']);
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('gpuEstimator.remote.host'));
  });
});
