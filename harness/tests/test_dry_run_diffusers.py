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
    """As src/core/dryRun/hubConfigs.ts gives them: each component under `repo/subfolder`, and the
    repository's model_index.json (the pipeline's class, each component's library and class)."""
    components = pipeline["components"].items()
    library = lambda c: "transformers" if "model_type" in c["config"] or c["className"].endswith("Tokenizer") else "diffusers"  # noqa: E731
    index = {"_class_name": pipeline["pipelineClass"], **{subfolder: [library(c), c["className"]] for subfolder, c in components}}
    return {**{f"{repo}/{subfolder}": c["config"] for subfolder, c in components}, f"{repo}/model_index.json": index}


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


def test_a_whole_pipeline_loaded_in_fp16_gives_its_unet_to_train(tmp_path: Path) -> None:
    # Scripts that load the pipeline and train its `.unet`: every component built from the catalog,
    # the safety checker left out; the generic DiffusionPipeline takes the class model_index names.
    pytest.importorskip("diffusers")
    pytest.importorskip("peft")
    result = dry_run(tmp_path, """
        import torch
        import torch.nn.functional as F
        from diffusers import DiffusionPipeline, StableDiffusionPipeline
        from peft import LoraConfig

        pipe = DiffusionPipeline.from_pretrained("runwayml/stable-diffusion-v1-5", torch_dtype=torch.float16).to("cuda")
        assert isinstance(pipe, StableDiffusionPipeline) and pipe.safety_checker is None, type(pipe)
        assert pipe.unet.dtype == torch.float16 and pipe.tokenizer.model_max_length == 77
        pipe.unet.requires_grad_(False)
        pipe.unet.add_adapter(LoraConfig(r=4, lora_alpha=4, target_modules=["to_q", "to_k", "to_v", "to_out.0"]))
        optimizer = torch.optim.AdamW([p for p in pipe.unet.parameters() if p.requires_grad], lr=1e-4)
        for step in range(10):
            latents = torch.randn(1, 4, 32, 32, device="cuda", dtype=torch.float16)
            ids = pipe.tokenizer(["a photo"], padding="max_length", max_length=77, return_tensors="pt").input_ids.to("cuda")
            t = torch.randint(0, 1000, (1,), device="cuda")
            F.mse_loss(pipe.unet(latents, t, pipe.text_encoder(ids)[0]).sample.float(), latents.float()).backward()
            optimizer.step()
    """, {"tensors": [{"shape": [4, 32, 32], "dtype": "float32"}], "argv": [], "hubConfigs": hub_configs("runwayml/stable-diffusion-v1-5", SD15)}, steps=1)
    assert result["ok"], result.get("error")
    components = SD15["components"]
    assert live_peak(result["events"]) > 2 * sum(components[name]["params"] for name in ("unet", "vae", "text_encoder"))


def test_a_pipeline_the_catalog_does_not_know_stops_with_the_file_to_download(tmp_path: Path) -> None:
    pytest.importorskip("diffusers")
    pytest.importorskip("peft")
    result = dry_run(tmp_path, SCRIPT, {"tensors": [{"shape": [3, 256, 256], "dtype": "float32"}], "argv": ["--pretrained_model_name_or_path", "someone/private-diffusion"]}, steps=1)
    assert not result["ok"]
    assert "someone/private-diffusion (text_encoder)" in result["error"], result["error"]
    assert "huggingface-cli download someone/private-diffusion text_encoder/config.json" in result["error"], result["error"]
