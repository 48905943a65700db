"""What autograd saves for backward in the forward pass of the catalog models whose attention
PyTorch 2 runs in fused kernels and torch 1.13 could not: the transformers catalog's image models
(ViT, Swin, CLIP's vision tower; per checkpoint and class) and torchvision's vit_* (nn.MultiheadAttention
with need_weights=False), measured by PyTorch itself (harness/saved_activations.py, on the meta
device): src/core/catalog/data/transformersSaved.json and torchvisionAttentionSaved.json, which the
real-model estimator's replay uses as it does timmSaved.json for timm models
(docs/real-model-estimator.md). Their rows miss what the libraries' own attention code and the
functional code between modules save (about a quarter of ViT-B's activations). Beside it, the peak
of a forward pass with autograd off: what a frozen backbone (a linear probe) holds at once, where
the residual stream, an activation's input and output and the library's own tensors live together.

Interpreter: the torch2 venv (scripts/venvs/requirements-torch2.txt: PyTorch 2.4.1, torchvision 0.19.1,
transformers 4.51.3), made by `node scripts/venvs/torch2-venv.cjs`. F.scaled_dot_product_attention is
replaced by the stand-in with the saved tensors of the GPU's fused kernels (q, k, v, the output, one
log-sum-exp per query): on the meta device PyTorch would pick its math path, which keeps the N x N
matrices. (Torch 1.13, the other catalog scripts' interpreter, runs MultiheadAttention's own eager
path, which also copies q, k and v: 140.4 MB per sample for vit_b_16 against PyTorch 2's 125.4.)

    build/venvs/torch2/bin/python scripts/catalog/attention_saved.py            # about two minutes (CPU initialisation)
    build/venvs/torch2/bin/python scripts/catalog/attention_saved.py --check    # exit 1 if a committed file differs
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "catalog"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchvision  # noqa: E402
import transformers  # noqa: E402

from generate_catalog import TORCHVISION, build, default_size  # noqa: E402
from harness import saved_activations as saved_module  # noqa: E402

CHECKPOINTS = ROOT / "src" / "core" / "catalog" / "hf" / "checkpoints.json"
DATA = ROOT / "src" / "core" / "catalog" / "data"
OUT = DATA / "transformersSaved.json"
TORCHVISION_OUT = DATA / "torchvisionAttentionSaved.json"
#: torchvision's models measured here (torchvision_saved.py leaves them out). Its swin_* run their
#: window attention eagerly on every version, so torch 1.13 could measure them; they are left out
#: there for another reason (torchvision_saved.py).
TORCHVISION_PREFIX = "vit_"

#: The image classes of each covered type that take pixels alone (CLIPModel also takes text, whose
#: length the script sets; it keeps to its rows). src/core/catalog/hf/models/*.ts build the same.
IMAGE_CLASSES = {
    "vit": ["ViTModel", "ViTForImageClassification"],
    "swin": ["SwinModel", "SwinForImageClassification"],
    "clip": ["CLIPVisionModel", "CLIPVisionModelWithProjection", "CLIPForImageClassification"],
    # No attention, but their rows miss what the library's own modules save (ConvNeXt's layer norms and
    # layer scales, functional code between modules), as ViT's do.
    "convnext": ["ConvNextModel", "ConvNextForImageClassification"],
    "resnet": ["ResNetModel", "ResNetForImageClassification"],
    "dinov2": ["Dinov2Model", "Dinov2ForImageClassification"],
}


def image_size(model_type: str, config: Dict[str, Any]) -> int:
    # ResNetConfig has no image size: its checkpoints were trained at 224 x 224. DINOv2's image_size (518)
    # sizes its position table; its image processor crops to 224, the size scripts feed it.
    if model_type == "dinov2":
        return 224
    return int((config["vision_config"] if model_type == "clip" else config).get("image_size", 224))


def measure(model_type: str, config: Dict[str, Any], class_name: str) -> List[int]:
    hf_config = transformers.AutoConfig.for_model(model_type, **config)
    if class_name in ("CLIPVisionModel", "CLIPVisionModelWithProjection"):
        hf_config = hf_config.vision_config
    # Built on the CPU (Swin reads its drop-path rates with .item()), then moved to shapes alone.
    model = getattr(transformers, class_name)(hf_config).to("meta")
    model.train()
    size = image_size(model_type, config)
    return saved_module.catalog_figures(model, lambda batch: torch.empty(batch, 3, size, size, device="meta"), size, size)


def measure_torchvision() -> Dict[str, Any]:
    models: Dict[str, Any] = {}
    for name in TORCHVISION:
        if name.startswith(TORCHVISION_PREFIX):
            h, w = default_size(name)
            models[name] = saved_module.catalog_figures(build(name, "torchvision", {}), lambda batch: torch.empty(batch, 3, h, w, device="meta"), h, w)
    return {
        "comment": (
            "Generated by scripts/catalog/attention_saved.py; do not edit. Per model: [bytes autograd saves per sample in forward "
            "(fp32, default options, PyTorch 2's fused attention, parameters excluded), height, width of the default input, "
            "the most bytes per sample the tensors of a forward pass with autograd off hold at once (its input and parameters excluded)]."
        ),
        "versions": {"torchvision": torchvision.__version__.split("+")[0], "torch": torch.__version__.split("+")[0]},
        "models": models,
    }


def measure_transformers() -> Dict[str, Any]:
    entries = json.loads(CHECKPOINTS.read_text())["checkpoints"]
    models: Dict[str, Any] = {}
    for entry in entries:
        for class_name in IMAGE_CLASSES.get(entry["modelType"], []):
            size = image_size(entry["modelType"], entry["config"])
            models[f"{entry['name']}:{class_name}"] = measure(entry["modelType"], entry["config"], class_name)
    return {
        "comment": (
            "Generated by scripts/catalog/attention_saved.py; do not edit. Per checkpoint:class, [bytes autograd saves per sample in forward "
            "(fp32, the checkpoint's config, fused attention, parameters excluded), height, width of the checkpoint's image size, "
            "the most bytes per sample the tensors of a forward pass with autograd off hold at once (its input and parameters excluded)]."
        ),
        "versions": {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0]},
        "models": models,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed file differs from a fresh measurement")
    args = parser.parse_args()
    F.scaled_dot_product_attention = saved_module._fused_sdpa  # type: ignore[assignment]
    differs = 0
    for out, measure in ((TORCHVISION_OUT, measure_torchvision), (OUT, measure_transformers)):
        text = json.dumps(measure(), indent=0, sort_keys=True) + "\n"
        if args.check:
            same = out.exists() and out.read_text() == text
            differs += 0 if same else 1
            print(f"{out.relative_to(ROOT)}: {'as committed' if same else 'differs from a fresh measurement'}")
            continue
        out.write_text(text)
        print(f"{out.relative_to(ROOT)}: {len(json.loads(text)['models'])} measured")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
