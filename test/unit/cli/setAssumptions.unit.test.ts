import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { FileEstimate } from '../../../src/core/estimate/fileEstimate';
import { REPO_ROOT } from '../fixtures';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

function run(...args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 15_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function json(...args: string[]): FileEstimate {
  const { code, stdout, stderr } = run(...args, '--json');
  assert.equal(code, 0, stderr);
  return JSON.parse(stdout) as FileEstimate;
}

describe('gpu-estimate --set NAME=VALUE (the built CLI)', () => {
  const yamlGpt = 'test/fixtures/configs/yaml_gpt/train.py';
  const wordLm = 'test/fixtures/configs/word_lm/main.py';

  it('prints the values read from a config file with their file and line', () => {
    const { code, stdout, stderr } = run(yamlGpt);
    assert.equal(code, 0, stderr);
    // The CLI's project root is this repository's (its .git): paths are shown from there.
    assert.match(stdout, /\n {2}configuration read: from test\/fixtures\/configs\/yaml_gpt\/configs\/base\.yaml: model\.vocab_size = 96 \(line 3\), model\.block_size = 256 \(line 4\), model\.n_layer = 6 \(line 5\), .*, train\.batch_size = 48 \(line 11\), train\.max_iters = 5000 \(line 13\)\n/);
  });

  it('replaces a config key, and the estimate follows', () => {
    const before = json(yamlGpt).models[0]!;
    const after = json(yamlGpt, '--set', 'n_layer=12', '--set', 'train.batch_size=8').models[0]!;
    assert.equal(before.batchSize, 48);
    assert.equal(after.batchSize, 8);
    assert.ok(after.params > before.params);
    assert.deepEqual(
      after.assumptions.find((a) => a.key === 'model.n_layer'),
      // Read on line 45: `CharGPT(**cfg["model"])`.
      { name: 'config', key: 'model.n_layer', value: '12', origin: 'set by the user, in place of test/fixtures/configs/yaml_gpt/configs/base.yaml line 5', line: 45 },
    );
  });

  it('pins a size that comes from the data', () => {
    const { code, stdout, stderr } = run(wordLm);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /vocabulary size \(ntokens\) 50257 \(from the data \(len\(corpus\.dictionary\)\); assumed as GPT-2's BPE vocabulary: pin it with --set ntokens=N or the gpuEstimator\.assume setting, line 31\)/);
    const pinned = json(wordLm, '--set', 'ntokens=10000').models[0]!;
    assert.equal(pinned.assumptions.find((a) => a.name === 'dataDerived')?.value, '10000');
  });

  it('refuses a malformed --set with one line and exit code 2', () => {
    const { code, stderr } = run(yamlGpt, '--set', 'n_layer');
    assert.equal(code, 2);
    assert.match(stderr, /--set needs NAME=VALUE \(batch_size=64, model\.n_layer=12, BATCH_SIZE=1000\), got "n_layer"/);
  });
});
