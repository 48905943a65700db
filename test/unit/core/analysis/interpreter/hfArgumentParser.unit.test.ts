import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { commandLineOptions } from '../../../../../src/core/analysis/interpreter/hfArgumentParser';
import { estimateSource } from '../../../../../src/core/estimate/incrementalEstimator';
import { defaultGpuProfile } from '../../../../../src/core/gpus/gpuProfiles';
import { ParsedModules } from '../../../../../src/core/project/parsedModules';
import { MemoryProjectFiles } from '../../../../../src/core/project/projectFiles';
import { realParser, REPO_ROOT } from '../../../fixtures';

const SCRIPT = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'clm_argument_parser.py'), 'utf8');
const estimate = async (source: string, scriptArguments: readonly string[] = [], assume: Record<string, string | number> = {}) =>
  estimateSource('train.py', source, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1, scriptArguments, assume });

describe("transformers' HfArgumentParser (hfArgumentParser.ts)", () => {
  it('reads --name value, --name=value and bare flags, converting numbers and booleans', () => {
    assert.deepEqual(
      [...commandLineOptions(['--model_name_or_path', 'gpt2', '--per-device-train-batch-size=4', '--bf16', '--learning_rate', '2e-5', '--fp16', 'false', '--gradient_checkpointing', '--seed', '42', 'stray'])],
      [['model_name_or_path', 'gpt2'], ['per_device_train_batch_size', 4], ['bf16', true], ['learning_rate', 2e-5], ['fp16', false], ['gradient_checkpointing', true], ['seed', 42]],
    );
  });

  it("fills the script's dataclasses and TrainingArguments from the command line the script is run with", async () => {
    const found = await estimate(SCRIPT, ['--model_name_or_path', 'gpt2-large', '--per_device_train_batch_size', '4', '--gradient_checkpointing', '--bf16', '--torch_dtype', 'bfloat16', '--output_dir', 'out']);
    const [model] = found.models;
    assert.ok(model, JSON.stringify(found.warnings));
    assert.equal(model.architecture?.name, 'gpt2-large');
    assert.equal(model.params, 774030080);
    assert.equal(model.batchSize, 4);
    assert.equal(model.precision, 'bf16-mixed');
    assert.equal(model.gradientCheckpointing, true);
    assert.equal(model.assumptions.find((a) => a.name === 'weightDtype')?.value, 'bf16');
    assert.equal(model.memory.method, 'fineTuning');
  });

  it("without arguments, the dataclasses' defaults stand: no checkpoint, so no model, and the note says why", async () => {
    const found = await estimate(SCRIPT);
    assert.equal(found.models.length, 0);
    assert.ok(found.warnings.some((w) => /checkpoint name is not a constant/.test(w)), JSON.stringify(found.warnings));
  });

  it('a value the user sets (--set, gpuEstimator.assume) wins over the default and the command line', async () => {
    const found = await estimate(SCRIPT, ['--model_name_or_path', 'gpt2-large', '--output_dir', 'out'], { model_name_or_path: 'gpt2-medium' });
    assert.equal(found.models[0]?.architecture?.name, 'gpt2-medium');
  });

  it('parse_json_file reads the project\'s JSON file of arguments', async () => {
    const source = [
      'from dataclasses import dataclass, field',
      'from typing import Optional',
      'from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments',
      '@dataclass',
      'class ModelArguments:',
      '    model_name_or_path: Optional[str] = field(default=None)',
      'model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_json_file(json_file="args.json")',
      'model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, torch_dtype="bfloat16")',
    ].join('\n');
    const files = new MemoryProjectFiles([
      ['/p/train.py', source],
      ['/p/args.json', '{"model_name_or_path": "gpt2-medium", "per_device_train_batch_size": 6, "bf16": true, "output_dir": "out"}'],
    ]);
    const parsed = new ParsedModules(await realParser());
    const found = estimateSource('train.py', source, await realParser(), { gpu: defaultGpuProfile(), safetyMargin: 0.1 }, { source: { files, path: '/p/train.py', root: '/p' }, parse: (p, text) => parsed.parse(p, text) });
    const [model] = found.models;
    assert.ok(model, JSON.stringify(found.warnings));
    assert.equal(model.architecture?.name, 'gpt2-medium');
    assert.equal(model.batchSize, 6);
    assert.equal(model.precision, 'bf16-mixed');
  });

  it('parse_dict and a single dataclass type; TrainingArguments defaults (batch 8) when nothing sets the batch', async () => {
    const source = [
      'from dataclasses import dataclass',
      'from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments',
      '@dataclass',
      'class Args:',
      '    checkpoint: str = "gpt2"',
      'model_args, training_args = HfArgumentParser((Args, TrainingArguments)).parse_dict({"checkpoint": "distilgpt2", "output_dir": "out", "fp16": True})',
      'model = AutoModelForCausalLM.from_pretrained(model_args.checkpoint)',
    ].join('\n');
    const [model] = (await estimate(source)).models;
    assert.ok(model);
    assert.equal(model.architecture?.name, 'distilgpt2');
    assert.equal(model.batchSize, 8);
    assert.equal(model.precision, 'fp16-mixed');
  });
});
