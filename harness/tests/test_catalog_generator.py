"""Tests of scripts/catalog/generate_catalog.py, the generator of the torchvision catalog.

The generator measures layer tables with harness.layer_table on the meta device (shapes without
arithmetic, so seventy models take minutes, not hours). These tests check that the meta device
gives the tables the CPU gives, inputs too small included, and that the committed data of a few small
models is what the generator writes today (`--check`).

Run from the repository root: /usr/bin/python3 -m pytest harness/tests -p no:cacheprovider
"""
import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torchvision.models as tvm

from harness.layer_table import layer_table

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "catalog" / "generate_catalog.py"


@pytest.fixture(scope="module")
def generator():
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("generate_catalog", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_catalog"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def cpu_table(name, options, sample):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = tvm.get_model(name, **options)
        return layer_table(model, lambda batch: torch.randn(batch, *sample), name, functional_calls=False)


@pytest.mark.parametrize(
    "name, options, sample",
    [
        ("resnet18", {}, [3, 64, 48]),
        ("resnet18", {}, [3, 1, 1]),
        ("squeezenet1_1", {"num_classes": 10}, [3, 40, 56]),
        ("squeezenet1_1", {}, [3, 16, 16]),  # too small: the CPU raises, the meta device must too
        ("googlenet", {}, [3, 64, 64]),
        ("inception_v3", {"aux_logits": False}, [3, 80, 96]),
        ("inception_v3", {"aux_logits": False}, [3, 74, 74]),  # too small
        ("mobilenet_v3_small", {}, [3, 48, 40]),
        ("shufflenet_v2_x0_5", {}, [3, 40, 40]),
        ("swin_t", {}, [3, 48, 40]),
        ("convnext_tiny", {}, [3, 32, 32]),
        ("convnext_tiny", {}, [3, 31, 31]),  # too small
    ],
)
def test_meta_device_tables_equal_cpu_tables(generator, name, options, sample):
    try:
        expected = cpu_table(name, options, sample)
    except RuntimeError:
        expected = None
    try:
        actual = generator.harness_table(generator.build(name, "torchvision", options), sample, name)
    except generator.INPUT_ERRORS:
        actual = None
    if expected is None:
        assert actual is None, f"{name} on {sample}: the CPU refuses the input, the meta device does not"
    else:
        assert actual is not None, f"{name} on {sample}: the meta device refuses what the CPU takes"
        assert actual["rows"] == expected["rows"]


def test_check_mode_finds_the_committed_data_up_to_date():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--jobs", "1", "resnet18", "squeezenet1_1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_symbolic_values_explain_every_probe(generator):
    base = {"a": [1000, 3], "b": 197}
    probes = [({"num_classes": 10, "image_size": 224}, {"a": [10, 3], "b": 197}), ({"num_classes": 1000, "image_size": 384}, {"a": [1000, 3], "b": 577})]
    templated = generator.templated(base, probes, {"num_classes": 1000, "image_size": 224})
    assert templated == {"a": [{"$": "num_classes"}, 3], "b": {"$": "image_size", "div": 16, "pow": 2, "add": 1}}
    with pytest.raises(RuntimeError):
        generator.templated({"a": 5}, [({"num_classes": 10}, {"a": 7})], {"num_classes": 1000})
