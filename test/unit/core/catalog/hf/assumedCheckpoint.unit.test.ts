/**
 * The shape assumed for a checkpoint the catalog does not know (assumedCheckpoint.ts): what a
 * name's size tag gives, what is declined, and how far the assumed shape lands from the real one
 * for the catalogued decoders when each is pretended unknown (docs/fine-tuning.md prints the
 * table this test prints).
 */
import * as assert from 'node:assert/strict';
import { isCatalogMiss } from '../../../../../src/core/catalog/catalog';
import { assumedCheckpoint, llamaStyleParams, sizeFromName } from '../../../../../src/core/catalog/hf/assumedCheckpoint';
import { CHECKPOINTS, type Checkpoint } from '../../../../../src/core/catalog/hf/checkpoints';
import { isLlamaStyle } from '../../../../../src/core/catalog/hf/llamaStyle';
import { transformersArchitecture } from '../../../../../src/core/catalog/hf/transformers';
import { estimateFineTuning, type FineTuningJob, type TransformerShape } from '../../../../../src/core/estimators/fineTuning';
import { shapeFromConfig } from '../../../../../src/core/estimators/shapeFromConfig';

function shapeOf(checkpoint: Checkpoint): TransformerShape {
  const shape = shapeFromConfig(checkpoint.modelType, checkpoint.config, { kind: 'lm' });
  if (typeof shape === 'string') assert.fail(shape);
  return shape;
}

/** The issue's QLoRA set-up (4-bit, r=8 on q and v, batch 4 x 1024, checkpointing, paged AdamW) and LoRA over bf16 weights without checkpointing (batch 2 x 512). */
const JOBS: ReadonlyArray<{ readonly label: string; readonly job: Omit<FineTuningJob, 'shape'> }> = [
  { label: 'QLoRA', job: { batch: 4, seq: 1024, adapter: { method: 'lora', rank: 8 }, weightBits: 4, doubleQuant: false, computeBytes: 2, autocast: true, optimizer: 'adamw', paged: true, checkpointing: true, logitsHeld: false } },
  { label: 'LoRA bf16, no checkpointing', job: { batch: 2, seq: 512, adapter: { method: 'lora', rank: 16, targetModules: 'all-linear' }, weightBits: 16, computeBytes: 2, optimizer: 'adamw', checkpointing: false, logitsHeld: false } },
];

const findVocab = (name: string) => CHECKPOINTS.find((c) => c.name === name)!.config.vocab_size;

const figure = (shape: TransformerShape, job: Omit<FineTuningJob, 'shape'>) => {
  const estimate = estimateFineTuning({ ...job, shape });
  return estimate.driver + estimate.fittedMargin;
};

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

