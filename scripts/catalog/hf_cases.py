"""The cases scripts/catalog/generate_hf_catalog.py records with the real transformers library.

Each case builds a model the way a script does (the checkpoint's config.json values from
src/core/catalog/hf/checkpoints.json, then the config's and the call's keyword arguments) and runs
harness/layer_table.py on it: the same rules, the same code the corpus vectors come from.

- "tiny" cases use small configs and keep every row of the table;
- "full" cases build the published checkpoints' architectures on the meta device (no weights, no
  memory; XLNet, whose forward builds CPU tensors, on the CPU) and keep the parameter count, the
  totals and the number of rows.

For each case the output also keeps the config values the library ended up with, so the TypeScript
side can check that it resolves names, aliases and defaults the same way. The LLaMA-style model
types (llama, mistral, qwen2, gemma) are not listed here: add_llama_style() adds their classes, Auto
mappings, config fields and small configs from what hf_llama_style.py read from the library.
"""
import json
import os
import sys

import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

import transformers  # noqa: E402
from harness.layer_table import layer_table  # noqa: E402
from scripts.catalog import hf_cases_falcon_swin_clip as fsc  # noqa: E402
from scripts.catalog import hf_cases_decoder_variants as gpno  # noqa: E402
from scripts.catalog import hf_cases_vision as vision  # noqa: E402
from scripts.catalog.hf_llama_style import LLAMA_STYLE_TINY  # noqa: E402

with open(os.path.join(ROOT, "src", "core", "catalog", "hf", "checkpoints.json")) as f:
    CHECKPOINTS = {c["name"]: c for c in json.load(f)["checkpoints"]}

CONFIG_CLASS = {
    "bert": "BertConfig", "roberta": "RobertaConfig", "distilbert": "DistilBertConfig", "gpt2": "GPT2Config",
    "xlnet": "XLNetConfig", "t5": "T5Config", "vit": "ViTConfig", "llama": "LlamaConfig",
    "phi": "PhiConfig", "opt": "OPTConfig", "deberta-v2": "DebertaV2Config", "bloom": "BloomConfig", "gpt_neo": "GPTNeoConfig", "electra": "ElectraConfig", "gptj": "GPTJConfig", "bart": "BartConfig", "albert": "AlbertConfig",
}
CONFIG_CLASS.update(fsc.CONFIG_CLASS)
CONFIG_CLASS.update(gpno.CONFIG_CLASS)
CONFIG_CLASS.update(vision.CONFIG_CLASS)
MODEL_TYPE_OF_CONFIG = {v: k for k, v in CONFIG_CLASS.items()}

CLASSES = {
    "bert": ["BertModel", "BertForMaskedLM", "BertLMHeadModel", "BertForPreTraining", "BertForNextSentencePrediction",
             "BertForSequenceClassification", "BertForTokenClassification", "BertForQuestionAnswering"],
    "roberta": ["RobertaModel", "RobertaForMaskedLM", "RobertaForCausalLM", "RobertaForSequenceClassification",
                "RobertaForTokenClassification", "RobertaForQuestionAnswering"],
    "distilbert": ["DistilBertModel", "DistilBertForMaskedLM", "DistilBertForSequenceClassification",
                   "DistilBertForTokenClassification", "DistilBertForQuestionAnswering"],
    "gpt2": ["GPT2Model", "GPT2LMHeadModel", "GPT2ForSequenceClassification", "GPT2ForTokenClassification",
             "GPT2ForQuestionAnswering"],
    "xlnet": ["XLNetModel", "XLNetLMHeadModel", "XLNetForSequenceClassification", "XLNetForTokenClassification",
              "XLNetForQuestionAnsweringSimple"],
    "t5": ["T5Model", "T5ForConditionalGeneration", "T5EncoderModel", "T5ForTokenClassification"],
    "vit": ["ViTModel", "ViTForImageClassification"],
    "phi": ["PhiModel", "PhiForCausalLM", "PhiForSequenceClassification", "PhiForTokenClassification"],
    "opt": ["OPTModel", "OPTForCausalLM", "OPTForSequenceClassification", "OPTForQuestionAnswering"],
    "albert": ["AlbertModel", "AlbertForPreTraining", "AlbertForMaskedLM", "AlbertForSequenceClassification",
               "AlbertForTokenClassification", "AlbertForQuestionAnswering"],
    "bart": ["BartModel", "BartForConditionalGeneration", "BartForQuestionAnswering"],
    "gptj": ["GPTJModel", "GPTJForCausalLM", "GPTJForSequenceClassification", "GPTJForQuestionAnswering"],
    "electra": ["ElectraModel", "ElectraForPreTraining", "ElectraForMaskedLM", "ElectraForSequenceClassification",
                "ElectraForTokenClassification", "ElectraForQuestionAnswering"],
    "gpt_neo": ["GPTNeoModel", "GPTNeoForCausalLM", "GPTNeoForSequenceClassification", "GPTNeoForTokenClassification",
                "GPTNeoForQuestionAnswering"],
    "bloom": ["BloomModel", "BloomForCausalLM", "BloomForSequenceClassification", "BloomForTokenClassification",
              "BloomForQuestionAnswering"],
    "deberta-v2": ["DebertaV2Model", "DebertaV2ForMaskedLM", "DebertaV2ForSequenceClassification", "DebertaV2ForTokenClassification",
                   "DebertaV2ForQuestionAnswering"],
    "llama": ["LlamaModel", "LlamaForCausalLM", "LlamaForSequenceClassification", "LlamaForTokenClassification",
              "LlamaForQuestionAnswering"],
}

