"""Falcon, Swin and CLIP for hf_cases.py: their classes, Auto mappings, config fields, small configs and variants.

Kept apart from hf_cases.py because two of them are shaped unlike the others: Swin's depths and heads
are lists, and CLIP's config holds a text and a vision config (CLIPTextModel and CLIPVisionModel are
built from those parts, CLIPModel takes token ids and an image together).
"""

CONFIG_CLASS = {"falcon": "FalconConfig", "swin": "SwinConfig", "clip": "CLIPConfig"}

CLASSES = {
    "falcon": ["FalconModel", "FalconForCausalLM", "FalconForSequenceClassification", "FalconForTokenClassification",
               "FalconForQuestionAnswering"],
    "swin": ["SwinModel", "SwinForImageClassification"],
    "clip": ["CLIPModel", "CLIPTextModel", "CLIPVisionModel", "CLIPTextModelWithProjection", "CLIPVisionModelWithProjection",
             "CLIPForImageClassification"],
}

# transformers 5.18's models/auto/modeling_auto.py for these three model types.
AUTO = {
    "AutoModel": {"falcon": "FalconModel", "swin": "SwinModel", "clip": "CLIPModel"},
    "AutoModelForCausalLM": {"falcon": "FalconForCausalLM"},
    "AutoModelForSequenceClassification": {"falcon": "FalconForSequenceClassification"},
    "AutoModelForTokenClassification": {"falcon": "FalconForTokenClassification"},
    "AutoModelForQuestionAnswering": {"falcon": "FalconForQuestionAnswering"},
    "AutoModelForImageClassification": {"swin": "SwinForImageClassification", "clip": "CLIPForImageClassification"},
    "AutoModelForZeroShotImageClassification": {"clip": "CLIPModel"},
}

# The classes built from one part of a CLIPConfig, as from_pretrained builds them from a CLIP checkpoint.
CLIP_PART = {"CLIPTextModel": "text_config", "CLIPTextModelWithProjection": "text_config",
             "CLIPVisionModel": "vision_config", "CLIPVisionModelWithProjection": "vision_config"}
CLIP_TEXT_FIELDS = ["vocab_size", "hidden_size", "intermediate_size", "projection_dim", "num_hidden_layers", "num_attention_heads",
                    "max_position_embeddings", "hidden_act"]
CLIP_VISION_FIELDS = ["hidden_size", "intermediate_size", "projection_dim", "num_hidden_layers", "num_attention_heads", "num_channels",
                      "image_size", "patch_size", "hidden_act"]

CONFIG_FIELDS = {
    "falcon": ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "num_kv_heads", "num_ln_in_parallel_attn",
               "alibi", "new_decoder_architecture", "multi_query", "parallel_attn", "bias", "ffn_hidden_size", "activation",
               "max_position_embeddings", "num_labels", "tie_word_embeddings"],
    "swin": ["image_size", "patch_size", "num_channels", "embed_dim", "depths", "num_heads", "window_size", "mlp_ratio", "qkv_bias",
             "hidden_act", "use_absolute_embeddings", "drop_path_rate", "hidden_size", "num_layers", "num_labels"],
    "clip": ["projection_dim", "text_config", "vision_config", "num_labels"],
}

TINY = {
    "falcon": {"vocab_size": 99, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 64},
    "swin": {"image_size": 32, "patch_size": 2, "embed_dim": 16, "depths": [2, 2, 1], "num_heads": [2, 4, 8], "window_size": 4},
    "clip": {"projection_dim": 24,
             "text_config": {"vocab_size": 99, "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 4,
                             "max_position_embeddings": 20, "projection_dim": 24},
             "vision_config": {"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 4, "image_size": 32,
                               "patch_size": 8, "projection_dim": 24}},
}


def is_image_class(class_name):
    return class_name.startswith("Swin") or (class_name.startswith("CLIP") and CLIP_PART.get(class_name) != "text_config")


def tiny_sample(class_name):
    return [3, 32, 32] if is_image_class(class_name) else [7]


