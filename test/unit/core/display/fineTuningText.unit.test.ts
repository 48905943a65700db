import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { humanOutput } from '../../../../src/cli/humanOutput';
import { describeLongestSequence, describeRemedies, describeRemedy, fittingRemedies } from '../../../../src/core/display/fineTuningText';
import { riskProblems } from '../../../../src/core/display/editorText';
import { hoverText } from '../../../../src/core/display/hoverText';
import { markdownSummary } from '../../../../src/core/display/reportData';
import { estimateJson } from '../../../../src/core/estimate/estimateJson';
import type { FineTuningOutlook, Remedy } from '../../../../src/core/estimate/fileEstimate';
import { findCheckpoint } from '../../../../src/core/catalog/hf/checkpoints';
import type { TransformerShape } from '../../../../src/core/estimators/fineTuning';
import { shapeFromConfig } from '../../../../src/core/estimators/shapeFromConfig';
import { findGpuProfile } from '../../../../src/core/gpus/gpuProfiles';
import { estimate, REPO_ROOT } from '../../fixtures';

const llm = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', name), 'utf8');
const on = (id: string) => ({ gpu: findGpuProfile(id)! });

const remedy = (change: string, driverMiB: number, risk: Remedy['risk'], sameTraining: boolean): Remedy => ({ changes: ['checkpointing'], change, driverMiB, fits: risk !== 'oom', risk, sameTraining });
const shape = shapeFromConfig('llama', findCheckpoint('meta-llama/Llama-2-7b-hf')!.config, { kind: 'lm' }) as TransformerShape;
const outlook = (remedies: Remedy[], longest: Partial<FineTuningOutlook['longestSequence']> = {}): FineTuningOutlook => ({
  job: { shape, batch: 4, seq: 1024, weightBits: 16, computeBytes: 2, optimizer: 'adamw', checkpointing: false },
  driverMiB: 30_000,
  gpuMiB: 24_564,
  batch: 4,
  seq: 1024,
  longestSequence: { tokens: 768, modelMaximum: 4096, modelMaximumFits: false, driverMiB: 24_000, ...longest },
  remedies,
});

describe('fine-tuning outlook in words', () => {
  it('says the longest sequence, the model maximum when it fits, and when nothing fits', () => {
    assert.equal(describeLongestSequence(outlook([])), "longest sequence that fits at batch 4: 768 tokens (the model's maximum: 4096)");
    assert.equal(describeLongestSequence(outlook([], { tokens: 4096, modelMaximumFits: true })), "the model's maximum sequence, 4096 tokens, fits at batch 4");
    assert.equal(describeLongestSequence(outlook([], { tokens: 0, driverMiB: null })), 'not even 64 tokens per sequence fit at batch 4');
    assert.equal(describeLongestSequence(outlook([], { modelMaximum: null })), 'longest sequence that fits at batch 4: 768 tokens');
  });

  it('lists the changes that fit with their estimates, marks those that change the training, and stops at the limit', () => {
    const all = outlook([remedy('gradient checkpointing', 19_354, 'fits', true), remedy('batch 2 x 2 accumulation', 21_504, 'tight', true), remedy('LoRA r=8 instead of full fine-tuning', 23_000, 'tight', false), remedy('SDPA attention', 28_000, 'oom', true)]);
    assert.equal(describeRemedy(all.remedies[2]!), 'LoRA r=8 instead of full fine-tuning: 22.5 GiB, within the safety margin, changes the training');
    assert.equal(describeRemedies(all, 'oom'), 'fits with: gradient checkpointing: 18.9 GiB; batch 2 x 2 accumulation: 21.0 GiB, within the safety margin; LoRA r=8 instead of full fine-tuning: 22.5 GiB, within the safety margin, changes the training');
    assert.equal(describeRemedies(all, 'oom', 1), 'fits with: gradient checkpointing: 18.9 GiB (and 2 more)');
    // A job already within the safety margin is only helped by what leaves it outside.
    assert.deepEqual(fittingRemedies(all, 'tight').map((r) => r.change), ['gradient checkpointing']);
    assert.equal(describeRemedies(all, 'tight'), 'fits outside the safety margin with: gradient checkpointing: 18.9 GiB');
    assert.equal(describeRemedies(outlook([remedy('SDPA attention', 28_000, 'oom', true)]), 'oom'), 'no single change or pair of changes makes it fit; the closest: SDPA attention: 27.3 GiB');
    assert.equal(describeRemedies(outlook([]), 'fits'), null);
  });
});

