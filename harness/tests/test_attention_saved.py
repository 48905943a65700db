"""scripts/catalog/attention_saved.py: what the catalog models whose attention PyTorch 2 runs fused save
for backward (transformers' image models, torchvision's vit_*), the figures the real-model estimator
replays for them (src/core/catalog/data/transformersSaved.json, torchvisionAttentionSaved.json).
Needs transformers (the PyTorch 2 venv: scripts/venvs/torch2-venv.cjs)."""
from __future__ import annotations

import json
import sys

import pytest

from harness.tests.test_dry_run import ROOT

sys.path.insert(0, str(ROOT / "scripts" / "catalog"))
DATA = ROOT / "src" / "core" / "catalog" / "data"
SAVED = json.loads((DATA / "transformersSaved.json").read_text())
TORCHVISION_SAVED = json.loads((DATA / "torchvisionAttentionSaved.json").read_text())
CHECKPOINTS = {c["name"]: c for c in json.loads((ROOT / "src" / "core" / "catalog" / "hf" / "checkpoints.json").read_text())["checkpoints"]}


@pytest.fixture()
def attention_saved():
    """The script, with its fused-attention stand-in in place for the test only."""
    transformers = pytest.importorskip("transformers")
    if SAVED["versions"]["transformers"] != transformers.__version__:
        pytest.skip(f"measured with transformers {SAVED['versions']['transformers']}, not {transformers.__version__}")
    import torch.nn.functional as F

    import attention_saved as module

    original = F.scaled_dot_product_attention
    F.scaled_dot_product_attention = module.saved_module._fused_sdpa
    try:
        yield module
    finally:
        F.scaled_dot_product_attention = original


@pytest.mark.parametrize("key", ["google/vit-base-patch16-224-in21k:ViTForImageClassification", "openai/clip-vit-base-patch32:CLIPVisionModel"])
def test_a_committed_transformers_figure_is_what_the_library_saves_today(attention_saved, key: str) -> None:
    name, class_name = key.split(":")
    checkpoint = CHECKPOINTS[name]
    measured = attention_saved.measure(checkpoint["modelType"], checkpoint["config"], class_name)
    assert measured == SAVED["models"][key]
    saved, _, _, forward_peak = measured
    # ViT-B/16: 197 tokens of 768 through 12 layers; the fused kernels keep no 197 x 197 matrix.
    if class_name == "ViTForImageClassification":
        tokens = 197 * 768 * 4
        assert 12 * tokens * 15 < saved < 12 * tokens * 20
        # Frozen, at its fullest in a block: the residual stream, the attention's input and output, the
        # MLP's 4 x 768 hidden before and after GELU: more than the two tensors the rows hold at once.
        assert 10 * tokens < forward_peak < 16 * tokens


def test_torchvision_vit_saves_what_transformers_vit_does_and_the_committed_figures_are_today_s(attention_saved) -> None:
    measured = attention_saved.measure_torchvision()
    assert measured["models"] == TORCHVISION_SAVED["models"]
    # The same architecture: the libraries differ in code, not in what autograd keeps.
    assert measured["models"]["vit_b_16"][0] == SAVED["models"]["google/vit-base-patch16-224-in21k:ViTForImageClassification"][0]
    assert measured["models"]["vit_b_16"][3] == SAVED["models"]["google/vit-base-patch16-224-in21k:ViTForImageClassification"][3]
