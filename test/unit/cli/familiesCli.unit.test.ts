/**
 * gpu-estimate on fine-tuning scripts of Gemma-2, Gemma-3, Phi-3, GPT-NeoX (Pythia), OLMo-2, Qwen3 and FLAN-T5 (the built CLI,
 * as a process): each checkpoint is the catalog's own, estimated on its own structure with the
 * published count, and no shape is assumed from its name.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { FileEstimate } from '../../../src/core/estimate/fileEstimate';
import { REPO_ROOT } from '../fixtures';

const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

function run(script: string): FileEstimate['models'][number] {
  const result = spawnSync(process.execPath, [CLI, `test/fixtures/llm/${script}.py`, '--json', '--gpu', 'a100-80gb'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout) as FileEstimate;
  assert.deepEqual(report.warnings, []);
  const [model] = report.models;
  assert.ok(model);
  assert.equal(model.memory.method, 'fineTuning');
  assert.ok(!model.notes.some((n) => /assumed from|not modelled|does not know the checkpoint/.test(n.message)), JSON.stringify(model.notes));
  return model;
}

const adapter = (model: FileEstimate['models'][number]) => model.assumptions.find((a) => a.name === 'adapter')?.value;

describe('gpu-estimate on the fine-tuning scripts of the families modelled on their own trees (the built CLI, as a process)', () => {
  it('QLoRA of Gemma-2 9B (-it: the same shape) with SFTTrainer: 4-bit NF4, LoRA r=16 on every projection, 1 x 1024 tokens', () => {
    const model = run('gemma2_qlora');
    assert.equal(model.architecture?.name, 'google/gemma-2-9b');
    assert.equal(model.params, 9_241_705_984);
    assert.equal(model.assumptions.find((a) => a.name === 'quantization')?.value, '4-bit nf4 double-quantized');
    assert.equal(adapter(model), 'lora rank 16 on q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj');
    // About 5.6 GiB of 4-bit weights and bf16 embeddings (fp32 after prepare_model_for_kbit_training), eager attention's probabilities
    // over 1024 tokens recomputed for one layer, and Gemma's 256000-entry logits: between 10 and 20 GiB.
    assert.ok(model.memory.estimateMiB! > 10 * 1024 && model.memory.estimateMiB! < 20 * 1024, String(model.memory.estimateMiB));
  });

  it("LoRA of Phi-3-mini on its fused qkv_proj and o_proj: r=32 on Phi-3's own widths", () => {
    const model = run('phi3_lora');
    assert.equal(model.params, 3_821_079_552);
    assert.equal(adapter(model), 'lora rank 32 on qkv_proj, o_proj');
    // r x (in + out) per layer: qkv_proj 3072 -> 9216, o_proj 3072 -> 3072; 32 layers; fp32 adapter weights (PEFT's autocast_adapter_dtype).
    const trainable = 32 * 32 * ((3072 + 9216) + (3072 + 3072));
    assert.equal(model.memory.breakdown?.gradientsMiB, (trainable * 4) / 2 ** 20);
  });

  it("LoRA of Pythia-1.4B (-deduped: the same shape) on GPT-NeoX's query_key_value, dense_h_to_4h and dense_4h_to_h", () => {
    const model = run('pythia_lora');
    assert.equal(model.architecture?.name, 'EleutherAI/pythia-1.4b');
    assert.equal(model.params, 1_414_647_808);
    const trainable = 24 * 8 * ((2048 + 3 * 2048) + (2048 + 8192) + (8192 + 2048));
    assert.equal(model.memory.breakdown?.gradientsMiB, (trainable * 4) / 2 ** 20);
  });

  it('full fine-tuning of OLMo-2 7B in bf16 with 8-bit AdamW and checkpointing: over 40 GiB, within an 80 GB card', () => {
    const model = run('olmo2_full');
    assert.equal(model.params, 7_298_617_344);
    // 2 bytes of weights and 2 of gradients per parameter (27 GiB) and 8-bit AdamW's 2 (13.6 GiB), then the logits over 100352 entries.
    assert.ok(model.memory.estimateMiB! > 40 * 1024 && model.memory.estimateMiB! < 70 * 1024, String(model.memory.estimateMiB));
    assert.equal(model.fits, true);
  });

  it('LoRA of Qwen3-8B with the Trainer on every projection, its queries and keys 32 and 8 heads of 128', () => {
    const model = run('qwen3_lora_trainer');
    assert.equal(model.architecture?.name, 'Qwen/Qwen3-8B');
    assert.equal(model.params, 8_190_735_360);
    assert.equal(adapter(model), 'lora rank 16 on q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj');
    // r x (in + out) per layer: q 4096 -> 4096, k and v 4096 -> 1024, o 4096 -> 4096, gate and up 4096 -> 12288, down 12288 -> 4096; 36 layers; fp32.
    const trainable = 36 * 16 * (2 * (4096 + 4096) + 2 * (4096 + 1024) + 3 * (4096 + 12288));
    assert.equal(model.memory.breakdown?.gradientsMiB, (trainable * 4) / 2 ** 20);
    // 15.3 GiB of bf16 weights, the checkpointed layers' inputs and the logits over 151936 entries for 2 x 2048 tokens: 20 to 40 GiB.
    assert.ok(model.memory.estimateMiB! > 20 * 1024 && model.memory.estimateMiB! < 40 * 1024, String(model.memory.estimateMiB));
  });

  it("full SFT of Gemma-3 1B (-it: the same shape): 8 bytes a parameter of weights, gradients and Adam, then the logits over Gemma-3's 262144 entries", () => {
    const model = run('gemma3_1b_sft_full');
    assert.equal(model.architecture?.name, 'google/gemma-3-1b-pt');
    assert.equal(model.params, 999_885_952);
    // bf16 weights and gradients, two bf16 Adam states: 8 B x 1.0B = 7.4 GiB; 4 x 1024 tokens of 262144 logits at 14 B each (the bf16 logits, the loss's fp32 copies): 14 GiB.
    const logits = (4 * 1024 * 262144 * 14) / 2 ** 20;
    assert.ok(model.memory.breakdown!.activationsMiB > logits, String(model.memory.breakdown!.activationsMiB));
    assert.ok(model.memory.estimateMiB! > 20 * 1024 && model.memory.estimateMiB! < 32 * 1024, String(model.memory.estimateMiB));
  });

  it('QLoRA of Gemma-3 4B (multimodal, loaded by AutoModelForCausalLM): its vision tower held in bf16 beside the 4-bit text model', () => {
    const model = run('gemma3_4b_qlora');
    assert.equal(model.architecture?.name, 'google/gemma-3-4b-pt');
    assert.equal(model.params, 4_300_079_472);
    assert.equal(model.assumptions.find((a) => a.name === 'quantization')?.value, '4-bit nf4 double-quantized');
    // 4-bit decoder linears (about 1.8 GiB), bf16 embeddings (1.25 GiB) and the 419.8M-parameter vision tower and projector in bf16 (0.78 GiB).
    assert.ok(model.memory.breakdown!.weightsMiB > 3.3 * 1024 && model.memory.breakdown!.weightsMiB < 4.2 * 1024, String(model.memory.breakdown!.weightsMiB));
    // The logits over 262208 entries for 2 x 2048 tokens dominate: 14 GiB of them.
    assert.ok(model.memory.estimateMiB! > 18 * 1024 && model.memory.estimateMiB! < 30 * 1024, String(model.memory.estimateMiB));
  });

  it("LoRA of FLAN-T5-XL over 8-bit weights with the Seq2Seq Trainer: adapters on every attention's q and v, 512 source and 128 target tokens", () => {
    const model = run('flan_t5_lora_int8');
    assert.equal(model.architecture?.name, 'google/flan-t5-xl');
    assert.equal(model.assumptions.find((a) => a.name === 'quantization')?.value, '8-bit');
    assert.equal(adapter(model), 'lora rank 16 on q, v');
    assert.equal(model.assumptions.find((a) => a.name === 'targetLength')?.value, '128');
    // The layer table's decoder runs on the labels' 128 tokens too, not on the sources' 512.
    assert.ok(!model.notes.some((n) => /decoder input is taken as long as the encoder/.test(n.message)), JSON.stringify(model.notes));
    // q and v of 24 encoder self-attentions and 24 decoder self- and cross-attentions, 2048 -> 2048 each: r x (in + out), fp32.
    const trainable = (24 + 2 * 24) * 2 * 16 * (2048 + 2048);
    assert.equal(model.memory.breakdown?.gradientsMiB, (trainable * 4) / 2 ** 20);
    // 8-bit weights of 2.85B parameters (bf16 embeddings and head), checkpointed layers (prepare_model_for_kbit_training) at 8 x 512.
    assert.ok(model.memory.estimateMiB! > 5 * 1024 && model.memory.estimateMiB! < 12 * 1024, String(model.memory.estimateMiB));
  });
});
