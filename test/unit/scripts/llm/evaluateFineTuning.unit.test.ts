import * as assert from 'node:assert/strict';
import { median } from '../../../../scripts/evaluation/statistics';
import { decimalGigabytes, measuredGiB } from '../../../../scripts/llm/rowFields';
import { checkpointOf, measureKind, rowCheckpoint, shapeKey, parseCsv, pinball, rowToJob, targetsOf, TARGET_QUANTILE } from '../../../../scripts/llm/evaluateFineTuning';

const header = 'source,url_or_repo_path,model,params_b,method,lora_rank,quant,grad_ckpt,optimizer,precision,batch_per_gpu,seq_len,num_gpus,gpu,measured_gb,measure_kind,notes';
const row = (values: Record<string, string>) => {
  const fields = header.split(',');
  return parseCsv(`${header}\n${fields.map((f) => `"${(values[f] ?? '').replace(/"/g, '""')}"`).join(',')}\n`)[0]!;
};

describe('evaluateFineTuning', () => {
  it('parses quoted CSV fields with commas and doubled quotes', () => {
    const [first] = parseCsv('a,b,c\n"x, y","say ""hi""",3\n');
    assert.deepEqual(first, { a: 'x, y', b: 'say "hi"', c: '3' });
  });

  it('reads what a row measured', () => {
    assert.equal(measureKind('NVML used memory (nvidia-smi equivalent)'), 'driver');
    assert.equal(measureKind('torch.cuda.max_memory_reserved minus ~0 init'), 'reserved');
    assert.equal(measureKind('Peak Memory Active (GiB) from torch.cuda memory stats'), 'allocated');
    assert.equal(measureKind('peak memory (type not stated)'), 'unstated');
    assert.equal(measureKind('torchtune logs torch.cuda memory stats (peak active/alloc/reserved) - which one not stated'), 'unstated');
    assert.equal(measureKind('torch.cuda.max_memory_allocated()'), 'allocated');
    assert.equal(measureKind('peak reserved'), 'reserved');
    assert.equal(measureKind('nvidia-smi'), 'driver');
    assert.equal(measureKind('W&B system GPU memory'), 'driver');
    assert.equal(measureKind('peak allocated (not reserved)'), 'allocated');
    assert.equal(measureKind('reported "GB GPU"; method not stated (example scripts print TorchTracemalloc peak)'), 'allocated');
  });

  it('reads checkpointing the row leaves "not stated" from the tool\'s cited config, and only there', () => {
    const may = { source: 'pytorch/torchtune README (May 2024 table)', model: 'Llama-2-70B', method: 'full', optimizer: 'bnb PagedAdamW', precision: 'bf16', batch_per_gpu: '4', seq_len: '4096', num_gpus: '1', measured_gb: '70.4' };
    const notStated = rowToJob(row({ ...may, grad_ckpt: 'not stated' }));
    assert.ok('job' in notStated && notStated.job.checkpointing);
    assert.match(('job' in notStated && notStated.documented) || '', /enable_activation_checkpointing: True/);
    // A stated value wins over the config's default.
    const off = rowToJob(row({ ...may, grad_ckpt: 'off' }));
    assert.ok('job' in off && !off.job.checkpointing && off.documented === undefined);
    // Another source's unstated checkpointing stays off, with no citation.
    const other = rowToJob(row({ ...may, source: 'some blog', grad_ckpt: 'not stated' }));
    assert.ok('job' in other && !other.job.checkpointing && other.documented === undefined);
  });

  it("reads torchtune's AdamW as fused and its loss as chunked from v0.3 (Sept 2024) on, as its configs set them, and says so", () => {
    const sept = { source: 'pytorch/torchtune README (Sept 2024+ table)', model: 'Llama-3.1-8B', method: 'full (single device)', grad_ckpt: 'on (config default)', optimizer: 'AdamW', precision: 'bf16', batch_per_gpu: '2', seq_len: '2048 (packed)', num_gpus: '1', measured_gb: '30' };
    const late = rowToJob(row(sept));
    assert.ok('job' in late && late.job.optimizerStep === 'fused' && late.job.chunkedLoss === 8, JSON.stringify(late));
    assert.ok(late.assumed?.some((a) => /fused: True/.test(a)) && late.assumed.some((a) => /CEWithChunkedOutputLoss/.test(a)));
    // torchtune's May 2024 figures: neither (its configs of then are not read so).
    const early = rowToJob(row({ ...sept, source: 'pytorch/torchtune README (May 2024 table)' }));
    assert.ok('job' in early && early.job.optimizerStep === 'foreach' && early.job.chunkedLoss === undefined);
    // Another source's AdamW is foreach unless the row says fused.
    const other = rowToJob(row({ ...sept, source: 'some blog' }));
    assert.ok('job' in other && other.job.optimizerStep === 'foreach');
    const fused = rowToJob(row({ ...sept, source: 'some blog', optimizer: 'adamw_torch_fused' }));
    assert.ok('job' in fused && fused.job.optimizerStep === 'fused' && !fused.assumed?.some((a) => /fused: True/.test(a)));
  });

  it("gives an Unsloth row Unsloth's fused cross-entropy, as the analysis gives an Unsloth script", () => {
    const unsloth = { source: 'some blog', model: 'Llama-3.1-8B', method: 'QLoRA (Unsloth)', lora_rank: '16', quant: 'nf4', grad_ckpt: 'unsloth', optimizer: 'adamw_8bit', precision: 'bf16', batch_per_gpu: '2', seq_len: '2048', num_gpus: '1', measured_gb: '8' };
    const job = rowToJob(row(unsloth));
    assert.ok('job' in job && job.job.fusedLoss === 'inPlace' && job.job.activationOffload === true, JSON.stringify(job));
    const plain = rowToJob(row({ ...unsloth, method: 'QLoRA', grad_ckpt: 'on', notes: 'HF + FA2' }));
    assert.ok('job' in plain && plain.job.fusedLoss === undefined);
  });

  it("turns a preference-training row into the job TRL's trainer runs: pairs, the reference TRL keeps unless the notes say it was precomputed", () => {
    const dpo = { source: 'some blog', model: 'Llama-2-7b', params_b: '6.74', method: 'DPO (LoRA)', lora_rank: '16', quant: 'none', grad_ckpt: 'on', optimizer: 'adamw', precision: 'bf16', batch_per_gpu: '2', seq_len: '1024', num_gpus: '1', measured_gb: '20' };
    const job = rowToJob(row(dpo));
    assert.ok('job' in job, JSON.stringify(job));
    assert.deepEqual(job.job.preference, { trainer: 'dpo', reference: 'default' });
    assert.equal(job.group, 'DPO, LoRA');
    const precomputed = rowToJob(row({ ...dpo, notes: 'precompute_ref_log_probs=True' }));
    assert.ok('job' in precomputed && precomputed.job.preference?.reference === 'none');
    const grpo = rowToJob(row({ ...dpo, method: 'GRPO (LoRA)' }));
    assert.ok('skip' in grpo && /RL training/.test(grpo.skip));
  });

  it('finds Llama 3.1 70B and 405B in the catalog', () => {
    assert.equal(checkpointOf('Llama-3.1-70B')?.name, 'meta-llama/Llama-3.1-70B');
    assert.equal(checkpointOf('Llama-3.1-405B')?.name, 'meta-llama/Llama-3.1-405B');
  });

  it("gives a model the catalog lacks a shape assumed from the row's params_b, counted apart; declines mixture-of-experts", () => {
    const base = { source: 'some blog', method: 'QLoRA', lora_rank: '16', quant: 'nf4', grad_ckpt: 'on', optimizer: 'paged_adamw_8bit', precision: 'bf16', batch_per_gpu: '1', seq_len: '2048', num_gpus: '1', measured_gb: '12' };
    const known = rowToJob(row({ ...base, model: 'Llama-2-7b', params_b: '6.74' }));
    assert.ok('job' in known && known.assumedShape === undefined);
    const assumed = rowCheckpoint(row({ ...base, model: 'acme/SuperLM-20b', params_b: '19.5' }));
    assert.ok(!('skip' in assumed) && assumed.assumed !== undefined);
    assert.match(assumed.assumed, /stated size \(19\.5B\)/);
    const job = rowToJob(row({ ...base, model: 'acme/SuperLM-20b', params_b: '19.5' }));
    assert.ok('job' in job && job.assumedShape === true);
    // A mixture of experts the catalog lacks is declined; the ones it has are estimated with their experts (moe.ts).
    const mixture = rowToJob(row({ ...base, model: 'Qwen/Qwen2-57B-A14B', params_b: '57.4' }));
    assert.ok('skip' in mixture && /mixture-of-experts/.test(mixture.skip));
    const mixtral = rowToJob(row({ ...base, model: 'mistralai/Mixtral-8x7B-v0.1', params_b: '46.7' }));
    assert.ok('job' in mixtral && mixtral.job.shape.moe?.experts === 8 && mixtral.assumedShape === undefined);
  });

  it('reads LoRA targets from the notes and the method', () => {
    assert.deepEqual(targetsOf('LoRA', 'targets q_proj,v_proj; trainable'), ['q_proj', 'v_proj']);
    assert.deepEqual(targetsOf('LoRA (q,v)', ''), ['q_proj', 'v_proj']);
    assert.equal(targetsOf('LoRA all-linear', ''), 'all-linear');
    assert.equal(targetsOf('LoRA all linear layers (attn q,k,v,o + MLP + output)', '')?.length, 8);
    assert.equal(targetsOf('QLoRA', 'q,k,v,o + MLP; compile')?.length, 7);
  });

  it('turns a LoRA row into a job and says why it skips others', () => {
    const converted = rowToJob(row({ source: 's', model: 'meta-llama/Llama-3.2-3B', method: 'LoRA', lora_rank: '32', quant: 'none', grad_ckpt: 'off', optimizer: 'AdamW', precision: 'bf16 weights (no AMP)', batch_per_gpu: '4', seq_len: '768 (max)', num_gpus: '1', measured_gb: '20', measure_kind: 'max_memory_reserved', notes: 'targets q_proj,v_proj' }));
    assert.ok('job' in converted);
    assert.equal(converted.job.weightBits, 16);
    assert.equal(converted.job.seq, 768);
    assert.equal(converted.kind, 'reserved');
    assert.deepEqual(converted.job.adapter, { method: 'lora', rank: 32, targetModules: ['q_proj', 'v_proj'], dora: false });
    const sharded = rowToJob(row({ model: 'meta-llama/Llama-2-70b-hf', method: 'LoRA', num_gpus: '8', batch_per_gpu: '8', seq_len: '2048' }));
    assert.ok('skip' in sharded && /several GPUs/.test(sharded.skip));
    const noSeq = rowToJob(row({ model: 'Llama-2-7B', method: 'LoRA (q,v)', lora_rank: '8', num_gpus: '1', batch_per_gpu: '2' }));
    assert.ok('skip' in noSeq && /sequence length/.test(noSeq.skip));
    // A name with no size tag and no params_b: no shape to assume (one with a size gets one: below).
    const unknown = rowToJob(row({ model: 'acme/unknown-model', method: 'full', num_gpus: '1' }));
    assert.ok('skip' in unknown && /catalog/.test(unknown.skip));
  });

  it('fills what a row leaves out from the documented defaults of the tool it comes from, and says so', () => {
    const bloomz = rowToJob(row({ source: 'huggingface/peft README (GPU memory)', model: 'bigscience/bloomz-7b1', method: 'LoRA (PEFT, plain PyTorch)', num_gpus: '1', measured_gb: '32', measure_kind: 'reported "GB GPU"' }));
    assert.ok('job' in bloomz);
    assert.equal(bloomz.job.batch, 8);
    assert.equal(bloomz.job.seq, 64);
    assert.equal(bloomz.job.weightBits, 32);
    assert.equal(bloomz.job.adapterDropout, true);
    assert.match(bloomz.documented ?? '', /peft_lora_clm_accelerate_ds_zero3_offload\.py/);
    // T0's example pads to the longest tweet of each batch: no length to use.
    const t0 = rowToJob(row({ source: 'huggingface/peft README (GPU memory)', model: 'bigscience/T0_3B', method: 'LoRA (PEFT, plain PyTorch)', num_gpus: '1', measured_gb: '14.4' }));
    assert.ok('skip' in t0 && /sequence length/.test(t0.skip));
    // A published out-of-memory run is checked at one token when its length is not published.
    const oom = rowToJob(row({ source: 'huggingface/peft README (GPU memory)', model: 'bigscience/mt0-xxl', method: 'full', num_gpus: '1', measure_kind: 'OOM (no number)' }));
    assert.ok('job' in oom && oom.job.seq === 1);


  });

  it('carries torch.compile through a source\'s cumulative techniques and reads "no torch.compile" as off', () => {
    const carried = {};
    const base = { source: 't', model: 'meta-llama/Llama-3.2-3B', method: 'full', quant: 'none', grad_ckpt: 'off', optimizer: 'AdamW', precision: 'bf16', batch_per_gpu: '2', seq_len: '4096', num_gpus: '1', measured_gb: '50' };
    const compiled = rowToJob(row({ ...base, notes: 'technique "+ Compile"; techniques applied cumulatively; packed + torch.compile' }), carried);
    const next = rowToJob(row({ ...base, notes: 'technique "+ Chunked Cross Entropy"; techniques applied cumulatively' }), carried);
    assert.ok('job' in compiled && compiled.job.compiled && 'job' in next && next.job.compiled);
    const off = rowToJob(row({ ...base, notes: 'no torch.compile' }));
    assert.ok('job' in off && !off.job.compiled);
  });

  it('reads GaLore rows (rank from the method, the optimizer or the rank column, else the default said) and freeze tuning of the last layers', () => {
    const base = { source: 's', model: 'meta-llama/Llama-3.2-3B', quant: 'none', grad_ckpt: 'on', precision: 'bf16', batch_per_gpu: '4', seq_len: '1024', num_gpus: '1', measured_gb: '20', measure_kind: 'max_memory_allocated' };
    const galore = rowToJob(row({ ...base, method: 'GaLore', lora_rank: '256', optimizer: 'AdamW' }));
    assert.ok('job' in galore && galore.group === 'full, GaLore', JSON.stringify(galore));
    assert.deepEqual(galore.job.galore, { rank: 256, targets: 'all-linear' });
    assert.equal(galore.job.adapter, undefined);
    const byOptimizer = rowToJob(row({ ...base, method: 'full', optimizer: 'galore_adamw_8bit_layerwise' }));
    assert.ok('job' in byOptimizer && byOptimizer.group === 'full, GaLore');
    assert.deepEqual(byOptimizer.job.galore, { rank: 128, targets: 'all-linear' });
    assert.equal(byOptimizer.job.optimizer, 'adamw-8bit');
    assert.equal(byOptimizer.job.optimizerInBackward, true);
    assert.ok(byOptimizer.assumed?.includes("GaLore rank not stated: 128 (transformers' default)"));
    // Llama-3.2-3B's layers are 100,669,440 parameters each: the last two train, autograd records only them.
    const freeze = rowToJob(row({ ...base, method: 'Freeze (last 2 layers)', optimizer: 'AdamW' }));
    assert.ok('job' in freeze && freeze.group === 'full, last layers (freeze)');
    assert.deepEqual(freeze.job.frozen, { trainableParams: 2 * 100_669_440, recordedLayers: 2 });
    const tooMany = rowToJob(row({ ...base, method: 'Freeze (last 40 layers)', optimizer: 'AdamW' }));
    assert.ok('skip' in tooMany && /40 layers of a 28-layer model/.test(tooMany.skip));
  });

  it('extends prompt tuning\'s sequence by its virtual tokens, from the trainable count or the notes, and prefix tuning\'s by none', () => {
    const base = { source: 's', model: 'meta-llama/Llama-3.2-3B', quant: 'none', grad_ckpt: 'off', optimizer: 'AdamW', precision: 'bf16', batch_per_gpu: '4', seq_len: '768', num_gpus: '1', measured_gb: '22', measure_kind: 'max_memory_reserved' };
    // Llama 3.2 3B: hidden 3072, 28 layers, 8 key-value heads of 128.
    const prompt = rowToJob(row({ ...base, method: 'PROMPT_TUNING', notes: 'trainable params 614400' }));
    assert.ok('job' in prompt && prompt.job.seq === 968 && prompt.job.adapter?.trainableParams === 614400);
    const named = rowToJob(row({ ...base, method: 'prompt tuning', notes: 'num_virtual_tokens=20' }));
    assert.ok('job' in named && named.job.seq === 788 && named.job.adapter?.trainableParams === 20 * 3072);
    const prefix = rowToJob(row({ ...base, method: 'PREFIX_TUNING', notes: 'trainable params 11468800' }));
    assert.ok('job' in prefix && prefix.job.seq === 768 && prefix.job.adapter?.trainableParams === 11468800);
    const uneven = rowToJob(row({ ...base, method: 'PROMPT_TUNING', notes: 'trainable params 614401' }));
    assert.ok('skip' in uneven && /whole number of virtual tokens/.test(uneven.skip));
    const pTuning = rowToJob(row({ ...base, method: 'P-tuning', notes: 'trainable params 1000000' }));
    assert.ok('skip' in pTuning && /num_virtual_tokens/.test(pTuning.skip));
  });

  it('skips a row whose field it cannot read, naming the field and its text, and reads the phrasings of other tables', () => {
    const base = { source: 's', model: 'meta-llama/Llama-3.2-3B', method: 'LoRA', lora_rank: '16', quant: 'none', grad_ckpt: 'yes', optimizer: 'paged_adamw_8bit', precision: 'BF16 mixed', batch_per_gpu: '4 (×8 accum)', seq_len: '2k', num_gpus: '1', gpu: 'A100-SXM4-80GB', measured_gb: '20', measure_kind: 'torch.cuda.max_memory_allocated()' };
    const read = rowToJob(row(base));
    assert.ok('job' in read);
    assert.equal(read.job.checkpointing, true);
    assert.equal(read.job.optimizer, 'adamw-8bit');
    assert.equal(read.job.paged, true);
    assert.equal(read.job.autocast, true);
    assert.equal(read.job.weightBits, 32);
    assert.equal(read.job.batch, 4);
    assert.equal(read.job.accumulation, 8);
    assert.equal(read.job.seq, 2048);
    assert.equal(read.kind, 'allocated');
    const qlora = rowToJob(row({ ...base, method: 'QLoRA (4-bit)', quant: '', precision: 'bf16' }));
    assert.ok('job' in qlora && qlora.job.weightBits === 4 && qlora.group === 'QLoRA');
    const shampoo = rowToJob(row({ ...base, optimizer: 'Shampoo' }));
    assert.ok('skip' in shampoo && /optimizer "Shampoo"/.test(shampoo.skip));
    const freeze = rowToJob(row({ ...base, method: 'freeze (LISA)' }));
    assert.ok('skip' in freeze && /method "freeze/.test(freeze.skip));
    const average = rowToJob(row({ ...base, seq_len: 'avg 300' }));
    assert.ok('skip' in average && /seq_len "avg 300"/.test(average.skip));
    const oom = rowToJob(row({ ...base, measured_gb: 'OOM', seq_len: '' }));
    assert.ok('job' in oom && oom.job.seq === 1);
    // Fields left unstated are read by the documented rules, and the conversion says which.
    const bare = rowToJob(row({ ...base, grad_ckpt: '', optimizer: '', precision: '', num_gpus: '' }));
    assert.ok('job' in bare && bare.job.optimizer === 'adamw' && !bare.job.checkpointing && bare.job.weightBits === 16);
    assert.deepEqual(bare.assumed, ['precision not stated: 16-bit weights', 'optimizer not stated: AdamW', 'checkpointing not stated: off', 'GPU count not stated: one']);
    assert.equal(read.assumed, undefined);
    const fsdp = rowToJob(row({ ...base, num_gpus: '8 (FSDP)' }));
    assert.ok('skip' in fsdp && /several GPUs/.test(fsdp.skip));
  });

  it('reads "targets" in the notes as module names only where they end the clause', () => {
    assert.deepEqual(targetsOf('QLoRA', 'rank/targets from llama2/7B_qlora_single_device config (q,k,v,o + MLP); batch'), ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']);
    assert.deepEqual(targetsOf('LoRA', 'targets q_proj,v_proj'), ['q_proj', 'v_proj']);
  });

  it('costs an estimate under the figure nine times one over it at the 0.9 quantile, the target', () => {
    assert.equal(TARGET_QUANTILE, 0.9);
    assert.ok(Math.abs(pinball([0.1]) - 0.09) < 1e-12);
    assert.ok(Math.abs(pinball([-0.1]) - 0.01) < 1e-12);
    assert.ok(Math.abs(pinball([0.1], 0.8) - 0.08) < 1e-12);
  });

  it("reads torchtune's figures from before its GiB logging, and figures said to be /1e9, as decimal gigabytes", () => {
    const base = { model: 'Llama-2-7B', method: 'LoRA', measured_gb: '15.57' };
    assert.ok(decimalGigabytes(row({ ...base, source: 'pytorch/torchtune docs tutorials', measure_kind: 'peak memory reserved during training (GB as printed by torchtune)' })));
    assert.ok(decimalGigabytes(row({ ...base, source: 'pytorch/torchtune README (May 2024 table)' })));
    assert.ok(!decimalGigabytes(row({ ...base, source: 'pytorch/torchtune README (Sept 2024+ table)', measure_kind: '"Peak Memory per GPU" in GiB' })));
    assert.ok(decimalGigabytes(row({ ...base, source: 'a blog', measure_kind: 'max_memory_allocated() / 1e9' })));
    assert.ok(!decimalGigabytes(row({ ...base, source: 'a blog', measure_kind: 'max_memory_allocated() bytes/2^30 -> GiB' })));
    // 15.57e9 bytes are 14.50 GiB.
    assert.ok(Math.abs((measuredGiB(row({ ...base, source: 'pytorch/torchtune docs tutorials' })) as number) - 14.501) < 0.001);
    assert.equal(measuredGiB(row({ ...base, source: 'a blog' })), 15.57);
  });

  it('finds the catalog checkpoint for the names sources write: organisation, case, -hf/-chat/-instruct and version tags aside', () => {
    assert.equal(checkpointOf('Mistral-7B')?.name, 'mistralai/Mistral-7B-v0.1');
    // v0.2 has its own entry now; v0.1, v0.2 and v0.3 share a shape key and the oldest answers for the bare name.
    assert.equal(checkpointOf('mistralai/Mistral-7B-Instruct-v0.2')?.name, 'mistral-community/Mistral-7B-v0.2');
    assert.equal(checkpointOf('Llama-2-13b-chat-hf')?.name, 'meta-llama/Llama-2-13b-hf');
    assert.equal(checkpointOf('facebook/OPT-125M')?.name, 'facebook/opt-125m');
    assert.equal(checkpointOf('gemma-2b-it')?.name, 'google/gemma-2b');
    // The mixtures of experts (moe.ts).
    assert.equal(checkpointOf('Mixtral-8x7B')?.name, 'mistralai/Mixtral-8x7B-v0.1');
    assert.equal(checkpointOf('mistralai/Mixtral-8x7B-Instruct-v0.1')?.name, 'mistralai/Mixtral-8x7B-v0.1');
    assert.equal(checkpointOf('Mixtral-8x22B-v0.1')?.name, 'mistral-community/Mixtral-8x22B-v0.1');
    assert.equal(checkpointOf('Qwen1.5-MoE-A2.7B')?.name, 'Qwen/Qwen1.5-MoE-A2.7B-Chat');
    // Two checkpoints would share the key: none is chosen.
    assert.equal(checkpointOf('acme/unknown-7b'), undefined);
    assert.equal(shapeKey('Qwen/Qwen2.5-7B-Instruct'), 'qwen257b');
  });

  it('takes the median of an even and an odd list', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });
});
