/**
 * The model states sharding.ts gives per GPU next to DeepSpeed's own estimators
 * (estimate_zero2_model_states_mem_needs / estimate_zero3_model_states_mem_needs, without offload:
 * ZeRO-2 4 B x params + 16 B x params / N, ZeRO-3 4 B x the largest layer + 18 B x params / N),
 * for a full bf16 fine-tune of a catalog model, and our whole per-GPU figure beside them.
 *
 * node out/scripts/llm/compareDeepSpeed.js [HUB ID]
 */
import { findCheckpoint } from '../../src/core/catalog/hf/checkpoints';
import { parameterTensors, repeats, type FineTuningJob } from '../../src/core/estimators/fineTuning';
import { shapeFromConfig } from '../../src/core/estimators/shapeFromConfig';
import { estimateSharded, type ShardingPlan } from '../../src/core/estimators/sharding';

const GiB = 1024 ** 3;

function main(): void {
  const name = process.argv[2] ?? 'meta-llama/Llama-2-7b-hf';
  const checkpoint = findCheckpoint(name);
  const shape = checkpoint && shapeFromConfig(checkpoint.modelType, checkpoint.config, { kind: 'lm' });
  if (!shape || typeof shape === 'string') {
    console.error(`No shape for ${name} in the catalog`);
    process.exitCode = 1;
    return;
  }
  const tensors = parameterTensors(shape);
  const params = tensors.reduce((sum, t) => sum + t.rows * t.cols * repeats(shape, t), 0);
  const largest = Math.max(...tensors.map((t) => t.rows * t.cols));
  const job: FineTuningJob = { shape, batch: 2, seq: 2048, weightBits: 16, computeBytes: 2, optimizer: 'adamw', checkpointing: true };
  const states = (plan: ShardingPlan, n: number) => {
    const e = estimateSharded(job, plan, n);
    return e.baseWeights + e.trainableWeights + e.gradients + e.optimizerState + e.stepTemporary + (plan.stage === 3 ? e.gathered : 0);
  };
  const gib = (bytes: number) => (bytes / GiB).toFixed(1);
  console.log(`${name}, full fine-tuning in bf16 with AdamW; model states per GPU, GiB (the last column: our whole per-GPU figure at batch 2 x 2048, checkpointing)\n`);
  console.log('GPUs | ZeRO-2 ours | ZeRO-2 DeepSpeed | ZeRO-3 ours | ZeRO-3 DeepSpeed | ZeRO-3 per GPU, all');
  console.log('---: | ---: | ---: | ---: | ---: | ---:');
  for (const n of [1, 2, 4, 8]) {
    const zero3 = estimateSharded(job, { kind: 'zero', stage: 3 }, n);
    console.log(`${n} | ${gib(states({ kind: 'zero', stage: 2 }, n))} | ${gib(4 * params + (16 * params) / n)} | ${gib(states({ kind: 'zero', stage: 3 }, n))} | ${gib(4 * largest + (18 * params) / n)} | ${gib(zero3.driver)}`);
  }
}

if (require.main === module) main();
