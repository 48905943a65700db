#!/usr/bin/python3
"""Writes shared vectors for the models `python3 -m harness collect` samples: one per variant.

    /usr/bin/python3 scripts/generate_harness_model_vectors.py           # (re)write test/vectors/harness-models
    /usr/bin/python3 scripts/generate_harness_model_vectors.py --check   # exit 1 if a vector is stale

Each variant (mlp, mlp-residual, cnn2d, cnn2d-residual, cnn1d, cnn1d-residual, encoder, gpt) is
sampled from small fixed ranges with the GPU precisions allowed, and written as
test/vectors/harness-models/<variant>.py (the configuration's training script, exactly as collect
writes it) and <variant>.json (the configuration and the layer table harness.layer_table measures
by running that script's model). test/unit/core/harnessModels.unit.test.ts checks that the
TypeScript analyzer reads the same table and set-up from the script; harness/tests/test_vectors.py
checks that the stored files are what the sampler and harness produce today.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

sys.dont_write_bytecode = True
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.layer_table import layer_table, make_input_factory  # noqa: E402
from harness.sampling import build_model, render_source, sample_configs  # noqa: E402

OUT = ROOT / "test" / "vectors" / "harness-models"

RANGES: Dict[str, Any] = {
    "seed": 10,
    "training": {"batchSize": [2, 64], "optimizer": ["sgd", "sgd-momentum", "adam", "adamw", "rmsprop"], "precision": ["fp32", "fp16-mixed", "bf16-mixed"]},
    "families": {
        "mlp": {"inputShape": [[64], [1, 8, 8], [3, 8, 8]], "width": [8, 64], "depth": [1, 3], "classes": [2, 10]},
        "cnn": {"inputShape2d": [[3, 16, 16], [1, 12, 12]], "inputShape1d": [[2, 64], [4, 48]], "channels": [4, 8], "stages": [1, 3], "blocksPerStage": [1, 2], "classes": [2, 10]},
        "transformer": {"layers": [1, 2], "heads": [2, 4], "dModel": [16, 32], "seqLen": [8, 16], "vocab": [50, 100], "classes": [2, 10], "dropout": [0.0, 0.1]},
    },
}

VARIANTS: Dict[str, Tuple[str, Dict[str, Any]]] = {
    "mlp": ("mlp", {"residual": False, "normalization": "batchnorm", "dropout": 0.2}),
    "mlp-residual": ("mlp", {"residual": True, "normalization": "layernorm", "dropout": 0.1}),
    "cnn2d": ("cnn", {"conv": "conv2d", "residual": False, "normalization": "batchnorm"}),
    "cnn2d-residual": ("cnn", {"conv": "conv2d", "residual": True, "normalization": "batchnorm"}),
    "cnn1d": ("cnn", {"conv": "conv1d", "residual": False, "normalization": "none"}),
    "cnn1d-residual": ("cnn", {"conv": "conv1d", "residual": True, "normalization": "none"}),
    "encoder": ("transformer", {"style": "encoder"}),
    "gpt": ("transformer", {"style": "gpt", "tiedHead": True}),
}


def generate() -> Iterator[Tuple[str, str, str]]:
    """(variant, script text, json text) for every variant."""
    for variant, (family, overrides) in VARIANTS.items():
        config = copy.deepcopy(RANGES)
        config["families"] = {family: {**RANGES["families"][family], "count": 1, **overrides}}
        (item,) = sample_configs(config, "cuda")
        assert item["variant"] == variant, (variant, item["variant"])
        source = render_source(item)
        table = layer_table(build_model(item, source), make_input_factory(item["inputs"]), "model")
        text = json.dumps({"config": item, "layerTable": table}, indent=2, sort_keys=True) + "\n"
        yield variant, source, text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = []
    OUT.mkdir(parents=True, exist_ok=True)
    for variant, source, text in generate():
        for path, content in ((OUT / f"{variant}.py", source), (OUT / f"{variant}.json", text)):
            if args.check:
                if not path.exists() or path.read_text(encoding="utf-8") != content:
                    stale.append(path.name)
            else:
                path.write_text(content, encoding="utf-8")
    if stale:
        print("stale: " + ", ".join(stale) + " (rerun scripts/generate_harness_model_vectors.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
