import * as assert from 'node:assert/strict';
import type { Sourced, TrainingSetup } from '../../../../src/core/analysis/modelDescription';
import type { CatalogArchitecture } from '../../../../src/core/catalog/catalog';
import { findCheckpoint } from '../../../../src/core/catalog/hf/checkpoints';
import { fineTuningSpec } from '../../../../src/core/estimators/fineTuningEstimator';

const at = <T>(value: T): Sourced<T> => ({ value, range: { startLine: 0, startColumn: 0, endLine: 0, endColumn: 1 }, origin: 'test' });
const llama = findCheckpoint('meta-llama/Llama-2-7b-hf')!;
const architecture = { hfConfig: { modelType: llama.modelType, className: 'LlamaForCausalLM', config: llama.config } } as unknown as CatalogArchitecture;
const setup = (over: Partial<TrainingSetup>): TrainingSetup => ({ inputCandidates: [], ...over });
const lora = at({ method: 'lora', rank: 16, targetModules: 'all-linear', dora: false, applied: true });

describe('fineTuningSpec', () => {
  it('makes a QLoRA job: 4-bit double-quantized weights, bf16 compute, paged 8-bit AdamW, checkpointing, accumulation, eager attention', () => {
    const spec = fineTuningSpec(
      setup({ adapter: lora, quantization: at({ bits: 4 as const, quantType: 'nf4' as const, doubleQuant: true }), weightDtype: at('bf16' as const), precision: at('bf16-mixed' as const), optimizerName: at('paged_adamw_8bit'), gradientCheckpointing: at(true), gradientAccumulation: at(4), attentionImplementation: at('eager') }),
      architecture,
      1024,
    );
    assert.ok(spec);
    assert.equal(spec.job.weightBits, 4);
    assert.equal(spec.job.doubleQuant, true);
    assert.equal(spec.job.computeBytes, 2);
    assert.equal(spec.job.optimizer, 'adamw-8bit');
    assert.equal(spec.job.paged, true);
    assert.equal(spec.job.checkpointing, true);
    assert.equal(spec.job.accumulation, 4);
    assert.equal(spec.job.eagerAttention, true);
    assert.equal(spec.job.seq, 1024);
    assert.deepEqual(spec.job.adapter, { method: 'lora', rank: 16, targetModules: 'all-linear', dora: false });
    assert.deepEqual(spec.notes, []);
  });

  it('says what it assumed: an fp32 load without torch_dtype, a quantized model without an adapter, an adapter it does not count', () => {
    assert.match(fineTuningSpec(setup({ adapter: lora }), architecture, 512)!.notes.join(' '), /fp32 is assumed/);
    assert.equal(fineTuningSpec(setup({ adapter: lora }), architecture, 512)!.job.weightBits, 32);
    assert.match(fineTuningSpec(setup({ quantization: at({ bits: 8 as const, doubleQuant: false }) }), architecture, 512)!.notes.join(' '), /cannot be fully fine-tuned/);
    assert.match(fineTuningSpec(setup({ adapter: at({ method: 'ia3', dora: false, applied: true }), weightDtype: at('bf16' as const) }), architecture, 512)!.notes.join(' '), /not counted/);
  });

  it('is no job without a transformers architecture, a sequence, or any sign of fine-tuning (or an adapter never applied)', () => {
    assert.equal(fineTuningSpec(setup({ adapter: lora }), undefined, 512), undefined);
    assert.equal(fineTuningSpec(setup({ adapter: lora }), architecture, undefined), undefined);
    assert.equal(fineTuningSpec(setup({}), architecture, 512), undefined);
    assert.equal(fineTuningSpec(setup({ adapter: at({ ...lora.value, applied: false }) }), architecture, 512), undefined);
  });
});
