import * as assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';
import { loadOnnxRuntime, type RuntimePackage } from '../../../../src/core/estimators/onnx/onnxRuntime';

// The estimators' ONNX models run on onnxruntime-node. Its install script is skipped (it would
// download CUDA libraries), so this checks that the CPU runtime shipped in the package loads.
describe('onnxruntime-node, installed without its install script', () => {
  it('offers the bundled CPU execution provider', () => {
    const cpu = ort.listSupportedBackends().find((backend) => backend.name === 'cpu');
    assert.deepEqual(cpu, { name: 'cpu', bundled: true });
  });

  it('runs its native session code (and rejects a file that is not a model)', async () => {
    await assert.rejects(ort.InferenceSession.create(new Uint8Array([1, 2, 3])), /protobuf parsing failed/);
  });
});

describe('loadOnnxRuntime', () => {
  const noBinding = (name: RuntimePackage): unknown => {
    if (name === 'onnxruntime-node') throw new Error("Cannot find module '../bin/napi-v6/darwin/x64/onnxruntime_binding.node'\nRequire stack: ...");
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the loader under test takes a require-like function
    return require(name) as unknown;
  };

  it('takes the native runtime where it loads', () => {
    const runtime = loadOnnxRuntime();
    assert.equal(runtime.kind, 'native');
    assert.equal(runtime.ort, ort);
  });

  it("falls back to onnxruntime-web's WebAssembly, one thread, and keeps the native runtime's reason", () => {
    const runtime = loadOnnxRuntime(noBinding);
    assert.equal(runtime.kind, 'wasm');
    assert.notEqual(runtime.ort, ort, 'onnxruntime-web, not onnxruntime-node');
    assert.equal(runtime.nativeProblem, "Cannot find module '../bin/napi-v6/darwin/x64/onnxruntime_binding.node'");
    assert.equal(runtime.ort.env.wasm.numThreads, 1);
  });

  it('says both reasons in one line when neither loads', () => {
    const nothing = (name: RuntimePackage): unknown => {
      throw new Error(`Cannot find module '${name}'`);
    };
    assert.throws(
      () => loadOnnxRuntime(nothing),
      new RegExp(`^Error: onnxruntime does not load on ${process.platform}-${process.arch}: neither its native runtime \\(Cannot find module 'onnxruntime-node'\\) nor its WebAssembly one \\(Cannot find module 'onnxruntime-web'\\)$`),
    );
  });
});
