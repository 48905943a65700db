import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseCliArguments, UsageError } from '../../../../src/cli/arguments';
import { estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import { withLearnedEstimates } from '../../../../src/core/estimate/learnedPass';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { packagedParserAssets } from '../../../../src/core/parsing/parserAssets';
import { createPythonParser } from '../../../../src/core/parsing/pythonParser';
import type { ModelCard } from '../../../../src/core/estimators/onnx/modelCard';
import { OnnxRunner } from '../../../../src/core/estimators/onnx/onnxRunner';
import type { FileEstimate } from '../../../../src/core/estimate/fileEstimate';
import { ENSEMBLE_CNN_SCRIPT, REPO_ROOT } from '../../fixtures';

const MODELS = path.join(REPO_ROOT, 'models');
type Card = ModelCard & Record<string, unknown>;
const bundledCard = (family: string): Card => JSON.parse(readFileSync(path.join(MODELS, `${family}.card.json`), 'utf8')) as Card;

/** A temp models folder with a copy of the bundled MLP model and `card` as its card. */
function userFolder(card: unknown, onnx?: Buffer): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-estimator-user-models-'));
  if (onnx) writeFileSync(path.join(dir, 'mlp.onnx'), onnx);
  else copyFileSync(path.join(MODELS, 'mlp.onnx'), path.join(dir, 'mlp.onnx'));
  writeFileSync(path.join(dir, 'mlp.card.json'), typeof card === 'string' ? card : JSON.stringify(card));
  return dir;
}

function runnerFor(dir: string): { runner: OnnxRunner; warnings: string[] } {
  const warnings: string[] = [];
  const runner = new OnnxRunner({ modelsDir: MODELS, userModelsDir: dir, executionProvider: 'cpu', log: (level, message) => level === 'warning' && warnings.push(message) });
  return { runner, warnings };
}

