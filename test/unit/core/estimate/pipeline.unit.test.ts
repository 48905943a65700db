import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import { withLearnedEstimates } from '../../../../src/core/estimate/learnedPass';
import { EstimationPipeline } from '../../../../src/core/estimate/pipeline';
import { OnnxRunner } from '../../../../src/core/estimators/onnx/onnxRunner';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { ensembleCnnSource, realParser, REPO_ROOT } from '../../fixtures';

const MODELS = path.join(REPO_ROOT, 'models');
const options = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };
const source = ensembleCnnSource();

describe('EstimationPipeline', () => {
  it('gives the analysis pass with the learned pass on top, as the two run by hand', async () => {
    const parser = await realParser();
    const pipeline = new EstimationPipeline(parser, { modelsDir: MODELS, executionProvider: 'cpu' });
    const runner = new OnnxRunner({ modelsDir: MODELS, executionProvider: 'cpu' });
    try {
      const byHand = await withLearnedEstimates(estimateSource('cnn.py', source, parser, options), runner, options);
      const estimate = await pipeline.estimate({ file: 'cnn.py', source, options });
      assert.equal(estimate.models[0]?.memory.method, 'ensemble');
      assert.deepEqual(JSON.parse(JSON.stringify(estimate)), JSON.parse(JSON.stringify(byHand)));
    } finally {
      await Promise.all([pipeline.dispose(), runner.dispose()]);
    }
  });

  it("keeps a document's syntax tree between its estimates until it is forgotten, and none without a document", async () => {
    const traces: string[] = [];
    const pipeline = new EstimationPipeline(await realParser(), { modelsDir: MODELS, executionProvider: 'cpu' }, (level, message) => level === 'trace' && message.startsWith('estimated') && traces.push(message));
    const parse = () => /\((\w+) parse\)/.exec(traces[traces.length - 1]!)?.[1];
    try {
      const edited = source.replace('batch_size', 'batch_size ');
      await pipeline.estimate({ file: 'cnn.py', source, options, document: 'doc' });
      assert.equal(parse(), 'full');
      await pipeline.estimate({ file: 'cnn.py', source: edited, options, document: 'doc' });
      assert.equal(parse(), 'incremental');
      pipeline.forget('doc');
      await pipeline.estimate({ file: 'cnn.py', source, options, document: 'doc' });
      assert.equal(parse(), 'full');
      await pipeline.estimate({ file: 'cnn.py', source, options });
      await pipeline.estimate({ file: 'cnn.py', source: edited, options });
      assert.equal(parse(), 'full');
    } finally {
      await pipeline.dispose();
    }
  });

  it('makes new ONNX sessions only when the models it is given change', async () => {
    const models = { modelsDir: MODELS, executionProvider: 'cpu' } as const;
    const pipeline = new EstimationPipeline(await realParser(), models);
    try {
      const first = pipeline.onnx;
      assert.equal(pipeline.useModels({ ...models }), false);
      assert.equal(pipeline.onnx, first);
      assert.equal(pipeline.useModels({ ...models, executionProvider: 'auto' }), true);
      assert.notEqual(pipeline.onnx, first);
      assert.equal(pipeline.onnx.executionProvider, 'auto');
      const second = pipeline.onnx;
      pipeline.reloadModels();
      assert.notEqual(pipeline.onnx, second);
    } finally {
      await pipeline.dispose();
    }
  });
});
