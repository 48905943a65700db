import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { analyzeSource, type ProjectContext } from '../../../../src/core/analysis/analyzeSource';
import type { SourceAnalysis } from '../../../../src/core/analysis/modelDescription';
import { accelerateConfig, deepSpeedConfig, launchCommand } from '../../../../src/core/analysis/shardingSetup';
import { ParsedModules } from '../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../src/core/project/projectFiles';
import { realParser, REPO_ROOT } from '../../fixtures';

const MULTIGPU = path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'multigpu');

/** Analyses `train.py` of a fixture folder (under multigpu/, or a path) as the project `/p` (its other files beside it). */
async function analyseProject(folder: string, extra: Record<string, string> = {}): Promise<SourceAnalysis> {
  const dir = path.isAbsolute(folder) ? folder : path.join(MULTIGPU, folder);
  const entries: Record<string, string> = Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(path.join(dir, name), 'utf8')]));
  Object.assign(entries, extra);
  const files = new MemoryProjectFiles(Object.entries(entries).map(([name, text]) => [`/p/${name}`, text]));
  const parser = await realParser();
  const parsed = new ParsedModules(parser);
  const project: ProjectContext = { source: { files, path: '/p/train.py', root: '/p' }, parse: (p, text) => parsed.parse(p, text) };
  const tree = parser.parse(entries['train.py']!);
  try {
    return analyzeSource(tree, entries['train.py']!, undefined, undefined, project);
  } finally {
    tree.delete();
  }
}

async function analyseScript(source: string): Promise<SourceAnalysis> {
  const tree = (await realParser()).parse(source);
  try {
    return analyzeSource(tree, source);
  } finally {
    tree.delete();
  }
}