AUTO = {
    "AutoModel": {"bert": "BertModel", "roberta": "RobertaModel", "distilbert": "DistilBertModel", "gpt2": "GPT2Model",
                  "xlnet": "XLNetModel", "t5": "T5Model", "vit": "ViTModel", "llama": "LlamaModel",
                  "phi": "PhiModel", "opt": "OPTModel", "deberta-v2": "DebertaV2Model",
                  "bloom": "BloomModel", "gpt_neo": "GPTNeoModel",
                  "electra": "ElectraModel", "gptj": "GPTJModel",
                  "bart": "BartModel", "albert": "AlbertModel"},
    "AutoModelForCausalLM": {"bert": "BertLMHeadModel", "roberta": "RobertaForCausalLM", "gpt2": "GPT2LMHeadModel",
                             "xlnet": "XLNetLMHeadModel", "llama": "LlamaForCausalLM",
                             "phi": "PhiForCausalLM", "opt": "OPTForCausalLM", "bloom": "BloomForCausalLM",
                             "gpt_neo": "GPTNeoForCausalLM", "gptj": "GPTJForCausalLM"},
    "AutoModelForMaskedLM": {"bert": "BertForMaskedLM", "roberta": "RobertaForMaskedLM", "distilbert": "DistilBertForMaskedLM",
                             "deberta-v2": "DebertaV2ForMaskedLM", "electra": "ElectraForMaskedLM",
                             "bart": "BartForConditionalGeneration", "albert": "AlbertForMaskedLM"},
    "AutoModelForSequenceClassification": {"bert": "BertForSequenceClassification", "roberta": "RobertaForSequenceClassification",
                                           "distilbert": "DistilBertForSequenceClassification", "gpt2": "GPT2ForSequenceClassification",
                                           "xlnet": "XLNetForSequenceClassification", "llama": "LlamaForSequenceClassification",
                                           "phi": "PhiForSequenceClassification", "opt": "OPTForSequenceClassification",
                                           "deberta-v2": "DebertaV2ForSequenceClassification",
                                           "bloom": "BloomForSequenceClassification", "gpt_neo": "GPTNeoForSequenceClassification",
                                           "electra": "ElectraForSequenceClassification", "gptj": "GPTJForSequenceClassification",
                                           "albert": "AlbertForSequenceClassification"},
    "AutoModelForTokenClassification": {"bert": "BertForTokenClassification", "roberta": "RobertaForTokenClassification",
                                        "distilbert": "DistilBertForTokenClassification", "gpt2": "GPT2ForTokenClassification",
                                        "xlnet": "XLNetForTokenClassification", "t5": "T5ForTokenClassification",
                                        "llama": "LlamaForTokenClassification", "phi": "PhiForTokenClassification",
                                        "deberta-v2": "DebertaV2ForTokenClassification", "bloom": "BloomForTokenClassification",
                                        "gpt_neo": "GPTNeoForTokenClassification", "electra": "ElectraForTokenClassification",
                                        "albert": "AlbertForTokenClassification"},
    "AutoModelForQuestionAnswering": {"bert": "BertForQuestionAnswering", "roberta": "RobertaForQuestionAnswering",
                                      "distilbert": "DistilBertForQuestionAnswering", "gpt2": "GPT2ForQuestionAnswering",
                                      "xlnet": "XLNetForQuestionAnsweringSimple", "llama": "LlamaForQuestionAnswering",
                                      "opt": "OPTForQuestionAnswering", "deberta-v2": "DebertaV2ForQuestionAnswering",
                                      "bloom": "BloomForQuestionAnswering", "gpt_neo": "GPTNeoForQuestionAnswering",
                                      "electra": "ElectraForQuestionAnswering", "gptj": "GPTJForQuestionAnswering",
                                      "bart": "BartForQuestionAnswering", "albert": "AlbertForQuestionAnswering"},
    "AutoModelForSeq2SeqLM": {"t5": "T5ForConditionalGeneration", "bart": "BartForConditionalGeneration"},
    "AutoModelForImageClassification": {"vit": "ViTForImageClassification"},
    "AutoModelForPreTraining": {"bert": "BertForPreTraining", "roberta": "RobertaForMaskedLM", "distilbert": "DistilBertForMaskedLM",
                                "gpt2": "GPT2LMHeadModel", "xlnet": "XLNetLMHeadModel", "t5": "T5ForConditionalGeneration"},
}

