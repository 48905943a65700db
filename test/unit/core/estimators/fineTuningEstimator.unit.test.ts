import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ModelEstimate } from '../../../../src/core/estimate/fileEstimate';
import { estimateFineTuning } from '../../../../src/core/estimators/fineTuning';
import { estimate, REPO_ROOT } from '../../fixtures';

const llm = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', name), 'utf8');
const GiB = 1024;
const reading = (model: ModelEstimate, id: string) => model.estimates.find((r) => r.estimator === id);

describe('fineTuningEstimator', () => {
  it('estimates a PEFT method it does not size (HRA, FourierFT...) as an adapter over a frozen model, not as a full fine-tune, and says so once', async () => {
    const source = (config: string) => [
      'import torch',
      `from peft import ${config.replace(/\(.*$/, '')}, get_peft_model`,
      'from transformers import AutoModelForCausalLM, Trainer, TrainingArguments',
      'model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", torch_dtype=torch.bfloat16)',
      `model = get_peft_model(model, ${config})`,
      'Trainer(model=model, args=TrainingArguments(output_dir="o", per_device_train_batch_size=2, bf16=True), train_dataset=None).train()',
      '',
    ].join('\n');
    const [hra] = (await estimate(source('HRAConfig(r=8, target_modules=["q_proj", "v_proj"])'))).models;
    const [lora] = (await estimate(source('LoraConfig(r=8, target_modules=["q_proj", "v_proj"])'))).models;
    assert.ok(hra && lora);
    assert.equal(hra.assumptions.find((a) => a.name === 'adapter')?.value.split(' ')[0], 'hra');
    // The frozen bf16 base as LoRA's, with no gradient or optimizer state counted for the adapter.
    assert.ok(Math.abs(hra.memory.breakdown!.weightsMiB - 1_235_814_400 * 2 / 2 ** 20) < 1, String(hra.memory.breakdown!.weightsMiB));
    assert.equal(hra.memory.breakdown?.gradientsMiB, 0);
    assert.ok(Math.abs(hra.memory.estimateMiB! - lora.memory.estimateMiB!) / lora.memory.estimateMiB! < 0.05, `${hra.memory.estimateMiB} vs ${lora.memory.estimateMiB}`);
    const notes = hra.notes.map((n) => n.message).filter((m) => /parameters are not counted|parameter count is unknown/.test(m));
    assert.equal(notes.length, 1, JSON.stringify(notes));
  });

  it("counts GPT-2's gelu_new under the Trainer's bf16 autocast: the fp32 tensors its tanh formula keeps, 12 bytes per MLP element more", async () => {
    const [model] = (await estimate(llm('gpt2_clm_trainer.py'))).models;
    const job = model!.fineTuning!.job;
    assert.equal(job.shape.tanhGelu, 'new');
    assert.equal(job.autocast, true);
    assert.deepEqual([job.batch, job.seq, job.shape.layers, job.shape.intermediate], [8, 1024, 24, 4096]);
    const without = estimateFineTuning({ ...job, shape: { ...job.shape, tanhGelu: undefined } });
    const gelu = estimateFineTuning(job);
    assert.equal(gelu.activations - without.activations, 12 * 4096 * 8 * 1024 * 24);
    // About 9 GiB: the CPU dry run of this script (PyTorch 2.4.1) holds 30.8 GiB; the estimate was 22.4 GiB without them.
    assert.ok(model!.memory.estimateMiB! > 30 * GiB && model!.memory.estimateMiB! < 36 * GiB, String(model!.memory.estimateMiB));
  });

  it('estimates a Hugging Face teacher called only under torch.no_grad() as inference: its weights, no gradients or optimizer state', async () => {
    const source = [
      'import torch',
      'import torch.nn.functional as F',
      'from transformers import AutoModelForSequenceClassification, AutoTokenizer',
      'teacher = AutoModelForSequenceClassification.from_pretrained("bert-large-uncased", num_labels=2).cuda().eval()',
      'student = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2).cuda()',
      'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")',
      'optimizer = torch.optim.AdamW(student.parameters(), lr=5e-5)',
      'for step in range(1000):',
      '    batch = tokenizer(texts, padding="max_length", truncation=True, max_length=256, return_tensors="pt").to("cuda")',
      '    with torch.no_grad():',
      '        t_logits = teacher(**batch).logits',
      '    loss = F.kl_div(F.log_softmax(student(**batch).logits, -1), F.softmax(t_logits, -1), reduction="batchmean")',
      '    loss.backward()',
      '    optimizer.step()',
      '',
    ].join('\n');
    const models = (await estimate(source, { batchSize: 32 })).models;
    const teacher = models.find((m) => m.name === 'teacher')!;
    const student = models.find((m) => m.name === 'student')!;
    assert.equal(teacher.inferenceOnly, true);
    assert.equal(teacher.memory.method, 'fineTuning');
    assert.equal(teacher.memory.breakdown!.gradientsMiB, 0);
    assert.equal(teacher.memory.breakdown!.optimizerMiB, 0);
    assert.ok(student.memory.breakdown!.gradientsMiB > 200);
  });

  it('counts a BERT fine-tune with its embeddings and first eight layers frozen: gradients, state and activations of the rest only', async () => {
    const source = llm('bert_frozen_encoder.py');
    const [frozen] = (await estimate(source)).models;
    const [full] = (await estimate(source.replace('for param in model.bert.embeddings.parameters():', 'for param in []:').replace('for layer in model.bert.encoder.layer[:FROZEN_LAYERS]:', 'for layer in []:'))).models;
    assert.equal(frozen!.memory.method, 'fineTuning');
    // The last four layers (7,087,872 each), the pooler (590,592) and the classifier (1,538) train.
    const trained = 4 * 7087872 + 590592 + 1538;
    assert.equal(frozen!.layerTable.totals.trainableParams, trained);
    const b = frozen!.memory.breakdown!;
    assert.ok(Math.abs(b.gradientsMiB - (trained * 4) / 2 ** 20) < 1, String(b.gradientsMiB));
    assert.ok(Math.abs(b.weightsMiB - full!.memory.breakdown!.weightsMiB) < 1, 'every weight is still held');
    // Four of twelve layers keep their activations.
    const activations = full!.memory.breakdown!.activationsMiB;
    assert.ok(b.activationsMiB < activations / 2 && b.activationsMiB > activations / 6, `${b.activationsMiB} of ${activations}`);
    assert.ok(frozen!.notes.some((n) => /80\.5M parameters frozen.*layers before `bert\.encoder\.layer\.8\./.test(n.message)));
  });

  it("is the estimate of the issue's QLoRA script: 13B in 4 bits with a LoRA adapter fits a 24 GB card, where counting every parameter as trained does not fit 80 GB", async () => {
    const [model] = (await estimate(llm('qlora_trainer.py'))).models;
    assert.ok(model);
    assert.equal(model.memory.method, 'fineTuning');
    const mib = model.memory.estimateMiB!;
    assert.ok(mib > 8 * GiB && mib < 20 * GiB, String(mib));
    assert.ok(reading(model, 'analytical')!.estimateMiB! > 80 * GiB);
    assert.equal(reading(model, 'fineTuning')?.role, 'estimate');
    // The breakdown is the fine-tuning model's: 13B weights in about half a byte each, not 4 bytes.
    assert.ok(model.memory.breakdown!.weightsMiB < 10 * GiB);
    assert.ok(model.assumptions.some((a) => a.name === 'adapter' && /rank 8/.test(a.value) && a.line === 30));
    assert.ok(model.assumptions.some((a) => a.name === 'quantization' && a.value === '4-bit nf4 double-quantized'));
    assert.ok(model.maxBatchSize !== null && model.maxBatchSize > 4);
  });

  it('grows with the batch and the sequence, and the largest batch follows its own figures', async () => {
    const source = llm('peft_torch_loop.py');
    const [small] = (await estimate(source)).models;
    const [large] = (await estimate(source, { batchSize: 8 })).models;
    const [longer] = (await estimate(source.replace('max_length = 512', 'max_length = 2048'))).models;
    assert.ok(large!.memory.estimateMiB! > small!.memory.estimateMiB!);
    assert.ok(longer!.memory.estimateMiB! > small!.memory.estimateMiB!);
  });

  it('estimates a bf16 full fine-tune with 8-bit AdamW as weights, gradients and state of 2 bytes each', async () => {
    const [model] = (await estimate(llm('full_finetune_bf16.py'))).models;
    assert.equal(model!.memory.method, 'fineTuning');
    const b = model!.memory.breakdown!;
    assert.ok(Math.abs(b.weightsMiB - b.gradientsMiB) < 1);
    assert.ok(b.optimizerMiB > 0.95 * b.weightsMiB && b.optimizerMiB < 1.1 * b.weightsMiB);
  });

  it("estimates GaLore's full fine-tune with the projected state: AdamW's full state for the tied embeddings only, and says what it assumed", async () => {
    const source = llm('galore_full_finetune.py');
    const [galore] = (await estimate(source)).models;
    const [adamw] = (await estimate(source.replace('optim="galore_adamw"', 'optim="adamw_torch"'))).models;
    assert.equal(galore!.memory.method, 'fineTuning');
    const b = galore!.memory.breakdown!;
    // Llama-3.2-1B: 1.24B parameters in bf16; its 16 layers' matrices projected to rank 64 (some 150 MiB of state), the 262M tied embedding's state in full (1,002 MiB).
    assert.ok(b.optimizerMiB > 1000 && b.optimizerMiB < 1200, String(b.optimizerMiB));
    assert.ok(adamw!.memory.breakdown!.optimizerMiB > 4 * b.optimizerMiB);
    assert.equal(galore!.assumptions.find((a) => a.name === 'optimizer')?.value, 'galore_adamw (GaLore, rank 64)');
    assert.ok(galore!.notes.some((n) => /GaLore: the gradients of the linear layers matching \.\*\.attn\.\*, \.\*\.mlp\.\* are projected to rank 64/.test(n.message)));
    const [defaults] = (await estimate(source.replace('optim_args="rank=64, update_proj_gap=200, scale=0.25",', ''))).models;
    assert.equal(defaults!.assumptions.find((a) => a.name === 'optimizer')?.value, 'galore_adamw (GaLore, rank 128 (default))');
    assert.ok(defaults!.notes.some((n) => /transformers' default 128 is assumed/.test(n.message)));
  });

  it("sizes the Trainer's other optimizers by their names: Lion's 8-bit momentum, LOMO's update in the backward with no gradients held", async () => {
    const source = llm('full_finetune_bf16.py');
    const [adam8] = (await estimate(source)).models;
    const [lion8] = (await estimate(source.replace('optim="adamw_8bit"', 'optim="lion_8bit"'))).models;
    const [lomo] = (await estimate(source.replace('optim="adamw_8bit"', 'optim="lomo"'))).models;
    // One byte a parameter against 8-bit AdamW's two.
    const ratio = lion8!.memory.breakdown!.optimizerMiB / adam8!.memory.breakdown!.optimizerMiB;
    assert.ok(ratio > 0.49 && ratio < 0.51, String(ratio));
    assert.equal(lomo!.memory.breakdown!.optimizerMiB, 0);
    assert.equal(lomo!.memory.breakdown!.gradientsMiB, 0);
    assert.ok(lomo!.notes.some((n) => /optim="lomo" applies each gradient in the backward/.test(n.message)));
    assert.ok(lomo!.memory.estimateMiB! < lion8!.memory.estimateMiB!);
  });

  it("takes the optimizer a Trainer is given (optimizers=...) over the arguments' optim, which the Trainer then ignores", async () => {
    const source = llm('full_finetune_bf16.py');
    const [named] = (await estimate(source)).models;
    const given = source.replace('Trainer(model=model, args=training_args, train_dataset=data)', 'optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)\nTrainer(model=model, args=training_args, train_dataset=data, optimizers=(optimizer, None))');
    const [own] = (await estimate(given)).models;
    // AdamW's two bf16 moments against 8-bit AdamW's two bytes.
    const ratio = own!.memory.breakdown!.optimizerMiB / named!.memory.breakdown!.optimizerMiB;
    assert.ok(ratio > 1.9 && ratio < 2.1, String(ratio));
    assert.match(own!.assumptions.find((a) => a.name === 'optimizer')?.origin ?? '', /AdamW\(\.\.\.\)/);
  });

  it("sizes an optimizer the script builds from bitsandbytes by its class: 8-bit AdamW's two bytes a parameter, 8-bit Lion's one", async () => {
    const source = llm('bnb_optimizer_loop.py');
    const [adam8] = (await estimate(source)).models;
    const [adam] = (await estimate(source.replace('bnb.optim.PagedAdamW8bit(', 'torch.optim.AdamW('))).models;
    const [lion8] = (await estimate(source.replace('bnb.optim.PagedAdamW8bit(', 'bnb.optim.Lion8bit('))).models;
    assert.equal(adam8!.memory.method, 'fineTuning');
    assert.equal(adam8!.assumptions.find((a) => a.name === 'optimizer')?.value, 'PagedAdamW8bit');
    // No autocast: the bf16 weights compute in bf16, which the precision says (not fp32 by default).
    const precision = adam8!.assumptions.find((a) => a.name === 'precision');
    assert.equal(precision?.value, 'bf16');
    assert.match(precision?.origin ?? '', /no autocast: the forward runs in the weights' dtype \(from_pretrained\(torch_dtype=torch\.bfloat16\)\)/);
    // Llama-3.2-1B in bf16: AdamW's two bf16 moments are 4 bytes a parameter, 8-bit AdamW's about 2, 8-bit Lion's about 1.
    const b = (m: typeof adam8) => m!.memory.breakdown!.optimizerMiB;
    assert.ok(Math.abs(b(adam8) / b(adam) - 0.5) < 0.01, `${b(adam8)} vs ${b(adam)}`);
    assert.ok(Math.abs(b(lion8) / b(adam) - 0.25) < 0.01, `${b(lion8)} vs ${b(adam)}`);
  });

  it("counts no step temporary for a fused AdamW: the Trainer's adamw_torch_fused, torch's AdamW(fused=True), bitsandbytes' paged 32-bit AdamW", async () => {
    const trainer = llm('galore_full_finetune.py');
    const [foreach] = (await estimate(trainer.replace('optim="galore_adamw"', 'optim="adamw_torch"'))).models;
    const [fused] = (await estimate(trainer.replace('optim="galore_adamw"', 'optim="adamw_torch_fused"'))).models;
    assert.ok(fused!.memory.estimateMiB! < foreach!.memory.estimateMiB! - 1000, `${fused!.memory.estimateMiB} vs ${foreach!.memory.estimateMiB}`);
    assert.equal(fused!.memory.breakdown!.optimizerMiB, foreach!.memory.breakdown!.optimizerMiB);
    // One sample a batch, so that the step, not the logits, is the peak.
    const loop = llm('bnb_optimizer_loop.py').replace('batch_size=8', 'batch_size=1');
    const [torchAdamW] = (await estimate(loop.replace('bnb.optim.PagedAdamW8bit(', 'torch.optim.AdamW('))).models;
    const [torchFused] = (await estimate(loop.replace('bnb.optim.PagedAdamW8bit(model.parameters(),', 'torch.optim.AdamW(model.parameters(), fused=True,'))).models;
    const [paged32] = (await estimate(loop.replace('bnb.optim.PagedAdamW8bit(', 'bnb.optim.PagedAdamW32bit('))).models;
    assert.ok(torchFused!.memory.estimateMiB! < torchAdamW!.memory.estimateMiB! - 1000, `${torchFused!.memory.estimateMiB} vs ${torchAdamW!.memory.estimateMiB}`);
    assert.ok(paged32!.memory.estimateMiB! < torchAdamW!.memory.estimateMiB!);
    // One tensor at a time: torch's foreach=False and transformers' own AdamW (the Trainer's adamw_hf), between the two.
    const [perTensor] = (await estimate(loop.replace('bnb.optim.PagedAdamW8bit(model.parameters(),', 'torch.optim.AdamW(model.parameters(), foreach=False,'))).models;
    const [transformersAdamW] = (await estimate(loop.replace('bnb.optim.PagedAdamW8bit(', 'transformers.AdamW(').replace('import bitsandbytes as bnb', 'import transformers'))).models;
    for (const m of [perTensor, transformersAdamW]) {
      assert.ok(m!.memory.estimateMiB! > torchFused!.memory.estimateMiB! && m!.memory.estimateMiB! < torchAdamW!.memory.estimateMiB! - 500, `${m!.memory.estimateMiB}`);
    }
    const shown = transformersAdamW!.assumptions.find((a) => a.name === 'optimizer');
    assert.equal(shown?.value, 'adamw');
    assert.match(shown?.origin ?? '', /transformers\.AdamW/);
  });

  it('counts IA3 on mT0 and prompt tuning on BLOOMZ instead of calling their parameters unknown', async () => {
    const [ia3] = (await estimate(llm('ia3_seq2seq.py'))).models;
    assert.equal(ia3!.memory.method, 'fineTuning');
    assert.ok(!ia3!.notes.some((n) => /not counted|unknown/.test(n.message)), ia3!.notes.map((n) => n.message).join(' | '));
    const [prompt] = (await estimate(llm('prompt_tuning_bloom.py'))).models;
    assert.equal(prompt!.memory.method, 'fineTuning');
    assert.ok(!prompt!.notes.some((n) => /not counted|unknown/.test(n.message)), prompt!.notes.map((n) => n.message).join(' | '));
    // mT0-xxl in fp32 (no torch_dtype) is about 48 GiB of weights alone: IA3 does not make it fit 40 GB.
    assert.ok(ia3!.memory.estimateMiB! > 48 * GiB);
  });

  it('estimates a full fine-tune of a catalog model in fp32 (no adapter, no dtype) with the fine-tuning model', async () => {
    const source = [
      'import torch',
      'from transformers import AutoModelForCausalLM',
      'from torch.utils.data import DataLoader',
      'model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B")',
      'loader = DataLoader([], batch_size=2)',
      'optimizer = torch.optim.AdamW(model.parameters())',
      'for batch in loader:',
      '    model(**batch).loss.backward()',
      '    optimizer.step()',
    ].join('\n');
    const [model] = (await estimate(source)).models;
    assert.equal(model!.memory.method, 'fineTuning');
    // 1.24B fp32 parameters, their gradients and AdamW's two states: 16 B each, 18.4 GiB before the activations.
    assert.ok(model!.memory.estimateMiB! > 18.4 * 1024, String(model!.memory.estimateMiB));
    assert.ok(model!.notes.some((n) => /fp32 is assumed/.test(n.message)));
  });
});
