#!/usr/bin/python3
"""Generates the torchvision detection part of the catalog (Faster R-CNN builders) from the real
library (Debian's python3-torch 1.13 and python3-torchvision 0.14):

    /usr/bin/python3 scripts/catalog/generate_detection.py            # (re)write the data
    /usr/bin/python3 scripts/catalog/generate_detection.py --check    # write nothing; exit 1 if stale

Why not generate_catalog.py's traced graph: a detection model's forward has data-dependent
control flow (a list of images, anchors per level, NMS, sampled proposals) that torch.fx cannot
trace and the TypeScript evaluator does not run. But its layer table hardly depends on the
script's images: GeneralizedRCNNTransform resizes every image to the builder's min_size/max_size
and pads it to a multiple of 32, and training samples a fixed number of proposals per image. So
the table is measured once, with harness/layer_table.py, in train mode with targets, at the
internal size of a 4:3 image (3x480x640 in), per image.

For each builder it records, for `num_classes` 10 and 1001 (every number that differs becomes
`{"a": a, "b": b}`, meaning a + b * num_classes, checked against the default 91 by parameter
count) and for the backbone trained or not (`weights_backbone`: a trained backbone makes the
builder freeze its batch norms and all but 3 backbone stages; an untrained one leaves all
trainable), the rows and the parameter count. The untrained backbone's table is measured; the
trained one's is derived from it by the built model (same calls, its batch norms frozen). Output: src/core/catalog/data/torchvisionDetection.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any, Dict, List

sys.dont_write_bytecode = True
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "src" / "core" / "catalog" / "data" / "torchvisionDetection.json"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
import torchvision  # noqa: E402
from torchvision.models import detection  # noqa: E402

from generate_catalog import no_downloads  # noqa: E402
from harness.layer_table import layer_table  # noqa: E402

BUILDERS = ["fasterrcnn_mobilenet_v3_large_fpn", "fasterrcnn_mobilenet_v3_large_320_fpn", "fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2"]
IMAGE = [3, 480, 640]
DEFAULT_CLASSES = 91
PROBES = (10, 1001)


def build(name: str, num_classes: int, trained_backbone: bool) -> torch.nn.Module:
    torch.manual_seed(0)
    builder = getattr(detection, name)
    with no_downloads(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs: Dict[str, Any] = {"weights": None, "num_classes": num_classes}
        if not trained_backbone:
            kwargs["weights_backbone"] = None
        return builder(**kwargs)


def make_input(batch: int):
    generator = torch.Generator().manual_seed(0)
    images = [torch.rand(*IMAGE, generator=generator) for _ in range(batch)]
    boxes = torch.tensor([[10.0, 20.0, 200.0, 300.0], [50.0, 60.0, 400.0, 420.0]])
    targets = [{"boxes": boxes, "labels": torch.tensor([1, 1])} for _ in range(batch)]
    return (images, targets)


def rows(model: torch.nn.Module, name: str) -> List[list]:
    table = layer_table(model, make_input, name, functional_calls=False)
    return [[r["path"], r["type"], r["outputShape"], r["activations"], r["params"], r["trainable"]] for r in table["rows"]]


def linear(small: Any, large: Any, where: str) -> Any:
    """small at num_classes 10, large at 1001: the value itself, or a + b * num_classes."""
    if isinstance(small, list):
        if not isinstance(large, list) or len(small) != len(large):
            raise SystemExit(f"{where}: the structure changes with num_classes")
        return [linear(s, l, f"{where}[{i}]") for i, (s, l) in enumerate(zip(small, large))]
    if small == large or not isinstance(small, int):
        if small != large:
            raise SystemExit(f"{where}: {small} -> {large} is not a number")
        return small
    b, remainder = divmod(large - small, PROBES[1] - PROBES[0])
    if remainder:
        raise SystemExit(f"{where}: {small} -> {large} is not linear in num_classes")
    return {"a": small - b * PROBES[0], "b": b}


def evaluate(value: Any, n: int) -> Any:
    if isinstance(value, list):
        return [evaluate(v, n) for v in value]
    if isinstance(value, dict):
        return value["a"] + value["b"] * n
    return value


def with_trained_backbone(rows_untrained: List[list], trained: torch.nn.Module, where: str) -> List[list]:
    """The rows of the same builder with a trained backbone, from the untrained one's: the calls and
    shapes are the same, but its batch norms are FrozenBatchNorm2d (no layer module, so no row) and
    the frozen stages' parameters do not train. Checked by the parameter count."""
    modules = dict(trained.named_modules())
    parameters = dict(trained.named_parameters())
    kept: List[list] = []
    for path, type_name, shape, activations, params, _ in rows_untrained:
        if type_name == "Parameter":
            kept.append([path, type_name, shape, activations, params, parameters[path].requires_grad])
            continue
        module = modules.get(path)
        if module is None or type(module).__name__ != type_name:
            continue
        own = list(module.parameters())
        kept.append([path, type_name, shape, activations, params, all(p.requires_grad for p in own)])
    total = sum(p.numel() for p in trained.parameters())
    if sum(row[4] for row in kept) != total:
        raise SystemExit(f"{where}: the trained backbone's rows hold {sum(row[4] for row in kept)} parameters, the model {total}")
    return kept


def generate(name: str) -> Dict[str, Any]:
    measured = {n: rows(build(name, n, False), name) for n in PROBES}
    variants: Dict[str, Any] = {}
    for trained in (True, False):
        probes = [with_trained_backbone(measured[n], build(name, n, True), name) if trained else measured[n] for n in PROBES]
        template = linear(probes[0], probes[1], name)
        default = sum(p.numel() for p in build(name, DEFAULT_CLASSES, trained).parameters())
        params = linear(*(sum(p.numel() for p in build(name, n, trained).parameters()) for n in PROBES), name)
        if evaluate(params, DEFAULT_CLASSES) != default or sum(row[4] for row in evaluate(template, DEFAULT_CLASSES)) != default:
            raise SystemExit(f"{name}: the formula does not give the {default} parameters of num_classes={DEFAULT_CLASSES}")
        variants["trainedBackbone" if trained else "untrainedBackbone"] = {"params": params, "rows": template}
        print(f"{name} ({'trained' if trained else 'untrained'} backbone): {default} parameters at num_classes {DEFAULT_CLASSES}, {len(template)} rows", file=sys.stderr)
    model = build(name, DEFAULT_CLASSES, False)
    transform = model.transform
    return {"className": type(model).__name__, "minSize": list(transform.min_size), "maxSize": transform.max_size, "variants": variants}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    options = parser.parse_args()
    data = {
        "about": f"Generated by scripts/catalog/generate_detection.py from torch {torch.__version__} and torchvision {torchvision.__version__}: per detection builder, the layer table (docs/layer-table.md rows [path, type, outputShape, activations, params, trainable], per image) measured in train mode at the internal size of a {IMAGE[0]}x{IMAGE[1]}x{IMAGE[2]} image, for a trained or untrained backbone; a number {{\"a\", \"b\"}} is a + b * num_classes.",
        "torchvision": torchvision.__version__,
        "input": IMAGE,
        "defaultNumClasses": DEFAULT_CLASSES,
        "models": {name: generate(name) for name in BUILDERS},
    }
    text = json.dumps(data, separators=(",", ":")) + "\n"
    if options.check:
        stale = not OUT.exists() or OUT.read_text() != text
        print(f"{OUT.relative_to(ROOT)}: {'stale' if stale else 'up to date'}", file=sys.stderr)
        return 1 if stale else 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