CLASSES.update(fsc.CLASSES)
CLASSES.update(gpno.CLASSES)
CLASSES.update(vision.CLASSES)
for _auto, _by_type in [*fsc.AUTO.items(), *gpno.AUTO.items(), *vision.AUTO.items()]:
    AUTO.setdefault(_auto, {}).update(_by_type)

MODEL_KWARGS = {"add_pooling_layer", "use_mask_token"}

# The config values the TypeScript side must resolve the same way (read from the built model's config).
CONFIG_FIELDS = {
    "bert": ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act",
             "max_position_embeddings", "type_vocab_size", "num_labels", "tie_word_embeddings"],
    "distilbert": ["vocab_size", "dim", "n_layers", "n_heads", "hidden_dim", "activation", "max_position_embeddings",
                   "sinusoidal_pos_embds", "num_labels", "tie_word_embeddings"],
    "gpt2": ["vocab_size", "n_embd", "n_layer", "n_head", "n_inner", "n_positions", "activation_function", "num_labels",
             "tie_word_embeddings", "summary_first_dropout"],
    "xlnet": ["vocab_size", "d_model", "n_layer", "n_head", "d_inner", "d_head", "ff_activation", "attn_type", "num_labels",
              "tie_word_embeddings", "summary_last_dropout"],
    "t5": ["vocab_size", "d_model", "d_kv", "d_ff", "num_layers", "num_decoder_layers", "num_heads",
           "relative_attention_num_buckets", "feed_forward_proj", "num_labels", "tie_word_embeddings"],
    "vit": ["hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act", "image_size",
            "patch_size", "num_channels", "qkv_bias", "num_labels"],
    "llama": ["vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
              "num_key_value_heads", "head_dim", "hidden_act", "max_position_embeddings", "attention_bias", "mlp_bias",
              "num_labels", "tie_word_embeddings"],
}
CONFIG_FIELDS["roberta"] = CONFIG_FIELDS["bert"]
CONFIG_FIELDS["phi"] = ["vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                        "hidden_act", "max_position_embeddings", "num_labels", "tie_word_embeddings"]
CONFIG_FIELDS["deberta-v2"] = ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "hidden_act",
                               "max_position_embeddings", "type_vocab_size", "relative_attention", "max_relative_positions",
                               "position_biased_input", "legacy", "num_labels", "tie_word_embeddings"]
CONFIG_FIELDS["bloom"] = ["vocab_size", "hidden_size", "n_layer", "n_head", "pretraining_tp", "slow_but_exact", "num_labels",
                          "tie_word_embeddings"]
CONFIG_FIELDS["gpt_neo"] = ["vocab_size", "max_position_embeddings", "hidden_size", "num_layers", "num_heads", "intermediate_size",
                            "activation_function", "num_labels", "tie_word_embeddings"]
CONFIG_FIELDS["electra"] = ["vocab_size", "embedding_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                            "intermediate_size", "hidden_act", "max_position_embeddings", "type_vocab_size", "num_labels",
                            "tie_word_embeddings"]
CONFIG_FIELDS["gptj"] = ["vocab_size", "n_positions", "n_embd", "n_layer", "n_head", "n_inner", "activation_function", "num_labels",
                         "tie_word_embeddings"]
CONFIG_FIELDS["bart"] = ["vocab_size", "max_position_embeddings", "encoder_layers", "encoder_ffn_dim", "decoder_layers", "decoder_ffn_dim",
                         "activation_function", "d_model", "tie_word_embeddings"]
CONFIG_FIELDS["albert"] = ["vocab_size", "embedding_size", "hidden_size", "num_hidden_layers", "num_hidden_groups", "num_attention_heads",
                           "intermediate_size", "inner_group_num", "hidden_act", "max_position_embeddings", "type_vocab_size",
                           "num_labels", "tie_word_embeddings"]
