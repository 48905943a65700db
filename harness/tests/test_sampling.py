"""harness.sampling: configurations sampled from ranges are valid, buildable and trainable."""
import collections
import copy
from pathlib import Path

import pytest

from harness.config import load_config
from harness.layer_table import layer_table, make_input_factory
from harness.sampling import (
    DEVICE_PRECISIONS,
    SamplingError,
    build_model,
    render_source,
    sample_configs,
    sample_value,
    validate_config,
)
from harness.schema_check import validate
from harness.worker import train

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
DEFAULT = load_config(CONFIGS / "default.yaml")
SMOKE = load_config(CONFIGS / "cpu-smoke.yaml")


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_the_default_config_yields_valid_distinct_configurations(device):
    configs = sample_configs(DEFAULT, device)
    assert len(configs) == 150 and len({c["id"] for c in configs}) == 150
    assert collections.Counter(c["family"] for c in configs) == {"mlp": 50, "cnn": 50, "transformer": 50}
    assert {c["variant"] for c in configs} == {"mlp", "mlp-residual", "cnn1d", "cnn1d-residual", "cnn2d", "cnn2d-residual", "encoder", "gpt"}
    for config in configs:
        assert validate_config(config) == [], config["id"]
        assert config["device"] == device and config["setup"]["family"] == config["family"]
        assert config["setup"]["precision"] in DEVICE_PRECISIONS[device]
    if device == "cpu":
        assert {c["setup"]["precision"] for c in configs} == {"fp32"}


def test_sampling_is_deterministic_and_families_are_independent():
    first = sample_configs(DEFAULT, "cuda")
    assert [c["id"] for c in sample_configs(copy.deepcopy(DEFAULT), "cuda")] == [c["id"] for c in first]
    fewer = copy.deepcopy(DEFAULT)
    fewer["families"]["mlp"]["count"] = 3
    cnn = [c["id"] for c in first if c["family"] == "cnn"]
    assert [c["id"] for c in sample_configs(fewer, "cuda") if c["family"] == "cnn"] == cnn
    assert [c["id"] for c in sample_configs(fewer, "cuda") if c["family"] == "mlp"] == [c["id"] for c in first if c["family"] == "mlp"][:3]


def _forced(family, **overrides):
    config = copy.deepcopy(SMOKE)
    config["families"] = {family: {**SMOKE["families"][family], "count": 1, **overrides}}
    return sample_configs(config, "cpu")[0]


VARIANTS = {
    "mlp": ("mlp", {"residual": False, "normalization": "batchnorm", "dropout": 0.2}),
    "mlp-residual": ("mlp", {"residual": True, "normalization": "layernorm", "dropout": 0.1}),
    "cnn2d": ("cnn", {"conv": "conv2d", "residual": False}),
    "cnn2d-residual": ("cnn", {"conv": "conv2d", "residual": True, "normalization": "batchnorm"}),
    "cnn1d": ("cnn", {"conv": "conv1d", "residual": False, "normalization": "none"}),
    "cnn1d-residual": ("cnn", {"conv": "conv1d", "residual": True}),
    "encoder": ("transformer", {"style": "encoder"}),
    "gpt": ("transformer", {"style": "gpt", "tiedHead": False}),
    "gpt-tied": ("transformer", {"style": "gpt", "tiedHead": True}),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_builds_trains_and_has_a_valid_layer_table(name):
    family, overrides = VARIANTS[name]
    config = _forced(family, **overrides)
    assert config["variant"] == name.replace("-tied", "")
    result = train(config, "cpu", 0.05, None)
    assert result["status"] == "ok", result.get("traceback")
    assert result["steps"] >= 1 and result["oom"] is False
    table = result["layerTable"]
    validate(table)
    model = build_model(config)
    assert table["totals"]["params"] == sum(p.numel() for p in model.parameters())
    if name == "gpt-tied":
        assert model.head.weight is model.tok.weight
    if name.endswith("residual") or name.startswith("gpt"):
        assert "+" in render_source(config)


def test_pooling_stages_are_capped_by_the_input_size():
    config = _forced("cnn", conv="conv2d", inputShape2d=[[3, 4, 4]], stages=5)
    assert config["params"]["stages"] <= 2 and validate_config(config) == []
    assert train(config, "cpu", 0.01, None)["status"] == "ok"


def test_heads_always_divide_the_model_width():
    config = copy.deepcopy(DEFAULT)
    config["families"] = {"transformer": {"count": 200, "heads": [3, 5, 7], "dModel": [10, 100]}}
    for item in sample_configs(config, "cuda"):
        assert item["params"]["dModel"] % item["params"]["heads"] == 0


def test_the_rendered_script_builds_the_same_model_as_its_layer_table():
    config = _forced("transformer", style="gpt")
    table = layer_table(build_model(config), make_input_factory(config["inputs"]), "model")
    namespace = {"__name__": "not_main"}
    exec(compile(render_source(config), "sampled.py", "exec"), namespace)
    again = layer_table(namespace["model"], make_input_factory(config["inputs"]), "model")
    assert again == table


@pytest.mark.parametrize("spec,key,message", [
    ([], "width", "empty list"),
    ([5, 1], "width", r"range \[5, 1\] is empty"),
    ({"pick": [1]}, "width", "a mapping spec must be"),
])
def test_bad_value_specs_name_the_key(spec, key, message):
    import random

    with pytest.raises(SamplingError, match=f"{key}: {message}"):
        sample_value(spec, random.Random(0), key)


def test_bad_configs_are_refused():
    with pytest.raises(SamplingError, match="unknown"):
        sample_configs({"families": {"rnn": {"count": 1}}}, "cuda")
    with pytest.raises(SamplingError, match="none of"):
        sample_configs({"training": {"precision": ["fp16-mixed"]}, "families": {"mlp": {"count": 1}}}, "cpu")
    with pytest.raises(SamplingError, match="fewer than 5 distinct"):
        sample_configs({"training": {"batchSize": 8, "optimizer": "sgd", "precision": "fp32"},
                        "families": {"mlp": {"count": 5, "inputShape": [[4]], "classes": 2, "depth": 1, "width": 4,
                                             "activation": "ReLU", "normalization": "none", "dropout": 0.0, "residual": False}}}, "cuda")