def full_sample(model_type, config, class_name):
    if model_type == "falcon":
        return [128]
    if not is_image_class(class_name):
        return [77]
    size = (config.get("vision_config") or {}).get("image_size") if model_type == "clip" else config.get("image_size")
    return [3, size, size]


def add_variants(tiny, add):
    """The variants that change rows: `tiny(model_type, class, case_id, sample=..., config=..., options=..., **request)`."""
    tiny("falcon", "FalconForCausalLM", "rw-alibi-bias-sequential-T20", sample=[20],
         config={"alibi": True, "bias": True, "multi_query": False, "parallel_attn": False})
    tiny("falcon", "FalconModel", "alibi-eager", config={"alibi": True}, options={"attn_implementation": "eager"})
    tiny("falcon", "FalconModel", "new-arch-kv2", config={"new_decoder_architecture": True, "num_kv_heads": 2})
    tiny("falcon", "FalconModel", "new-arch-one-norm", config={"new_decoder_architecture": True, "num_kv_heads": 2, "num_ln_in_parallel_attn": 1})
    tiny("falcon", "FalconModel", "mha-parallel", config={"multi_query": False})
    tiny("falcon", "FalconForCausalLM", "relu-ffn37-untied-T9", sample=[9],
         config={"activation": "relu", "ffn_hidden_size": 37, "tie_word_embeddings": False})
    tiny("falcon", "FalconForSequenceClassification", "labels3", options={"num_labels": 3})
    add("tiny/AutoModelForCausalLM/falcon", {"className": "AutoModelForCausalLM", "configClass": "FalconConfig", "config": TINY["falcon"]}, [7])

    tiny("swin", "SwinModel", "no-pooler-mask-token", options={"add_pooling_layer": False, "use_mask_token": True})
    tiny("swin", "SwinModel", "absolute-no-drop-path", config={"use_absolute_embeddings": True, "drop_path_rate": 0.0})
    tiny("swin", "SwinModel", "odd-36x28", sample=[3, 36, 28])
    tiny("swin", "SwinModel", "absolute-interpolate-48", sample=[3, 48, 48], config={"use_absolute_embeddings": True},
         interpolatePosEncoding=True)
    tiny("swin", "SwinForImageClassification", "relu-no-qkv-bias-ratio2", config={"hidden_act": "relu", "qkv_bias": False, "mlp_ratio": 2.0})
    tiny("swin", "SwinForImageClassification", "labels5-64", sample=[3, 64, 64], options={"num_labels": 5})
    tiny("swin", "SwinForImageClassification", "labels0", options={"num_labels": 0})
    add("tiny/AutoModelForImageClassification/swin",
        {"className": "AutoModelForImageClassification", "configClass": "SwinConfig", "config": TINY["swin"]}, [3, 32, 32])

    tiny("clip", "CLIPModel", "text5", textLength=5)
    tiny("clip", "CLIPVisionModel", "interpolate-48x40", sample=[3, 48, 40], interpolatePosEncoding=True)
    tiny("clip", "CLIPTextModel", "relu-T12", sample=[12],
         config={"text_config": {**TINY["clip"]["text_config"], "hidden_act": "relu"}})
    tiny("clip", "CLIPForImageClassification", "labels5", options={"num_labels": 5})
    tiny("clip", "CLIPForImageClassification", "labels0", options={"num_labels": 0})
    add("tiny/AutoModel/clip", {"className": "AutoModel", "configClass": "CLIPConfig", "config": TINY["clip"]}, [3, 32, 32])


def add_full_extras(add):
    add("full/microsoft/swin-tiny-patch4-window7-224/SwinForImageClassification/384",
        {"className": "SwinForImageClassification", "checkpoint": "microsoft/swin-tiny-patch4-window7-224"}, [3, 384, 384], full=True)
    add("full/openai/clip-vit-base-patch32/CLIPModel/text16",
        {"className": "CLIPModel", "checkpoint": "openai/clip-vit-base-patch32", "textLength": 16}, [3, 224, 224], full=True)