describe('shardingSetup', () => {
  describe('the fixtures', () => {
    it('reads a Trainer with deepspeed="ds_config.json": ZeRO-3 from the JSON beside it, no offload, auto buckets, and 4 GPUs from the deepspeed launcher in run.sh', async () => {
      const { setup } = await analyseProject('zero3_trainer');
      assert.deepEqual(setup.distributed?.value, { kind: 'zero', stage: 3, offloadOptimizer: false, offloadParams: false, reduceBucket: 'auto', prefetchBucket: 'auto', overlapComm: true, gpusPerNode: 4 });
      assert.equal(setup.distributed?.origin, 'TrainingArguments(deepspeed="ds_config.json"): ds_config.json');
      assert.equal((setup.distributed?.range.startLine ?? -1) + 1, 33);
      assert.equal(setup.gpuCount?.value, 4);
      assert.match(setup.gpuCount?.origin ?? '', /deepspeed --num_gpus 4 train\.py \(run\.sh\)/);
    });

    it("reads accelerate's FSDP config that launch.sh passes: FULL_SHARD with parameters offloaded, 8 processes", async () => {
      const { setup } = await analyseProject('accelerate_fsdp');
      assert.deepEqual(setup.distributed?.value, { kind: 'fsdp', stage: 3, offloadOptimizer: true, offloadParams: true, file: 'fsdp_config.yaml' });
      assert.equal(setup.distributed?.origin, 'accelerate config fsdp_config.yaml');
      assert.equal(setup.gpuCount?.value, 8);
      assert.equal(setup.gpuCount?.origin, 'num_processes in fsdp_config.yaml');
    });

    it('reads DistributedDataParallel in a torchrun script, 2 GPUs from --nproc_per_node=2', async () => {
      const { setup } = await analyseProject('torchrun_ddp');
      assert.deepEqual(setup.distributed?.value, { kind: 'ddp', stage: 0, bucketView: false, gpusPerNode: 2 });
      assert.equal(setup.distributed?.origin, 'DistributedDataParallel(...)');
      assert.equal(setup.gpuCount?.value, 2);
    });

    it('reads Lightning\'s strategy="deepspeed_stage_2_offload" and devices=4', async () => {
      const { setup } = await analyseProject('lightning_deepspeed');
      assert.deepEqual(setup.distributed?.value, { kind: 'zero', stage: 2, offloadOptimizer: true, offloadParams: false, gpusPerNode: 4 });
      assert.equal(setup.gpuCount?.value, 4);
      assert.equal(setup.gpuCount?.origin, 'Trainer(devices=...)');
    });

    it('says so when the DeepSpeed config the script names is not in the project', async () => {
      const analysis = await analyseProject('zero3_trainer', { 'ds_config.json': '' });
      // An unreadable config is ZeRO's stage 0 (its default), not a guess.
      assert.deepEqual(analysis.setup.distributed?.value, { kind: 'zero', stage: 0, gpusPerNode: 4 });
      const missing = await analyseScript(readFileSync(path.join(MULTIGPU, 'zero3_trainer', 'train.py'), 'utf8'));
      assert.ok(missing.notes.some((n) => /ds_config\.json \(the DeepSpeed config\) is not in the project/.test(n.message)));
      assert.equal(missing.setup.distributed?.value.kind, 'zero');
    });
  });

  describe("accelerate's mixed precision for an Accelerator() that leaves it to the launcher", () => {
    const ACCELERATE = path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'accelerate_config');

    it('reads mixed_precision: bf16 from the config the launch line in launch.sh passes', async () => {
      const { setup } = await analyseProject(ACCELERATE);
      assert.equal(setup.precision?.value, 'bf16-mixed');
      assert.equal(setup.precision?.origin, 'Accelerator() under accelerate launch: mixed_precision: bf16 in accelerate_config.yaml');
      assert.equal((setup.precision?.range.startLine ?? -1) + 1, 20);
      // A single process: no strategy, no count above one.
      assert.equal(setup.distributed, undefined);
    });

    it("takes the launch line's --mixed_precision over the config's, a README's launch line too, and the project's config when no launch names one", async () => {
      const launchedFp16 = await analyseProject(ACCELERATE, { 'launch.sh': 'accelerate launch --config_file accelerate_config.yaml --mixed_precision fp16 train.py\n' });
      assert.equal(launchedFp16.setup.precision?.value, 'fp16-mixed');
      assert.match(launchedFp16.setup.precision?.origin ?? '', /--mixed_precision fp16 train\.py \(launch\.sh\)/);
      const readme = await analyseProject(ACCELERATE, { 'launch.sh': '', 'README.md': '# Train\n\n```\naccelerate launch --config_file configs/single.yaml train.py\n```\n', 'configs/single.yaml': 'mixed_precision: fp16\nnum_processes: 1\n' });
      assert.equal(readme.setup.precision?.value, 'fp16-mixed');
      const noLaunch = await analyseProject(ACCELERATE, { 'launch.sh': '' });
      assert.equal(noLaunch.setup.precision?.origin, 'Accelerator() under accelerate launch: mixed_precision: bf16 in accelerate_config.yaml');
    });

    it("keeps the script's Accelerator(mixed_precision=...) and reads nothing without a project config", async () => {
      const source = readFileSync(path.join(ACCELERATE, 'train.py'), 'utf8');
      const written = await analyseProject(ACCELERATE, { 'train.py': source.replace('Accelerator(gradient_accumulation_steps=8)', 'Accelerator(gradient_accumulation_steps=8, mixed_precision="no")') });
      assert.equal(written.setup.precision, undefined);
      // accelerate's default config lives in the user's home, not in the project: the precision stays unknown (fp32).
      assert.equal((await analyseScript(source)).setup.precision, undefined);
    });
  });

  describe('in the script', () => {
    const fsdp = (args: string) => `import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy, CPUOffload
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf", torch_dtype=torch.bfloat16)
model = FSDP(model${args})
`;
    it('reads FullyShardedDataParallel: FULL_SHARD by default, SHARD_GRAD_OP, HYBRID_SHARD, NO_SHARD, CPUOffload(offload_params=True)', async () => {
      assert.deepEqual((await analyseScript(fsdp(''))).setup.distributed?.value, { kind: 'fsdp', stage: 3 });
      assert.deepEqual((await analyseScript(fsdp(', sharding_strategy=ShardingStrategy.SHARD_GRAD_OP'))).setup.distributed?.value, { kind: 'fsdp', stage: 2 });
      assert.deepEqual((await analyseScript(fsdp(', sharding_strategy=ShardingStrategy.HYBRID_SHARD'))).setup.distributed?.value, { kind: 'fsdp', stage: 3, hybrid: true });
      assert.deepEqual((await analyseScript(fsdp(', sharding_strategy=ShardingStrategy.NO_SHARD'))).setup.distributed?.value, { kind: 'fsdp', stage: 0 });
      assert.deepEqual((await analyseScript(fsdp(', cpu_offload=CPUOffload(offload_params=True)'))).setup.distributed?.value, { kind: 'fsdp', stage: 3, offloadOptimizer: true, offloadParams: true });
    });

    it('reads TrainingArguments(fsdp="full_shard auto_wrap offload") and a DeepSpeed dict in the script', async () => {
      const args = (extra: string) => `from transformers import TrainingArguments
ds_config = {"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}, "reduce_bucket_size": 200000000}}
args = TrainingArguments(output_dir="o", ${extra})
`;
      assert.deepEqual((await analyseScript(args('fsdp="full_shard auto_wrap offload"'))).setup.distributed?.value, { kind: 'fsdp', stage: 3, offloadOptimizer: true, offloadParams: true });
      assert.deepEqual((await analyseScript(args('fsdp="shard_grad_op"'))).setup.distributed?.value, { kind: 'fsdp', stage: 2 });
      assert.deepEqual((await analyseScript(args('deepspeed=ds_config'))).setup.distributed?.value, { kind: 'zero', stage: 2, offloadOptimizer: true, offloadParams: false, reduceBucket: 200000000, overlapComm: false });
    });

    it("reads Lightning's DeepSpeedStrategy(stage=3, offload_optimizer=True, offload_parameters=True) and devices with num_nodes", async () => {
      const source = `import lightning as L
from lightning.pytorch.strategies import DeepSpeedStrategy
trainer = L.Trainer(devices=8, num_nodes=2, strategy=DeepSpeedStrategy(stage=3, offload_optimizer=True, offload_parameters=True))
`;
      const { setup } = await analyseScript(source);
      assert.deepEqual(setup.distributed?.value, { kind: 'zero', stage: 3, offloadOptimizer: true, offloadParams: true, overlapComm: true, gpusPerNode: 8 });
      assert.equal(setup.gpuCount?.value, 16);
    });

    it('finds nothing in a single-GPU script', async () => {
      const { setup } = await analyseScript('import torch\nmodel = torch.nn.Linear(4, 4)\n');
      assert.equal(setup.distributed, undefined);
      assert.equal(setup.gpuCount, undefined);
    });
  });

  describe('launch commands and configs', () => {
    it('reads torchrun, python -m torch.distributed.run, accelerate launch and the deepspeed launcher, for this script only', () => {
      assert.deepEqual(launchCommand('torchrun --nnodes 2 --nproc_per_node 8 train.py --lr 1e-4', 'train.py'), { gpus: 16, gpusPerNode: 8, text: 'torchrun --nnodes 2 --nproc_per_node 8 train.py --lr 1e-4' });
      assert.equal(launchCommand('python -m torch.distributed.run --nproc-per-node=4 \\\n  train.py', 'train.py')?.gpus, 4);
      assert.equal(launchCommand('torchrun --nproc_per_node=4 other.py', 'train.py'), undefined);
      assert.deepEqual(launchCommand('accelerate launch --num_processes 2 --use_fsdp --fsdp_sharding_strategy SHARD_GRAD_OP train.py', 'train.py')?.setup, { kind: 'fsdp', stage: 2 });
      assert.deepEqual(launchCommand('$ deepspeed --num_gpus=8 train.py --deepspeed configs/ds_z3.json', 'train.py'), { gpus: 8, gpusPerNode: 8, deepSpeedFile: 'configs/ds_z3.json', text: 'deepspeed --num_gpus=8 train.py --deepspeed configs/ds_z3.json' });
      // torchrun's "gpu" or "auto" is the machine's count, which the script does not say.
      assert.equal(launchCommand('torchrun --nproc_per_node=gpu train.py', 'train.py')?.gpus, undefined);
    });

    it('reads DeepSpeed JSON: stage, the old cpu_offload flag, offload_param only at stage 3', () => {
      assert.deepEqual(deepSpeedConfig({ zero_optimization: { stage: 2, cpu_offload: true } }), { kind: 'zero', stage: 2, offloadOptimizer: true, offloadParams: false, overlapComm: false });
      assert.deepEqual(deepSpeedConfig({ zero_optimization: { stage: 1, offload_param: { device: 'cpu' } } }), { kind: 'zero', stage: 1, offloadOptimizer: false, offloadParams: false, overlapComm: false });
      assert.deepEqual(deepSpeedConfig({ train_batch_size: 16 }), { kind: 'zero', stage: 0 });
    });

    it("reads accelerate's mixed_precision from its config and --mixed_precision from the launch line, before the script's name only", () => {
      assert.deepEqual(accelerateConfig({ distributed_type: 'NO', mixed_precision: 'bf16', num_processes: 1 }, () => undefined), { gpus: 1, mixedPrecision: 'bf16' });
      assert.equal(accelerateConfig({ mixed_precision: 'fp8' }, () => undefined).mixedPrecision, undefined);
      assert.equal(launchCommand('accelerate launch --mixed_precision=fp16 --num_processes 2 train.py', 'train.py')?.mixedPrecision, 'fp16');
      assert.equal(launchCommand('accelerate launch train.py --mixed_precision bf16', 'train.py')?.mixedPrecision, undefined);
    });

    it("reads accelerate's DeepSpeed and multi-GPU configs with several machines", () => {
      const none = () => undefined;
      assert.deepEqual(accelerateConfig({ distributed_type: 'DEEPSPEED', num_processes: 16, num_machines: 2, deepspeed_config: { zero_stage: 3, offload_optimizer_device: 'cpu', offload_param_device: 'none' } }, none), {
        setup: { kind: 'zero', stage: 3, offloadOptimizer: true, offloadParams: false, overlapComm: true },
        gpus: 16,
        gpusPerNode: 8,
      });
      assert.deepEqual(accelerateConfig({ distributed_type: 'MULTI_GPU', num_processes: 4 }, none), { setup: { kind: 'ddp', stage: 0 }, gpus: 4 });
      assert.deepEqual(accelerateConfig({ distributed_type: 'DEEPSPEED', deepspeed_config: { deepspeed_config_file: 'ds.json' } }, () => ({ zero_optimization: { stage: 1 } })).setup, { kind: 'zero', stage: 1, offloadOptimizer: false, offloadParams: false, overlapComm: false });
    });
  });
});
