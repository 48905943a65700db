import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ProjectContext } from '../../../../src/core/analysis/analyzeSource';
import { atLeast, pinnedVersions, trainerDefaultOptim } from '../../../../src/core/analysis/pinnedVersions';
import type { LaunchFiles } from '../../../../src/core/analysis/shardingSetup';
import { estimateSource } from '../../../../src/core/estimate/incrementalEstimator';
import { defaultGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../src/core/project/projectFiles';
import { realParser, REPO_ROOT } from '../../fixtures';

const filesOf = (entries: Record<string, string>): LaunchFiles => ({ scriptName: 'train.py', read: (name) => (entries[name] === undefined ? undefined : { shown: name, text: entries[name] }) });

describe('pinnedVersions', () => {
  it('reads the lowest torch and transformers a requirements file, pyproject.toml or a conda environment allows', () => {
    const requirements = pinnedVersions(filesOf({ 'requirements.txt': '# torch==1.13 was too old\ntorchvision==0.23.0\ntorch>=2.8.0\ntransformers[torch]==4.57.1\n' }));
    assert.deepEqual(requirements.torch?.version, [2, 8, 0]);
    assert.equal(requirements.torch?.origin, 'torch>=2.8.0 in requirements.txt');
    assert.deepEqual(requirements.transformers?.version, [4, 57, 1]);
    const pyproject = pinnedVersions(filesOf({ 'pyproject.toml': '[project]\ndependencies = [\n  "torch ~= 2.9",\n  "transformers>=4.56,<5",\n]\n' }));
    assert.deepEqual([pyproject.torch?.version, pyproject.transformers?.version], [[2, 9], [4, 56]]);
    const conda = pinnedVersions(filesOf({ 'environment.yml': 'dependencies:\n  - pytorch=2.4.1\n  - pip:\n    - transformers==4.31.0\n' }));
    assert.deepEqual([conda.torch?.version, conda.transformers?.version], [[2, 4, 1], [4, 31, 0]]);
    // An upper bound alone, an unpinned name or no file says nothing.
    assert.deepEqual(pinnedVersions(filesOf({ 'requirements.txt': 'torch<3\ntransformers\n' })), {});
    assert.deepEqual(pinnedVersions(undefined), {});
  });

  it("decides the Trainer's default optim only where the pins do: fused from torch 2.8 (transformers 4.54+), adamw_hf before transformers 4.32", () => {
    const v = (version: number[]) => ({ version, origin: 'x' });
    assert.equal(trainerDefaultOptim({ torch: v([2, 8]) })?.name, 'adamw_torch_fused');
    assert.equal(trainerDefaultOptim({ torch: v([2, 9, 1]), transformers: v([4, 57]) })?.name, 'adamw_torch_fused');
    assert.equal(trainerDefaultOptim({ torch: v([2, 8]), transformers: v([4, 46]) }), undefined);
    assert.equal(trainerDefaultOptim({ torch: v([2, 7, 1]) }), undefined);
    assert.equal(trainerDefaultOptim({ transformers: v([4, 31, 0]) })?.name, 'adamw_hf');
    assert.equal(trainerDefaultOptim({}), undefined);
    assert.ok(atLeast([2, 10], [2, 8]) && atLeast([3], [2, 8]) && !atLeast([2, 7, 9], [2, 8]) && atLeast([2, 8], [2, 8, 0]));
  });

  it("estimates a Trainer's full fine-tune with the default optimizer the project's pins give: without foreach's step temporary on torch 2.8", async () => {
    const script = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'galore_full_finetune.py'), 'utf8').replace(/\s*optim="galore_adamw",/, '').replace(/\s*optim_target_modules=[^\n]*,/, '').replace(/\s*optim_args="[^"]*",/, '');
    const parser = await realParser();
    const estimateWith = (requirements: string | undefined) => {
      const files = new MemoryProjectFiles([['/p/train.py', script], ...(requirements === undefined ? [] : [['/p/requirements.txt', requirements] as [string, string]])]);
      const parsed = new ParsedModules(parser);
      const project: ProjectContext = { source: { files, path: '/p/train.py', root: '/p' }, parse: (p, text) => parsed.parse(p, text) };
      return estimateSource('train.py', script, parser, { gpu: defaultGpuProfile(), safetyMargin: 0.1 }, project).models[0]!;
    };
    const unpinned = estimateWith(undefined);
    const modern = estimateWith('torch==2.9.1\ntransformers==4.57.1\n');
    const old = estimateWith('torch==2.4.1\ntransformers==4.46.3\n');
    assert.match(unpinned.assumptions.find((a) => a.name === 'optimizer')?.origin ?? '', /default optim \(adamw_torch/);
    assert.match(modern.assumptions.find((a) => a.name === 'optimizer')?.origin ?? '', /default optim: adamw_torch_fused, with torch 2\.8 or later \(torch==2\.9\.1 in requirements\.txt\)/);
    assert.equal(old.memory.estimateMiB, unpinned.memory.estimateMiB);
    // Llama-3.2-1B in bf16: foreach's temporary is one 2.3 GiB state; the step is then no longer the peak.
    assert.ok(modern.memory.estimateMiB! < unpinned.memory.estimateMiB! - 1000, `${modern.memory.estimateMiB} vs ${unpinned.memory.estimateMiB}`);
  });
});
