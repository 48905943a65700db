import * as assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ModelCard } from '../../../../src/core/estimators/onnx/modelCard';
import { OnnxRunner, type RunnerLog } from '../../../../src/core/estimators/onnx/onnxRunner';
import { loadOnnxRuntime, type OnnxRuntime, type RuntimePackage } from '../../../../src/core/estimators/onnx/onnxRuntime';
import { FEATURE_NAMES } from '../../../../src/core/features/features';
import { REPO_ROOT } from '../../fixtures';

const MODELS = path.join(REPO_ROOT, 'models');
const cards = readdirSync(MODELS)
  .filter((f) => f.endsWith('.card.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(path.join(MODELS, f), 'utf8')) as ModelCard & { bytes: number; sha256: string });

function recorder(): { log: RunnerLog; lines: string[] } {
  const lines: string[] = [];
  return { log: (level, message) => lines.push(`${level}: ${message}`), lines };
}

describe('bundled ONNX estimators', () => {
  it('cover the MLP and CNN families, each under 1 MB and trained on the features this build computes', () => {
    assert.deepEqual(cards.map((c) => c.family), ['cnn', 'mlp']);
    for (const card of cards) {
      assert.ok(card.bytes < 1_000_000, `${card.file}: ${card.bytes} bytes`);
      assert.equal(readFileSync(path.join(MODELS, card.file)).length, card.bytes);
      assert.deepEqual(card.features.map((f) => f.name), [...FEATURE_NAMES]);
    }
  });

  for (const card of cards) {
    it(`${card.file} through onnxruntime-node gives what torch gave when it was exported (the card's self-test)`, async () => {
      const runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'cpu' });
      try {
        const result = (await runner.run(card.family, card.selfTest!.features))!;
        assert.equal(result.provider, 'cpu');
        for (const [name, expected] of Object.entries(card.selfTest!.outputs)) {
          const got = result.outputs[name]!;
          const flat = expected.flat();
          assert.equal(got.length, flat.length, name);
          flat.forEach((value, i) => assert.ok(Math.abs(got[i]! - value) <= 1e-4 * Math.max(1, Math.abs(value)), `${name}[${i}]: onnxruntime ${got[i]}, torch ${value}`));
        }
      } finally {
        await runner.dispose();
      }
    });
  }
});

