/**
 * The real-projects corpus (test/fixtures/realworld/) and `npm run realworld`'s runner: every
 * project's files exist, the manifest is complete and agrees with truths.json, and a crash, a hang
 * or garbage from the analyzer becomes a row of the report instead of stopping it.
 */
import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { checkCorpus, corpusDir, loadCorpus, type CorpusProject, type ExpectedModel } from '../../../scripts/realworld/corpus';
import { runWithTimeout, type CliRun } from '../../../scripts/realworld/runCli';
import { budgetHit, scoreProject } from '../../../scripts/realworld/score';
import { REPO_ROOT } from '../../unit/fixtures';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('real-projects corpus (test/fixtures/realworld)', () => {
  const corpus = loadCorpus(corpusDir(REPO_ROOT));

  it('is complete: every project has its files, a command, truths for each model, and truths.json lists nothing else', () => {
    assert.deepEqual(checkCorpus(corpus), []);
  });

  it('has at least 40 projects, covering the shapes issue 18 names', () => {
    assert.ok(corpus.projects.length >= 40, `${corpus.projects.length} projects`);
    const kinds = new Set(corpus.projects.flatMap((p) => p.kind));
    for (const kind of ['pytorch-examples', 'nanogpt', 'mingpt', 'cifar-zoo', 'vit-library', 'timm-style', 'lightning', 'datamodule', 'hf-trainer', 'accelerate', 'ddp', 'torchrun', 'yaml-config', 'json-config', 'env-config', 'argparse', 'gan', 'several-models-one-file', 'arch-by-name']) {
      assert.ok(kinds.has(kind), `no project of kind ${kind}`);
    }
    assert.ok(corpus.projects.filter((p) => p.models.length > 1).length >= 3, 'projects with two trained models');
  });

  it('holds source only: no weights or data sets, every file small text', () => {
    const allowed = /\.(py|ya?ml|json|toml)$/;
    const files = corpus.projects.flatMap((p) => filesUnder(path.join(corpus.dir, p.project)));
    assert.deepEqual(readdirSync(corpus.dir).filter((name) => !corpus.projects.some((p) => p.project === name)).sort(), ['manifest.json', 'truths.json']);
    for (const file of files) {
      const relative = path.relative(corpus.dir, file);
      assert.match(relative, allowed, relative);
      assert.ok(statSync(file).size < 32 * 1024, `${relative} is ${statSync(file).size} bytes`);
      assert.ok(!readFileSync(file).includes(0), `${relative} is binary`);
    }
  });

  it('names, for each formula truth, how it is derived; PyTorch builds all the others', () => {
    const formulas = corpus.projects.flatMap((p) => p.models.filter((m) => m.truth.source === 'formula').map((m) => `${p.project}/${m.name}`));
    assert.ok(formulas.length <= 5, `formula truths: ${formulas.join(', ')}`);
    const truths = JSON.parse(readFileSync(path.join(corpus.dir, 'truths.json'), 'utf8')) as { projects: Record<string, Record<string, { source: string }>> };
    for (const project of corpus.projects) {
      for (const model of project.models) assert.equal(truths.projects[project.project]?.[model.name]?.source, model.truth.source, `${project.project}/${model.name}`);
    }
  });

  it('checkCorpus reports a missing entry, a truth outside the vocabulary and a model without a parameter count', () => {
    const good = corpus.projects[0]!;
    const broken: CorpusProject = {
      ...good,
      entry: 'no_such_script.py',
      models: [{ ...good.models[0]!, optimizer: 'lion', precision: 'fp8' }, { ...good.models[0]!, name: 'other_model' }],
    };
    const problems = checkCorpus({ ...corpus, projects: [broken] });
    assert.ok(problems.some((p) => p.includes('entry no_such_script.py does not exist')), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('optimizer lion')), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('precision fp8')), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('other_model: truths.json has no parameter count')), problems.join('\n'));
    assert.ok(problems.some((p) => p.includes('in truths.json but not in the manifest')), problems.join('\n'));
  });
});

