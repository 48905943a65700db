import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, setupOf } from '../../fixtures';


const llm = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'llm', name), 'utf8');
const line = (found: { range: { startLine: number } } | undefined) => found && found.range.startLine + 1;

/** A causal LM loaded with `from_pretrained(<load>)`, with `<extra>` after it. */
const script = (load: string, extra = '') =>
  [
    'import torch',
    'from transformers import AutoModelForCausalLM, BitsAndBytesConfig, TrainingArguments',
    'from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training',
    `model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf"${load ? `, ${load}` : ''})`,
    extra,
  ].join('\n');

describe('fineTuningSetup', () => {
  describe('the fixtures', () => {
    it('reads the QLoRA Trainer script: 4-bit nf4 double quantization, bf16 weights, LoRA r=8 on four projections, paged 32-bit AdamW, checkpointing', async () => {
      const setup = await setupOf(llm('qlora_trainer.py'));
      assert.deepEqual(setup.quantization?.value, { bits: 4, quantType: 'nf4', doubleQuant: true });
      assert.equal(line(setup.quantization), 17);
      assert.equal(setup.weightDtype?.value, 'bf16');
      assert.equal(line(setup.weightDtype), 24);
      assert.deepEqual(setup.adapter?.value, { method: 'lora', rank: 8, alpha: 16, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj'], dora: false, applied: true, dropout: 0.05, taskType: 'CAUSAL_LM' });
      assert.equal(setup.optimizerName?.value, 'paged_adamw_32bit');
      assert.equal(setup.optimizer?.value, 'adamw');
      assert.equal(setup.precision?.value, 'bf16-mixed');
      assert.equal(setup.gradientCheckpointing?.value, true);
      assert.equal(setup.batchSize?.value, 4);
      assert.equal(setup.sequenceLength?.value, 1024);
      assert.equal(setup.kbitPrepared?.value.checkpointing, true);
      assert.equal(setup.hfTrainer?.value, 'Trainer');
    });

    it("reads TRL's SFTConfig: max_seq_length over the model's maximum, an adapter applied by SFTTrainer(peft_config=...), all-linear targets", async () => {
      const setup = await setupOf(llm('sft_trainer_lora.py'));
      assert.equal(setup.sequenceLength?.value, 2048);
      assert.equal(setup.sequenceLength?.origin, 'SFTConfig(max_seq_length=2048, packing=True): every sample packed to 2048 tokens');
      assert.equal(setup.adapter?.value.targetModules, 'all-linear');
      assert.equal(setup.adapter?.value.rank, 16);
      assert.equal(setup.adapter?.value.applied, true);
      assert.equal(setup.quantization, undefined);
      assert.equal(setup.gradientAccumulation?.value, 8);
    });

    it("reads the issue's script: the tokenizer's max_length inside the lambda datasets.map runs, PEFT's default targets, 4-bit fp4", async () => {
      const setup = await setupOf(llm('issue20_qlora_13b.py'));
      assert.equal(setup.sequenceLength?.value, 1024);
      assert.equal(line(setup.sequenceLength), 28);
      assert.match(setup.sequenceLength?.origin ?? '', /DataCollatorForLanguageModeling pads each batch to its longest \(the estimate takes 1024: the figure is for a batch as long as the longest sample can be/);
      assert.equal(setup.batchSize?.value, 4);
      assert.deepEqual(setup.quantization?.value, { bits: 4, quantType: 'fp4', doubleQuant: false });
      assert.deepEqual(setup.adapter?.value, { method: 'lora', rank: 8, dora: false, applied: true, taskType: 'CAUSAL_LM' });
      assert.equal(setup.optimizerName?.value, 'paged_adamw_32bit');
      assert.equal(setup.precision?.value, 'bf16-mixed');
      assert.equal(setup.gradientCheckpointing?.value, true);
    });

    it("reads prompt tuning's virtual tokens, padding=\"max_length\" as every sample that long, accelerate's mixed precision", async () => {
      const setup = await setupOf(llm('prompt_tuning_bloom.py'));
      assert.equal(setup.adapter?.value.method, 'prompttuning');
      assert.equal(setup.adapter?.value.virtualTokens, 8);
      assert.equal(setup.sequenceLength?.value, 64);
      assert.equal(setup.sequenceLength?.origin, 'tokenizer(max_length=64, padding="max_length"): every sample 64 tokens');
      assert.equal(setup.precision?.value, 'bf16-mixed');
      assert.equal(setup.precision?.origin, 'Accelerator(mixed_precision="bf16")');
    });

    it("reads IA3 on a sequence-to-sequence task and DataCollatorForSeq2Seq's padding", async () => {
      const setup = await setupOf(llm('ia3_seq2seq.py'));
      assert.equal(setup.adapter?.value.method, 'ia3');
      assert.equal(setup.adapter?.value.taskType, 'SEQ_2_SEQ_LM');
      assert.equal(setup.sequenceLength?.value, 256);
      assert.match(setup.sequenceLength?.origin ?? '', /DataCollatorForSeq2Seq/);
      assert.equal(setup.targetSequenceLength?.value, 8);
    });

    it("tells the labels' tokenizer call from the inputs', whichever comes first", async () => {
      const setup = await setupOf(
        script(
          '',
          [
            'from transformers import AutoTokenizer',
            'tokenizer = AutoTokenizer.from_pretrained("t5-base")',
            'TARGET_LEN = 64',
            'def preprocess(batch):',
            '    labels = tokenizer(batch["summary"], max_length=TARGET_LEN, truncation=True)',
            '    inputs = tokenizer(batch["document"], max_length=512, truncation=True)',
            '    inputs["labels"] = labels["input_ids"]',
            '    return inputs',
          ].join('\n'),
        ),
      );
      assert.equal(setup.sequenceLength?.value, 512);
      assert.equal(setup.targetSequenceLength?.value, 64);
      assert.equal(setup.targetSequenceLength?.origin, 'labels tokenized with max_length=64');
    });

    it("reads TRL's preference trainers: DPO's reference (TRL's default, a ref_model of its own, precomputed), ORPO without one, DPOConfig's default length", async () => {
      const dpo = await setupOf(llm('dpo_lora_trainer.py'));
      assert.deepEqual(dpo.preference?.value, { trainer: 'DPO', reference: 'default' });
      assert.equal(dpo.adapter?.value.applied, true);
      const trl = (trainer: string, config: string, extra = '') =>
        ['from trl import DPOConfig, DPOTrainer, ORPOConfig, ORPOTrainer', 'from transformers import AutoModelForCausalLM', 'model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")', `trainer = ${trainer}(model=model${extra}, args=${config})`, 'trainer.train()'].join('\n');
      assert.deepEqual((await setupOf(trl('DPOTrainer', 'DPOConfig(output_dir="o")', ', ref_model=AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")'))).preference?.value, { trainer: 'DPO', reference: 'model' });
      assert.deepEqual((await setupOf(trl('DPOTrainer', 'DPOConfig(output_dir="o")', ', ref_model=None'))).preference?.value, { trainer: 'DPO', reference: 'default' });
      const precomputed = await setupOf(trl('DPOTrainer', 'DPOConfig(output_dir="o", precompute_ref_log_probs=True)'));
      assert.deepEqual(precomputed.preference?.value, { trainer: 'DPO', reference: 'precomputed' });
      assert.equal(precomputed.sequenceLength?.value, 1024);
      assert.match(precomputed.sequenceLength?.origin ?? '', /^DPOConfig: TRL's default max_length=1024/);
      assert.deepEqual((await setupOf(trl('ORPOTrainer', 'ORPOConfig(output_dir="o", max_length=2048)'))).preference?.value, { trainer: 'ORPO', reference: 'none' });
      assert.equal((await setupOf(trl('ORPOTrainer', 'ORPOConfig(output_dir="o", max_length=2048)'))).sequenceLength?.value, 2048);
      assert.equal((await setupOf(llm('sft_default_length.py'))).preference, undefined);
      const kto = (config: string) => ['from trl import KTOConfig, KTOTrainer', 'from transformers import AutoModelForCausalLM', 'model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B")', `trainer = KTOTrainer(model=model, args=${config})`, 'trainer.train()'].join('\n');
      assert.deepEqual((await setupOf(kto('KTOConfig(output_dir="o")'))).preference?.value, { trainer: 'KTO', reference: 'default' });
      assert.deepEqual((await setupOf(kto('KTOConfig(output_dir="o", precompute_ref_log_probs=True)'))).preference?.value, { trainer: 'KTO', reference: 'precomputed' });
      assert.equal((await setupOf(kto('KTOConfig(output_dir="o")'))).sequenceLength?.value, 1024);
    });

    it("takes Unsloth's from_pretrained(max_seq_length=...) as the length its trainers use when their config gives none", async () => {
      const unsloth = (config: string) => ['from unsloth import FastModel', 'from trl import SFTTrainer, SFTConfig', 'model, tokenizer = FastModel.from_pretrained(model_name="unsloth/gemma-3-4b-it", max_seq_length=2048, load_in_4bit=True)', 'model = FastModel.get_peft_model(model, r=8)', `SFTTrainer(model=model, tokenizer=tokenizer, args=${config}).train()`].join('\n');
      const setup = await setupOf(unsloth('SFTConfig(per_device_train_batch_size=2, output_dir="o")'));
      assert.equal(setup.sequenceLength?.value, 2048);
      assert.match(setup.sequenceLength?.origin ?? '', /^FastModel\.from_pretrained\(max_seq_length=2048\)/);
      // The trainer's own length wins.
      assert.equal((await setupOf(unsloth('SFTConfig(per_device_train_batch_size=2, max_length=512, output_dir="o")'))).sequenceLength?.value, 512);
    });

    it("reads TRL's GRPO: prompt plus completion as the sequence, the completion's length for the logits, beta=0.0 without a reference", async () => {
      const fixture = await setupOf(llm('grpo_lora_reasoning.py'));
      assert.deepEqual(fixture.preference?.value, { trainer: 'GRPO', reference: 'default', completionTokens: 768 });
      assert.equal(fixture.sequenceLength?.value, 256 + 768);
      assert.equal(fixture.batchSize?.value, 8);
      const grpo = (config: string) => ['from trl import GRPOConfig, GRPOTrainer', `trainer = GRPOTrainer(model="Qwen/Qwen2.5-0.5B", reward_funcs=[], args=${config})`, 'trainer.train()'].join('\n');
      const defaults = await setupOf(grpo('GRPOConfig(output_dir="o")'));
      assert.deepEqual(defaults.preference?.value, { trainer: 'GRPO', reference: 'default', completionTokens: 256 });
      assert.equal(defaults.sequenceLength?.value, 512 + 256);
      assert.match(defaults.sequenceLength?.origin ?? '', /max_prompt_length 512 \(TRL 0\.17's default\)/);
      assert.equal((await setupOf(grpo('GRPOConfig(output_dir="o", beta=0.0)'))).preference?.value.reference, 'none');
    });

    it("takes TRL's default length when an SFT script gives none, and reads torch_compile, lora_dropout and flash-attention", async () => {
      const setup = await setupOf(llm('sft_default_length.py'));
      assert.equal(setup.sequenceLength?.value, 1024);
      assert.match(setup.sequenceLength?.origin ?? '', /TRL's default max_length=1024 \(the estimate takes it: batches are padded to their longest sample, so the figure is for a batch that long/);
      assert.equal(setup.compiled?.value, true);
      assert.equal(setup.compiled?.origin, 'SFTConfig(torch_compile=True)');
      assert.equal(setup.adapter?.value.dropout, 0.05);
      assert.equal(setup.attentionImplementation?.value, 'flash_attention_2');
    });

    it("reads Lightning's precision and the adapter a LightningModule builds", async () => {
      const setup = await setupOf(llm('lightning_lora.py'));
      assert.equal(setup.precision?.value, 'bf16-mixed');
      assert.equal(setup.precision?.origin, 'Trainer(precision="bf16-mixed")');
      assert.equal(setup.adapter?.value.rank, 16);
      assert.deepEqual(setup.adapter?.value.targetModules, ['q_proj', 'v_proj']);
    });

    it('reads a full fine-tune: no adapter, bf16 weights, adamw_8bit by name, gradient_checkpointing_enable()', async () => {
      const setup = await setupOf(llm('full_finetune_bf16.py'));
      assert.equal(setup.adapter, undefined);
      assert.equal(setup.weightDtype?.value, 'bf16');
      assert.equal(setup.optimizerName?.value, 'adamw_8bit');
      assert.equal(setup.gradientCheckpointing?.value, true);
      assert.equal(setup.sequenceLength?.value, 512);
    });

    it('reads a plain PyTorch loop over get_peft_model: the adapter and torch.optim.AdamW, no Trainer optimizer name', async () => {
      const setup = await setupOf(llm('peft_torch_loop.py'));
      assert.deepEqual(setup.adapter?.value, { method: 'lora', rank: 32, alpha: 64, targetModules: ['q_proj', 'v_proj'], dora: false, applied: true, dropout: 0.1, taskType: 'CAUSAL_LM' });
      assert.equal(setup.optimizer?.value, 'adamw');
      assert.equal(setup.optimizerName, undefined);
      assert.equal(setup.batchSize?.value, 2);
      assert.equal(setup.hfTrainer, undefined);
    });

    it('reads load_in_8bit=True on from_pretrained, DoRA, and the checkpointing prepare_model_for_kbit_training turns on', async () => {
      const setup = await setupOf(llm('lora_8bit.py'));
      assert.deepEqual(setup.quantization?.value, { bits: 8, doubleQuant: false });
      assert.equal(setup.adapter?.value.dora, true);
      assert.equal(setup.adapter?.value.targetModules?.length, 7);
      assert.equal(setup.gradientCheckpointing?.origin, 'prepare_model_for_kbit_training(...)');
      assert.equal(setup.optimizerName?.value, 'paged_adamw_8bit');
    });
  });

  describe('small sources', () => {
    it('reads dtype= (the newer name) and a string dtype; "auto" leaves it to the checkpoint', async () => {
      assert.equal((await setupOf(script('dtype=torch.float16'))).weightDtype?.value, 'fp16');
      assert.equal((await setupOf(script('torch_dtype="bfloat16"'))).weightDtype?.value, 'bf16');
      assert.equal((await setupOf(script('torch_dtype="auto"'))).weightDtype?.value, 'auto');
    });

    it('reads a checkpoint stored in 4 bits by its name (unsloth/...-bnb-4bit) as NF4 with double quantization', async () => {
      const source = 'from transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("unsloth/llama-3-8b-bnb-4bit")\n';
      assert.deepEqual((await setupOf(source)).quantization?.value, { bits: 4, quantType: 'nf4', doubleQuant: true });
      assert.equal((await setupOf(script(''))).quantization, undefined);
    });

    it('reads a 4-bit config without a quant type as fp4, without double quantization', async () => {
      const setup = await setupOf(script('quantization_config=BitsAndBytesConfig(load_in_4bit=True)'));
      assert.deepEqual(setup.quantization?.value, { bits: 4, quantType: 'fp4', doubleQuant: false });
    });

    it('reads a LoRA config through a variable and a constant rank; PEFT default rank 8 when r is not given', async () => {
      const withRank = await setupOf(script('', 'RANK = 64\ncfg = LoraConfig(r=RANK, lora_alpha=2 * RANK)\nmodel = get_peft_model(model, cfg)'));
      assert.equal(withRank.adapter?.value.rank, 64);
      assert.equal(withRank.adapter?.value.alpha, 128);
      const defaults = await setupOf(script('', 'model = get_peft_model(model, LoraConfig(task_type="CAUSAL_LM"))'));
      assert.equal(defaults.adapter?.value.rank, 8);
      assert.equal(defaults.adapter?.value.targetModules, undefined);
    });

    it("reads AdaLoRA's init_r (not r, which AdaLoRA ignores), the ranks other methods default to, and the keywords that size OFT, BOFT and LoKr", async () => {
      const peft = (config: string) => setupOf(script('', `from peft import AdaLoraConfig, OFTConfig, BOFTConfig, LoKrConfig, VeraConfig, LoHaConfig\nmodel = get_peft_model(model, ${config})`));
      const adalora = await peft('AdaLoraConfig(r=4, init_r=16, target_r=4, total_step=1000)');
      assert.equal(adalora.adapter?.value.method, 'adalora');
      assert.equal(adalora.adapter?.value.rank, 16);
      assert.match(adalora.adapter?.origin ?? '', /AdaLoraConfig\(init_r=16/);
      assert.equal((await peft('AdaLoraConfig(total_step=1000)')).adapter?.value.rank, 12);
      assert.equal((await peft('VeraConfig()')).adapter?.value.rank, 256);
      assert.equal((await peft('LoHaConfig(target_modules=["q_proj"])')).adapter?.value.rank, 8);
      const oft = await peft('OFTConfig(r=4, oft_block_size=0, block_share=True)');
      assert.equal(oft.adapter?.value.rank, 4);
      assert.deepEqual(oft.adapter?.value.shapeOptions, { oft_block_size: 0, block_share: true });
      // OFT sizes by block when r is not written (PEFT's r defaults to 0).
      assert.equal((await peft('OFTConfig()')).adapter?.value.rank, undefined);
      assert.deepEqual((await peft('BOFTConfig(boft_block_size=8, boft_n_butterfly_factor=2)')).adapter?.value.shapeOptions, { boft_block_size: 8, boft_n_butterfly_factor: 2 });
      assert.deepEqual((await peft('LoKrConfig(r=16, decompose_both=True, decompose_factor=mylib.factor())')).adapter?.value.shapeOptions, { decompose_both: true, decompose_factor: null });
    });

    it("reads LoftQ's config as LoRA's initialisation, not as an adapter of its own", async () => {
      const setup = await setupOf(script('', 'from peft import LoftQConfig\nloftq = LoftQConfig(loftq_bits=4)\nmodel = get_peft_model(model, LoraConfig(r=16, init_lora_weights="loftq", loftq_config=loftq))'));
      assert.equal(setup.adapter?.value.method, 'lora');
      assert.equal(setup.adapter?.value.rank, 16);
    });

    it('says when a LoRA config is built but never applied', async () => {
      const setup = await setupOf(script('', 'cfg = LoraConfig(r=4)'));
      assert.equal(setup.adapter?.value.applied, false);
    });

    it('prepare_model_for_kbit_training(use_gradient_checkpointing=False) turns nothing on', async () => {
      const setup = await setupOf(script('load_in_4bit=True', 'model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)'));
      assert.equal(setup.kbitPrepared?.value.checkpointing, false);
      assert.equal(setup.gradientCheckpointing, undefined);
      assert.equal(setup.quantization?.value.bits, 4);
    });

    it('leaves out what it cannot read: a rank from an unknown function, a non-literal target list', async () => {
      const setup = await setupOf(script('', 'import mylib\ncfg = LoraConfig(r=mylib.rank(), target_modules=mylib.targets())\nmodel = get_peft_model(model, cfg)'));
      assert.equal(setup.adapter?.value.rank, undefined);
      assert.equal(setup.adapter?.value.targetModules, undefined);
    });

    it('reads attn_implementation from from_pretrained', async () => {
      assert.equal((await setupOf(script('attn_implementation="eager"'))).attentionImplementation?.value, 'eager');
      assert.equal((await setupOf(llm('sft_trainer_lora.py'))).attentionImplementation?.value, 'sdpa');
    });

    it('a script without any of it has none of it', async () => {
      const setup = await setupOf('import torch\nmodel = torch.nn.Linear(4, 4)\n');
      assert.equal(setup.weightDtype ?? setup.quantization ?? setup.adapter ?? setup.kbitPrepared ?? setup.optimizerName, undefined);
    });
  });
});