describe('a user models folder', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the user copy of a family (its card is the one read) and says which file ran; other families stay bundled', async () => {
    const card = bundledCard('mlp');
    const changedQuantile = card.outputs.memory.pointQuantile === 0.6 ? 0.65 : 0.6;
    const dir = userFolder({ ...card, outputs: { ...card.outputs, memory: { ...card.outputs.memory, pointQuantile: changedQuantile } } });
    dirs.push(dir);
    const { runner, warnings } = runnerFor(dir);
    try {
      const mlp = await runner.model('mlp');
      assert.equal(mlp?.source, 'user');
      assert.equal(mlp?.modelPath, path.join(dir, 'mlp.onnx'));
      assert.equal(mlp?.card.outputs.memory.pointQuantile, changedQuantile);
      const cnn = await runner.model('cnn');
      assert.equal(cnn?.source, 'bundled');
      assert.equal(cnn?.modelPath, 'models/cnn.onnx');
      assert.deepEqual(warnings, []);

      const parser = await createPythonParser(packagedParserAssets(REPO_ROOT));
      const source = readFileSync(path.join(REPO_ROOT, 'examples', 'mlp_mnist.py'), 'utf8');
      const analytical = estimateSource('examples/mlp_mnist.py', source, parser, { gpu: defaultGpuProfile(), safetyMargin: 0.1 });
      const learned = await withLearnedEstimates(analytical, runner, { safetyMargin: 0.1 });
      const model = learned.models.find((m) => m.family === 'mlp');
      assert.ok(model, 'examples/mlp_mnist.py has an MLP');
      assert.equal(model.memory.method, 'ensemble');
      assert.equal(model.memory.ensemble?.model, path.join(dir, 'mlp.onnx'));
      assert.equal(model.memory.ensemble?.pointQuantile, changedQuantile);
    } finally {
      await runner.dispose();
    }
  });

  const broken: [string, () => string, RegExp][] = [
    ['a card that is not JSON', () => userFolder('{"family": "mlp",'), /not valid JSON/],
    ['a card of another feature definition', () => userFolder({ ...bundledCard('mlp'), featureDefinitionVersion: bundledCard('mlp').featureDefinitionVersion + 1 }), /trained on feature definition \d+, this build computes \d+/],
    ['a card with fewer features than this build computes', () => userFolder({ ...bundledCard('mlp'), features: bundledCard('mlp').features.slice(1) }), /lists \d+ features, this build computes \d+/],
    ['a card for another family', () => userFolder({ ...bundledCard('cnn'), file: 'mlp.onnx' }), /for family "cnn", not mlp/],
    ['a card whose output the graph lacks', () => userFolder({ ...bundledCard('mlp'), outputs: { ...bundledCard('mlp').outputs, memory: { ...bundledCard('mlp').outputs.memory, name: 'memory_gib' } } }), /no output memory_gib/],
    ['a card naming a file outside its folder', () => userFolder({ ...bundledCard('mlp'), file: '../mlp.onnx' }), /must name an \.onnx file beside it/],
    ['a graph that is not ONNX', () => userFolder(bundledCard('mlp'), readFileSync(path.join(MODELS, 'mlp.onnx')).subarray(0, 5000)), /cannot be used/],
    ['a card whose feature names differ from the ones this build computes', () => userFolder({ ...bundledCard('mlp'), features: bundledCard('mlp').features.map((f, i) => (i === 0 ? { ...f, name: 'batch' } : f)) }), /feature 0 is batch/],
  ];
  for (const [what, make, reason] of broken) {
    it(`falls back to the bundled model, with one warning, for ${what}`, async () => {
      const dir = make();
      dirs.push(dir);
      const { runner, warnings } = runnerFor(dir);
      try {
        const mlp = await runner.model('mlp');
        assert.equal(mlp?.source, 'bundled');
        assert.equal(mlp?.modelPath, 'models/mlp.onnx');
        assert.deepEqual(mlp?.card.outputs.memory.pointQuantile, bundledCard('mlp').outputs.memory.pointQuantile);
        const result = await runner.run('mlp', [bundledCard('mlp').selfTest!.features[0]!]);
        assert.equal(result?.columns['memory_mib'] ?? result?.columns[bundledCard('mlp').outputs.memory.name], 3);
        await runner.model('mlp');
        assert.equal(warnings.length, 1, warnings.join('\n'));
        assert.match(warnings[0]!, /Your mlp model in .* cannot be used/);
        assert.match(warnings[0]!, reason);
        assert.match(warnings[0]!, /the bundled mlp model runs instead/);
      } finally {
        await runner.dispose();
      }
    });
  }

  it('gpu-estimate --models DIR runs the user copy and names it in the JSON', () => {
    assert.throws(() => parseCliArguments(['x.py', '--models', '']), UsageError);
    assert.equal(parseCliArguments(['x.py', '--models', 'my-models']).models, 'my-models');
    const card = bundledCard('cnn');
    const dir = mkdtempSync(path.join(tmpdir(), 'gpu-estimator-user-models-'));
    dirs.push(dir);
    copyFileSync(path.join(MODELS, 'cnn.onnx'), path.join(dir, 'cnn.onnx'));
    writeFileSync(path.join(dir, 'cnn.card.json'), JSON.stringify({ ...card, outputs: { ...card.outputs, memory: { ...card.outputs.memory, pointQuantile: 0.55 } } }));
    const cli = path.join(REPO_ROOT, 'dist', 'cli.js');
    const result = spawnSync(process.execPath, [cli, ENSEMBLE_CNN_SCRIPT, '--json', '--execution-provider', 'cpu', '--models', dir], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    const model = (JSON.parse(result.stdout) as FileEstimate).models[0]!;
    assert.equal(model.memory.ensemble?.model, path.join(dir, 'cnn.onnx'));
    assert.equal(model.memory.ensemble?.pointQuantile, 0.55);
    const missing = spawnSync(process.execPath, [cli, ENSEMBLE_CNN_SCRIPT, '--models', path.join(dir, 'nope')], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--models: no folder/);
  });
});
