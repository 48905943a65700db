"""Reads the LLaMA-style decoders' description from transformers itself, for src/core/catalog/hf/llamaStyle.json.

transformers 5.18 builds Mistral, Qwen2 and Gemma with the same module tree as LLaMA (embed_tokens,
layers of self_attn q/k/v/o_proj and mlp gate/up/down_proj with act_fn, two RMS norms, norm,
rotary_emb) and the same generic heads (modeling_layers.py); they differ in class names, config
defaults, which projections carry a bias and which config field names the activation. This module
finds those differences by building small models with the library, and refuses a model type whose
module tree is not LLaMA's: the TypeScript side then builds all of them from one description
(src/core/catalog/hf/models/llama.ts), and the row-by-row vectors check every type.
"""
from __future__ import annotations

import dataclasses

import torch
import transformers
from transformers.models.auto import modeling_auto

from harness.layer_table import layer_table

LLAMA_STYLE = ["llama", "mistral", "qwen2", "gemma", "granite"]

# A config small enough to build in milliseconds; 2 key/value heads make grouped-query attention visible.
LLAMA_STYLE_TINY = {"vocab_size": 99, "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 4,
               "num_key_value_heads": 2}

# The fields whose values size or add modules; the TypeScript builder reads each of them.
STRUCTURAL = {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
              "head_dim", "max_position_embeddings", "attention_bias", "mlp_bias", "tie_word_embeddings", "hidden_act",
              "hidden_activation"}

# PretrainedConfig's own fields: the TypeScript side knows them for every model type.
BASE_FIELDS = {f.name for f in dataclasses.fields(transformers.PretrainedConfig)}

AUTO_MAPPINGS = {
    "AutoModel": "MODEL_MAPPING_NAMES",
    "AutoModelForCausalLM": "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
    "AutoModelForSequenceClassification": "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES",
    "AutoModelForTokenClassification": "MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES",
    "AutoModelForQuestionAnswering": "MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES",
    "AutoModelForPreTraining": "MODEL_FOR_PRETRAINING_MAPPING_NAMES",
}

# Where each part of the tree sits in the base model; the value is the class-name suffix it must have.
TEMPLATE = {"": "Model", "layers.0": "DecoderLayer", "layers.0.self_attn": "Attention", "layers.0.mlp": "MLP",
            "layers.0.input_layernorm": "RMSNorm", "norm": "RMSNorm", "rotary_emb": "RotaryEmbedding"}
PROJECTIONS = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"]
MLP = ["mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"]


def _json_value(value):
    return value if value is None or isinstance(value, (bool, int, float, str)) else None


def _fields(config_class):
    return {f.name: f for f in dataclasses.fields(config_class) if not f.name.startswith("_")}


def _build(model_type, class_name, **overrides):
    config_class = transformers.CONFIG_MAPPING[model_type]
    # Gemma's head_dim defaults to 256 instead of hidden_size // heads: give it the derived value.
    tiny = {**LLAMA_STYLE_TINY, **({"head_dim": 8} if "head_dim" in _fields(config_class) else {})}
    config = config_class(**{**tiny, **overrides})
    torch.manual_seed(0)
    return getattr(transformers, class_name)(config)


def _shape(model):
    """What the TypeScript template must reproduce: every module's path and type and every parameter's shape."""
    return [(name, type(m).__name__, [(p, tuple(t.shape)) for p, t in m.named_parameters(recurse=False)])
            for name, m in model.named_modules()]


def _table(model):
    ids = lambda batch: (torch.randint(0, 99, (batch, 5), generator=torch.Generator().manual_seed(batch)),)  # noqa: E731
    return [(r["path"], r["type"], r["outputShape"], r["params"]) for r in layer_table(model, ids, "llama-style", functional_calls=False)["rows"]]


def _bias_rule(model_type, base, path, flag, fields):
    """True or False when the library fixes the projection's bias, else the config field that decides it."""
    def has_bias(**overrides):
        module = _build(model_type, base, **overrides).get_submodule("layers.0." + path)
        return module.bias is not None
    if flag not in fields:
        return has_bias()
    off, on = has_bias(**{flag: False}), has_bias(**{flag: True})
    return flag if (off, on) == (False, True) else off


def _head_bases(model_type, classes, base):
    """The attribute each head keeps its base model under (`model`, or `transformer` in some question-answering classes)."""
    out = {}
    for class_name in classes[1:]:
        names = [n for n, m in _build(model_type, class_name).named_children() if type(m).__name__ == base]
        if len(names) != 1:
            raise SystemExit(f"{class_name}: no single child holds the {base}")
        out[class_name] = names[0]
    return out


def _activation_rewrites(config_class, field):
    """Activation names the config's __post_init__ replaces (Gemma turns the legacy 'gelu' into 'gelu_pytorch_tanh')."""
    from transformers.activations import ACT2FN
    rewrites = {}
    for name in sorted(ACT2FN):
        resolved = getattr(config_class(**{**LLAMA_STYLE_TINY, field: name}), field)
        if resolved != name:
            rewrites[name] = resolved
    return rewrites


