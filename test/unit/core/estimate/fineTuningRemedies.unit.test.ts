import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { markdownSummary } from '../../../../src/core/display/reportData';
import { fineTuningRemedies } from '../../../../src/core/estimate/fineTuningRemedies';
import { estimateCurve, gpuComparison } from '../../../../src/core/estimate/outlook';
import { jobDriverMiB } from '../../../../src/core/estimate/longestSequence';
import { estimateFineTuning, type FineTuningJob } from '../../../../src/core/estimators/fineTuning';
import { BYTES_PER_MIB } from '../../../../src/core/format/units';
import { findGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { checkpointShape, estimate, REPO_ROOT } from '../../fixtures';

const llm = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', name), 'utf8');
const gpu = (id: string) => {
  const profile = findGpuProfile(id);
  assert.ok(profile, id);
  return profile;
};
const RTX_4090 = gpu('rtx4090-24gb').memoryMiB;

function llama(name: string, over: Partial<FineTuningJob> = {}): FineTuningJob {
  const shape = checkpointShape(name);
  return { shape, batch: 4, seq: 1024, weightBits: 16, computeBytes: 2, optimizer: 'adamw', checkpointing: false, ...over };
}

describe('fineTuningRemedies', () => {
  it('has nothing to suggest for a job that fits outside the safety margin', () => {
    const job = llama('meta-llama/Llama-3.2-1B', { batch: 1, seq: 256, checkpointing: true, adapter: { method: 'lora', rank: 8 } });
    assert.ok(jobDriverMiB(job) < 0.5 * RTX_4090);
    assert.deepEqual(fineTuningRemedies(job, RTX_4090, 0.1), []);
  });

  it('estimates each change on the job with that change, smallest first, and says which keep the training the same', () => {
    const job = llama('meta-llama/Llama-2-7b-hf', { batch: 1, eagerAttention: true });
    const remedies = fineTuningRemedies(job, RTX_4090, 0.1);
    const byKind = new Map(remedies.filter((r) => r.changes.length === 1).map((r) => [r.changes[0], r]));
    assert.deepEqual([...byKind.keys()].sort(), ['checkpointing', 'fourBit', 'galore', 'lora', 'optimizer8bit', 'sdpa', 'shorterSequence'], 'a batch of 1 has no smaller micro-batch');
    assert.deepEqual(remedies.map((r) => r.driverMiB), [...remedies.map((r) => r.driverMiB)].sort((a, b) => a - b));
    const mib = (over: Partial<FineTuningJob>) => {
      const estimate = estimateFineTuning({ ...job, ...over });
      return (estimate.driver + estimate.fittedMargin) / BYTES_PER_MIB;
    };
    assert.equal(byKind.get('checkpointing')!.driverMiB, mib({ checkpointing: true }));
    assert.equal(byKind.get('sdpa')!.driverMiB, mib({ eagerAttention: false }));
    assert.equal(byKind.get('lora')!.driverMiB, mib({ adapter: { method: 'lora', rank: 8 } }));
    assert.equal(byKind.get('optimizer8bit')!.driverMiB, mib({ optimizer: 'adamw-8bit' }));
    assert.equal(byKind.get('galore')!.driverMiB, mib({ galore: { rank: 128, targets: 'all-linear' } }));
    assert.equal(byKind.get('galore')!.change, 'GaLore (optim="galore_adamw", rank 128 on every linear layer: still a full fine-tune)');
    // Below 8-bit AdamW: the layers' state shrinks to the projections, the embeddings' and head's stay full.
    assert.ok(byKind.get('galore')!.driverMiB < byKind.get('optimizer8bit')!.driverMiB);
    assert.equal(byKind.get('fourBit')!.driverMiB, mib({ adapter: { method: 'lora', rank: 8 }, weightBits: 4, doubleQuant: true, kbitPrepared: true }));
    for (const kind of ['checkpointing', 'sdpa'] as const) assert.equal(byKind.get(kind)!.sameTraining, true, kind);
    for (const kind of ['lora', 'fourBit', 'galore', 'optimizer8bit', 'shorterSequence'] as const) assert.equal(byKind.get(kind)!.sameTraining, false, kind);
    // Only QLoRA brings a full fine-tune of 7B parameters under 24 GB: LoRA alone keeps 13 GB of bf16 weights and eager attention's probabilities.
    assert.deepEqual(remedies.filter((r) => r.fits).map((r) => r.changes), [['fourBit']]);
    assert.equal(remedies[0]!.change, 'QLoRA (4-bit NF4 and LoRA r=8)');
  });

  it("offers DPO's precomputed reference log-probabilities, the same training without the reference copy and its forward in the step", () => {
    const job = llama('meta-llama/Llama-3.2-3B', { batch: 2, seq: 1024, checkpointing: true, preference: { trainer: 'dpo', reference: 'default' } });
    assert.ok(jobDriverMiB(job) > RTX_4090);
    const remedy = fineTuningRemedies(job, RTX_4090, 0.1).find((r) => r.changes.join() === 'precomputedReference');
    assert.ok(remedy);
    assert.equal(remedy.sameTraining, true);
    assert.match(remedy.change, /^precompute_ref_log_probs=True/);
    const without = estimateFineTuning({ ...job, preference: { trainer: 'dpo', reference: 'none' } });
    assert.equal(remedy.driverMiB, (without.driver + without.fittedMargin) / BYTES_PER_MIB);
    // The frozen copy of 3.2B bf16 parameters (6 GiB) leaves the step.
    assert.ok(jobDriverMiB(job) - remedy.driverMiB > 6 * 1024, `${jobDriverMiB(job)} vs ${remedy.driverMiB}`);
    assert.ok(fineTuningRemedies({ ...job, preference: { trainer: 'kto', reference: 'default' } }, RTX_4090, 0.1).some((r) => r.change.startsWith("precompute_ref_log_probs=True (KTO's")));
    // GRPO's reference copy goes with its KL term (beta=0.0): another objective; with an adapter there is no copy to drop.
    const grpo = llama('meta-llama/Llama-3.2-3B', { batch: 4, seq: 1024, checkpointing: true, preference: { trainer: 'grpo', reference: 'default', completionTokens: 512 } });
    const noKl = fineTuningRemedies(grpo, RTX_4090, 0.1).find((r) => r.changes.join() === 'noKlTerm');
    assert.ok(noKl && !noKl.sameTraining && /^beta=0\.0/.test(noKl.change));
    assert.ok(!fineTuningRemedies({ ...grpo, adapter: { method: 'lora', rank: 8 } }, RTX_4090, 0.1).some((r) => r.changes.includes('noKlTerm')));
    // Nothing to precompute where the reference is not in the step, nor for ORPO.
    assert.ok(!fineTuningRemedies({ ...job, preference: { trainer: 'orpo', reference: 'none' } }, RTX_4090, 0.1).some((r) => r.changes.includes('precomputedReference')));
  });

  it("offers use_cache=False where a loop keeps the outputs and with them transformers' keys and values", () => {
    const job = llama('meta-llama/Llama-2-7b-hf', { batch: 4, seq: 1024, adapter: { method: 'lora', rank: 8 }, keyValueCacheHeld: true });
    const remedy = fineTuningRemedies(job, RTX_4090, 0.1).find((r) => r.changes.join() === 'noKeyValueCache');
    assert.ok(remedy && remedy.sameTraining && /^use_cache=False/.test(remedy.change));
    const without = estimateFineTuning({ ...job, keyValueCacheHeld: false });
    assert.equal(remedy.driverMiB, (without.driver + without.fittedMargin) / BYTES_PER_MIB);
    // 32 layers x 32 key-value heads x 128 x 2 (keys and values) x 2 bytes over 4 x 1024 tokens: 2 GiB less, before the margin.
    assert.ok(jobDriverMiB(job) - remedy.driverMiB > 2 * 1024, `${jobDriverMiB(job)} vs ${remedy.driverMiB}`);
    assert.ok(!fineTuningRemedies({ ...job, keyValueCacheHeld: false }, RTX_4090, 0.1).some((r) => r.changes.includes('noKeyValueCache')));
  });

  it('keeps the batch per optimizer step with accumulation, at the largest micro-batch that fits', () => {
    const job = llama('meta-llama/Llama-3.2-1B', { batch: 16, seq: 1024, checkpointing: true, adapter: { method: 'lora', rank: 16 }, accumulation: 2 });
    assert.ok(jobDriverMiB(job) > RTX_4090);
    const remedy = fineTuningRemedies(job, RTX_4090, 0.1).find((r) => r.changes[0] === 'accumulation' && r.changes.length === 1);
    assert.ok(remedy);
    const [, micro, accumulation] = /^batch (\d+) x (\d+) accumulation$/.exec(remedy.change)!.map(Number);
    assert.equal(micro! * accumulation!, 32);
    assert.equal(remedy.sameTraining, true);
    assert.equal(remedy.risk, 'fits');
    assert.equal(remedy.driverMiB, jobDriverMiB({ ...job, batch: micro!, accumulation: accumulation! }));
    // The next larger divisor of 16 does not fit outside the safety margin.
    const larger = micro! * 2;
    assert.ok(jobDriverMiB({ ...job, batch: larger, accumulation: 32 / larger }) > 0.9 * RTX_4090);
  });

  it('shortens the sequence to the longest multiple of 64 that fits', () => {
    const job = llama('meta-llama/Llama-3.2-1B', { batch: 8, seq: 2048, checkpointing: true, adapter: { method: 'lora', rank: 8 } });
    const remedy = fineTuningRemedies(job, RTX_4090, 0.1).find((r) => r.changes.join() === 'shorterSequence');
    assert.ok(remedy);
    const tokens = Number(/^sequences of (\d+) tokens$/.exec(remedy.change)![1]);
    assert.equal(tokens % 64, 0);
    assert.ok(tokens < 2048);
    assert.ok(jobDriverMiB({ ...job, seq: tokens }) <= 0.9 * RTX_4090);
    assert.ok(jobDriverMiB({ ...job, seq: tokens + 64 }) > 0.9 * RTX_4090);
  });

  it('tries pairs of changes when no single change fits, the second searched with the first applied', () => {
    const job = llama('meta-llama/Llama-2-7b-hf', { batch: 4, eagerAttention: true, accumulation: 2 });
    const remedies = fineTuningRemedies(job, RTX_4090, 0.1);
    assert.ok(remedies.filter((r) => r.changes.length === 1).every((r) => !r.fits));
    const pairs = remedies.filter((r) => r.changes.length === 2);
    assert.ok(pairs.length > 0);
    assert.ok(pairs.every((r) => r.fits), 'only the pairs that fit are listed');
    const best = pairs[0]!;
    assert.deepEqual(best.changes, ['checkpointing', 'fourBit']);
    assert.equal(best.change, 'gradient checkpointing + QLoRA (4-bit NF4 and LoRA r=8)');
    assert.equal(best.sameTraining, false);
    // LoRA then 4-bit is the same job as 4-bit alone (QLoRA): listed once.
    assert.ok(!pairs.some((r) => r.changes.join() === 'lora,fourBit'));
    const qloraAccumulation = pairs.find((r) => r.changes.join() === 'fourBit,accumulation');
    assert.ok(qloraAccumulation && /^QLoRA \(4-bit NF4 and LoRA r=8\) \+ batch \d x \d accumulation$/.test(qloraAccumulation.change), qloraAccumulation?.change);
  });
});

describe('fineTuningOutlook on fixture scripts', () => {
  it('a full fine-tune of a 7B model on an RTX 4090: out of memory, fits with checkpointing and QLoRA', async () => {
    const [model] = (await estimate(llm('full_finetune_7b_eager.py'), { gpu: gpu('rtx4090-24gb') })).models;
    assert.ok(model?.fineTuning);
    assert.equal(model.risk, 'oom');
    assert.equal(Math.round(model.fineTuning.driverMiB), model.memory.estimateMiB, 'the outlook estimates what the estimate states');
    assert.equal(model.fineTuning.longestSequence.tokens, 0);
    assert.equal(model.fineTuning.longestSequence.modelMaximum, 4096);
    assert.equal(model.fineTuning.remedies[0]!.change, 'gradient checkpointing + QLoRA (4-bit NF4 and LoRA r=8)');
    assert.ok(model.fineTuning.remedies[0]!.driverMiB < 0.9 * RTX_4090);
  });

  it('at batch 1 QLoRA alone makes it fit', async () => {
    const [model] = (await estimate(llm('full_finetune_7b_eager.py'), { gpu: gpu('rtx4090-24gb'), batchSize: 1 })).models;
    const fitting = model!.fineTuning!.remedies.filter((r) => r.fits);
    assert.deepEqual(fitting.map((r) => r.changes), [['fourBit']]);
  });

  it('a LoRA fine-tune within the safety margin of an L4 gets remedies; the same script on an A100 gets none', async () => {
    // Packed to 3072 tokens (the fixture packs to 2048), the job comes within the safety margin of an L4's 24 GB.
    const source = llm('sft_trainer_lora.py').replace('max_seq_length=2048', 'max_seq_length=3072');
    const [tight] = (await estimate(source, { gpu: gpu('l4-24gb') })).models;
    assert.equal(tight!.risk, 'tight');
    const remedies = tight!.fineTuning!.remedies;
    assert.ok(remedies.some((r) => r.changes.join() === 'accumulation' && r.risk === 'fits' && r.sameTraining));
    assert.ok(!remedies.some((r) => r.changes.includes('checkpointing')), 'checkpointing is already on');
    const [roomy] = (await estimate(source, { gpu: gpu('a100-80gb') })).models;
    assert.equal(roomy!.risk, 'fits');
    assert.deepEqual(roomy!.fineTuning!.remedies, []);
  });

  it('is only worked out where the fine-tuning model is the estimate', async () => {
    const source = ['import torch', 'import torch.nn as nn', 'model = nn.Linear(10, 10)', 'optimizer = torch.optim.SGD(model.parameters(), lr=0.1)', 'x = torch.randn(32, 10)', 'model(x).sum().backward()', 'optimizer.step()'].join('\n');
    const [model] = (await estimate(source)).models;
    assert.equal(model!.fineTuning, undefined);
  });

  it("the largest batch that fits is the fine-tuning model's own: it fits and one more does not", async () => {
    const source = llm('qlora_trainer.py');
    const on4090 = { gpu: gpu('rtx4090-24gb') };
    const [model] = (await estimate(source, on4090)).models;
    const max = model!.maxBatchSize!;
    assert.ok(max > model!.batchSize!);
    const [at] = (await estimate(source, { ...on4090, batchSize: max })).models;
    const [past] = (await estimate(source, { ...on4090, batchSize: max + 1 })).models;
    assert.equal(at!.memory.method, 'fineTuning');
    assert.equal(at!.fits, true);
    assert.equal(past!.fits, false);
  });
});

describe("the report's outlook of a fine-tune", () => {
  it("gives every GPU the fine-tuning model's largest batch (the analytical model counts 13B trained parameters and fits none), and its curve for collocation", async () => {
    const result = await estimate(llm('qlora_trainer.py'), { gpu: gpu('rtx4090-24gb') });
    const model = result.models[0]!;
    const rows = gpuComparison(model, result.gpu.id, 0.1);
    const current = rows.find((row) => row.current)!;
    assert.equal(current.fineTuningMaxBatch, model.maxBatchSize);
    assert.equal(current.analyticalMaxBatch, 0);
    assert.ok(rows.every((row) => row.fineTuningMaxBatch !== undefined));
    const h100 = rows.find((row) => row.id === 'h100-80gb')!;
    assert.ok(h100.fineTuningMaxBatch! > current.fineTuningMaxBatch);
    const markdown = markdownSummary(result, model, { curve: null, gpus: rows });
    assert.match(markdown, /\| GPU \| Memory \| Verdict \| Largest batch \(fine-tuning model\) \|\n[^\n]*\n/);
    assert.ok(markdown.includes(`| RTX 4090 24GB (selected) | 24.0 GiB | fits | ${model.maxBatchSize} |`), markdown);
    const curve = estimateCurve(model);
    assert.equal(Math.round(curve(model.batchSize!)), model.memory.estimateMiB);
    assert.ok(curve(model.maxBatchSize!) <= 24564 && curve(model.maxBatchSize! + 1) > 24564);
  });

  it('is per GPU for a job on several GPUs, as its estimate is (DDP over 4 GPUs adds a bucket copy of the gradients to each)', async () => {
    const source = llm('full_finetune_7b_eager.py');
    const on80 = { gpu: gpu('a100-80gb') };
    const [ddp] = (await estimate(source, { ...on80, gpus: 4 })).models;
    const [single] = (await estimate(source, on80)).models;
    const outlook = ddp!.fineTuning!;
    assert.ok(outlook.sharding && ddp!.memory.sharding);
    assert.equal(Math.round(outlook.driverMiB), ddp!.memory.estimateMiB);
    assert.ok(outlook.driverMiB > single!.fineTuning!.driverMiB);
    const checkpointing = (model: typeof ddp) => model!.fineTuning!.remedies.find((r) => r.changes.join() === 'checkpointing')!.driverMiB;
    assert.ok(checkpointing(ddp) > checkpointing(single));
    const current = gpuComparison(ddp!, 'a100-80gb', 0.1).find((row) => row.current)!;
    assert.equal(current.fineTuningMaxBatch, ddp!.maxBatchSize);
  });

  it('keeps the analytical heading for other models', async () => {
    const result = await estimate(['import torch', 'model = torch.nn.Linear(4, 4)', 'opt = torch.optim.SGD(model.parameters(), lr=0.1)', 'loss = model(torch.randn(8, 4)).sum()', 'loss.backward()', 'opt.step()'].join('\n'));
    const rows = gpuComparison(result.models[0]!, result.gpu.id, 0.1);
    assert.ok(rows.every((row) => row.fineTuningMaxBatch === undefined));
    assert.match(markdownSummary(result, result.models[0]!, { curve: null, gpus: rows }), /Largest batch \(analytical\)/);
  });
});
