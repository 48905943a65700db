import * as assert from 'node:assert/strict';
import { batchOf, checkpointingOf, fusedLossOf, gpuCount, gpuMemory, isUnread, largestGpuMemory, measuredOf, methodOf, optimizerOf, precisionOf, quantization, rankOf, sequenceOf, trainableParamsOf, virtualTokensOf, type Optimizer, type Quantized, type Reading } from '../../../../scripts/llm/rowFields';

/** Each phrasing read as expected; `'unread'` expects a reason naming the field. */
function table<T>(read: (text: string) => Reading<T>, field: string, cases: ReadonlyArray<[string, T | undefined | 'unread']>): void {
  for (const [text, expected] of cases) {
    const reading = read(text);
    if (expected === 'unread') {
      assert.ok(isUnread(reading), `${JSON.stringify(text)} should be unread, got ${JSON.stringify(reading)}`);
      assert.ok(reading.unread.includes(field) && reading.unread.includes(text.trim()), reading.unread);
    } else assert.deepEqual(reading, expected, JSON.stringify(text));
  }
}

describe('rowFields', () => {
  it('reads checkpointing as tables write it', () => {
    const on = { on: true, offload: false };
    const off = { on: false, offload: false };
    table(checkpointingOf, 'grad_ckpt', [
      ['on', on],
      ['on (config default)', on],
      ['yes', on],
      ['Yes', on],
      ['true', on],
      ['TRUE', on],
      ['enabled', on],
      ['✓', on],
      ['✔', on],
      ['✅', on],
      ['gradient checkpointing', on],
      ['Gradient checkpointing enabled', on],
      ['on + activation offload', { on: true, offload: true }],
      ['unsloth', { on: true, offload: true }],
      ['on (no offload)', on],
      ['off', off],
      ['off (config default)', off],
      ['no', off],
      ['false', off],
      ['disabled', off],
      ['✗', off],
      ['❌', off],
      ['gradient checkpointing off', off],
      ['without checkpointing', off],
      ['', undefined],
      ['not stated', undefined],
      ['N/A', undefined],
      ['—', undefined],
      ['selective (every 2nd layer)', 'unread'],
      ['maybe', 'unread'],
    ]);
  });

  it('reads the base weights\' quantization from the quant cell, else from the method and precision', () => {
    const nf4: Quantized = { bits: 4, doubleQuant: true };
    const int4: Quantized = { bits: 4, doubleQuant: false };
    table<Quantized | 'none'>((q) => quantization(q), 'quant', [
      ['bnb nf4 double-quant, quant_storage bf16', nf4],
      ['torchao NF4', nf4],
      ['NF4 (no double quant)', int4],
      ['4-bit', int4],
      ['4bit', int4],
      ['bnb int4', int4],
      ['4 bit (double quantization)', nf4],
      ['4', int4],
      ['GPTQ', int4],
      ['QLoRA', int4],
      ['AWQ 4-bit', int4],
      ['8-bit', { bits: 8, doubleQuant: false }],
      ['int8', { bits: 8, doubleQuant: false }],
      ['LLM.int8()', { bits: 8, doubleQuant: false }],
      ['none', 'none'],
      ['no', 'none'],
      ['bf16', 'none'],
      ['16', 'none'],
      ['fp32', 'none'],
      ['none (bf16 weights)', 'none'],
      ['no quantization', 'none'],
      ['load_in_4bit=True', int4],
      ['NF4, bnb_4bit_use_double_quant=False', int4],
      ['', undefined],
      ['not stated', undefined],
      ['fp8', 'unread'],
      ['2-bit HQQ', 'unread'],
      ['Q4_K_M gguf', 'unread'],
      ['some scheme', 'unread'],
    ]);
    assert.deepEqual(quantization('', 'QLoRA'), int4);
    assert.deepEqual(quantization('not stated', 'QLoRA (4-bit)'), int4);
    assert.deepEqual(quantization('', 'QDoRA'), int4);
    assert.deepEqual(quantization('', 'QLoRA 8 bits'), { bits: 8, doubleQuant: false });
    assert.deepEqual(quantization('', 'LoRA 8-bit'), { bits: 8, doubleQuant: false });
    assert.deepEqual(quantization('', 'LoRA', 'nf4'), nf4);
    assert.equal(quantization('', 'LoRA', 'bf16'), undefined);
    assert.deepEqual(quantization('', 'LoRA', 'bf16', 'unsloth/llama-3-8b-bnb-4bit'), int4);
    assert.deepEqual(quantization('', 'LoRA', '', 'TheBloke/Llama-2-7B-GPTQ'), int4);
    assert.equal(quantization('', 'LoRA', '', 'meta-llama/Llama-2-7b-hf'), undefined);
    assert.equal(quantization('none', 'LoRA', '', 'unsloth/llama-3-8b-bnb-4bit'), 'none');
    // A 4-bit method over unquantized weights contradicts itself: unread rather than one of them chosen.
    const contradiction = quantization('none', 'QLoRA');
    assert.ok(isUnread(contradiction) && /contradicts/.test(contradiction.unread));
  });

  it("reads a fused loss the row names as the analysis reads a script's: Unsloth's in place, Liger's over the head", () => {
    assert.equal(fusedLossOf('Unsloth QLoRA, gradient checkpointing "unsloth"'), 'inPlace');
    assert.equal(fusedLossOf('TRL SFTTrainer, use_liger_kernel=True'), 'linear');
    assert.equal(fusedLossOf('Liger Kernel (FLCE)'), 'linear');
    // A model published under Unsloth's name, or a run without them, says nothing.
    assert.equal(fusedLossOf('QLoRA of unsloth/llama-3-8b-bnb-4bit with the HF Trainer'), undefined);
    assert.equal(fusedLossOf('HF + FA2, without Unsloth'), undefined);
    assert.equal(fusedLossOf('no liger'), undefined);
    assert.equal(fusedLossOf(undefined), undefined);
  });

  it('reads optimizers by the names tools give them', () => {
    const adamw: Optimizer = { state: 'adamw', paged: false, inBackward: false };
    const adam8: Optimizer = { state: 'adamw-8bit', paged: false, inBackward: false };
    table<Optimizer>(optimizerOf, 'optimizer', [
      ['AdamW', adamw],
      ['Adam', adamw],
      ['adamw_torch', adamw],
      ['adamw_torch_fused', { ...adamw, step: 'fused' }],
      ['AdamW (HF Trainer default adamw_hf)', { ...adamw, step: 'per-tensor' }],
      ['FusedAdam (DeepSpeed)', { ...adamw, step: 'fused' }],
      ['AdamW (fused, CPU offload)', { ...adamw, step: 'fused' }],
      ['lora-fa', adamw],
      ['paged_adamw_32bit', { state: 'adamw', paged: true, inBackward: false, step: 'fused' }],
      ['bnb PagedAdamW', { state: 'adamw', paged: true, inBackward: false, step: 'fused' }],
      ['paged_adamw_8bit', { state: 'adamw-8bit', paged: true, inBackward: false }],
      ['adamw_bnb_8bit', adam8],
      ['adamw_8bit', adam8],
      ['8-bit Adam', adam8],
      ['bnb Adam8bit', adam8],
      ['AdamW 8bit', adam8],
      ['bnb AdamW8bit (optimizer_in_bwd)', { state: 'adamw-8bit', paged: false, inBackward: true }],
      ['bnb PagedAdamW8bit + optimizer_in_bwd', { state: 'adamw-8bit', paged: true, inBackward: true }],
      ['Adafactor', { state: 'adafactor', paged: false, inBackward: false }],
      ['Adafactor (beta1=0.9)', 'unread'],
      ['AdamW (1 million steps)', adamw],
      ['SGD', { state: 'sgd', paged: false, inBackward: false }],
      ['SGD (momentum=0)', { state: 'sgd', paged: false, inBackward: false }],
      ['', undefined],
      ['not stated', undefined],
      ['SGD (momentum 0.9)', { state: 'momentum', paged: false, inBackward: false }],
      ['SGD with Nesterov momentum', { state: 'momentum', paged: false, inBackward: false }],
      ['Lion', { state: 'momentum', paged: false, inBackward: false }],
      ['paged_lion_32bit', { state: 'momentum', paged: true, inBackward: false }],
      ['RMSprop', { state: 'momentum', paged: false, inBackward: false }],
      ['paged_lion_8bit', { state: 'momentum-8bit', paged: true, inBackward: false }],
      ['galore_adamw', { state: 'adamw', paged: false, inBackward: false, galore: { layerwise: false } }],
      ['galore_adamw_8bit_layerwise', { state: 'adamw-8bit', paged: false, inBackward: true, galore: { layerwise: true } }],
      ['GaLore Adafactor (rank 64)', { state: 'adafactor', paged: false, inBackward: false, galore: { rank: 64, layerwise: false } }],
      ['Q-GaLore', 'unread'],
      ['LOMO', { state: 'sgd', paged: false, inBackward: true }],
      ['AdaLomo', { state: 'adafactor', paged: false, inBackward: true }],
      ['AdEMAMix', { state: 'ademamix', paged: false, inBackward: false }],
      ['paged_ademamix_8bit', { state: 'ademamix-8bit', paged: true, inBackward: false }],
      ['Adam-mini', { state: 'momentum', paged: false, inBackward: false }],
      ['schedule_free_adamw', adamw],
      ['adamw_torch_4bit', { state: 'adamw-4bit', paged: false, inBackward: false }],
      ['4-bit AdamW (torchao)', { state: 'adamw-4bit', paged: false, inBackward: false }],
      ['Sophia-G', adamw],
      ['Shampoo', 'unread'],
      ['CAME', 'unread'],
      ['mystery', 'unread'],
    ]);
  });

  it('reads precision: 16-bit weights, autocast over fp32 weights, or fp32', () => {
    const half = { weights: '16-bit', autocast: false };
    const mixed = { weights: 'fp32', autocast: true };
    const fp32 = { weights: 'fp32', autocast: false };
    table(precisionOf, 'precision', [
      ['bf16', half],
      ['BF16', half],
      ['fp16', half],
      ['bfloat16', half],
      ['pure bf16', half],
      ['bf16 weights (no AMP)', half],
      ['bf16 + tf32', half],
      ['bf16 weights, AMP off', half],
      ['bf16=True, fp16=False', half],
      ['16-bit', half],
      ['bf16 mixed', mixed],
      ['BF16 mixed', mixed],
      ['amp fp16', mixed],
      ['fp16 mixed (AMP)', mixed],
      ['mixed precision (bf16)', mixed],
      ['bf16 compute, fp32 master weights', mixed],
      ['AMP', mixed],
      ['fp32', fp32],
      ['fp32 (no AMP)', fp32],
      ['FP32 (no bf16 support)', fp32],
      ['tf32', fp32],
      ['full precision', fp32],
      ['32-bit', fp32],
      ['', undefined],
      ['not stated', undefined],
      // The quantization written where the precision goes: quantization() reads it; the compute dtype is unstated.
      ['nf4', undefined],
      ['4-bit', undefined],
      ['fp8', 'unread'],
      ['FP8 (Transformer Engine)', 'unread'],
      ['whatever', 'unread'],
    ]);
  });

  it('reads the per-GPU batch and the accumulation a batch cell gives', () => {
    table(batchOf, 'batch_per_gpu', [
      ['4', { batch: 4 }],
      ['bs=4', { batch: 4 }],
      ['micro_batch_size: 2', { batch: 2 }],
      ['4 (×8 accum)', { batch: 4, accumulation: 8 }],
      ['4 (x8 grad accum)', { batch: 4, accumulation: 8 }],
      ['4x8', { batch: 4, accumulation: 8 }],
      ['4 × 8', { batch: 4, accumulation: 8 }],
      ['8 (grad_accum 4)', { batch: 8, accumulation: 4 }],
      ['2, gradient_accumulation_steps=16', { batch: 2, accumulation: 16 }],
      ['1 (ga 1)', { batch: 1 }],
      ['global 64, 8 per GPU', { batch: 8 }],
      ['16 (global 128)', { batch: 16 }],
      ['4 × 8 GPUs', { batch: 4 }],
      ['4 × 16 GPUs', { batch: 4 }],
      ['8 per device', { batch: 8 }],
      ['1-8', { batch: 8 }],
      ['up to 16', { batch: 16 }],
      ['', undefined],
      ['not stated', undefined],
      ['auto', undefined],
      ['global 64', 'unread'],
      ['16384 tokens', 'unread'],
      ['large', 'unread'],
    ]);
  });

  it('reads sequence lengths, taking the upper end of a range or bound', () => {
    table(sequenceOf, 'seq_len', [
      ['2048', 2048],
      ['2,048', 2048],
      ['2048 (packed)', 2048],
      ['4096 (max_seq_len)', 4096],
      ['768 (max; unpacked MetaMathQA)', 768],
      ['2k', 2048],
      ['4K', 4096],
      ['1.5k', 1536],
      ['128k', 131072],
      ['8192 tokens', 8192],
      ['up to 1024', 1024],
      ['max 512', 512],
      ['≤ 512', 512],
      ['<=512', 512],
      ['512-2048', 2048],
      ['512–2048', 2048],
      ['512 to 2k', 2048],
      ['avg 350, max 512', 512],
      ['21,848', 21848],
      ['4096 (Llama-3.1-8B default)', 4096],
      ['2048 (2023-05 table)', 2048],
      ['', undefined],
      ['not stated', undefined],
      ['variable', undefined],
      ['avg 350', 'unread'],
      ['1024/256', 'unread'],
      ['512 + 512', 'unread'],
      ['long', 'unread'],
    ]);
  });

  it('reads LoRA ranks', () => {
    table(rankOf, 'lora_rank', [
      ['16', 16],
      ['r=16', 16],
      ['rank 64', 64],
      ['64 (alpha 128)', 64],
      ['r16', 16],
      ['', undefined],
      ['high', 'unread'],
    ]);
  });

  it('reads methods: full, LoRA and its variants, PEFT adapters by name, and unread for what is not modelled', () => {
    const lora = { kind: 'lora' as const, dora: false };
    table(methodOf, 'method', [
      ['full', { kind: 'full' }],
      ['Full FT', { kind: 'full' }],
      ['Full fine-tuning', { kind: 'full' }],
      ['full-parameter', { kind: 'full' }],
      ['Full parameter (bf16)', { kind: 'full' }],
      ['FFT', { kind: 'full' }],
      ['full (single device)', { kind: 'full' }],
      ['LoRA', lora],
      ['lora', lora],
      ['LoRA (q,v)', lora],
      ['LoRA all-linear', lora],
      ['LoRA r=16', { ...lora, rank: 16 }],
      ['LoRA (r=64, alpha=16)', { ...lora, rank: 64 }],
      ['LoRA+', lora],
      ['rsLoRA', lora],
      ['PiSSA', lora],
      ['QLoRA', lora],
      ['QLoRA (4-bit)', lora],
      ['DoRA', { kind: 'lora' as const, dora: true }],
      ['QDoRA', { kind: 'lora' as const, dora: true }],
      ['LoRA+DoRA', { kind: 'lora' as const, dora: true }],
      ['LoRA + DoRA', { kind: 'lora' as const, dora: true }],
      ['LoRA-FA', { kind: 'adapter', name: 'LoRA-FA' }],
      ['ADALORA', { kind: 'adapter', name: 'ADALORA' }],
      ['PROMPT_TUNING', { kind: 'adapter', name: 'PROMPT_TUNING', peft: 'prompttuning' }],
      ['prompt tuning', { kind: 'adapter', name: 'prompt tuning', peft: 'prompttuning' }],
      ['PREFIX_TUNING', { kind: 'adapter', name: 'PREFIX_TUNING', peft: 'prefixtuning' }],
      ['prefix', { kind: 'adapter', name: 'prefix', peft: 'prefixtuning' }],
      ['P-Tuning v2', { kind: 'adapter', name: 'P-Tuning v2', peft: 'prefixtuning' }],
      ['P-tuning', { kind: 'adapter', name: 'P-tuning', peft: 'ptuning' }],
      ['(IA)^3', { kind: 'adapter', name: '(IA)^3', peft: 'ia3' }],
      ['IA3', { kind: 'adapter', name: 'IA3', peft: 'ia3' }],
      ['', undefined],
      ['SFT (full)', { kind: 'full' }],
      ['LoRA (frozen base)', lora],
      ['full (GaLore)', { kind: 'full', galore: { layerwise: false } }],
      ['DPO (full)', { kind: 'full', preference: 'dpo' }],
      ['DPO', { kind: 'full', preference: 'dpo' }],
      ['SFT + DPO', { kind: 'full', preference: 'dpo' }],
      ['DPO (LoRA r=16)', { ...lora, rank: 16, preference: 'dpo' }],
      ['QLoRA + DPO', { ...lora, preference: 'dpo' }],
      ['ORPO (QLoRA)', { ...lora, preference: 'orpo' }],
      ['SimPO full', { kind: 'full', preference: 'cpo' }],
      ['KTO LoRA', { ...lora, preference: 'kto' }],
      ['DPO (freeze)', 'unread'],
      ['GRPO (LoRA)', 'unread'],
      ['PPO', 'unread'],
      ['freeze', 'unread'],
      ['Freeze (last 2 layers)', { kind: 'full', trainedLayers: 2 }],
      ['freeze tuning (freeze_trainable_layers=4)', { kind: 'full', trainedLayers: 4 }],
      ['GaLore', { kind: 'full', galore: { layerwise: false } }],
      ['GaLore (rank 128)', { kind: 'full', galore: { rank: 128, layerwise: false } }],
      ['GaLore layerwise', { kind: 'full', galore: { layerwise: true } }],
      ['Q-GaLore', 'unread'],
      ['DPO (GaLore)', 'unread'],
      ['LISA', 'unread'],
    ]);
  });

  it('reads the trainable parameters and virtual tokens the notes publish', () => {
    assert.equal(trainableParamsOf('targets q_proj,v_proj; trainable params 9175040; 99th pct'), 9175040);
    assert.equal(trainableParamsOf('trainable params: 4,194,304 || all params: 6,742,609,920'), 4194304);
    assert.equal(trainableParamsOf('trainable parameters 4.19M'), 4190000);
    assert.equal(trainableParamsOf('no count'), undefined);
    assert.equal(virtualTokensOf('num_virtual_tokens=20'), 20);
    assert.equal(virtualTokensOf('prompt of 30 virtual tokens'), 30);
    assert.equal(virtualTokensOf(''), undefined);
  });

  it('reads the GPU\'s memory from its size or a card sold in one size, and not from a card sold in several', () => {
    const cases: Array<[string, number | undefined]> = [
      ['A100 80GB', 80],
      ['A100-SXM4-80GB', 80],
      ['H100 80G', 80],
      ['H100', 80],
      ['RTX 3090', 24],
      ['RTX 4090 24GB', 24],
      ['T4 16GB', 16],
      ['T4', 16],
      ['A10G', 24],
      ['L4', 24],
      ['NVIDIA L40S 48GB', 48],
      ['24GB GPUs (model not stated)', 24],
      ['8x A100 40GB', 40],
      ['A100 (variant not stated)', undefined],
      ['V100', undefined],
      ['RTX 4090 Laptop', undefined],
      ['not stated', undefined],
    ];
    for (const [text, expected] of cases) assert.equal(gpuMemory(text), expected, text);
    // A published out-of-memory run is checked against the largest memory its card is sold with.
    assert.equal(largestGpuMemory('A100'), 80);
    assert.equal(largestGpuMemory('V100'), 32);
    assert.equal(largestGpuMemory('A100 40GB'), 40);
    assert.equal(largestGpuMemory('not stated'), undefined);
  });

  it('reads the GPU count from the count cell or the GPU text', () => {
    assert.equal(gpuCount('8'), 8);
    assert.equal(gpuCount('8 (FSDP)'), 8);
    assert.equal(gpuCount('2 nodes x 8'), 16);
    assert.equal(gpuCount('2x8'), 16);
    assert.equal(gpuCount('single'), 1);
    assert.equal(gpuCount('', '8x A100 80GB'), 8);
    assert.equal(gpuCount('', '2 × RTX 3090'), 2);
    assert.equal(gpuCount('', 'A100-SXM4-80GB'), 1);
    assert.equal(gpuCount('not stated', 'RTX 4090 24GB'), 1);
    assert.ok(isUnread(gpuCount('several')));
  });

  it('reads the figure, its unit, a range\'s upper end and a published out-of-memory result', () => {
    table(measuredOf, 'measured_gb', [
      ['14.6', 14.6],
      ['~14.6 GB', 14.6],
      ['14,950 MiB', 14950 / 1024],
      ['72-80', 80],
      ['64 (80%)', 64],
      ['OOM', 'oom'],
      ['OOM (>80GB)', 'oom'],
      ['14.6 (OOM at batch 8)', 'unread'],
      ['12.3 / 14.0', 'unread'],
      ['15+', 'unread'],
      ['out of memory', 'oom'],
      ['', undefined],
      ['>80', 'unread'],
      ['lots', 'unread'],
    ]);
  });
});
