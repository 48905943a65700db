import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { FileEstimate } from '../../../src/core/estimate/fileEstimate';
import { REPO_ROOT } from '../fixtures';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

function run(...args: string[]) {
  // The timeout turns a hang into a failure (a null status) instead of a stuck test run.
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 15_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('gpu-estimate (the built CLI, as a process)', () => {
  const examples = readdirSync(path.join(REPO_ROOT, 'examples')).filter((f) => f.endsWith('.py'));

  it('has examples to run', () => assert.ok(examples.length >= 3, examples.join(', ')));

  for (const example of examples) {
    it(`prints the JSON contract for examples/${example}`, () => {
      const { code, stdout, stderr } = run(`examples/${example}`, '--json');
      assert.equal(code, 0, stderr);
      const report = JSON.parse(stdout) as FileEstimate;
      assert.equal(report.file, `examples/${example}`);
      assert.deepEqual(Object.keys(report.gpu).sort(), ['id', 'memoryMiB', 'name']);
      assert.ok(report.models.length >= 1);
      for (const model of report.models) {
        for (const key of ['name', 'line', 'params', 'batchSize', 'family', 'memory', 'horusMiB', 'utilization', 'fits', 'warnings']) {
          assert.ok(key in model, `${key} in ${example}`);
        }
        for (const key of ['estimateMiB', 'lowMiB', 'highMiB', 'bin']) assert.ok(key in model.memory, key);
        assert.deepEqual(Object.keys(model.utilization).sort(), ['drama', 'smact', 'smocc']);
        assert.ok(model.params > 0);
        assert.equal(typeof model.memory.estimateMiB, 'number');
        assert.equal(typeof model.fits, 'boolean');
      }
    });
  }

  it('estimates a script that builds a catalog model like a hand-written one, and names an unknown one', () => {
    const built = run('test/fixtures/catalog/cifar10_resnet18_finetune.py', '--json');
    assert.equal(built.code, 0, built.stderr);
    const model = (JSON.parse(built.stdout) as FileEstimate).models[0]!;
    assert.deepEqual(model.architecture && [model.architecture.library, model.architecture.name], ['torchvision', 'resnet18']);
    assert.equal(model.params, 11181642);
    assert.equal(model.layerTable.rows.at(-1)?.path, 'fc');
    assert.deepEqual(model.layerTable.rows.at(-1)?.outputShape, [10]);
    assert.equal(typeof model.memory.estimateMiB, 'number');
    const unknown = run('test/fixtures/scripts/unknown_catalog_models.py');
    assert.equal(unknown.code, 0, unknown.stderr);
    assert.match(unknown.stdout, /torchvision catalog has no model "maxvit_t"/);
    assert.match(unknown.stdout, /timm catalog has no model "resnet5"; did you mean resnet50/);
    assert.match(unknown.stdout, /does not know the checkpoint 'bigcode\/starcoder'/);
  });

  it("points a script whose model it cannot read (diffusers' UNet2DModel) to the dry run", () => {
    const { code, stdout } = run('test/fixtures/scripts/ddpm_unconditional.py');
    assert.equal(code, 0);
    assert.match(stdout, /`diffusers` is not a file of the project/);
    assert.match(stdout, /No model to estimate\. `--dry-run` runs the script's own model and training step on the CPU/);
  });

  it('prints a readable table by default', () => {
    const { code, stdout } = run('examples/mlp_mnist.py');
    assert.equal(code, 0);
    assert.match(stdout, /^GPU memory estimate for examples\/mlp_mnist.py on A100 40GB/);
    assert.match(stdout, /model\s+line\s+family\s+params\s+batch\s+estimate\s+Horus\s+fits/);
    assert.match(stdout, /model\s+11\s+MLP\s+535\.8K\s+128\s+~1\.\d GiB/);
  });

  it('checks against another GPU and batch size, and exits 3 on OOM only with --fail-on-oom', () => {
    const ok = run('examples/mlp_mnist.py', '--json', '--gpu', 't4-16gb');
    assert.equal((JSON.parse(ok.stdout) as FileEstimate).gpu.memoryMiB, 15360);
    const huge = ['examples/mlp_mnist.py', '--json', '--gpu', 't4-16gb', '--batch-size', '10000000'];
    const warned = run(...huge);
    assert.equal(warned.code, 0);
    assert.equal((JSON.parse(warned.stdout) as FileEstimate).models[0]?.fits, false);
    assert.equal(run(...huge, '--fail-on-oom').code, 3);
    assert.equal(run('examples/mlp_mnist.py', '--fail-on-oom').code, 0);
  });

  it("gives a script's models together (one process): a line of text, `process` in --json, and exit 3 when only together they do not fit", () => {
    const gan = ['test/fixtures/frameworks/gan_separate_optimizers.py', '--gpu', 't4-16gb', '--batch-size', '3000'];
    const text = run(...gan);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /\nwhole script: netD \+ netG in one process: ~\d+\.\d GiB; does not fit T4 16GB \(out of memory\); largest batch that fits them together: \d+\n/);
    const json = JSON.parse(run(...gan, '--json').stdout) as FileEstimate;
    assert.ok(json.models.every((model) => model.fits === true));
    assert.equal(json.process?.fits, false);
    assert.ok(json.process.maxBatchSize! < Math.min(...json.models.map((model) => model.maxBatchSize!)));
    assert.equal(run(...gan, '--fail-on-oom').code, 3);
    assert.equal(run(...gan.slice(0, 3), '--fail-on-oom').code, 0);
    assert.equal((JSON.parse(run('examples/mlp_mnist.py', '--json').stdout) as FileEstimate).process, undefined);
  });

  it('says what fits a fine-tune: the longest sequence and the changes that make it fit, in text and in --json', () => {
    const script = 'test/fixtures/llm/full_finetune_7b_eager.py';
    const text = run(script, '--gpu', 'rtx4090-24gb');
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /\n {2}not even 64 tokens per sequence fit at batch 4\n {2}fits with: gradient checkpointing \+ QLoRA \(4-bit NF4 and LoRA r=8\): \d+\.\d GiB, changes the training;/);
    const json = run(script, '--gpu', 'rtx4090-24gb', '--batch-size', '1', '--json');
    const [model] = (JSON.parse(json.stdout) as FileEstimate).models as unknown as { fits: boolean; fineTuning: { batch: number; remedies: { changes: string[]; fits: boolean; driverMiB: number }[] } }[];
    assert.equal(model!.fits, false);
    assert.equal(model!.fineTuning.batch, 1);
    assert.deepEqual(model!.fineTuning.remedies.filter((r) => r.fits).map((r) => r.changes), [['fourBit']]);
    assert.ok(model!.fineTuning.remedies[0]!.driverMiB < 24564);
  });

  describe('bad input: exit 2 and one clear line, never a stack trace', () => {
    const scratch = mkdtempSync(path.join(tmpdir(), 'gpu-estimate-'));
    const binary = path.join(scratch, 'weights.py');
    writeFileSync(binary, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2, 3]));
    const text = path.join(scratch, 'notes.txt');
    writeFileSync(text, 'hello');
    after(() => rmSync(scratch, { recursive: true, force: true }));
    for (const [what, args, message] of [
      ['no file argument', [], /no file given/],
      ['a missing file', ['missing.py'], /missing\.py: no such file/],
      ['a binary file', [binary], /binary file/],
      ['a file that is not Python', [text], /not a Python file/],
      ['an unknown GPU', ['examples/mlp_mnist.py', '--gpu', 'tpu-v5'], /unknown GPU "tpu-v5"/],
      ['a bad batch size', ['examples/mlp_mnist.py', '--batch-size', '0'], /positive whole number/],
      ['an unknown option', ['examples/mlp_mnist.py', '--frobnicate'], /Unknown option/],
    ] as const) {
      it(what, () => {
        const { code, stdout, stderr } = run(...args);
        assert.equal(code, 2, stdout + stderr);
        assert.match(stderr, message);
        assert.equal(stderr.trim().split('\n').length, 1, stderr);
        assert.doesNotMatch(stderr, /\bat .*\.js:\d+/);
      });
    }

    it('a symlink to /dev/zero and a FIFO named like scripts, at once and without reading them', () => {
      symlinkSync('/dev/zero', path.join(scratch, 'zero.py'));
      execFileSync('mkfifo', [path.join(scratch, 'fifo.py')]);
      for (const [name, kind] of [['zero.py', 'a character device'], ['fifo.py', 'a FIFO \\(named pipe\\)']] as const) {
        const started = Date.now();
        const { code, stdout, stderr } = run(path.join(scratch, name));
        assert.equal(code, 2, stdout + stderr);
        assert.match(stderr, new RegExp(`${name.replace('.', '\\.')} is ${kind}, not a regular file`));
        assert.equal(stderr.trim().split('\n').length, 1, stderr);
        assert.ok(Date.now() - started < 5_000, `${name}: ${Date.now() - started} ms`);
      }
    });

    it('a real directory named like a script', () => {
      const dir = path.join(scratch, 'pkg.py');
      mkdirSync(dir);
      const { code, stderr } = run(dir);
      assert.equal(code, 2);
      assert.match(stderr, /is a directory/);
    });
  });

  it('gives a syntax-error file a model-less or partial result with a warning, exit 0', () => {
    const { code, stdout } = run('test/fixtures/scripts/half_typed.py', '--json');
    assert.equal(code, 0);
    const report = JSON.parse(stdout) as FileEstimate;
    assert.ok(report.warnings.some((w) => /syntax errors/.test(w)));
  });

  it('follows the script\'s imports of its project (--root), naming the file that defines the class', () => {
    const { code, stdout, stderr } = run('test/fixtures/projects/cifar_zoo/main.py', '--root', 'test/fixtures/projects/cifar_zoo', '--json');
    assert.equal(code, 0, stderr);
    const model = (JSON.parse(stdout) as FileEstimate).models[0]!;
    assert.deepEqual([model.name, model.params, model.batchSize, model.classFile, model.classLine], ['net', 11_173_962, 128, 'models/resnet.py', 57]);
    const human = run('test/fixtures/projects/nanogpt/train.py');
    assert.match(human.stdout, /optimizer adamw \(AdamW\(\.\.\.\), model\.py line 129\)/);
    const missing = run('test/fixtures/projects/nanogpt/train.py', '--root', 'test/fixtures/projects/no-such-folder');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--root: no folder test\/fixtures\/projects\/no-such-folder/);
  });

  it('lists GPUs and prints help', () => {
    assert.match(run('--list-gpus').stdout, /h100-80gb\s+H100 80GB\s+79\.6 GiB/);
    assert.match(run('--help').stdout, /Exit codes: 0 done, 2 bad input, 3 does not fit .*\n141 the reader of the output closed it early/);
  });

  for (const args of [['--list-gpus'], ['examples/mlp_mnist.py', '--json']]) {
    it(`ends quietly with 141 when the reader closes the output early (${args.join(' ')} | head)`, async () => {
      const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      // Closed before the child has even loaded (which takes tens of milliseconds), so its first write meets a closed pipe.
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code, signal] = (await once(child, 'close')) as [number | null, string | null];
      assert.equal(stderr, '');
      assert.deepEqual([code, signal], [141, null]);
    });
  }
});
