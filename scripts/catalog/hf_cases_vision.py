"""ConvNeXt, ResNet and DINOv2 for hf_cases.py: their classes, Auto mappings, config fields, small configs and variants.

Kept apart from hf_cases.py because they are image models of another kind than ViT's: convolutional
ones with per-stage lists (`depths`, `hidden_sizes`), and DINOv2, which interpolates its position
table to any image size.
"""

CONFIG_CLASS = {"convnext": "ConvNextConfig", "resnet": "ResNetConfig", "dinov2": "Dinov2Config"}

CLASSES = {
    "convnext": ["ConvNextModel", "ConvNextForImageClassification"],
    "resnet": ["ResNetModel", "ResNetForImageClassification"],
    "dinov2": ["Dinov2Model", "Dinov2ForImageClassification"],
}

# transformers 5.18's models/auto/modeling_auto.py for these two model types.
AUTO = {
    "AutoModel": {"convnext": "ConvNextModel", "resnet": "ResNetModel", "dinov2": "Dinov2Model"},
    "AutoModelForImageClassification": {"convnext": "ConvNextForImageClassification", "resnet": "ResNetForImageClassification",
                                        "dinov2": "Dinov2ForImageClassification"},
}

CONFIG_FIELDS = {
    "convnext": ["num_channels", "patch_size", "num_stages", "hidden_sizes", "depths", "hidden_act", "layer_scale_init_value",
                 "drop_path_rate", "image_size", "num_labels"],
    "resnet": ["num_channels", "embedding_size", "hidden_sizes", "depths", "layer_type", "hidden_act", "downsample_in_first_stage",
               "downsample_in_bottleneck", "num_labels"],
    "dinov2": ["hidden_size", "num_hidden_layers", "num_attention_heads", "mlp_ratio", "hidden_act", "image_size", "patch_size",
               "num_channels", "qkv_bias", "drop_path_rate", "use_swiglu_ffn", "use_mask_token", "num_labels"],
}

LIST_FIELDS = ("depths", "hidden_sizes")

TINY = {
    "convnext": {"hidden_sizes": [8, 16], "depths": [2, 1], "num_stages": 2, "image_size": 32},
    "resnet": {"embedding_size": 8, "hidden_sizes": [16, 32], "depths": [1, 2]},
    "dinov2": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "image_size": 28, "patch_size": 7},
}


def tiny_sample(class_name):
    return [3, 32, 32]


def full_sample(model_type, config):
    # ResNet has no image size; DINOv2's checkpoints are used at their image processor's 224-pixel crop.
    size = config.get("image_size", 224) if model_type == "convnext" else 224
    return [3, size, size]


def add_variants(tiny, add):
    """The variants that change rows: `tiny(model_type, class, case_id, sample=..., config=..., options=..., **request)`."""
    tiny("convnext", "ConvNextModel", "drop-path-no-layer-scale", config={"drop_path_rate": 0.2, "layer_scale_init_value": 0.0})
    tiny("convnext", "ConvNextModel", "odd-45x38", sample=[3, 45, 38])
    tiny("convnext", "ConvNextForImageClassification", "relu-patch2", config={"hidden_act": "relu", "patch_size": 2})
    tiny("convnext", "ConvNextForImageClassification", "labels5", options={"num_labels": 5})
    tiny("convnext", "ConvNextForImageClassification", "labels0", options={"num_labels": 0})
    tiny("resnet", "ResNetModel", "basic-odd-37x29", sample=[3, 37, 29], config={"layer_type": "basic"})
    tiny("resnet", "ResNetModel", "downsample-first-in-bottleneck", config={"downsample_in_first_stage": True, "downsample_in_bottleneck": True})
    tiny("resnet", "ResNetForImageClassification", "gelu-basic", config={"hidden_act": "gelu", "layer_type": "basic"})
    tiny("resnet", "ResNetForImageClassification", "labels5", options={"num_labels": 5})
    tiny("resnet", "ResNetForImageClassification", "labels0", options={"num_labels": 0})
    tiny("dinov2", "Dinov2Model", "interpolate-42x35", sample=[3, 42, 35])
    tiny("dinov2", "Dinov2Model", "swiglu-drop-path-no-mask-token", config={"use_swiglu_ffn": True, "drop_path_rate": 0.1, "use_mask_token": False})
    tiny("dinov2", "Dinov2ForImageClassification", "relu-ratio2-no-qkv-bias", config={"hidden_act": "relu", "mlp_ratio": 2, "qkv_bias": False})
    tiny("dinov2", "Dinov2ForImageClassification", "labels5", options={"num_labels": 5})
    tiny("dinov2", "Dinov2ForImageClassification", "labels0", options={"num_labels": 0})
    add("tiny/AutoModelForImageClassification/dinov2",
        {"className": "AutoModelForImageClassification", "configClass": "Dinov2Config", "config": TINY["dinov2"]}, [3, 28, 28])
    add("tiny/AutoModelForImageClassification/convnext",
        {"className": "AutoModelForImageClassification", "configClass": "ConvNextConfig", "config": TINY["convnext"]}, [3, 32, 32])
    add("tiny/AutoModel/resnet", {"className": "AutoModel", "configClass": "ResNetConfig", "config": TINY["resnet"]}, [3, 32, 32])


def add_full_extras(add):
    add("full/microsoft/resnet-50/ResNetForImageClassification/160x192",
        {"className": "ResNetForImageClassification", "checkpoint": "microsoft/resnet-50"}, [3, 160, 192], full=True)
    add("full/facebook/convnext-tiny-224/ConvNextForImageClassification/288",
        {"className": "ConvNextForImageClassification", "checkpoint": "facebook/convnext-tiny-224"}, [3, 288, 288], full=True)
    add("full/facebook/dinov2-base/Dinov2Model/518", {"className": "Dinov2Model", "checkpoint": "facebook/dinov2-base"}, [3, 518, 518], full=True)
