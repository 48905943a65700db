"""The training script behind `npm run evaluate:llm-dry-run`: a Hugging Face model fine-tuned as the
published measurements' sources did it (../shared/data/published-llm), written the way such scripts
are: transformers' Trainer for the single-GPU guide's BERT runs, a plain loop in bf16 for PEFT's
MetaMathQA method comparison. The dry run (harness/dry_run.py) runs it with no network: the model
is built from the catalog's config, the data are stand-ins of the sequence length given.

  python finetune_step.py --model meta-llama/Llama-3.2-3B --method lora --rank 32 --targets q_proj,v_proj --batch 4 --seq 768 --loop
"""
import argparse

import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer, DataCollatorForLanguageModeling, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--model", required=True)
parser.add_argument("--classification", action="store_true", help="a sequence classifier (else a causal LM)")
parser.add_argument("--method", default="full")
parser.add_argument("--rank", type=int, default=8)
parser.add_argument("--targets", default="", help="comma-separated module names (else the method's default)")
parser.add_argument("--virtual-tokens", type=int, default=200)
parser.add_argument("--batch", type=int, required=True)
parser.add_argument("--seq", type=int, required=True)
parser.add_argument("--precision", choices=["fp32", "fp16-amp", "bf16"], default="fp32")
parser.add_argument("--gradient-checkpointing", action="store_true")
parser.add_argument("--optim", default="adamw_torch")
parser.add_argument("--loop", action="store_true", help="a plain PyTorch loop (else transformers' Trainer)")
parser.add_argument("--attn", default=None, help="attn_implementation (eager, sdpa); else the library's default")
args = parser.parse_args()

tokenizer = AutoTokenizer.from_pretrained(args.model)
dtype = torch.bfloat16 if args.precision == "bf16" else torch.float32
attention = {"attn_implementation": args.attn} if args.attn else {}
if args.classification:
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2, torch_dtype=dtype, **attention)
else:
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype, **attention)

if args.method != "full":
    import peft

    targets = args.targets.split(",") if args.targets else None
    method = args.method.lower()
    configs = {
        "lora": lambda: peft.LoraConfig(r=args.rank, lora_alpha=2 * args.rank, target_modules=targets, task_type="CAUSAL_LM"),
        "dora": lambda: peft.LoraConfig(r=args.rank, lora_alpha=2 * args.rank, target_modules=targets, use_dora=True, task_type="CAUSAL_LM"),
        "loha": lambda: peft.LoHaConfig(r=args.rank, alpha=2 * args.rank, target_modules=targets, task_type="CAUSAL_LM"),
        "lokr": lambda: peft.LoKrConfig(r=args.rank, alpha=2 * args.rank, target_modules=targets, task_type="CAUSAL_LM"),
        "ia3": lambda: peft.IA3Config(task_type="CAUSAL_LM"),
        "vera": lambda: peft.VeraConfig(target_modules=targets, task_type="CAUSAL_LM"),
        "oft": lambda: peft.OFTConfig(r=args.rank, target_modules=targets, task_type="CAUSAL_LM"),
        "adalora": lambda: peft.AdaLoraConfig(init_r=args.rank, target_r=args.rank, target_modules=targets, total_step=5000, task_type="CAUSAL_LM"),
        "ln_tuning": lambda: peft.LNTuningConfig(task_type="CAUSAL_LM"),
        "prompt_tuning": lambda: peft.PromptTuningConfig(num_virtual_tokens=args.virtual_tokens, task_type="CAUSAL_LM"),
        "prefix_tuning": lambda: peft.PrefixTuningConfig(num_virtual_tokens=args.virtual_tokens, task_type="CAUSAL_LM"),
    }
    # PEFT (0.13 to 0.15) keeps adapter weights in fp32 over a bf16 model; LoHa's and LoKr's fp32 weight deltas, LN
    # tuning's fp32 norms and OFT's rotation then meet bf16 activations in a matrix product, which a GPU
    # refuses (later PEFT versions, which the measurements used, cast): their adapters stay in the model's
    # dtype. (OFT still makes its rotation in fp32 and does not run with a bf16 model in PEFT 0.13 or 0.15.)
    model = peft.get_peft_model(model, configs[method](), autocast_adapter_dtype=method not in ("ln_tuning", "oft", "loha", "lokr"))

if args.gradient_checkpointing:
    model.gradient_checkpointing_enable()

dataset = load_dataset("meta-math/MetaMathQA" if not args.classification else "glue", split="train")
dataset = dataset.map(lambda rows: tokenizer(rows["query"], truncation=True, max_length=args.seq, padding="max_length"), batched=True)

if args.loop:
    model.to("cuda")
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4, weight_decay=0.1)
    loader = DataLoader(dataset, batch_size=args.batch, shuffle=True, collate_fn=DataCollatorForLanguageModeling(tokenizer, mlm=False))
    model.train()
    for batch in loader:
        batch = {name: value.to("cuda") for name, value in batch.items()}
        # As PEFT's MetaMathQA run.py does: `outputs` (and its logits) stays alive through the backward.
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
else:
    training = TrainingArguments(
        output_dir="out",
        per_device_train_batch_size=args.batch,
        fp16=args.precision == "fp16-amp",
        gradient_checkpointing=args.gradient_checkpointing,
        optim=args.optim,
        max_steps=100,
        report_to="none",
    )
    Trainer(model=model, args=training, train_dataset=dataset, tokenizer=tokenizer).train()