describe('assumed checkpoint (a shape from the name)', () => {
  it('reads the size tag of hub names', () => {
    const params = (name: string) => {
      const size = sizeFromName(name);
      return size && 'params' in size ? size.params : size;
    };
    assert.equal(params('meta-llama/Llama-2-7b-hf'), 7e9);
    assert.equal(params('acme/SuperLM-13B-chat'), 13e9);
    assert.equal(params('Qwen/Qwen1.5-1.8B-Chat'), 1.8e9);
    assert.equal(params('bigscience/bloom-7b1'), 7.1e9);
    assert.equal(params('HuggingFaceTB/SmolLM2-360M'), 360e6);
    assert.equal(params('mistralai/Mistral-7B-v0.1'), 7e9);
    assert.equal(params('gpt2-xl'), undefined);
    assert.equal(params('acme/model-v2'), undefined);
    // Phi's names give a tier; the model cards give its size.
    assert.equal(params('microsoft/Phi-3-mini-4k-instruct'), 3.8e9);
    assert.equal(params('microsoft/Phi-3.5-mini-instruct'), 3.8e9);
    assert.equal(params('microsoft/Phi-3-medium-128k-instruct'), 14e9);
    assert.equal(params('microsoft/phi-4'), 14e9);
    assert.equal(params('microsoft/phi-2'), undefined);
    assert.match(JSON.stringify(sizeFromName('mistralai/Mixtral-8x7B-v0.1')), /mixture-of-experts/);
    assert.match(JSON.stringify(sizeFromName('Qwen/Qwen1.5-MoE-A2.7B')), /mixture-of-experts/);
  });

  it('scales an unknown Phi-3, Phi-4, Gemma-2, GPT-NeoX, OLMo, OLMo-2, Qwen3 or Granite 3 from the nearest catalogued member of its own family, built on its own tree', () => {
    for (const [name, family, reference, params] of [
      ['microsoft/Phi-3-small-8k-instruct', 'phi3', 'microsoft/Phi-3-mini-4k-instruct', 7e9],
      ['acme/phi-4-reasoning-plus-20b', 'phi3', 'microsoft/phi-4', 20e9],
      ['acme/gemma-2-4b-merge', 'gemma2', 'google/gemma-2-2b', 4e9],
      ['org/pythia-3b-custom', 'gpt_neox', 'EleutherAI/pythia-2.8b', 3e9],
      ['acme/olmo-1.5b-sft', 'olmo', 'allenai/OLMo-1B-hf', 1.5e9],
      ['acme/OLMo-2-13B-tuned', 'olmo2', 'allenai/OLMo-2-1124-7B', 13e9],
      ['acme/Qwen3-24B-merge', 'qwen3', 'Qwen/Qwen3-32B', 24e9],
      ['acme/granite-3.3-4b-sft', 'granite', 'ibm-granite/granite-3.3-2b-instruct', 4e9],
    ] as const) {
      const assumed = assumedCheckpoint(name);
      if ('declined' in assumed) assert.fail(assumed.declined);
      assert.equal(assumed.modelType, family, name);
      assert.match(assumed.source, new RegExp(`scaled from ${reference.replace(/[.]/g, '\\.')} `), name);
      assert.doesNotMatch(assumed.assumed, /not modelled/, name);
      const architecture = transformersArchitecture({ className: 'AutoModelForCausalLM', checkpoint: name });
      if (isCatalogMiss(architecture)) assert.fail(architecture.miss);
      const counted = llamaStyleParams(assumed.modelType, assumed.config);
      // The family's own parameter count (its norms, biases and MLP) is the catalog's, and within a layer of the size.
      assert.equal(architecture.params, counted, name);
      assert.ok(Math.abs(counted - params) / params < 1 / (assumed.config.num_hidden_layers as number), `${name}: ${counted}`);
      assert.equal(assumed.config.vocab_size, findVocab(reference), name);
    }
  });

  it("keeps Qwen3's own tree to Qwen3: Qwen2.5 and Qwen3.5 names take Qwen2's, Qwen3's mixtures are declined", () => {
    const family = (name: string) => {
      const assumed = assumedCheckpoint(name);
      return 'declined' in assumed ? 'declined' : assumed.modelType;
    };
    assert.equal(family('acme/qwen3-2b-chat'), 'qwen3');
    assert.equal(family('acme/Qwen2.5-9B-sft'), 'qwen2');
    assert.equal(family('acme/Qwen3.5-9B-sft'), 'qwen2');
    assert.equal(family('Qwen/Qwen3-30B-A3B'), 'declined');
  });

  it("takes a family member of the name's own size as it is: a fine-tune has its base's shape, not the round figure of its tag", () => {
    for (const [name, reference] of [
      ['lmsys/vicuna-7b-v1.5', 'meta-llama/Llama-2-7b-hf'],
      ['huggyllama/llama-7b', 'meta-llama/Llama-2-7b-hf'],
      ['acme/Llama-3.1-70B-merge', 'meta-llama/Llama-3.1-70B'],
      ['acme/codellama-13b-sql', 'codellama/CodeLlama-13b-hf'],
      ['deepseek-ai/DeepSeek-R1-Distill-Qwen-14B', 'Qwen/Qwen2.5-14B'],
    ] as const) {
      const assumed = assumedCheckpoint(name);
      if ('declined' in assumed) assert.fail(assumed.declined);
      const member = CHECKPOINTS.find((c) => c.name === reference)!;
      assert.equal(llamaStyleParams(assumed.modelType, assumed.config), llamaStyleParams(member.modelType, member.config), name);
      assert.equal(assumed.config.num_hidden_layers, member.config.num_hidden_layers, name);
      assert.match(assumed.assumed, new RegExp(`with the shape of ${reference.replace(/[.]/g, '\\.')}, a catalogued model of that size`), name);
    }
    // Without a member of its size the family's nearest is scaled; Mistral's Tekken-era names keep the 131072-entry vocabulary.
    const ministral = assumedCheckpoint('acme/Ministral-3B-2410-sft');
    if ('declined' in ministral) assert.fail(ministral.declined);
    assert.equal(ministral.config.vocab_size, 131072);
    assert.match(ministral.source, /scaled from mistralai\/(Mistral-Nemo|Ministral)/);
    const zephyr = assumedCheckpoint('acme/zephyr-3b');
    if ('declined' in zephyr) assert.fail(zephyr.declined);
    assert.ok((zephyr.config.vocab_size as number) < 40000, String(zephyr.config.vocab_size));
  });

  it('declines mixture-of-experts, encoder and size-less names', () => {
    assert.ok('declined' in assumedCheckpoint('acme/SuperMix-8x7b'));
    assert.ok('declined' in assumedCheckpoint('acme/t5-3b-finetuned'));
    assert.ok('declined' in assumedCheckpoint('acme/bert-1b'));
    assert.ok('declined' in assumedCheckpoint('acme/my-finetuned-model'));
  });

  it('takes the family of the name and scales its nearest member to the size, within a layer of the count', () => {
    for (const [name, family, params] of [['acme/llama-30b-sft', 'llama', 30e9], ['acme/mistral-12b-merge', 'mistral', 12e9], ['acme/qwen-20b', 'qwen2', 20e9], ['acme/gemma-4b-tuned', 'gemma', 4e9], ['acme/SuperLM-3b', 'llama', 3e9]] as const) {
      const assumed = assumedCheckpoint(name);
      if ('declined' in assumed) assert.fail(assumed.declined);
      assert.equal(assumed.modelType, family, name);
      const counted = llamaStyleParams(assumed.modelType, assumed.config);
      const layers = assumed.config.num_hidden_layers as number;
      assert.ok(Math.abs(counted - params) / params < 1 / layers, `${name}: ${counted}`);
      assert.match(assumed.assumed, /assumed from the size in its name/);
      // The catalog builds it like any checkpoint, with the note.
      const architecture = transformersArchitecture({ className: 'AutoModelForCausalLM', checkpoint: name });
      if (isCatalogMiss(architecture)) assert.fail(architecture.miss);
      assert.ok(Math.abs(architecture.params - counted) / counted < 0.001, `${name}: ${architecture.params} vs ${counted}`);
      assert.match(architecture.table([16]).notes.join(' '), /shape is assumed/);
    }
    // A family whose own architecture is not modelled says so.
    const falcon = assumedCheckpoint('acme/falcon-11b-tuned');
    if ('declined' in falcon) assert.fail(falcon.declined);
    assert.match(falcon.assumed, /falcon architecture is not modelled/);
  });

  it('lands near the catalogued shape when a catalogued decoder is pretended unknown (from the size in its name)', () => {
    const rows: string[] = [];
    const paramErrors: number[] = [];
    const estimateErrors: number[][] = JOBS.map(() => []);
    for (const checkpoint of CHECKPOINTS) {
      if (!isLlamaStyle(checkpoint.modelType)) continue;
      const size = sizeFromName(checkpoint.name);
      if (!size || 'declined' in size) continue;
      // Leave out the model itself and every member of the same size fields (its chat or version twins).
      const same = CHECKPOINTS.filter((c) => c.modelType === checkpoint.modelType && llamaStyleParams(c.modelType, c.config) === llamaStyleParams(checkpoint.modelType, checkpoint.config)).map((c) => c.name);
      const assumed = assumedCheckpoint(checkpoint.name, { except: same });
      if ('declined' in assumed) continue;
      const real = shapeOf(checkpoint);
      const guess = shapeOf(assumed);
      const realParams = llamaStyleParams(checkpoint.modelType, checkpoint.config);
      const paramError = llamaStyleParams(assumed.modelType, assumed.config) / realParams - 1;
      paramErrors.push(Math.abs(paramError));
      const cells = JOBS.map(({ job }, i) => {
        const error = figure(guess, job) / figure(real, job) - 1;
        estimateErrors[i]!.push(Math.abs(error));
        return `${(error * 100).toFixed(1)}%`;
      });
      rows.push(`${checkpoint.name} | ${size.tag} | ${assumed.source.replace(/^assumed from the name, (?:scaled from|the shape of) (\S+).*$/, '$1')} | ${(paramError * 100).toFixed(1)}% | ${cells.join(' | ')}`);
    }
    const summary = (errors: readonly number[]) => `median ${(median(errors) * 100).toFixed(1)}%, worst ${(Math.max(...errors) * 100).toFixed(1)}%`;
    console.log(['', `model | tag | proportions of | parameters | ${JOBS.map((j) => j.label).join(' | ')}`, ...rows, `${rows.length} models: parameters ${summary(paramErrors)}; ${JOBS.map((j, i) => `${j.label} ${summary(estimateErrors[i]!)}`).join('; ')}`].join('\n'));
    assert.ok(rows.length >= 25, String(rows.length));
    assert.ok(median(paramErrors) < 0.05, summary(paramErrors));
    for (const errors of estimateErrors) {
      assert.ok(median(errors) < 0.1, summary(errors));
      assert.ok(Math.max(...errors) < 0.35, summary(errors));
    }
  });
});
