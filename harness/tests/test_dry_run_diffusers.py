"""harness/dry_run_diffusers.py: a Stable Diffusion training script's components built from the
catalog's configs (src/core/catalog/diffusers/pipelines.json), its hub dataset of images made up, and
its own step run on meta. Needs diffusers (the PyTorch 2 venv: scripts/venvs/torch2-venv.cjs)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from harness.tests.test_dry_run import ROOT, dry_run, live_peak

PIPELINES = json.loads((ROOT / "src" / "core" / "catalog" / "diffusers" / "pipelines.json").read_text())["pipelines"]
SCRIPT = (ROOT / "test" / "fixtures" / "scripts" / "sd_text_to_image_lora.py").read_text()
SD15 = next(p for p in PIPELINES if "runwayml/stable-diffusion-v1-5" in p["aliases"])


def hub_configs(repo: str, pipeline: Dict[str, Any]) -> Dict[str, Any]:
    """As src/core/dryRun/hubConfigs.ts gives them: each component under `repo/subfolder`."""
    return {f"{repo}/{subfolder}": component["config"] for subfolder, component in pipeline["components"].items()}


@pytest.mark.parametrize("pipeline", PIPELINES, ids=[p["name"] for p in PIPELINES])
def test_each_model_of_a_pipeline_has_the_parameters_the_catalog_records(pipeline: Dict[str, Any]) -> None:
    diffusers = pytest.importorskip("diffusers")
    transformers = pytest.importorskip("transformers")
    import torch
    for subfolder, component in pipeline["components"].items():
        if "params" not in component:
            continue
        config = dict(component["config"])
        with torch.device("meta"):
            if config.pop("model_type", None) == "clip_text_model":
                model = getattr(transformers, component["className"])(transformers.CLIPTextConfig(**config))
            else:
                model = getattr(diffusers, component["className"]).from_config(config)
        assert sum(p.numel() for p in model.parameters()) == component["params"], f"{pipeline['name']} {subfolder}"


def test_a_stable_diffusion_lora_script_runs_its_step_with_the_catalogs_components(tmp_path: Path) -> None:
    # The script loads UNet, VAE, CLIP text encoder, tokenizer and scheduler from the hub, reads a hub
    # dataset of captioned images through with_transform and its own collate function.
    pytest.importorskip("diffusers")
    pytest.importorskip("peft")
    spec = {"tensors": [{"shape": [3, 256, 256], "dtype": "float32"}], "argv": ["--resolution", "256", "--train_batch_size", "2"],
            "hubConfigs": hub_configs("runwayml/stable-diffusion-v1-5", SD15)}
    result = dry_run(tmp_path, SCRIPT, spec, steps=2)
    assert result["ok"], result.get("error")
    assert result["steps"] == 2
    components = SD15["components"]
    # The frozen UNet, VAE and text encoder in fp16 (not fp32: the script's .to(dtype=weight_dtype) holds),
    # and the activations of two 256 x 256 images on top (about 190 MB with diffusers 0.31).
    frozen = 2 * sum(components[name]["params"] for name in ("unet", "vae", "text_encoder"))
    assert frozen + 100 * 2**20 < live_peak(result["events"]) < 2 * frozen


def test_a_pipeline_the_catalog_does_not_know_stops_with_the_file_to_download(tmp_path: Path) -> None:
    pytest.importorskip("diffusers")
    pytest.importorskip("peft")
    result = dry_run(tmp_path, SCRIPT, {"tensors": [{"shape": [3, 256, 256], "dtype": "float32"}], "argv": ["--pretrained_model_name_or_path", "someone/private-diffusion"]}, steps=1)
    assert not result["ok"]
    assert "someone/private-diffusion (text_encoder)" in result["error"], result["error"]
    assert "huggingface-cli download someone/private-diffusion text_encoder/config.json" in result["error"], result["error"]
