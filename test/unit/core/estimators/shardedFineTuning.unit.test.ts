import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ProjectContext } from '../../../../src/core/analysis/analyzeSource';
import { describeEstimate, describeSharding } from '../../../../src/core/display/describe';
import { hoverText } from '../../../../src/core/display/hoverText';
import { markdownSummary } from '../../../../src/core/display/reportData';
import type { EstimateOptions } from '../../../../src/core/estimate/estimateTree';
import { estimateJson } from '../../../../src/core/estimate/estimateJson';
import type { FileEstimate, ModelEstimate } from '../../../../src/core/estimate/fileEstimate';
import { estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../src/core/project/projectFiles';
import { realParser, REPO_ROOT } from '../../fixtures';

const MULTIGPU = path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'multigpu');

/** The analysis pass on `train.py` of a fixture folder, as the project `/p`. */
async function estimateFixture(folder: string, options: Partial<EstimateOptions> = {}, drop: readonly string[] = []): Promise<FileEstimate> {
  const dir = path.join(MULTIGPU, folder);
  const names = readdirSync(dir).filter((name) => !drop.includes(name));
  const files = new MemoryProjectFiles(names.map((name) => [`/p/${name}`, readFileSync(path.join(dir, name), 'utf8')]));
  const parser = await realParser();
  const parsed = new ParsedModules(parser);
  const project: ProjectContext = { source: { files, path: '/p/train.py', root: '/p' }, parse: (p, text) => parsed.parse(p, text) };
  return estimateSource('train.py', files.read('/p/train.py')!, parser, { gpu: defaultGpuProfile(), safetyMargin: 0.1, ...options }, project);
}

const theModel = (estimate: FileEstimate): ModelEstimate => {
  const model = estimate.models.find((m) => m.memory.method === 'fineTuning');
  assert.ok(model, 'the fine-tuning model is the estimate');
  return model;
};

describe('shardedFineTuning', () => {
  it('estimates the ZeRO-3 Trainer fine-tune per GPU, for the 4 GPUs run.sh launches, with the table at 1, 2, 4 and 8', async () => {
    const model = theModel(await estimateFixture('zero3_trainer'));
    const sharding = model.memory.sharding;
    assert.ok(sharding);
    assert.equal(sharding.strategy, 'DeepSpeed ZeRO-3');
    assert.equal(sharding.gpus, 4);
    assert.equal(sharding.line, 33);
    assert.deepEqual(sharding.perGpu.map((row) => row.gpus), [1, 2, 4, 8]);
    assert.equal(sharding.perGpu.find((row) => row.gpus === 4)!.driverMiB, model.memory.estimateMiB);
    assert.ok(sharding.perGpu.every((row, i, all) => i === 0 || row.driverMiB < all[i - 1]!.driverMiB));
    assert.match(describeEstimate(model), / per GPU \(4\)$/);
    // The note about an unsharded replica is for the other estimators only.
    assert.ok(!model.notes.some((n) => /one unsharded replica/.test(n.message)));
  });

  it('takes the user\'s GPU count over the launch command, and says when none is found', async () => {
    const given = theModel(await estimateFixture('zero3_trainer', { gpus: 8 }));
    assert.equal(given.memory.sharding?.gpus, 8);
    assert.equal(given.memory.sharding?.gpusOrigin, 'given by the user');
    const unknown = theModel(await estimateFixture('zero3_trainer', {}, ['run.sh']));
    assert.equal(unknown.memory.sharding?.gpus, 1);
    assert.ok(unknown.notes.some((n) => /their number is not found/.test(n.message)));
    assert.ok(given.memory.estimateMiB! < unknown.memory.estimateMiB!);
  });

  it('assumes DDP when several GPUs are given for a script with no strategy', async () => {
    const single = theModel(await estimateFixture('zero3_trainer', {}, ['run.sh', 'ds_config.json']));
    assert.equal(single.memory.sharding?.strategy, 'DeepSpeed ZeRO-0');
    const source = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'qlora_trainer.py'), 'utf8');
    const estimate = estimateSource('qlora_trainer.py', source, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1, gpus: 2 });
    const model = theModel(estimate);
    assert.equal(model.memory.sharding?.strategy, 'DDP');
    assert.ok(model.notes.some((n) => /DDP is assumed/.test(n.message)));
    const alone = theModel(estimateSource('qlora_trainer.py', source, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1 }));
    assert.equal(alone.memory.sharding, undefined, 'one GPU: no several-GPU section');
  });

  it('shows the strategy, the count and the table in --json, the hover and the report', async () => {
    const estimate = await estimateFixture('accelerate_fsdp');
    const model = theModel(estimate);
    const json = estimateJson(estimate).models.find((m) => m.name === model.name)!;
    assert.deepEqual(Object.keys(json.memory.sharding!).sort(), ['gpus', 'gpusOrigin', 'hostMiB', 'line', 'origin', 'perGpu', 'strategy']);
    assert.equal(json.memory.sharding!.gpus, 8);
    assert.ok(json.memory.sharding!.hostMiB > 0, 'the offloaded parameters are in host memory');
    const text = describeSharding(model)!;
    assert.match(text, /^FSDP FULL_SHARD, parameters and optimizer state offloaded to the CPU on 8 GPUs \(num_processes in fsdp_config\.yaml\), from accelerate config fsdp_config\.yaml; per GPU at 1 GPU .*, 8 GPUs [\d.]+ GiB; [\d.]+ GiB offloaded to host memory per process$/);
    assert.match(hoverText(estimate, model), /Several GPUs: FSDP FULL\\_SHARD/);
    assert.match(markdownSummary(estimate, model, { curve: null, gpus: [] }), /## Several GPUs[\s\S]*\| 8 \| [\d.]+ GiB \|/);
  });
});
