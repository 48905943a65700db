import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { FileEstimate } from '../../../src/core/estimate/fileEstimate';
import { REPO_ROOT } from '../fixtures';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

describe('gpu-estimate on the fine-tuning script of issue 20 (the built CLI, as a process)', () => {
  it('reads 13B in 4 bits, LoRA r=8, batch 4, checkpointing, bf16, paged_adamw_32bit and 1024 tokens, and estimates it with the fine-tuning model', () => {
    const result = spawnSync(process.execPath, [CLI, 'test/fixtures/llm/issue20_qlora_13b.py', '--json', '--gpu', 'rtx4090-24gb'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(result.stdout) as FileEstimate;
    const [model] = report.models;
    assert.ok(model);
    assert.equal(model.params, 13015864320);
    assert.equal(model.batchSize, 4);
    assert.deepEqual(model.inputShape, [1024]);
    assert.equal(model.precision, 'bf16-mixed');
    assert.equal(model.gradientCheckpointing, true);
    const value = (name: string) => model.assumptions.find((a) => a.name === name)?.value;
    assert.equal(value('quantization'), '4-bit fp4');
    assert.equal(value('adapter'), 'lora rank 8 on default modules');
    assert.match(model.assumptions.find((a) => a.name === 'optimizer')?.origin ?? '', /paged_adamw_32bit/);
    assert.equal(model.memory.method, 'fineTuning');
    // About 7 GiB of 4-bit weights, checkpointed activations of 4 x 1024 tokens and the logits: between 10 and 20 GiB, so it fits a 24 GB card.
    assert.ok(model.memory.estimateMiB! > 10 * 1024 && model.memory.estimateMiB! < 20 * 1024, String(model.memory.estimateMiB));
    assert.equal(model.fits, true);
    // `tokenizer.pad_token = tokenizer.eos_token` and `DataCollatorForLanguageModeling(tokenizer, mlm=False)` are ordinary lines, not warnings.
    assert.deepEqual(report.warnings, []);
    assert.ok(!model.notes.some((n) => /pad_token|DataCollator/.test(n.message)), JSON.stringify(model.notes));
  });
});

describe('gpu-estimate on QLoRA of Mixtral-8x7B with TRL (the built CLI, as a process)', () => {
  it('estimates the mixture of experts with its every expert in 4 bits: over a 24 GB card, within an 80 GB one', () => {
    const run = (gpu: string) => {
      const result = spawnSync(process.execPath, [CLI, 'test/fixtures/llm/qlora_mixtral_sft.py', '--json', '--gpu', gpu], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
      assert.equal(result.status, 0, result.stderr);
      const [model] = (JSON.parse(result.stdout) as FileEstimate).models;
      assert.ok(model);
      return model;
    };
    const model = run('a100-80gb');
    assert.equal(model.params, 46_702_792_704);
    assert.equal(model.memory.method, 'fineTuning');
    assert.equal(model.assumptions.find((a) => a.name === 'adapter')?.value, 'lora rank 16 on q_proj, k_proj, v_proj, o_proj, w1, w2, w3');
    // test/unit/core/estimators/moe.unit.test.ts works the same figure out by hand: 24.2 GiB of weights, 32.6 GiB in all (with the 10.0% fitted margin).
    assert.ok(model.memory.estimateMiB! > 32.4 * 1024 && model.memory.estimateMiB! < 32.8 * 1024, String(model.memory.estimateMiB));
    assert.equal(model.fits, true);
    assert.equal(run('rtx4090-24gb').fits, false);
  });
});

describe('gpu-estimate on a pretrained model built inside a LightningModule (the built CLI, as a process)', () => {
  const run = (script: string): FileEstimate['models'][number] => {
    const result = spawnSync(process.execPath, [CLI, script, '--json', '--gpu', 'a100-40gb'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 0, result.stderr);
    const [model] = (JSON.parse(result.stdout) as FileEstimate).models;
    assert.ok(model);
    return model;
  };

  it('estimates a LoRA fine-tune loaded in configure_model as the fine-tune it is: 1.24B parameters, 8 x 1024 tokens, checkpointing, bf16-mixed', () => {
    const model = run('test/fixtures/llm/lightning/lora_single_gpu.py');
    // Llama-3.2-1B's published count, found through `self.model = get_peft_model(base, config)` in configure_model.
    assert.equal(model.params, 1235814400);
    assert.equal(model.architecture?.name, 'meta-llama/Llama-3.2-1B');
    assert.equal(model.batchSize, 8);
    assert.deepEqual(model.inputShape, [1024]);
    assert.equal(model.precision, 'bf16-mixed');
    assert.equal(model.gradientCheckpointing, true);
    const value = (name: string) => model.assumptions.find((a) => a.name === name)?.value;
    assert.equal(value('adapter'), 'lora rank 16 on q_proj, k_proj, v_proj, o_proj');
    assert.equal(value('weightDtype'), 'bf16');
    assert.equal(value('gradientAccumulation'), '4 micro-batches per optimizer step');
    assert.equal(model.memory.method, 'fineTuning');
    // 2.3 GiB of bf16 weights, checkpointed layer inputs and, the largest part, 12 B per token and vocabulary entry of the loss over 128256 entries (12 GiB for 8 x 1024 tokens).
    assert.ok(model.memory.estimateMiB! > 15 * 1024 && model.memory.estimateMiB! < 25 * 1024, String(model.memory.estimateMiB));
    assert.ok(!model.notes.some((n) => /no forward\(\)|input shape unknown/.test(n.message)), JSON.stringify(model.notes));
  });

  it('estimates a LightningModule that loads the model in __init__, in a folder beside a plain `lightning/` folder (the library, not that folder)', () => {
    const model = run('test/fixtures/llm/lightning_lora.py');
    assert.equal(model.params, 1235814400);
    assert.equal(model.batchSize, 4);
    assert.equal(model.precision, 'bf16-mixed');
    assert.equal(model.memory.method, 'fineTuning');
    assert.equal(model.assumptions.find((a) => a.name === 'adapter')?.value, 'lora rank 16 on q_proj, v_proj');
  });

  it('estimates a Lightning Fabric loop in bf16-true precision with the weights in bf16 (Fabric casts them), not fp32', () => {
    const model = run('test/fixtures/llm/fabric_lora.py');
    assert.equal(model.architecture?.name, 'TinyLlama/TinyLlama-1.1B-Chat-v1.0');
    assert.equal(model.batchSize, 8);
    assert.deepEqual(model.inputShape, [512]);
    assert.equal(model.precision, 'bf16');
    assert.equal(model.memory.method, 'fineTuning');
    // 1.1B parameters at 2 bytes: about 2 GiB of weights (4 GiB if they were taken as fp32).
    const weights = model.memory.breakdown?.weightsMiB ?? 0;
    assert.ok(weights > 1900 && weights < 2300, String(weights));
    assert.ok(!model.notes.some((n) => /fp32 is assumed/.test(n.message)), JSON.stringify(model.notes));
  });

  it("estimates the Lightning DeepSpeed fixture per GPU: ZeRO-2 with the optimizer offloaded, on Trainer(devices=4)", () => {
    const model = run('test/fixtures/llm/multigpu/lightning_deepspeed/train.py');
    assert.equal(model.params, 1235814400);
    assert.deepEqual(model.inputShape, [2048]);
    assert.equal(model.memory.method, 'fineTuning');
    const sharding = model.memory.sharding;
    assert.ok(sharding);
    assert.equal(sharding.strategy, 'DeepSpeed ZeRO-2, optimizer state offloaded to the CPU');
    assert.equal(sharding.gpus, 4);
    // The optimizer's share on the host: its fp32 master copy, two Adam moments and fp32 gradients (16 B per parameter, about 18 GiB) over 4 processes.
    assert.ok(sharding.hostMiB > 3 * 1024 && sharding.hostMiB < 5 * 1024, String(sharding.hostMiB));
    assert.ok(!model.notes.some((n) => /one unsharded replica/.test(n.message)), JSON.stringify(model.notes));
  });
});

describe('gpu-estimate on models the fine-tuning libraries load themselves (the built CLI, as a process)', () => {
  const run = (script: string): FileEstimate => {
    const result = spawnSync(process.execPath, [CLI, script, '--json', '--gpu', 'rtx4090-24gb'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(result.status, 0, result.stderr);
    return JSON.parse(result.stdout) as FileEstimate;
  };
  const value = (model: FileEstimate['models'][number], name: string) => model.assumptions.find((a) => a.name === name)?.value;

  it("reads Unsloth's notebook set-up: Llama 3 8B in 4 bits, LoRA r=16 on every projection, offloaded checkpointing, 16-bit mixed precision", () => {
    const report = run('test/fixtures/llm/unsloth_qlora.py');
    const [model] = report.models;
    assert.ok(model, JSON.stringify(report.warnings));
    assert.equal(model.architecture?.name, 'meta-llama/Meta-Llama-3-8B');
    assert.equal(model.params, 8030261248);
    assert.equal(model.batchSize, 2);
    assert.deepEqual(model.inputShape, [2048]);
    assert.equal(model.precision, 'bf16-mixed');
    assert.equal(model.gradientCheckpointing, true);
    assert.equal(value(model, 'quantization'), '4-bit nf4 double-quantized');
    assert.equal(value(model, 'adapter'), 'lora rank 16 on q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj');
    assert.equal(value(model, 'weightDtype'), 'bf16');
    assert.equal(model.memory.method, 'fineTuning');
    // 5.5 GiB of NF4 weights (the embeddings and the head stay 16-bit); Unsloth's fused cross-entropy keeps only the 16-bit logits (4096 x 128256 x 2 B: 1 GiB) where transformers' loss keeps 12 B each; the checkpointed layers' inputs are on the CPU.
    assert.ok(model.memory.estimateMiB! > 9 * 1024 && model.memory.estimateMiB! < 14 * 1024, String(model.memory.estimateMiB));
    assert.match(model.assumptions.find((a) => a.name === 'loss')?.value ?? '', /fused cross-entropy, gradient in place/);
    assert.ok(report.warnings.some((w) => /its own attention and LoRA kernels hold less, so the figure is an upper bound/.test(w)), JSON.stringify(report.warnings));
  });

  it('reads TRL\'s quick start given a hub id: the trainer loads Qwen2.5-1.5B and applies the LoRA config it is given', () => {
    const report = run('test/fixtures/llm/sft_model_id.py');
    const [model] = report.models;
    assert.ok(model, JSON.stringify(report.warnings));
    assert.equal(model.architecture?.name, 'Qwen/Qwen2.5-1.5B');
    assert.equal(model.batchSize, 4);
    assert.deepEqual(model.inputShape, [1024]);
    assert.equal(value(model, 'adapter'), 'lora rank 32 on all-linear');
    // TRL loads the checkpoint's own dtype, which Qwen2.5 publishes in bf16: about 2.9 GiB of weights, not 5.7 GiB of fp32.
    assert.equal(value(model, 'weightDtype'), 'auto');
    assert.ok(model.notes.some((n) => /checkpoint's own dtype \("auto"\): 16 bits/.test(n.message)), JSON.stringify(model.notes));
    const weights = model.memory.breakdown?.weightsMiB ?? 0;
    assert.ok(weights > 2800 && weights < 3200, String(weights));
    assert.equal(model.memory.method, 'fineTuning');
    assert.deepEqual(report.warnings, []);
  });

  it("estimates TRL's DPO with a LoRA adapter: twice the sequences of the batch, the reference as the model with the adapter off (no second copy of the weights)", () => {
    const report = run('test/fixtures/llm/dpo_lora_trainer.py');
    const [model] = report.models;
    assert.ok(model, JSON.stringify(report.warnings));
    assert.equal(model.architecture?.name, 'meta-llama/Llama-3.1-8B');
    assert.equal(model.batchSize, 2);
    assert.deepEqual(model.inputShape, [1024]);
    assert.equal(value(model, 'adapter'), 'lora rank 16 on q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj');
    assert.ok(model.notes.some((n) => /^DPO: each prompt's chosen and rejected answers run together.*adapter disabled/.test(n.message)), JSON.stringify(model.notes));
    assert.equal(value(model, 'trainer'), 'DPO, reference: the model with its adapter disabled');
    // 8.03B bf16 weights once (15 GiB); checkpointed layer inputs and the logits of 4 sequences of 1024 over 128256 entries (3 GiB): about 24 GiB.
    const weights = model.memory.breakdown?.weightsMiB ?? 0;
    assert.ok(weights > 15_000 && weights < 16_000, String(weights));
    assert.ok(model.memory.estimateMiB! > 20 * 1024 && model.memory.estimateMiB! < 30 * 1024, String(model.memory.estimateMiB));
  });

  it("estimates TRL's GRPO given a hub id: 8 completions of 256 + 768 tokens, the logits over the completions only, the adapter disabled as the reference", () => {
    const report = run('test/fixtures/llm/grpo_lora_reasoning.py');
    const [model] = report.models;
    assert.ok(model, JSON.stringify(report.warnings));
    assert.equal(model.architecture?.name, 'Qwen/Qwen2.5-1.5B');
    assert.equal(model.batchSize, 8);
    assert.deepEqual(model.inputShape, [1024]);
    assert.ok(model.notes.some((n) => /^GRPO: .*over the completion's 768 tokens only.*adapter disabled/.test(n.message)), JSON.stringify(model.notes));
    assert.equal(value(model, 'trainer'), 'GRPO, reference: the model with its adapter disabled, logits over 768 completion tokens');
    // 1.54B bf16 weights (2.9 GiB) and about 5 GiB of logits over 8 x 769 positions and 151936 entries: between 10 and 16 GiB.
    assert.ok(model.memory.estimateMiB! > 10 * 1024 && model.memory.estimateMiB! < 16 * 1024, String(model.memory.estimateMiB));
  });
});
