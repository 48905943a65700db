import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { parseCliArguments, UsageError } from '../../../src/cli/arguments';
import type { FileEstimate } from '../../../src/core/estimate/fileEstimate';
import { ENSEMBLE_CNN_SCRIPT, REPO_ROOT } from '../fixtures';

describe('gpu-estimate and the learned estimators', () => {
  it('takes --execution-provider auto, cuda or cpu (default auto)', () => {
    assert.equal(parseCliArguments(['x.py']).executionProvider, 'auto');
    assert.equal(parseCliArguments(['x.py', '--execution-provider', 'cpu']).executionProvider, 'cpu');
    assert.throws(() => parseCliArguments(['x.py', '--execution-provider', 'gpu']), (e: unknown) => e instanceof UsageError && /auto, cuda, cpu/.test(e.message));
  });

  it('reports the ensemble estimate in JSON with the provider that ran it, and keeps the analytical one beside it', () => {
    const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli.js'), ENSEMBLE_CNN_SCRIPT, '--json', '--execution-provider', 'cpu'], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, '');
    const model = (JSON.parse(result.stdout) as FileEstimate).models[0]!;
    assert.equal(model.memory.method, 'ensemble');
    assert.equal(model.memory.ensemble?.executionProvider, 'cpu');
    assert.equal(model.memory.ensemble?.model, 'models/cnn.onnx');
    assert.equal(typeof model.memory.ensemble?.analyticalMiB, 'number');
    assert.ok(model.memory.lowMiB! <= model.memory.estimateMiB! && model.memory.estimateMiB! <= model.memory.highMiB!);
    assert.ok(['low', 'medium', 'high'].includes(model.utilization.smact!));
  });
});
