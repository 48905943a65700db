"""harness/dry_run_hub.py: Hugging Face training scripts dry-run with no network. The models the
script names by hub id are built from the configs the spec carries, tokenizers and datasets stand
in, and transformers' Trainer runs the training step. Skipped where transformers is not installed
(Debian's torch 1.13); `npm run test:python` runs them in the PyTorch 2 venv (scripts/venvs)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.tests.test_dry_run import ROOT, dry_run, live_peak

pytest.importorskip("transformers")
pytest.importorskip("datasets")

BERT = {"model_type": "bert", "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2, "pad_token_id": 0}
BERT_PARAMS = 109_483_778  # BertForSequenceClassification, 2 labels
TOKENS = {"tensors": [{"shape": [128], "dtype": "int64"}, {"shape": [], "dtype": "int64"}], "hubConfigs": {"bert-base-uncased": BERT}}


def test_a_trainer_fine_tuning_a_hub_checkpoint_on_a_hub_dataset_runs_offline(tmp_path: Path) -> None:
    result = dry_run(tmp_path, """
        from datasets import load_dataset
        from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

        tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
        data = load_dataset("glue", "sst2").map(lambda b: tokenizer(b["sentence"], truncation=True, padding="max_length", max_length=128), batched=True)
        model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
        args = TrainingArguments(output_dir="out", per_device_train_batch_size=16, num_train_epochs=3, report_to="none")
        Trainer(model=model, args=args, train_dataset=data["train"], eval_dataset=data["validation"], tokenizer=tokenizer).train()
    """, TOKENS)
    assert result["ok"], result.get("error")
    assert result["steps"] >= 1
    # The weights (fp32), their gradients and AdamW's two moments were on the GPU at once.
    assert live_peak(result["events"]) > 4 * BERT_PARAMS * 4
    assert not (tmp_path / "out").exists()


def test_a_plain_loop_reads_the_labels_under_the_datasets_own_column_name(tmp_path: Path) -> None:
    # imdb's and glue's column is `label`: a loader over the dataset gives it under that name.
    result = dry_run(tmp_path, """
        import torch
        from datasets import load_dataset
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
        data = load_dataset("imdb")["train"].map(lambda b: tokenizer(b["text"], truncation=True, padding="max_length", max_length=128), batched=True)
        data.set_format("torch", columns=["input_ids", "attention_mask", "label"])
        model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2).cuda()
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
        for batch in torch.utils.data.DataLoader(data, batch_size=8):
            model(input_ids=batch["input_ids"].cuda(), attention_mask=batch["attention_mask"].cuda(), labels=batch["label"].cuda()).loss.backward()
            optimizer.step()
    """, TOKENS)
    assert result["ok"], result.get("error")
    assert result["steps"] == 3


VIT = {"model_type": "vit", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "image_size": 224, "patch_size": 16, "num_channels": 3}


def test_an_image_classifier_on_a_hub_dataset_of_images_trains_on_what_its_transform_makes(tmp_path: Path) -> None:
    # The transformers guide's shape (test/fixtures/frameworks/hf_vit_image_classification.py): the image
    # processor's mean and size, a with_transform that makes pixel_values from the `image` column and
    # drops it, `features["labels"].names` for the head, the Trainer in fp16 at batch 32.
    source = (ROOT / "test" / "fixtures" / "frameworks" / "hf_vit_image_classification.py").read_text()
    result = dry_run(tmp_path, source, {"tensors": [{"shape": [3, 224, 224], "dtype": "float32"}], "hubConfigs": {"google/vit-base-patch16-224-in21k": VIT}})
    assert result["ok"], result.get("error")
    assert result["steps"] >= 1
    # ViT-B's weights, gradients and AdamW's moments, and 32 images of 224 x 224 through it (half of it in fp16).
    params = 85_800_194  # ViTForImageClassification, 2 labels
    assert live_peak(result["events"]) > 4 * params * 4 + 32 * 197 * 768 * 2 * 12


def test_a_plain_loop_with_transformers_collator_gets_dict_batches_and_flash_attention_runs_as_sdpa(tmp_path: Path) -> None:
    result = dry_run(tmp_path, """
        import torch
        from torch.utils.data import DataLoader
        from transformers import AutoModelForSequenceClassification, default_data_collator

        # FlashAttention needs a GPU and its package: SDPA's fused kernels hold the same.
        model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", torch_dtype=torch.bfloat16, attn_implementation="flash_attention_2").cuda()
        assert next(model.parameters()).dtype == torch.bfloat16
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
        for batch in DataLoader([], batch_size=8, collate_fn=default_data_collator):
            batch = {k: v.cuda() for k, v in batch.items()}
            model(**batch).loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    """, TOKENS)
    assert result["ok"], result.get("error")


def test_quantized_loading_and_unknown_checkpoints_say_why(tmp_path: Path) -> None:
    quantized = dry_run(tmp_path, """
        from transformers import AutoModelForCausalLM, BitsAndBytesConfig
        model = AutoModelForCausalLM.from_pretrained("bert-base-uncased", quantization_config=BitsAndBytesConfig(load_in_4bit=True))
    """, TOKENS)
    assert not quantized["ok"] and "quantized (bitsandbytes)" in quantized["error"], quantized.get("error")
    unknown = dry_run(tmp_path, """
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("someone/private-model-7b")
    """, TOKENS)
    assert not unknown["ok"] and "someone/private-model-7b" in unknown["error"] and "config.json" in unknown["error"], unknown.get("error")


def test_the_trainers_8bit_adam_holds_a_byte_per_moment_and_element(tmp_path: Path) -> None:
    # optim="adamw_8bit" (bitsandbytes, whose kernels need a GPU): its state as it is on one.
    result = dry_run(tmp_path, """
        from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments
        from datasets import load_dataset
        model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
        args = TrainingArguments(output_dir="out", per_device_train_batch_size=8, optim="adamw_8bit", report_to="none")
        Trainer(model=model, args=args, train_dataset=load_dataset("imdb", split="train")).train()
    """, TOKENS)
    assert result["ok"], result.get("error")
    embedding = 30522 * 768
    states = [event for event in result["events"] if len(event) == 3 and event[2] == 3 and event[1] == embedding]
    assert len(states) == 2  # two one-byte moments of the word embeddings; fp32 ones would be 4 x as large


#: A small Llama (two layers, grouped keys and values, untied head) for GaLore's state.
SMALL_LLAMA = {"model_type": "llama", "vocab_size": 1024, "hidden_size": 256, "intermediate_size": 688, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512, "tie_word_embeddings": False}
#: What GaLore-torch 1.0's AdamW keeps for SMALL_LLAMA in fp32 at rank 16 over ["attn", "mlp"]: for each
#: projected matrix two moments of rank x its larger side and the projection, which for fp32 weights is a
#: slice of the SVD's factor that keeps the whole square factor alive (its smaller side squared); for the
#: embeddings, the head and the norms AdamW's two full moments. The same figure is the static estimate's
#: (test/unit/core/estimators/galore.unit.test.ts): a test vector for both sides.
GALORE_SMALL_LLAMA_STATE = 7_878_656


def galore_state(config: dict, rank: int) -> int:
    hidden, inter, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    kv = hidden // config["num_attention_heads"] * config["num_key_value_heads"]
    projected = [(hidden, hidden), (kv, hidden), (kv, hidden), (hidden, hidden), (inter, hidden), (inter, hidden), (hidden, inter)]
    per_layer = sum(4 * (2 * max(m, n) * rank + min(m, n) ** 2) for m, n in projected) + 2 * 4 * 2 * hidden
    return config["num_hidden_layers"] * per_layer + 2 * 4 * (2 * vocab * hidden) + 2 * 4 * hidden


def test_galore_keeps_adams_moments_over_the_projected_gradients_and_the_projection(tmp_path: Path) -> None:
    pytest.importorskip("galore_torch")
    assert galore_state(SMALL_LLAMA, 16) == GALORE_SMALL_LLAMA_STATE
    result = dry_run(tmp_path, """
        from datasets import load_dataset
        from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer, TrainingArguments
        tokenizer = AutoTokenizer.from_pretrained("tiny/llama")
        model = AutoModelForCausalLM.from_pretrained("tiny/llama")
        args = TrainingArguments(output_dir="out", per_device_train_batch_size=2, optim="galore_adamw", optim_target_modules=["attn", "mlp"], optim_args="rank=16", report_to="none")
        data = load_dataset("imdb", split="train").map(lambda b: tokenizer(b["text"], truncation=True, max_length=64), batched=True)
        Trainer(model=model, args=args, train_dataset=data, data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False)).train()
    """, {"tensors": [{"shape": [64], "dtype": "int64"}, {"shape": [64], "dtype": "int64"}], "hubConfigs": {"tiny/llama": SMALL_LLAMA}})
    assert result["ok"], result.get("error")
    # What each optimizer phase (3) made and still held when the next step began: its state (the moments, the projections).
    sizes, phases, live, kept, last = {}, {}, set(), [], None
    for event in result["events"]:
        if len(event) == 3:
            if last == 3 and event[2] != 3:
                kept.append(sum(sizes[i] for i in live if phases[i] == 3))
            last = event[2]
            sizes[event[0]], phases[event[0]] = event[1], event[2]
            live.add(event[0])
        else:
            live.discard(-event[0])
    assert kept and all(k == GALORE_SMALL_LLAMA_STATE for k in kept), kept


@pytest.mark.parametrize("optim,moments,element_bytes", [("lion_8bit", 1, 1), ("paged_ademamix_8bit", 3, 1), ("lion_32bit", 1, 4)])
def test_the_trainers_lion_and_ademamix_hold_their_own_number_of_moments(tmp_path: Path, optim: str, moments: int, element_bytes: int) -> None:
    # bitsandbytes' Lion keeps one moment, AdEMAMix three: as on a GPU, a byte (8-bit) or the parameter's four each.
    result = dry_run(tmp_path, f"""
        from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments
        from datasets import load_dataset
        model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
        args = TrainingArguments(output_dir="out", per_device_train_batch_size=8, optim="{optim}", report_to="none")
        Trainer(model=model, args=args, train_dataset=load_dataset("imdb", split="train")).train()
    """, TOKENS)
    assert result["ok"], result.get("error")
    embedding = 30522 * 768 * element_bytes
    states = [event for event in result["events"] if len(event) == 3 and event[2] == 3 and event[1] == embedding]
    assert len(states) == moments, len(states)


def test_lomo_updates_in_its_fused_backward_keeps_no_state_and_stops_after_the_steps(tmp_path: Path) -> None:
    # LOMO never calls step(): its fused_backward(loss, lr) is the step, applying each gradient as it is made.
    pytest.importorskip("lomo_optim")
    result = dry_run(tmp_path, """
        from datasets import load_dataset
        from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer, TrainingArguments
        tokenizer = AutoTokenizer.from_pretrained("tiny/llama")
        model = AutoModelForCausalLM.from_pretrained("tiny/llama")
        args = TrainingArguments(output_dir="out", per_device_train_batch_size=2, optim="lomo", report_to="none")
        data = load_dataset("imdb", split="train").map(lambda b: tokenizer(b["text"], truncation=True, max_length=64), batched=True)
        Trainer(model=model, args=args, train_dataset=data, data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False)).train()
    """, {"tensors": [{"shape": [64], "dtype": "int64"}, {"shape": [64], "dtype": "int64"}], "hubConfigs": {"tiny/llama": SMALL_LLAMA}})
    assert result["ok"], result.get("error")
    assert result["steps"] == 3
    # No optimizer phase at all: LOMO keeps no state.
    assert not [event for event in result["events"] if len(event) == 3 and event[2] == 3]