def _activation_field(model_type, base, fields):
    for name in ("hidden_activation", "hidden_act"):
        if name in fields and type(_build(model_type, base, **{name: "relu"}).get_submodule("layers.0.mlp.act_fn")).__name__ == "ReLU":
            return name
    raise SystemExit(f"{model_type}: no config field sets the MLP activation")


def _check_template(model_type, base, prefix):
    model = _build(model_type, base)
    modules = dict(model.named_modules())
    for path, suffix in TEMPLATE.items():
        name = type(modules[path]).__name__
        if name != prefix + suffix:
            raise SystemExit(f"{model_type}: {path or 'the base model'} is {name}, not {prefix}{suffix}: not a LLaMA-style tree")
    llama = _build("llama", "LlamaModel")
    # The embedding may be the library's own subclass of nn.Embedding (Gemma scales its output): the
    # same parameter, but the harness expands it (a Parameter row, no call row), so its class is data.
    # The activation's class follows activationField's default.
    def rename(shape):
        def kind(path, type_name):
            if path == "embed_tokens":
                return "Embedding"
            return "activation" if path.endswith("act_fn") else type_name.replace(prefix, "Llama", 1)
        return [(p, kind(p, t), ps) for p, t, ps in shape]
    strip = lambda shape: [(p, t, [x for x in ps if x[0] != "bias"]) for p, t, ps in shape]  # noqa: E731
    if strip(rename(_shape(model))) != strip(rename(_shape(llama))):
        raise SystemExit(f"{model_type}: the module tree differs from LlamaModel's beyond class names and biases")


def _no_effect_fields(model_type, causal, fields):
    """Numeric and boolean fields outside STRUCTURAL, each checked to leave the table unchanged when changed."""
    reference = _table(_build(model_type, causal))
    checked = []
    for name, f in sorted(fields.items()):
        if name in STRUCTURAL or name in BASE_FIELDS:
            continue
        default = f.default if f.default is not dataclasses.MISSING else None
        if isinstance(default, bool):
            other = not default
        elif isinstance(default, int):
            other = default + 3
        elif isinstance(default, float):
            other = default * 0.5 + 0.01
        else:
            continue
        if _table(_build(model_type, causal, **{name: other})) != reference:
            raise SystemExit(f"{model_type}: config field {name} changes the layer table; the catalog must model it")
        checked.append(name)
    return checked


def describe(model_type):
    config_class = transformers.CONFIG_MAPPING[model_type]
    fields = _fields(config_class)
    auto = {auto: getattr(modeling_auto, mapping).get(model_type) for auto, mapping in AUTO_MAPPINGS.items()}
    auto = {k: v for k, v in auto.items() if v}
    base = auto["AutoModel"]
    prefix = base[: -len("Model")]
    _check_template(model_type, base, prefix)
    defaults = {}
    for name, f in fields.items():
        if name in BASE_FIELDS and name not in ("tie_word_embeddings", "pad_token_id", "bos_token_id", "eos_token_id"):
            continue
        if f.default is not dataclasses.MISSING and (_json_value(f.default) is not None or f.default is None):
            defaults[name] = f.default
    classes = [c for c in (base, auto.get("AutoModelForCausalLM"), auto.get("AutoModelForSequenceClassification"),
                           auto.get("AutoModelForTokenClassification"), auto.get("AutoModelForQuestionAnswering")) if c]
    embedding = _build(model_type, base).get_submodule("embed_tokens")
    activation_field = _activation_field(model_type, base, fields)
    return {
        "modelType": model_type,
        "configClass": config_class.__name__,
        "prefix": prefix,
        "classes": classes,
        "auto": auto,
        "defaults": defaults,
        "aliases": dict(getattr(config_class, "attribute_map", {}) or {}),
        "fields": sorted(n for n in fields if n not in BASE_FIELDS or n in defaults),
        "noEffectFields": _no_effect_fields(model_type, auto["AutoModelForCausalLM"], fields),
        "embedding": {"type": type(embedding).__name__, "torch": type(embedding).__module__.startswith("torch.nn.")},
        "activationField": activation_field,
        "activationRewrites": _activation_rewrites(config_class, activation_field),
        "headBase": _head_bases(model_type, classes, base),
        "projectionBias": {p.split(".")[1]: _bias_rule(model_type, base, p, "attention_bias", fields) for p in PROJECTIONS},
        "mlpBias": {p.split(".")[1]: _bias_rule(model_type, base, p, "mlp_bias", fields) for p in MLP},
    }


def describe_all():
    return {
        "about": ("LLaMA-style decoders of transformers " + transformers.__version__ + ", read from the library by "
                  "scripts/catalog/generate_hf_catalog.py (hf_llama_style.py): class names, Auto mappings, config defaults and "
                  "fields, which projections carry a bias, which field sets the activation, and the fields checked to "
                  "leave the layer table unchanged. Do not edit: regenerate."),
        "transformers": transformers.__version__,
        "types": [describe(t) for t in LLAMA_STYLE],
    }