describe('fine-tuning outlook on every surface (full fine-tune of Llama-2-7B on an RTX 4090)', () => {
  const full = async () => {
    const result = await estimate(llm('full_finetune_7b_eager.py'), on('rtx4090-24gb'));
    return { result, model: result.models[0]! };
  };

  it('the hover: the verdict, then the longest sequence and the changes that make it fit', async () => {
    const { result, model } = await full();
    const text = hoverText(result, model);
    assert.match(text, /does not fit RTX 4090 24GB \(out of memory\) \(24\.0 GiB\); largest batch that fits: 0\n\nNot even 64 tokens per sequence fit at batch 4\n\nFits with: gradient checkpointing \+ QLoRA \(4-bit NF4 and LoRA r=8\): 12\.2 GiB, changes the training; /);
    assert.match(text, /\(and 1 more\)\n\n/);
  });

  it('a QLoRA script that fits comfortably: the longest sequence only', async () => {
    const result = await estimate(llm('qlora_trainer.py'), on('rtx4090-24gb'));
    const text = hoverText(result, result.models[0]!);
    assert.match(text, /largest batch that fits: \d+\n\nLongest sequence that fits at batch 4: \d+ tokens \(the model's maximum: 4096\)\n\nUtilization/);
    assert.doesNotMatch(text, /Fits with/);
  });

  it('the report: a What fits section with every change tried', async () => {
    const { result, model } = await full();
    const markdown = markdownSummary(result, model, { curve: null, gpus: [] });
    const section = /## What fits\n\n([\s\S]*?)\n\n## /.exec(markdown)?.[1];
    assert.ok(section, markdown);
    const lines = section.split('\n');
    assert.equal(lines[0], '- Not even 64 tokens per sequence fit at batch 4');
    assert.equal(lines[2], '| Change | Estimate | On RTX 4090 24GB | Same training |');
    assert.equal(lines[4], '| gradient checkpointing + QLoRA (4-bit NF4 and LoRA r=8) | 12.2 GiB | fits | no |');
    assert.ok(lines.includes('| gradient checkpointing | 70.4 GiB | does not fit | yes |'), section);
    assert.equal(lines.length - 4, model.fineTuning!.remedies.length);
  });

  it('the CLI: two lines under the model, and the JSON with every change', async () => {
    const { result, model } = await full();
    const text = humanOutput(result);
    assert.match(text, /\n {2}not even 64 tokens per sequence fit at batch 4\n {2}fits with: gradient checkpointing \+ QLoRA/);
    const json = estimateJson(result).models[0]!;
    assert.ok(json.fineTuning);
    assert.deepEqual(json.fineTuning.longestSequence, { tokens: 0, modelMaximum: 4096, modelMaximumFits: false, driverMiB: null });
    assert.deepEqual([json.fineTuning.batch, json.fineTuning.sequence], [4, 1024]);
    assert.deepEqual(json.fineTuning.remedies[0], { change: 'gradient checkpointing + QLoRA (4-bit NF4 and LoRA r=8)', changes: ['checkpointing', 'fourBit'], driverMiB: Math.round(model.fineTuning!.remedies[0]!.driverMiB), fits: true, risk: 'fits', sameTraining: false });
  });

  it('the Problems panel: the change with the smallest estimate that makes it fit', async () => {
    const { result } = await full();
    const [problem] = riskProblems(result);
    assert.equal(problem?.severity, 'error');
    assert.match(problem.message, /does not fit RTX 4090 24GB \(out of memory\); no batch size fits; fits with gradient checkpointing \+ QLoRA \(4-bit NF4 and LoRA r=8\): 12\.2 GiB, changes the training$/);
  });

  it('leaves the JSON of other models as it was: no fineTuning key', async () => {
    const result = await estimate(['import torch', 'model = torch.nn.Linear(4, 4)', 'opt = torch.optim.SGD(model.parameters(), lr=0.1)', 'loss = model(torch.randn(8, 4)).sum()', 'loss.backward()', 'opt.step()'].join('\n'));
    assert.ok(!('fineTuning' in estimateJson(result).models[0]!));
  });
});
