import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { estimate, REPO_ROOT, setupOf } from '../../fixtures';

/** A causal LM in bf16 with LoRA, trained by a loop whose body is `step`. */
const script = (step: string, load = '') => `import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer
from peft import LoraConfig, get_peft_model

tokenizer = AutoTokenizer.from_pretrained("meta-llama/Llama-2-7b-hf")
model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf", torch_dtype=torch.bfloat16${load})
model = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
encodings = tokenizer(["text"] * 64, max_length=1024, padding="max_length", truncation=True, return_tensors="pt")
loader = DataLoader(list(zip(encodings["input_ids"], encodings["attention_mask"])), batch_size=4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model.cuda()
for input_ids, attention_mask in loader:
    input_ids = input_ids.cuda()
${step.split('\n').map((line) => `    ${line}`).join('\n')}
    optimizer.step()
    optimizer.zero_grad()
`;

describe('what a loop keeps of the model output through the backward', () => {
  it('is the whole output where a name holds it, through names, arithmetic, scalers and accelerate', async () => {
    const kept = [
      'outputs = model(input_ids=input_ids, labels=input_ids)\nloss = outputs.loss\nloss.backward()',
      'out = model(input_ids=input_ids, labels=input_ids)\n(out.loss / 4).backward()',
      'outputs = model(input_ids=input_ids, labels=input_ids)\nloss = outputs[0]\nscaler.scale(loss).backward()',
      'outputs = model(input_ids=input_ids, labels=input_ids)\nloss = outputs["loss"] / 2\naccelerator.backward(loss)',
    ];
    for (const step of kept) {
      const setup = await setupOf(script(step));
      assert.equal(setup.modelOutputs?.value, 'output', step);
      assert.match(setup.modelOutputs.origin, /the output is kept through the backward/);
    }
  });

  it('is nothing but the loss where the loss comes straight from the call; unread where the loss is the script\'s own', async () => {
    assert.equal((await setupOf(script('loss = model(input_ids=input_ids, labels=input_ids).loss\nloss.backward()'))).modelOutputs?.value, 'none');
    assert.equal((await setupOf(script('model(input_ids=input_ids, labels=input_ids)[0].backward()'))).modelOutputs?.value, 'none');
    assert.equal((await setupOf(script('logits = model(input_ids=input_ids).logits\nloss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), input_ids.flatten())\nloss.backward()'))).modelOutputs, undefined);
  });

  it("reads the realworld accelerate example's loop, inside a function and under accelerator.accumulate", async () => {
    const source = readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'realworld', 'accelerate_clm', 'run_clm_no_trainer.py'), 'utf8');
    const setup = await setupOf(source);
    assert.equal(setup.modelOutputs?.value, 'output');
    assert.match(setup.modelOutputs.origin, /^outputs = model\(\*\*batch\): the output is kept/);
    assert.ok((await estimate(source)).models[0]!.notes.some((note) => /every layer's keys and values in it: counted/.test(note.message)));
  });

  it('reads use_cache=False in from_pretrained and on the config', async () => {
    assert.equal((await setupOf(script('loss = model(input_ids=input_ids).loss\nloss.backward()', ', use_cache=False'))).useCache?.value, false);
    assert.equal((await setupOf(script('model.config.use_cache = False\nloss = model(input_ids=input_ids).loss\nloss.backward()'))).useCache?.value, false);
    assert.equal((await setupOf(script('loss = model(input_ids=input_ids).loss\nloss.backward()'))).useCache, undefined);
  });

  it("counts every layer's keys and values where the loop keeps the output and the cache is on, and says how to free them", async () => {
    const step = 'outputs = model(input_ids=input_ids, labels=input_ids)\nloss = outputs.loss\nloss.backward()';
    const mib = async (source: string) => (await estimate(source)).models[0]!.memory.estimateMiB!;
    const held = await estimate(script(step));
    const kept = held.models[0]!;
    assert.ok(kept.notes.some((note) => /keys and values in it: counted\. `use_cache=False` in from_pretrained/.test(note.message)));
    // Llama-2-7B: 32 layers x 32 key-value heads x 128, keys and values in bf16, over 4 x 1024 tokens: 2 GiB.
    const cache = 2 * 32 * 4 * 1024 * 32 * 128 * 2;
    const withoutCache = await mib(script(step, ', use_cache=False'));
    assert.ok(Math.abs((kept.memory.estimateMiB! - withoutCache) * 2 ** 20 - cache) < cache * 0.25, `${kept.memory.estimateMiB} vs ${withoutCache}`);
    // The loss straight from the call: no cache, and the logits go too.
    assert.ok((await mib(script('loss = model(input_ids=input_ids, labels=input_ids).loss\nloss.backward()'))) < withoutCache);
  });
});
