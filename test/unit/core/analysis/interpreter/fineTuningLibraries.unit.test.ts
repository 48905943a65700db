import * as assert from 'node:assert/strict';
import { unslothBaseId } from '../../../../../src/core/analysis/interpreter/fineTuningLibraries';
import { estimateSource } from '../../../../../src/core/estimate/incrementalEstimator';
import type { FileEstimate } from '../../../../../src/core/estimate/fileEstimate';
import { defaultGpuProfile } from '../../../../../src/core/gpus/gpuProfiles';
import { realParser } from '../../../fixtures';

const options = { gpu: defaultGpuProfile(), safetyMargin: 0.1 };
const estimate = async (source: string): Promise<FileEstimate> => estimateSource('train.py', source, await realParser(), options);
const messages = (found: FileEstimate) => [...found.warnings, ...found.models.flatMap((m) => m.notes.map((n) => n.message))];

const trl = (trainer: string, extra = '') => `from trl import ${trainer}, SFTConfig
from datasets import load_dataset
trainer = ${trainer}(model="Qwen/Qwen2.5-0.5B", args=SFTConfig(output_dir="out", per_device_train_batch_size=2${extra}), train_dataset=load_dataset("trl-lib/Capybara", split="train"))
trainer.train()
`;

describe('fine-tuning libraries that load the model themselves (fineTuningLibraries.ts)', () => {
  it("names Unsloth's mirrors as the catalog names their base models", () => {
    assert.equal(unslothBaseId('unsloth/llama-3-8b-bnb-4bit'), 'meta-llama/Meta-Llama-3-8B');
    assert.equal(unslothBaseId('unsloth/Llama-3.2-1B'), 'meta-llama/Llama-3.2-1B');
    assert.equal(unslothBaseId('unsloth/Qwen2.5-7B-unsloth-bnb-4bit'), 'Qwen/Qwen2.5-7B');
    // A name the catalog does not have is passed on without the organisation and suffix (the catalog's miss then names it).
    assert.equal(unslothBaseId('unsloth/some-new-model-bnb-4bit'), 'some-new-model');
    assert.equal(unslothBaseId('meta-llama/Llama-3.2-1B'), 'meta-llama/Llama-3.2-1B');
  });

  it('SFTTrainer(model="<hub id>") is the model that id names, loaded by the trainer in the checkpoint\'s dtype', async () => {
    const found = await estimate(trl('SFTTrainer'));
    const [model] = found.models;
    assert.ok(model, JSON.stringify(messages(found)));
    assert.equal(model.architecture?.name, 'Qwen/Qwen2.5-0.5B');
    assert.equal(model.params, 494032768);
    assert.equal(model.batchSize, 2);
    assert.equal(model.memory.method, 'fineTuning');
    assert.match(model.assumptions.find((a) => a.name === 'weightDtype')?.origin ?? '', /dtype="auto"/);
    // SFTConfig(model_init_kwargs=...) says the dtype when the script gives one.
    const fp32 = await estimate(trl('SFTTrainer', ', model_init_kwargs={"torch_dtype": "float32"}'));
    assert.equal(fp32.models[0]?.assumptions.find((a) => a.name === 'weightDtype')?.value, 'fp32');
  });

  it('RewardTrainer(model="<hub id>") is a one-output sequence classifier, not a language model', async () => {
    const [model] = (await estimate(trl('RewardTrainer'))).models;
    assert.ok(model);
    assert.match(model.architecture?.className ?? '', /ForSequenceClassification$/);
    // The LM head (tied to the embeddings in Qwen2.5-0.5B) gives way to a 896 x 1 score layer.
    assert.equal(model.params, 494032768 + 896);
  });

  it("SFTConfig(use_liger_kernel=True) is Liger's fused linear cross-entropy: a chunk of logits at a time, far less than transformers' loss", async () => {
    const plain = (await estimate(trl('SFTTrainer', ', max_length=2048'))).models[0];
    const liger = (await estimate(trl('SFTTrainer', ', max_length=2048, use_liger_kernel=True'))).models[0];
    assert.ok(plain && liger);
    assert.match(liger.assumptions.find((a) => a.name === 'loss')?.origin ?? '', /use_liger_kernel=True/);
    // Qwen2.5-0.5B's 151936-entry vocabulary over 2 x 2048 tokens: 12 B each in transformers' loss is 7 GiB.
    assert.ok(plain.memory.estimateMiB! - liger.memory.estimateMiB! > 5 * 1024, `${plain.memory.estimateMiB} vs ${liger.memory.estimateMiB}`);
  });

  it('DPOTrainer(model="<hub id>") holds a frozen reference copy and twice the sequences; KTO is still a supervised step with a note', async () => {
    const sft = (await estimate(trl('SFTTrainer', ', max_length=1024'))).models[0];
    const found = await estimate(trl('DPOTrainer', ', max_length=1024'));
    const dpo = found.models[0];
    assert.ok(sft && dpo);
    assert.ok(messages(found).some((m) => /^DPO: each prompt's chosen and rejected answers run together.*frozen copy of the model/.test(m)), JSON.stringify(messages(found)));
    // Qwen2.5-0.5B in bf16 ("auto"): its 494M weights once more.
    assert.ok(Math.abs(dpo.memory.breakdown!.weightsMiB - 2 * sft.memory.breakdown!.weightsMiB) < 1, `${dpo.memory.breakdown!.weightsMiB} vs ${sft.memory.breakdown!.weightsMiB}`);
    assert.ok(dpo.memory.estimateMiB! > sft.memory.estimateMiB! + sft.memory.breakdown!.weightsMiB, `${dpo.memory.estimateMiB} vs ${sft.memory.estimateMiB}`);
    // DPOConfig(precompute_ref_log_probs=True): no reference in the step.
    const precomputed = await estimate(trl('DPOTrainer', ', max_length=1024').replace('SFTConfig', 'DPOConfig').replace('SFTConfig(', 'DPOConfig(precompute_ref_log_probs=True, '));
    assert.ok(messages(precomputed).some((m) => /not computed in the step/.test(m)), JSON.stringify(messages(precomputed)));
    assert.ok(Math.abs(precomputed.models[0]!.memory.breakdown!.weightsMiB - sft.memory.breakdown!.weightsMiB) < 1);
    // KTO and GRPO are modelled too (KTO's single answers and DPO's reference); PPO still gets the note.
    assert.ok(!messages(await estimate(trl('GRPOTrainer'))).some((m) => /GRPOTrainer: the estimate is of one supervised step/.test(m)));
    const kto = await estimate(trl('KTOTrainer'));
    assert.ok(messages(kto).some((m) => /^KTO: single answers .*frozen copy of the model/.test(m)), JSON.stringify(messages(kto)));
    const ppo = await estimate(trl('PPOTrainer'));
    assert.ok(messages(ppo).some((m) => /PPOTrainer: the estimate is of one supervised step.*value model/.test(m)), JSON.stringify(messages(ppo)));
  });

  it('a hub id held in a variable inside a function the script does not call finds no model and does not throw', async () => {
    const found = await estimate('from trl import SFTTrainer\ndef main(name):\n    SFTTrainer(model=name).train()\n');
    assert.equal(found.models.length, 0);
  });
});
