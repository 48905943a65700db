"""scripts/catalog/hf_saved.py: what the transformers catalog's image models save for backward, the
figure the real-model estimator replays for them (src/core/catalog/data/transformersSaved.json).
Needs transformers (the PyTorch 2 venv: scripts/venvs/torch2-venv.cjs)."""
from __future__ import annotations

import json
import sys

import pytest

from harness.tests.test_dry_run import ROOT

sys.path.insert(0, str(ROOT / "scripts" / "catalog"))
SAVED = json.loads((ROOT / "src" / "core" / "catalog" / "data" / "transformersSaved.json").read_text())
CHECKPOINTS = {c["name"]: c for c in json.loads((ROOT / "src" / "core" / "catalog" / "hf" / "checkpoints.json").read_text())["checkpoints"]}


@pytest.mark.parametrize("key", ["google/vit-base-patch16-224-in21k:ViTForImageClassification", "openai/clip-vit-base-patch32:CLIPVisionModel"])
def test_a_committed_figure_is_what_the_library_saves_today(key: str) -> None:
    transformers = pytest.importorskip("transformers")
    if SAVED["versions"]["transformers"] != transformers.__version__:
        pytest.skip(f"measured with transformers {SAVED['versions']['transformers']}, not {transformers.__version__}")
    import torch
    import torch.nn.functional as F

    import hf_saved

    name, class_name = key.split(":")
    checkpoint = CHECKPOINTS[name]
    original = F.scaled_dot_product_attention
    try:
        F.scaled_dot_product_attention = hf_saved.saved_module._fused_sdpa
        measured = hf_saved.measure(checkpoint["modelType"], checkpoint["config"], class_name)
    finally:
        F.scaled_dot_product_attention = original
    assert measured == SAVED["models"][key][0]
    # ViT-B/16: 197 tokens of 768 through 12 layers; the fused kernels keep no 197 x 197 matrix.
    if class_name == "ViTForImageClassification":
        assert 12 * 197 * 768 * 4 * 15 < measured < 12 * 197 * 768 * 4 * 20
    assert torch.nn.functional.scaled_dot_product_attention is original