describe('npm run realworld: the runner', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'realworld-runner-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const script = (name: string, body: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, body);
    return file;
  };

  it('kills an analysis that hangs after the time limit and reports a hang', async () => {
    const pidFile = path.join(dir, 'hang.pid');
    const hang = script('hang.js', `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`);
    const run = await runWithTimeout(process.execPath, [hang], { cwd: dir, timeoutMs: 1500 });
    assert.equal(run.outcome, 'hang');
    assert.ok(run.ms < 10000, `${run.ms} ms`);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    assert.equal(isAlive(pid), false, 'the hung process is still running');
  });

  it('reports a crash with its exit code and stderr, and output that is not JSON as a crash', async () => {
    const crash = script('crash.js', `console.error('TypeError: boom'); process.exit(1);`);
    const run = await runWithTimeout(process.execPath, [crash], { cwd: dir, timeoutMs: 10000 });
    assert.equal(run.outcome, 'crash');
    assert.match(run.detail, /exit 1: TypeError: boom/);
    const garbage = script('garbage.js', `console.log('{ not json');`);
    const garbled = await runWithTimeout(process.execPath, [garbage], { cwd: dir, timeoutMs: 10000 });
    assert.equal(garbled.outcome, 'crash');
    assert.match(garbled.detail, /not JSON/);
    const missing = await runWithTimeout(path.join(dir, 'no-such-binary'), [], { cwd: dir, timeoutMs: 10000 });
    assert.equal(missing.outcome, 'crash');
  });

  it('reads the JSON of a run that exits 0 or 3 (does not fit)', async () => {
    const fits = script('fits.js', `console.log(JSON.stringify({ models: [] })); process.exit(3);`);
    const run = await runWithTimeout(process.execPath, [fits], { cwd: dir, timeoutMs: 10000 });
    assert.equal(run.outcome, 'done');
    assert.deepEqual(run.json, { models: [] });
  });

  it('scores a project per model: by name, else by the class at classFile:classLine; 1% on parameters; a defaulted optimizer is not right', () => {
    writeFileSync(path.join(dir, 'nets.py'), 'import torch.nn as nn\n\nclass Critic(nn.Module):\n    pass\n');
    const expected = (name: string, className: string): ExpectedModel => ({
      name, className, batchSize: 64, optimizer: 'adam', optimizerClass: 'Adam', precision: 'fp32', why: 'test', truth: { source: 'pytorch', build: 'model = None' },
    });
    const project: CorpusProject = { project: 'p', kind: ['gan'], entry: 'train.py', command: 'python train.py', models: [expected('gen', 'Generator'), expected('critic', 'Critic'), expected('absent', 'Absent')] };
    const truths = new Map([['gen', 1000], ['critic', 2000], ['absent', 5]]);
    const run: CliRun = {
      outcome: 'done', detail: '', ms: 1,
      json: {
        models: [
          { name: 'gen', classLine: null, params: 1009, batchSize: 64, optimizer: 'adam', precision: 'fp32', memory: { estimateMiB: 900 }, assumptions: [] },
          { name: 'd', classFile: 'nets.py', classLine: 3, params: 2021, batchSize: 32, optimizer: 'adam', precision: 'fp16-mixed', memory: null, assumptions: [{ name: 'optimizer', origin: 'Adam(...)' }] },
        ],
      },
    };
    const [gen, critic, absent] = scoreProject(project, dir, truths, run);
    assert.deepEqual([gen!.found, gen!.foundBy, gen!.paramsRight, gen!.batchRight, gen!.optimizerRight, gen!.optimizerDefaulted, gen!.precisionRight, gen!.estimateGiven], [true, 'name', true, true, false, true, true, true]);
    assert.deepEqual([critic!.found, critic!.foundBy, critic!.paramsRight, critic!.batchRight, critic!.optimizerRight, critic!.precisionRight, critic!.estimateGiven], [true, 'class', false, false, true, false, false]);
    assert.deepEqual([absent!.found, absent!.paramsRight, absent!.batchRight], [false, false, false]);
    const crashed = scoreProject(project, dir, truths, { outcome: 'crash', detail: 'exit 1', ms: 1 });
    assert.ok(crashed.every((s) => !s.found));
  });

  it('tells a run whose analysis ran out of time (repeated by the runner) from a complete one', () => {
    const run = (json: unknown): CliRun => ({ outcome: 'done', detail: '', ms: 1, json });
    assert.equal(budgetHit(run({ warnings: ['Analysis stopped early (analysis ran out of time); the file is too large'], models: [] })), true);
    assert.equal(budgetHit(run({ warnings: [], models: [{ warnings: ['Import of `data` (data.py) not followed: out of time or steps for imports.'] }] })), true);
    assert.equal(budgetHit(run({ warnings: ['Batch size not found in the source'], models: [{ warnings: [] }] })), false);
    assert.equal(budgetHit({ outcome: 'hang', detail: 'killed', ms: 1 }), false);
  });
});

