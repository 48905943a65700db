import * as assert from 'node:assert/strict';
import { isShardedRow, planOfRow, shardedRowToJob, singleGpuMethod } from '../../../../scripts/llm/shardedRows';

const base = { source: 's', model: 'meta-llama/Llama-2-70b-hf', method: 'LoRA', lora_rank: '16', quant: 'none', grad_ckpt: 'on', optimizer: 'AdamW', precision: 'bf16', batch_per_gpu: '2', seq_len: '2048', gpu: 'H100 80G', measured_gb: '60', measure_kind: 'nvidia-smi', notes: '' };

describe('shardedRows', () => {
  it('sees several GPUs in a count with the strategy beside it or in the GPU text', () => {
    assert.ok(isShardedRow({ ...base, num_gpus: '8 (FSDP)' }));
    assert.ok(isShardedRow({ ...base, num_gpus: '', gpu: '8x A100 80GB' }));
    assert.ok(isShardedRow({ ...base, num_gpus: '1', method: 'LoRA + ZeRO-3 offload' }));
    assert.ok(!isShardedRow({ ...base, num_gpus: '1' }));
  });

  it('reads ZeRO stages and FSDP however they are written', () => {
    const plan = (fields: Record<string, string>) => planOfRow({ ...base, num_gpus: '8', ...fields });
    assert.deepEqual(plan({ method: 'LoRA + DeepSpeed ZeRO-3 (no offload)' }), { kind: 'zero', stage: 3, overlapComm: true });
    assert.deepEqual(plan({ notes: 'DeepSpeed ZeRO stage 2' }), { kind: 'zero', stage: 2, overlapComm: false });
    assert.deepEqual(plan({ notes: 'deepspeed zero3 config' }), { kind: 'zero', stage: 3, overlapComm: true });
    assert.deepEqual(plan({ notes: 'ds_z3_offload_config.json' }), { kind: 'zero', stage: 3, overlapComm: true });
    assert.deepEqual(plan({ num_gpus: '8 (FSDP)' }), { kind: 'fsdp', stage: 3 });
    assert.deepEqual(plan({ notes: 'fsdp shard_grad_op' }), { kind: 'fsdp', stage: 2 });
    assert.deepEqual(plan({}), { kind: 'ddp', stage: 0 });
    assert.deepEqual(plan({ method: 'LoRA + DeepSpeed ZeRO-3 CPU offload (params+optimizer)' }), { kind: 'zero', stage: 3, offloadOptimizer: true, offloadParams: true, overlapComm: true });
    assert.deepEqual(plan({ notes: 'ZeRO-3, offload_optimizer: cpu; trainable params 1000' }), { kind: 'zero', stage: 3, offloadOptimizer: true, overlapComm: true });
    assert.deepEqual(plan({ notes: 'ZeRO-Offload' }), { kind: 'zero', stage: 2, offloadOptimizer: true, overlapComm: false });
    assert.deepEqual(plan({ notes: 'ZeRO-Infinity (NVMe)' }), { kind: 'zero', stage: 3, offloadOptimizer: true, offloadParams: true, overlapComm: true });
    assert.deepEqual(plan({ method: 'QLoRA all-linear + FSDP full shard + CPU param offload' }), { kind: 'fsdp', stage: 3, offloadOptimizer: true, offloadParams: true });
    assert.deepEqual(plan({ notes: 'fsdp hybrid_shard' }), { kind: 'fsdp', stage: 3, hybrid: true });
    assert.deepEqual(plan({ notes: 'FSDP NO_SHARD' }), { kind: 'fsdp', stage: 0 });
    assert.deepEqual(plan({ method: 'LoRA all-linear + FSDP full shard (no offload)' }), { kind: 'fsdp', stage: 3 });
    assert.ok('unread' in (plan({ notes: 'DeepSpeed' }) as object));
  });

  it('reads the single-GPU job without the strategy words and skips a row whose strategy it cannot read', () => {
    assert.equal(singleGpuMethod('QLoRA all-linear + FSDP full shard (no CPU offload)'), 'QLoRA all-linear');
    assert.equal(singleGpuMethod('full (FSDP + CPU offload, fused optimizer)'), 'full');
    assert.equal(singleGpuMethod('LoRA with DeepSpeed ZeRO-2'), 'LoRA');
    assert.equal(singleGpuMethod('Full FT (ZeRO-3)'), 'Full FT');
    const fsdp = shardedRowToJob({ ...base, num_gpus: '8 (FSDP)' });
    assert.ok('job' in fsdp.conversion && fsdp.gpus === 8 && fsdp.plan.kind === 'fsdp');
    const unstaged = shardedRowToJob({ ...base, num_gpus: '4', method: 'LoRA + DeepSpeed' });
    assert.ok('skip' in unstaged.conversion && /DeepSpeed without a ZeRO stage/.test(unstaged.conversion.skip));
  });
});