CONFIG_FIELDS["opt"] = ["vocab_size", "hidden_size", "num_hidden_layers", "ffn_dim", "max_position_embeddings", "do_layer_norm_before",
                        "word_embed_proj_dim", "num_attention_heads", "activation_function", "enable_bias", "layer_norm_elementwise_affine",
                        "num_labels", "tie_word_embeddings"]

TINY = {
    "bert": {"vocab_size": 99, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 37,
             "max_position_embeddings": 64},
    "roberta": {"vocab_size": 99, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 37,
                "max_position_embeddings": 66, "type_vocab_size": 1, "pad_token_id": 1},
    "distilbert": {"vocab_size": 99, "dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 37, "max_position_embeddings": 64},
    "gpt2": {"vocab_size": 99, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64},
    "xlnet": {"vocab_size": 99, "d_model": 32, "n_layer": 2, "n_head": 4, "d_inner": 37},
    "t5": {"vocab_size": 99, "d_model": 32, "d_kv": 8, "d_ff": 37, "num_layers": 2, "num_decoder_layers": 3, "num_heads": 4,
           "relative_attention_num_buckets": 8},
    "vit": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 37, "image_size": 32,
            "patch_size": 8},
    "phi": {"vocab_size": 99, "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2},
    "deberta-v2": {"vocab_size": 99, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 37,
                   "max_position_embeddings": 64},
    "bloom": {"vocab_size": 99, "hidden_size": 32, "n_layer": 2, "n_head": 4},
    "gpt_neo": {"vocab_size": 99, "hidden_size": 32, "num_layers": 2, "num_heads": 4, "max_position_embeddings": 64,
                "attention_types": [[["global", "local"], 1]]},
    "electra": {"vocab_size": 99, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                "intermediate_size": 37, "max_position_embeddings": 64},
    "gptj": {"vocab_size": 99, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64, "rotary_dim": 4},
    "bart": {"vocab_size": 99, "d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
             "decoder_attention_heads": 4, "encoder_ffn_dim": 37, "decoder_ffn_dim": 41, "max_position_embeddings": 64},
    "albert": {"vocab_size": 99, "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 4,
               "intermediate_size": 37, "max_position_embeddings": 64},
    "opt": {"vocab_size": 99, "hidden_size": 32, "ffn_dim": 37, "num_hidden_layers": 2, "num_attention_heads": 4,
            "max_position_embeddings": 64},
    "llama": {"vocab_size": 99, "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2},
}
CONFIG_FIELDS.update(fsc.CONFIG_FIELDS)
TINY.update(fsc.TINY)
CONFIG_FIELDS.update(gpno.CONFIG_FIELDS)
TINY.update(gpno.TINY)
CONFIG_FIELDS.update(vision.CONFIG_FIELDS)
TINY.update(vision.TINY)


# The LLaMA-style types after llama; llama's own cases above stay as they were written.
LLAMA_STYLE_CASE_TYPES = []
LLAMA_STYLE_FIELDS = {}


def add_llama_style(described):
    """Adds the LLaMA-style types hf_llama_style.py described: their classes, Auto mappings, fields and a small config."""
    for entry in described["types"]:
        model_type = entry["modelType"]
        if model_type in CONFIG_CLASS:
            continue
        LLAMA_STYLE_CASE_TYPES.append(model_type)
        LLAMA_STYLE_FIELDS[model_type] = set(entry["fields"])
        CONFIG_CLASS[model_type] = entry["configClass"]
        MODEL_TYPE_OF_CONFIG[entry["configClass"]] = model_type
        CLASSES[model_type] = list(entry["classes"])
        for auto, concrete in entry["auto"].items():
            AUTO[auto][model_type] = concrete
        CONFIG_FIELDS[model_type] = [f for f in CONFIG_FIELDS["llama"] if f in entry["fields"] or f in ("num_labels", "tie_word_embeddings")]
        TINY[model_type] = {**LLAMA_STYLE_TINY, **({"head_dim": 8} if "head_dim" in entry["fields"] else {})}


def tiny_sample(model_type, class_name=None):
    if model_type in fsc.CONFIG_CLASS:
        return fsc.tiny_sample(class_name)
    if model_type in vision.CONFIG_CLASS:
        return vision.tiny_sample(class_name)
    return [3, 32, 32] if model_type == "vit" else [7]


def full_sample(model_type, config, class_name=None):
    if model_type in fsc.CONFIG_CLASS:
        return fsc.full_sample(model_type, config, class_name)
    if model_type in vision.CONFIG_CLASS:
        return vision.full_sample(model_type, config)
    if model_type == "vit":
        return [3, config.get("image_size", 224), config.get("image_size", 224)]
    return [128]


def model_type_of(request):
    if request.get("checkpoint"):
        return CHECKPOINTS[request["checkpoint"]]["modelType"]
    if request.get("configClass"):
        return MODEL_TYPE_OF_CONFIG[request["configClass"]]
    for model_type, names in CLASSES.items():
        if request["className"] in names:
            return model_type
    raise ValueError(request)


def concrete_class(class_name, model_type):
    return AUTO[class_name][model_type] if class_name in AUTO else class_name


def build(request, model_type):
    kwargs = dict(CHECKPOINTS[request["checkpoint"]]["config"]) if request.get("checkpoint") else {}
    kwargs.update(request.get("config") or {})
    model_kwargs = {}
    for key, value in (request.get("options") or {}).items():
        (model_kwargs if key in MODEL_KWARGS else kwargs)[key] = value
    class_name = concrete_class(request["className"], model_type)
    config = getattr(transformers, CONFIG_CLASS[model_type])(**kwargs)
    pad_set = False
    if class_name.endswith("ForSequenceClassification") and model_type in ("gpt2", "llama", "phi", "bloom", "gpt_neo", "gptj", "falcon",
                                                                           *gpno.CONFIG_CLASS, *LLAMA_STYLE_CASE_TYPES) \
            and config.pad_token_id is None:
        # Both raise for batches above 1 without a pad token; the harness runs batches of 2 and 3.
        config.pad_token_id = 0
        pad_set = True
    part = fsc.CLIP_PART.get(class_name)
    # from_pretrained builds CLIPTextModel and CLIPVisionModel from their part of a CLIP checkpoint's config.
    model = getattr(transformers, class_name)(getattr(config, part) if part else config, **model_kwargs)
    model.composite_config = config
    return model, class_name, pad_set


def make_input(model, class_name, model_type, sample, request, device):
    vocab = model.config.text_config.vocab_size if class_name == "CLIPModel" else getattr(model.config, "vocab_size", None)

    def ids(batch, length):
        if device == "meta":
            return torch.randint(0, vocab, (batch, length), device="meta")
        generator = torch.Generator().manual_seed(batch)
        return torch.randint(0, vocab, (batch, length), generator=generator)

    def image(batch):
        if device == "meta":
            return torch.randn([batch] + list(sample), device="meta")
        return torch.randn([batch] + list(sample), generator=torch.Generator().manual_seed(batch))

    def make(batch):
        if class_name == "CLIPModel":
            text = ids(batch, request.get("textLength") or model.config.text_config.max_position_embeddings)
            if request.get("interpolatePosEncoding"):
                return (text, image(batch), None, None, None, True)
            return (text, image(batch))
        if model_type in ("swin", "clip") and fsc.is_image_class(class_name):
            if request.get("interpolatePosEncoding"):
                return (image(batch), None, True) if model_type == "swin" else (image(batch), True)
            return (image(batch),)
        if model_type in vision.CONFIG_CLASS:
            return (image(batch),)
        if model_type == "vit":
            pixels = image(batch)
            if request.get("interpolatePosEncoding"):
                return (pixels, None, True)
            return (pixels,)
        if class_name in ("T5Model", "T5ForConditionalGeneration", "BartModel", "BartForConditionalGeneration"):
            return (ids(batch, sample[0]), None, ids(batch, request.get("decoderLength") or sample[0]))
        return (ids(batch, sample[0]),)

    return make


def config_values(model, model_type):
    config = model.composite_config
    values = {field: getattr(config, field, None) for field in CONFIG_FIELDS[model_type]}
    if model_type == "clip":
        values["text_config"] = {f: getattr(config.text_config, f) for f in fsc.CLIP_TEXT_FIELDS}
        values["vision_config"] = {f: getattr(config.vision_config, f) for f in fsc.CLIP_VISION_FIELDS}
    for field in ("depths", "num_heads"):
        if model_type == "swin" and isinstance(values.get(field), tuple):
            values[field] = list(values[field])
    for field in vision.LIST_FIELDS:
        if model_type in vision.CONFIG_CLASS and isinstance(values.get(field), tuple):
            values[field] = list(values[field])
    values["_attn_implementation"] = config._attn_implementation
    if isinstance(values.get("image_size"), (list, tuple)):
        values["image_size"] = list(values["image_size"])
    return values


def run_case(case):
    sys.stderr.write(case["id"] + "\n")
    request = case["request"]
    model_type = model_type_of(request)
    # XLNet builds CPU tensors in its forward; BART's sdpa mask check reads a value (.item()): both run on the CPU.
    device = "cpu" if (not case["full"] or model_type in ("xlnet", "bart")) else "meta"
    torch.manual_seed(0)
    if device == "meta" and model_type == "opt":
        # OPT draws its layerdrop number with torch.rand([]) and compares it in Python: the model and
        # its inputs are on the meta device, that draw must not be.
        with torch.device("meta"):
            model, class_name, pad_set = build(request, model_type)
        table = layer_table(model, make_input(model, class_name, model_type, case["sample"], request, device), case["id"],
                            functional_calls=False)
    elif device == "meta":
        with torch.device("meta"):
            model, class_name, pad_set = build(request, model_type)
            # Module rows only: the catalog's tables leave out the torch.cat rows (docs/layer-table.md).
            table = layer_table(model, make_input(model, class_name, model_type, case["sample"], request, device), case["id"],
                                functional_calls=False)
    else:
        model, class_name, pad_set = build(request, model_type)
        table = layer_table(model, make_input(model, class_name, model_type, case["sample"], request, device), case["id"],
                            functional_calls=False)
    params = sum(p.numel() for p in model.parameters())
    assert params == table["totals"]["params"], case["id"]
    out = dict(case)
    out["modelType"] = model_type
    out["class"] = type(model).__name__
    out["config"] = config_values(model, model_type)
    out["params"] = params
    out["trainableParams"] = table["totals"]["trainableParams"]
    out["activations"] = table["totals"]["activations"]
    out["rowCount"] = len(table["rows"])
    if pad_set:
        out["padTokenSet"] = True
    if not case["full"]:
        out["rows"] = [[r["path"], r["type"], r["outputShape"], r["activations"], r["params"], r["trainable"]] for r in table["rows"]]
    return out


def cases():
    result = []

    def add(case_id, request, sample, full=False, **extra):
        request = {k: v for k, v in request.items() if v not in (None, {})}
        result.append({"id": case_id, "request": request, "sample": sample, "full": full, **extra})

    # Tiny configs: every class, then the variants that change rows.
    for model_type, names in CLASSES.items():
        for name in names:
            add(f"tiny/{name}", {"className": name, "configClass": CONFIG_CLASS[model_type], "config": TINY[model_type]},
                tiny_sample(model_type, name))

    def tiny(model_type, name, case_id, sample=None, config=None, options=None, **request_extra):
        add(f"tiny/{name}/{case_id}",
            {"className": name, "configClass": CONFIG_CLASS[model_type], "config": {**TINY[model_type], **(config or {})},
             "options": options or {}, **request_extra},
            sample or tiny_sample(model_type, name))

    tiny("bert", "BertModel", "T13", sample=[13])
    tiny("bert", "BertModel", "eager", options={"attn_implementation": "eager"})
    tiny("bert", "BertModel", "relu", config={"hidden_act": "relu"})
    tiny("bert", "BertModel", "no-pooler", options={"add_pooling_layer": False})
    tiny("bert", "BertModel", "prelu", config={"hidden_act": "prelu"})
    tiny("bert", "BertForMaskedLM", "untied", config={"tie_word_embeddings": False})
    tiny("bert", "BertForMaskedLM", "relu", config={"hidden_act": "relu"})
    tiny("bert", "BertForSequenceClassification", "labels5", options={"num_labels": 5})
    tiny("bert", "BertForPreTraining", "untied", config={"tie_word_embeddings": False})
    tiny("roberta", "RobertaForMaskedLM", "untied", config={"tie_word_embeddings": False})
    tiny("roberta", "RobertaForSequenceClassification", "T60", sample=[64])
    tiny("distilbert", "DistilBertModel", "sinusoidal", config={"sinusoidal_pos_embds": True})
    tiny("distilbert", "DistilBertForMaskedLM", "relu", config={"activation": "relu"})
    tiny("distilbert", "DistilBertForMaskedLM", "untied", config={"tie_word_embeddings": False})
    tiny("gpt2", "GPT2LMHeadModel", "untied", config={"tie_word_embeddings": False})
    tiny("gpt2", "GPT2LMHeadModel", "inner-relu", config={"n_inner": 48, "activation_function": "relu"})
    tiny("gpt2", "GPT2Model", "T64", sample=[64])
    tiny("gpt2", "GPT2LMHeadModel", "eager-reorder", config={"reorder_and_upcast_attn": True}, options={"attn_implementation": "eager"})
    tiny("gpt2", "GPT2ForTokenClassification", "labels3", options={"num_labels": 3})
    tiny("xlnet", "XLNetModel", "uni", config={"attn_type": "uni"})
    tiny("xlnet", "XLNetModel", "relu-T5", sample=[5], config={"ff_activation": "relu"})
    tiny("xlnet", "XLNetLMHeadModel", "untied", config={"tie_word_embeddings": False})
    tiny("xlnet", "XLNetForSequenceClassification", "no-last-dropout", config={"summary_last_dropout": 0.0})
    tiny("xlnet", "XLNetForSequenceClassification", "no-proj", config={"summary_use_proj": False, "summary_activation": "relu"})
    tiny("t5", "T5ForConditionalGeneration", "decoder4", decoderLength=4)
    tiny("t5", "T5ForConditionalGeneration", "gated", config={"feed_forward_proj": "gated-gelu"})
    tiny("t5", "T5ForConditionalGeneration", "untied", config={"tie_word_embeddings": False})
    tiny("t5", "T5EncoderModel", "T20", sample=[20])
    tiny("vit", "ViTModel", "interpolate", sample=[3, 48, 40], interpolatePosEncoding=True)
    tiny("vit", "ViTModel", "mask-token", options={"use_mask_token": True, "add_pooling_layer": False})
    tiny("vit", "ViTForImageClassification", "labels7", options={"num_labels": 7})
    tiny("vit", "ViTForImageClassification", "labels0", options={"num_labels": 0})
    tiny("vit", "ViTModel", "pooler", config={"pooler_output_size": 20, "pooler_act": "relu"})
    tiny("vit", "ViTForImageClassification", "patch4-relu", config={"patch_size": 4, "hidden_act": "relu", "qkv_bias": False})
    tiny("llama", "LlamaForCausalLM", "tied", config={"tie_word_embeddings": True})
    tiny("llama", "LlamaForCausalLM", "biases-headdim", config={"attention_bias": True, "mlp_bias": True, "head_dim": 16})
    tiny("llama", "LlamaModel", "relu-T9", sample=[9], config={"hidden_act": "relu"})
    tiny("llama", "LlamaForTokenClassification", "no-bias", config={"token_classification_bias": False})
    tiny("phi", "PhiForCausalLM", "tied-relu-T9", sample=[9], config={"tie_word_embeddings": True, "hidden_act": "relu"})
    tiny("phi", "PhiModel", "mha", config={"num_key_value_heads": None})
    tiny("opt", "OPTForCausalLM", "project-post-norm", config={"word_embed_proj_dim": 16, "do_layer_norm_before": False})
    tiny("opt", "OPTForCausalLM", "untied-gelu", config={"tie_word_embeddings": False, "activation_function": "gelu"})
    tiny("opt", "OPTModel", "no-bias-no-affine-T60", sample=[60], config={"enable_bias": False, "layer_norm_elementwise_affine": False})
    tiny("opt", "OPTForSequenceClassification", "project3", config={"word_embed_proj_dim": 16}, options={"num_labels": 3})
    v3 = {"relative_attention": True, "position_buckets": 8, "pos_att_type": "p2c|c2p", "norm_rel_ebd": "layer_norm", "share_att_key": True,
          "position_biased_input": False, "type_vocab_size": 0}
    for name in CLASSES["deberta-v2"]:
        tiny("deberta-v2", name, "v3", config=v3)
    tiny("deberta-v2", "DebertaV2Model", "v3-T40", sample=[40], config=v3)
    tiny("deberta-v2", "DebertaV2ForTokenClassification", "c2p-own-keys-embedding16",
         config={**v3, "share_att_key": False, "pos_att_type": "c2p", "embedding_size": 16, "type_vocab_size": 2})
    tiny("deberta-v2", "DebertaV2Model", "p2c-no-buckets-relu",
         config={"relative_attention": True, "pos_att_type": "p2c", "max_relative_positions": 6, "hidden_act": "relu"})
    tiny("deberta-v2", "DebertaV2ForMaskedLM", "v3-untied-embedding16", config={**v3, "tie_word_embeddings": False, "embedding_size": 16})
    tiny("deberta-v2", "DebertaV2ForMaskedLM", "v3-not-legacy", config={**v3, "legacy": False})
    tiny("deberta-v2", "DebertaV2ForSequenceClassification", "v3-labels3", config=v3, options={"num_labels": 3})
    tiny("bloom", "BloomForCausalLM", "untied-T30", sample=[30], config={"tie_word_embeddings": False})
    tiny("bloom", "BloomForTokenClassification", "labels5", options={"num_labels": 5})
    tiny("gpt_neo", "GPTNeoForCausalLM", "inner37-relu-untied-T20", sample=[20],
         config={"intermediate_size": 37, "activation_function": "relu", "tie_word_embeddings": False})
    tiny("electra", "ElectraModel", "same-width-T30", sample=[30], config={"embedding_size": 32})
    tiny("electra", "ElectraForPreTraining", "relu", config={"hidden_act": "relu"})
    tiny("electra", "ElectraForMaskedLM", "untied", config={"tie_word_embeddings": False})
    tiny("electra", "ElectraForSequenceClassification", "labels4", options={"num_labels": 4})
    tiny("gptj", "GPTJForCausalLM", "inner37-relu-tied-T20", sample=[20],
         config={"n_inner": 37, "activation_function": "relu", "tie_word_embeddings": True})
    tiny("bart", "BartForConditionalGeneration", "decoder4", decoderLength=4)
    tiny("bart", "BartForConditionalGeneration", "untied-relu", config={"tie_word_embeddings": False, "activation_function": "relu"})
    tiny("bart", "BartModel", "untied-T20", sample=[20], config={"tie_word_embeddings": False})
    tiny("albert", "AlbertModel", "groups2-inner2-T20", sample=[20], config={"num_hidden_layers": 4, "num_hidden_groups": 2, "inner_group_num": 2})
    tiny("albert", "AlbertModel", "no-pooler-relu", config={"hidden_act": "relu"}, options={"add_pooling_layer": False})
    tiny("albert", "AlbertForMaskedLM", "untied", config={"tie_word_embeddings": False})
    tiny("albert", "AlbertForSequenceClassification", "labels3", options={"num_labels": 3})
    for model_type in LLAMA_STYLE_CASE_TYPES:
        prefix = CONFIG_CLASS[model_type][: -len("Config")]
        tiny(model_type, f"{prefix}ForCausalLM", "tied-relu-T9", sample=[9],
             config={"tie_word_embeddings": True, "hidden_act": "relu"})
        tiny(model_type, f"{prefix}ForCausalLM", "untied", config={"tie_word_embeddings": False})
        tiny(model_type, f"{prefix}Model", "mha", config={"num_key_value_heads": 4})
        if "attention_bias" in LLAMA_STYLE_FIELDS[model_type]:
            tiny(model_type, f"{prefix}Model", "attention-bias", config={"attention_bias": True})
        add(f"tiny/AutoModelForCausalLM/{model_type}",
            {"className": "AutoModelForCausalLM", "configClass": CONFIG_CLASS[model_type], "config": TINY[model_type]}, [7])
    add("tiny/AutoModelForCausalLM/llama", {"className": "AutoModelForCausalLM", "configClass": "LlamaConfig", "config": TINY["llama"]}, [7])
    fsc.add_variants(tiny, add)
    gpno.add_variants(tiny, add)
    vision.add_variants(tiny, add)
    add("tiny/AutoModelForSequenceClassification/roberta",
        {"className": "AutoModelForSequenceClassification", "configClass": "RobertaConfig", "config": TINY["roberta"],
         "options": {"num_labels": 3}}, [7])

    # The published checkpoints: every class their model type has, and the Auto classes.
    for name, checkpoint in CHECKPOINTS.items():
        model_type = checkpoint["modelType"]
        # The mixture-of-experts types (mixtral, qwen2_moe, qwen3_moe) are not recorded against the library yet.
        for class_name in CLASSES.get(model_type, []):
            add(f"full/{name}/{class_name}", {"className": class_name, "checkpoint": name},
                full_sample(model_type, checkpoint["config"], class_name), full=True)
    add("full/roberta-base/AutoModelForSequenceClassification/3",
        {"className": "AutoModelForSequenceClassification", "checkpoint": "roberta-base", "options": {"num_labels": 3}}, [128], full=True)
    add("full/gpt2/GPT2LMHeadModel/T1024", {"className": "GPT2LMHeadModel", "checkpoint": "gpt2"}, [1024], full=True)
    add("full/bert-base-uncased/BertModel/T512", {"className": "BertModel", "checkpoint": "bert-base-uncased"}, [512], full=True)
    add("full/google/vit-base-patch16-224-in21k/ViTModel/384", {"className": "ViTModel", "checkpoint": "google/vit-base-patch16-224-in21k",
        "interpolatePosEncoding": True}, [3, 384, 384], full=True)
    add("full/facebook/bart-base/BartForConditionalGeneration/512-128",
        {"className": "BartForConditionalGeneration", "checkpoint": "facebook/bart-base", "decoderLength": 128}, [512], full=True)
    fsc.add_full_extras(add)
    vision.add_full_extras(add)
    add("full/t5-small/T5ForConditionalGeneration/64-32", {"className": "T5ForConditionalGeneration", "checkpoint": "t5-small",
        "decoderLength": 32}, [64], full=True)
    return result
