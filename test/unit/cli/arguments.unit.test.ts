import * as assert from 'node:assert/strict';
import { parseCliArguments, UsageError } from '../../../src/cli/arguments';

const usageError = (pattern: RegExp) => (error: unknown) => error instanceof UsageError && pattern.test(error.message) && !error.message.includes('\n');

describe('parseCliArguments', () => {
  it('takes the words after -- as the script\'s own arguments, options among them included', () => {
    const args = parseCliArguments(['main.py', '--json', '--', 'fit', '--config', 'configs/c.yaml', '--json']);
    assert.deepEqual(args.scriptArguments, ['fit', '--config', 'configs/c.yaml', '--json']);
    assert.equal(args.file, 'main.py');
    assert.deepEqual(parseCliArguments(['main.py']).scriptArguments, []);
    assert.throws(() => parseCliArguments(['colocate', 'a.py', 'b.py', '--', 'fit']), usageError(/script arguments after -- apply to one script/));
  });

  it('takes --gpus N, a whole number from 1 to 4096, for one script only', () => {
    assert.equal(parseCliArguments(['x.py', '--gpus', '8']).gpus, 8);
    assert.equal(parseCliArguments(['x.py']).gpus, undefined);
    assert.throws(() => parseCliArguments(['x.py', '--gpus', '0']), usageError(/--gpus needs a whole number from 1 to 4096, got "0"/));
    assert.throws(() => parseCliArguments(['x.py', '--gpus=2.5']), usageError(/--gpus needs a whole number/));
    assert.throws(() => parseCliArguments(['colocate', 'a.py', 'b.py', '--gpus', '2']), usageError(/--gpus does not apply to colocate/));
  });

  it('takes a batch size in plain decimal digits, exactly', () => {
    assert.equal(parseCliArguments(['x.py', '--batch-size', '12']).batchSize, 12);
    assert.equal(parseCliArguments(['x.py', '--batch-size', '9007199254740991']).batchSize, Number.MAX_SAFE_INTEGER);
  });

  for (const text of ['0x10', ' 12 ', '12 ', '1e3', '+12', '-12', '12.0', '1_000', '', '0', '00', '١٢']) {
    it(`rejects --batch-size ${JSON.stringify(text)} with one line`, () => {
      assert.throws(() => parseCliArguments(['x.py', `--batch-size=${text}`]), usageError(/--batch-size needs a positive whole number in plain decimal digits/));
    });
  }

  it('puts a value that looks like an option on one line too', () => {
    assert.throws(() => parseCliArguments(['x.py', '--batch-size', '-12']), usageError(/'--batch-size' argument is ambiguous/));
  });

  it('says when a batch size is beyond what can be estimated instead of rounding it', () => {
    for (const text of ['9007199254740992', '9007199254740993', '18446744073709551616']) {
      assert.throws(() => parseCliArguments(['x.py', '--batch-size', text]), usageError(new RegExp(`--batch-size ${text} is beyond what can be estimated \\(at most 9007199254740991\\)`)));
    }
  });

  it('takes --dry-run with its Python, steps and time limit, and refuses those without it or out of range', () => {
    const args = parseCliArguments(['x.py', '--dry-run', '--python', '/usr/bin/python3', '--steps', '5', '--timeout', '30']);
    assert.deepEqual([args.dryRun, args.python, args.dryRunSteps, args.dryRunTimeoutSeconds], [true, '/usr/bin/python3', 5, 30]);
    const defaults = parseCliArguments(['x.py', '--dry-run']);
    assert.deepEqual([defaults.python, defaults.dryRunSteps, defaults.dryRunTimeoutSeconds], ['python3', 3, 120]);
    assert.equal(parseCliArguments(['x.py']).dryRun, false);
    assert.throws(() => parseCliArguments(['x.py', '--python', 'python3']), usageError(/--python applies only with --dry-run/));
    assert.throws(() => parseCliArguments(['x.py', '--dry-run', '--steps', '0']), usageError(/--steps needs a whole number from 1 to 100/));
    assert.throws(() => parseCliArguments(['x.py', '--dry-run', '--timeout', '1h']), usageError(/--timeout needs a whole number from 1 to 3600/));
    assert.throws(() => parseCliArguments(['colocate', 'a.py', 'b.py', '--dry-run']), usageError(/--dry-run applies to one script/));
  });

  it('takes --root as the project root, and refuses an empty one', () => {
    assert.equal(parseCliArguments(['x.py', '--root', 'proj']).root, 'proj');
    assert.equal(parseCliArguments(['x.py']).root, undefined);
    assert.throws(() => parseCliArguments(['x.py', '--root', ' ']), usageError(/--root needs a folder/));
  });

  it('takes a safety margin in plain decimal digits, fractions included', () => {
    assert.equal(parseCliArguments(['x.py']).safetyMarginPercent, 10);
    assert.equal(parseCliArguments(['x.py', '--safety-margin', '0']).safetyMarginPercent, 0);
    assert.equal(parseCliArguments(['x.py', '--safety-margin', '12.5']).safetyMarginPercent, 12.5);
    for (const text of ['0x10', ' 5 ', '1e1', '', '-0', '.5', '5.', '100', 'Infinity']) {
      assert.throws(() => parseCliArguments(['x.py', `--safety-margin=${text}`]), usageError(/--safety-margin needs a percentage/), text);
    }
  });

  it('takes --set NAME=VALUE, repeated, typed, the last of a name winning', () => {
    assert.deepEqual(parseCliArguments(['x.py']).assume, {});
    assert.deepEqual(parseCliArguments(['x.py', '--set', 'vocab_size=50257', '--set=model.n_layer=12', '--set', 'DATA=/x', '--set', 'vocab_size=100']).assume, { vocab_size: 100, 'model.n_layer': 12, DATA: '/x' });
    assert.throws(() => parseCliArguments(['x.py', '--set', 'n_layer']), usageError(/--set needs NAME=VALUE/));
    assert.throws(() => parseCliArguments(['x.py', '--set', 'n_layer= ']), usageError(/--set n_layer= needs a value/));
  });
});
