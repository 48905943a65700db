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
    assert.match(fineTuningSpec(setup({ adapter: at({ method: 'lntuning', dora: false, applied: true }), weightDtype: at('bf16' as const) }), architecture, 512)!.notes.join(' '), /not counted/);
    assert.match(fineTuningSpec(setup({ adapter: at({ method: 'prompttuning', dora: false, applied: true }), weightDtype: at('bf16' as const) }), architecture, 512)!.notes.join(' '), /num_virtual_tokens/);
  });

  it("counts LoHa, VeRA and OFT on Llama-2-7B's default targets, and runs AdaLoRA as LoRA at its initial rank", () => {
    const bf16 = { weightDtype: at('bf16' as const) };
    const other = (method: string, extra = {}) => fineTuningSpec(setup({ adapter: at({ method, dora: false, applied: true, ...extra }), ...bf16 }), architecture, 512)!;
    // q_proj and v_proj (4096 -> 4096) in 32 layers. LoHa r=8: 2 x 8 x 8192 each.
    assert.deepEqual(other('loha', { rank: 8 }).job.adapter, { method: 'other', trainableParams: 32 * 2 * (2 * 8 * 8192) });
    // VeRA r=256: 4096 + 256 each.
    assert.deepEqual(other('vera', { rank: 256 }).job.adapter, { method: 'other', trainableParams: 32 * 2 * (4096 + 256) });
    // OFT's default block of 32: 128 blocks of 496 each.
    assert.deepEqual(other('oft').job.adapter, { method: 'other', trainableParams: 32 * 2 * 128 * 496 });
    assert.deepEqual(other('oft').notes, []);
    const adalora = other('adalora', { rank: 12 });
    assert.deepEqual(adalora.job.adapter, { method: 'lora', rank: 12, dora: false });
    // Its init_r unreadable: AdaLoRA's default 12, said in a note.
    const unread = other('adalora');
    assert.equal(unread.job.adapter?.rank, 12);
    assert.match(unread.notes.join(' '), /init_r is not readable; PEFT's default 12/);
  });

  it('counts IA3, prompt and prefix tuning as PEFT builds them; prompt tuning lengthens every sample', () => {
    const bf16 = { weightDtype: at('bf16' as const) };
    // IA3's defaults for Llama: a vector on k_proj's and v_proj's outputs (4096 each) and on down_proj's input (11008), in 32 layers.
    const ia3 = fineTuningSpec(setup({ adapter: at({ method: 'ia3', dora: false, applied: true }), ...bf16 }), architecture, 512)!;
    assert.deepEqual(ia3.job.adapter, { method: 'ia3', trainableParams: 32 * (4096 + 4096 + 11008) });
    assert.deepEqual(ia3.notes, []);
    const prompt = fineTuningSpec(setup({ adapter: at({ method: 'prompttuning', dora: false, applied: true, virtualTokens: 20 }), ...bf16 }), architecture, 512)!;
    assert.deepEqual(prompt.job.adapter, { method: 'other', trainableParams: 20 * 4096 });
    assert.equal(prompt.job.seq, 532);
    // Prefix tuning: a key and a value per layer and virtual token; with a projection, an embedding and a two-layer MLP.
    const prefix = fineTuningSpec(setup({ adapter: at({ method: 'prefixtuning', dora: false, applied: true, virtualTokens: 30 }), ...bf16 }), architecture, 512)!;
    assert.deepEqual(prefix.job.adapter, { method: 'other', trainableParams: 30 * 32 * 2 * 4096 });
    assert.equal(prefix.job.seq, 512);
    const projected = fineTuningSpec(setup({ adapter: at({ method: 'prefixtuning', dora: false, applied: true, virtualTokens: 30, prefixProjection: { hidden: 512 } }), ...bf16 }), architecture, 512)!;
    assert.deepEqual(projected.job.adapter, { method: 'other', trainableParams: 30 * 4096 + 4097 * 512 + 513 * 32 * 2 * 4096 });
  });

  it('drops the logits before the backward under a Trainer, keeps them in a hand-written loop', () => {
    assert.equal(fineTuningSpec(setup({ adapter: lora, weightDtype: at('bf16' as const), hfTrainer: at('Trainer') }), architecture, 512)!.job.logitsHeld, false);
    assert.equal(fineTuningSpec(setup({ adapter: lora, weightDtype: at('bf16' as const) }), architecture, 512)!.job.logitsHeld, true);
  });

  it("gives an encoder-decoder the labels' length on the decoder's side, and says when it has none", () => {
    const t5 = findCheckpoint('bigscience/T0_3B')!;
    const seq2seq = { hfConfig: { modelType: t5.modelType, className: 'T5ForConditionalGeneration', config: t5.config } } as unknown as CatalogArchitecture;
    const withLabels = fineTuningSpec(setup({ adapter: lora, weightDtype: at('bf16' as const), targetSequenceLength: at(16) }), seq2seq, 256)!;
    assert.equal(withLabels.job.targetSeq, 16);
    assert.equal(withLabels.job.seq, 256);
    const without = fineTuningSpec(setup({ adapter: lora, weightDtype: at('bf16' as const) }), seq2seq, 256)!;
    assert.equal(without.job.targetSeq, undefined);
    assert.match(without.notes.join(' '), /decoder's length is taken as the encoder's \(256 tokens\)/);
  });

  it('computes in fp32 after prepare_model_for_kbit_training without mixed precision, in 16 bits with it', () => {
    const quantized = { adapter: lora, quantization: at({ bits: 4 as const, quantType: 'nf4' as const, doubleQuant: true }), weightDtype: at('bf16' as const), kbitPrepared: at({ checkpointing: true }) };
    assert.equal(fineTuningSpec(setup(quantized), architecture, 512)!.job.computeBytes, 4);
    const mixed = fineTuningSpec(setup({ ...quantized, precision: at('bf16-mixed' as const) }), architecture, 512)!;
    assert.equal(mixed.job.computeBytes, 2);
    assert.equal(mixed.job.autocast, true);
  });

  it('passes lora_dropout, torch.compile and flash-attention on to the job', () => {
    const spec = fineTuningSpec(setup({ adapter: at({ ...lora.value, dropout: 0.05 }), weightDtype: at('bf16' as const), compiled: at(true), attentionImplementation: at('flash_attention_2') }), architecture, 512)!;
    assert.equal(spec.job.adapterDropout, true);
    assert.equal(spec.job.compiled, true);
    assert.equal(spec.job.flashAttention, true);
  });

  it('keeps one optimizer state a parameter for SGD with momentum, RMSprop and Adagrad, none for plain SGD', () => {
    const optimizerOf = (kind: 'sgd' | 'sgd-momentum' | 'rmsprop' | 'adagrad' | 'adamw') => fineTuningSpec(setup({ adapter: lora, weightDtype: at('bf16' as const), optimizer: at(kind) }), architecture, 512)!.job.optimizer;
    assert.equal(optimizerOf('sgd-momentum'), 'momentum');
    assert.equal(optimizerOf('rmsprop'), 'momentum');
    assert.equal(optimizerOf('adagrad'), 'momentum');
    assert.equal(optimizerOf('sgd'), 'sgd');
    assert.equal(optimizerOf('adamw'), 'adamw');
  });

  it('"auto" loads the checkpoint\'s own dtype: 16 bits for a Llama, fp32 for BERT, each with a note', () => {
    const auto = fineTuningSpec(setup({ weightDtype: at('auto' as const) }), architecture, 512);
    assert.equal(auto?.job.weightBits, 16);
    assert.ok(auto?.notes.some((n) => /own dtype \("auto"\): 16 bits, as llama checkpoints/.test(n)));
    const bert = findCheckpoint('bert-base-uncased')!;
    const bertArchitecture = { hfConfig: { modelType: bert.modelType, className: 'BertForSequenceClassification', config: bert.config } } as unknown as CatalogArchitecture;
    assert.equal(fineTuningSpec(setup({ weightDtype: at('auto' as const) }), bertArchitecture, 128)?.job.weightBits, 32);
  });

  it('is no job without a transformers architecture or a sequence; with no adapter applied, a full fine-tune in the dtype the weights are loaded in', () => {
    assert.equal(fineTuningSpec(setup({ adapter: lora }), undefined, 512), undefined);
    assert.equal(fineTuningSpec(setup({ adapter: lora }), architecture, undefined), undefined);
    for (const plain of [setup({}), setup({ adapter: at({ ...lora.value, applied: false }) })]) {
      const spec = fineTuningSpec(plain, architecture, 512);
      assert.ok(spec);
      assert.equal(spec.job.adapter, undefined);
      assert.equal(spec.job.weightBits, 32);
      assert.ok(spec.notes.some((n) => /fp32 is assumed/.test(n)));
    }
  });
});
