import * as assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';

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
