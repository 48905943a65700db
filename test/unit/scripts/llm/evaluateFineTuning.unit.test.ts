import * as assert from 'node:assert/strict';
import { measureKind, median, parseCsv, rowToJob, targetsOf } from '../../../../scripts/llm/evaluateFineTuning';

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
    const unknown = rowToJob(row({ model: 'bigscience/T0_3B', method: 'full', num_gpus: '1' }));
    assert.ok('skip' in unknown && /catalog/.test(unknown.skip));
  });

  it('takes the median of an even and an odd list', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });
});
