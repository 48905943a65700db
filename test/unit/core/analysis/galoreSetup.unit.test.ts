import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, setupOf } from '../../fixtures';

const fixture = () => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', 'galore_full_finetune.py'), 'utf8');
/** A Trainer's arguments with `arguments`. */
const script = (args: string) =>
  ['from transformers import AutoModelForCausalLM, TrainingArguments', 'model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B")', `args = TrainingArguments(output_dir="out", ${args})`].join('\n');

describe('galoreSetup', () => {
  it("reads the fixture's GaLore: the rank of optim_args, the target modules as written, at the optim argument", async () => {
    const setup = await setupOf(fixture());
    assert.deepEqual(setup.galore?.value, { rank: 64, targets: ['.*.attn.*', '.*.mlp.*'], layerwise: false });
    assert.equal(setup.galore && setup.galore.range.startLine + 1, 26);
    assert.equal(setup.galore?.origin, 'TrainingArguments(optim="galore_adamw", optim_target_modules=[".*.attn.*", ".*.mlp.*"], rank=64)');
  });

  it('reads the layerwise and 8-bit variants, a single regular expression, and leaves out what is not written', async () => {
    assert.deepEqual((await setupOf(script('optim="galore_adamw_8bit_layerwise", optim_target_modules="all-linear"'))).galore?.value, { targets: 'all-linear', layerwise: true });
    assert.deepEqual((await setupOf(script('optim="galore_adafactor", optim_args="update_proj_gap=100, rank=32"'))).galore?.value, { rank: 32, layerwise: false });
    // A rank the script computes, or not a whole number, is not guessed.
    assert.deepEqual((await setupOf(script('optim="galore_adamw", optim_args="rank=r"'))).galore?.value, { layerwise: false });
    assert.equal((await setupOf(script('optim="adamw_torch"'))).galore, undefined);
    assert.equal((await setupOf(script('optim="galore"'))).galore, undefined);
  });
});