describe('ONNX runner', () => {
  it('creates each session once, lazily, and says a family without a model has none', async () => {
    const runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'cpu' });
    try {
      const first = runner.model('mlp');
      assert.equal(runner.model('mlp'), first, 'the same pending session');
      assert.equal((await first)?.provider, 'cpu');
      assert.equal(await runner.model('transformer'), null);
      assert.equal(await runner.run('transformer', [[1]]), null);
    } finally {
      await runner.dispose();
    }
  });

  it('dispose releases every session even when one fails to, logs that one, and does not reject', async () => {
    const { log, lines } = recorder();
    const runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'cpu', log });
    // The loaded model is the runner's record with its session (not part of LoadedModel's type).
    const session = async (family: 'mlp' | 'cnn') => ((await runner.model(family)) as unknown as { session: { release(): Promise<void> } }).session;
    const [mlp, cnn] = [await session('mlp'), await session('cnn')];
    const release = cnn.release.bind(cnn);
    let cnnReleased = false;
    mlp.release = () => Promise.reject(new Error('release failed'));
    cnn.release = () => release().then(() => void (cnnReleased = true));
    await runner.dispose();
    assert.ok(cnnReleased, 'the session after the failing one is released too');
    assert.deepEqual(lines, ["warning: could not release the mlp model's session: release failed"]);
  });

  it('auto without the CUDA provider library runs on the CPU and says so once', async () => {
    const { log, lines } = recorder();
    const runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'auto', log, cudaInstalled: () => false });
    try {
      assert.equal((await runner.model('mlp'))?.provider, 'cpu');
      assert.equal((await runner.model('cnn'))?.provider, 'cpu');
      assert.deepEqual(lines, ['info: CUDA execution provider not installed; the estimators run on the CPU']);
    } finally {
      await runner.dispose();
    }
  });

  it('auto with CUDA reported installed tries it, and falls back to the CPU with one log line when it cannot load', async () => {
    const { log, lines } = recorder();
    const runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'auto', log, cudaInstalled: () => true });
    try {
      const loaded = await runner.model('cnn');
      await runner.model('mlp');
      // On this machine the CUDA provider library is not installed (the install script that downloads it never runs).
      assert.equal(loaded?.provider, 'cpu');
      assert.equal(lines.length, 1);
      assert.match(lines[0]!, /^info: CUDA execution provider unavailable \(.+\); the estimators run on the CPU$/);
    } finally {
      await runner.dispose();
    }
  });

  it('cuda asked for explicitly but unavailable is a warning, and the result says the CPU ran', async () => {
    const { log, lines } = recorder();
    const runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'cuda', log });
    try {
      const result = await runner.run('mlp', [cards.find((c) => c.family === 'mlp')!.selfTest!.features[0]!]);
      assert.equal(result?.provider, 'cpu');
      assert.match(lines.join('\n'), /^warning: CUDA execution provider unavailable/);
    } finally {
      await runner.dispose();
    }
  });

  it('refuses a row of the wrong width, and a model trained on another feature definition', async () => {
    const runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'cpu' });
    await assert.rejects(runner.run('mlp', [[1, 2, 3]]), /takes \d+ features, got 3/);
    await runner.dispose();

    const dir = mkdtempSync(path.join(tmpdir(), 'gpu-estimator-models-'));
    try {
      const card = cards.find((c) => c.family === 'mlp')!;
      copyFileSync(path.join(MODELS, card.file), path.join(dir, card.file));
      const { writeFileSync } = await import('node:fs');
      writeFileSync(path.join(dir, 'mlp.card.json'), JSON.stringify({ ...card, featureDefinitionVersion: card.featureDefinitionVersion + 1 }));
      const { log, lines } = recorder();
      const stale = new OnnxRunner({ modelsDir: dir, executionProvider: 'cpu', log });
      assert.equal(await stale.model('mlp'), null);
      assert.match(lines[0]!, /trained on feature definition \d+, this build computes \d+/);
      await stale.dispose();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ONNX runner without a native onnxruntime (as on darwin-x64)', () => {
  const wasmOnly = (): OnnxRuntime =>
    loadOnnxRuntime((name: RuntimePackage) => {
      if (name === 'onnxruntime-node') throw new Error(`Cannot find module '../bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node'`);
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the loader under test takes a require-like function
      return require(name) as unknown;
    });

  /** Rows spread over each feature's training range: every feature at 0, 1/12 .. 12/12 of the way, mixed across rows. */
  function spread(card: ModelCard, count: number): number[][] {
    return Array.from({ length: count }, (_, i) => card.features.map((f, j) => f.min + ((f.max - f.min) * ((i * 7 + j) % 13)) / 12));
  }

  for (const card of cards) {
    it(`${card.file} on onnxruntime-web's WebAssembly gives the native runtime's outputs (self-test rows and 64 spread rows)`, async () => {
      const { log, lines } = recorder();
      const wasm = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'auto', log, loadRuntime: wasmOnly, cudaInstalled: () => true });
      const native = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'cpu' });
      try {
        const rows = [...card.selfTest!.features, ...spread(card, 64)];
        const [fromWasm, fromNative] = [(await wasm.run(card.family, rows))!, (await native.run(card.family, rows))!];
        assert.equal(fromWasm.provider, 'wasm');
        assert.equal((await wasm.model(card.family))?.provider, 'wasm');
        assert.deepEqual(Object.keys(fromWasm.outputs).sort(), Object.keys(fromNative.outputs).sort());
        assert.deepEqual(fromWasm.columns, fromNative.columns);
        for (const [name, expected] of Object.entries(fromNative.outputs)) {
          const got = fromWasm.outputs[name]!;
          assert.equal(got.length, expected.length, name);
          expected.forEach((value, i) => assert.ok(Math.abs(Number(got[i]) - Number(value)) <= 1e-4 * Math.max(1, Math.abs(Number(value))), `${name}[${i}]: wasm ${got[i]}, native ${value}`));
        }
        assert.deepEqual(lines, [
          `info: onnxruntime-node's native runtime does not load on ${process.platform}-${process.arch} (Cannot find module '../bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node'); the learned estimators run on onnxruntime-web's WebAssembly, on the CPU`,
        ]);
      } finally {
        await wasm.dispose();
        await native.dispose();
      }
    });
  }

  it('cuda asked for is a warning, once, and the results say WebAssembly ran', async () => {
    const { log, lines } = recorder();
    const runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'cuda', log, loadRuntime: wasmOnly });
    try {
      assert.equal((await runner.model('mlp'))?.provider, 'wasm');
      assert.equal((await runner.model('cnn'))?.provider, 'wasm');
      assert.deepEqual(lines.slice(1), ['warning: CUDA execution provider unavailable (onnxruntime-node has no native runtime here); the estimators run on WebAssembly on the CPU']);
    } finally {
      await runner.dispose();
    }
  });

  it('with no onnxruntime at all, every family has no learned model and the log says so once', async () => {
    const { log, lines } = recorder();
    const runner = new OnnxRunner({
      modelsDir: MODELS,
      executionProvider: 'auto',
      log,
      loadRuntime: () => {
        throw new Error('onnxruntime does not load on darwin-x64: neither its native runtime (a) nor its WebAssembly one (b)');
      },
    });
    try {
      assert.equal(await runner.model('mlp'), null);
      assert.equal(await runner.model('cnn'), null);
      assert.equal(await runner.run('mlp', [cards.find((c) => c.family === 'mlp')!.selfTest!.features[0]!]), null);
      assert.deepEqual(lines, ['warning: The learned estimators are unavailable: onnxruntime does not load on darwin-x64: neither its native runtime (a) nor its WebAssembly one (b). Estimates use the analytical model.']);
    } finally {
      await runner.dispose();
    }
  });
});
