/**
 * The checkpoints' recorded configurations (checkpoints.json): every one that names a published
 * parameter count gets exactly that count from the catalog, under each of its names. The
 * generator (scripts/catalog/generate_hf_catalog.py) checks the same figures against the library.
 */
import * as assert from 'node:assert/strict';
import { isCatalogMiss, type CatalogArchitecture } from '../../../../../src/core/catalog/catalog';
import { CHECKPOINTS, findCheckpoint } from '../../../../../src/core/catalog/hf/checkpoints';
import { transformersArchitecture } from '../../../../../src/core/catalog/hf/transformers';

function pretrained(className: string, checkpoint: string): CatalogArchitecture {
  const result = transformersArchitecture({ className, checkpoint });
  if (isCatalogMiss(result)) assert.fail(`${className} ${checkpoint}: ${result.miss}`);
  return result;
}

describe('transformers checkpoints (checkpoints.json)', () => {
  it('gives every checkpoint with a published parameter count exactly that count, under each of its names', () => {
    const published = CHECKPOINTS.filter((c) => c.published);
    assert.ok(published.length >= 28, 'published counts');
    for (const checkpoint of published) {
      const { className, params, plus } = checkpoint.published!;
      assert.equal(pretrained(className, checkpoint.name).params + (plus ?? 0), params, `${checkpoint.name} ${className}`);
      for (const alias of checkpoint.aliases) assert.equal(pretrained(className, alias).name, checkpoint.name, alias);
    }
    assert.equal(pretrained('AutoModelForCausalLM', 'mistralai/Mistral-7B-v0.1').params, 7_241_732_096);
    assert.equal(pretrained('AutoModelForCausalLM', 'google/gemma-2b').params, 2_506_172_416);
    assert.equal(pretrained('AutoModelForCausalLM', 'Qwen/Qwen2.5-7B-Instruct').params, 7_615_616_512);
    // ELECTRA-base's encoder is BERT-base's: 108,891,648 without BERT's pooler.
    assert.equal(pretrained('ElectraModel', 'google/electra-base-discriminator').params, 108_891_648);
  });

  it('names each checkpoint once, and finds names ignoring case', () => {
    const names = CHECKPOINTS.flatMap((c) => [c.name, ...c.aliases]);
    assert.equal(new Set(names.map((n) => n.toLowerCase())).size, names.length);
    assert.equal(findCheckpoint('MICROSOFT/DEBERTA-V3-BASE')?.name, 'microsoft/deberta-v3-base');
    assert.equal(findCheckpoint('bloomz-560m')?.name, 'bigscience/bloom-560m');
  });

  it("finds a mirror under another organisation by its short name, when exactly one checkpoint has it", () => {
    assert.equal(findCheckpoint('NousResearch/Llama-2-7b-hf')?.name, 'meta-llama/Llama-2-7b-hf');
    assert.equal(findCheckpoint('unsloth/Llama-3.2-1B')?.name, 'meta-llama/Llama-3.2-1B');
    // A pre-quantized mirror has its base's shape (Meta's names with their Meta- prefix).
    assert.equal(findCheckpoint('unsloth/llama-3-8b-bnb-4bit')?.name, 'meta-llama/Meta-Llama-3-8B');
    assert.equal(findCheckpoint('unsloth/mistral-7b-v0.3-bnb-4bit')?.name, findCheckpoint('mistralai/Mistral-7B-v0.3')?.name);
    // A short name no checkpoint has, and a bare name, stay unknown.
    assert.equal(findCheckpoint('someone/Llama-2-8b-hf'), undefined);
    assert.equal(findCheckpoint('Llama-2-8b-hf'), undefined);
    // Every short name the catalog gives is one checkpoint's only: a mirror is never ambiguous between two of them.
    const shortNames = new Map<string, Set<string>>();
    for (const c of CHECKPOINTS) for (const n of [c.name, ...c.aliases]) {
      const short = n.toLowerCase().slice(n.lastIndexOf('/') + 1);
      shortNames.set(short, (shortNames.get(short) ?? new Set()).add(c.name));
    }
    assert.deepEqual([...shortNames].filter(([, owners]) => owners.size > 1), []);
  });
});
