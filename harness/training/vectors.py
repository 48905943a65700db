"""Writes test/vectors/features/*.json: layer table and set-up in, feature vector out.

    /usr/bin/python3 -m harness.training vectors [--check]

Both test suites read them (harness/training/tests/test_features.py and
test/unit/core/features/features.unit.test.ts), so the TypeScript and Python feature code must
agree exactly. Inputs: layer tables PyTorch measured for corpus scripts (copied inline, so the
vectors stand alone), hand-made tables for the edge cases, and GPUMemNet reference rows (CSV
record in, layer table and features out). --check exits 1 when a stored vector differs.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from .data import default_reference_dir, reference_run
from .definitions import REPO_ROOT
from .features import feature_record, is_functional_row

VECTORS = REPO_ROOT / "test" / "vectors" / "features"
CORPUS = ["mlp_mnist_sequential.model", "resnet18_cifar.net", "nanogpt_shakespeare_char.model", "lstm_text_classifier.model", "vit_cifar10.model", "video_c3d_bf16.model", "resnet50_imagenet_amp.model", "recsys_embeddingbag.model", "densenet_memory_efficient.model", "checkpoint_sequential_resnet.model"]
#: (family, 0-based data row) of reference rows turned into vectors; cnn 690 is a dense record
#: (its table gains a torch.cat row before every Conv2d, growth and transition convs alike).
REFERENCE_ROWS = [("mlp", 0), ("mlp", 1), ("cnn", 0), ("cnn", 3), ("cnn", 690)]


def _row(path: str, layer_type: str, activations: Optional[int], params: Optional[int], shape: Optional[List[int]] = None, trainable: bool = True) -> Dict[str, Any]:
    return {"path": path, "type": layer_type, "outputShape": shape, "activations": activations, "params": params, "trainable": trainable}


def _table(name: str, input_shape: Optional[List[int]], rows: List[Dict[str, Any]], incomplete: bool = False) -> Dict[str, Any]:
    params = sum(row["params"] or 0 for row in rows)
    modules = [row for row in rows if not is_functional_row(row)]  # totals.activations leaves functional rows out
    return {
        "schemaVersion": 1,
        "model": name,
        "inputShape": input_shape,
        "rows": rows,
        "totals": {"params": params, "trainableParams": sum(row["params"] or 0 for row in rows if row["trainable"]), "activations": sum(row["activations"] or 0 for row in modules)},
        "incomplete": incomplete,
    }


def synthetic_vectors() -> Dict[str, Dict[str, Any]]:
    return {
        "synthetic.empty": {
            "description": "No rows and no input shape: only the set-up and the runtime overhead remain.",
            "layerTable": _table("empty", None, []),
            "setup": {"batchSize": 1, "optimizer": "sgd", "precision": "fp32"},
        },
        "synthetic.unknown-and-null": {
            "description": "A Parameter row, a type the catalog does not know, rows the analyzer could not size (null), and fp16 mixed precision with SGD momentum.",
            "layerTable": _table(
                "odd",
                [3, 64, 64],
                [
                    _row("pos", "Parameter", 0, 4096),
                    _row("stem", "Conv2d", 262144, 1792, [64, 64, 64]),
                    _row("act", "Hardswish", 262144, 0, [64, 64, 64]),
                    _row("mystery", "MyFancyLayer", None, None),
                    _row("pool", "MaxPool2d", 65536, 0, [64, 32, 32]),
                    _row("flat", "Flatten", 65536, 0, [65536]),
                    _row("head", "Linear", 10, 655370, [10]),
                    _row("out", "LogSoftmax", 10, 0, [10]),
                ],
                incomplete=True,
            ),
            "setup": {"batchSize": 48, "optimizer": "sgd-momentum", "precision": "fp16-mixed"},
        },
        "synthetic.activation-tie": {
            "description": "GELU and Tanh called twice each (GELU first) and Softmax three times: the hidden activation is GELU (ties go to the first called; the softmax family is not hidden).",
            "layerTable": _table(
                "tie",
                [100],
                [
                    _row("0", "Linear", 50, 5050, [50]),
                    _row("1", "GELU", 50, 0, [50]),
                    _row("2", "Softmax", 50, 0, [50]),
                    _row("3", "Linear", 50, 2550, [50]),
                    _row("4", "Tanh", 50, 0, [50]),
                    _row("5", "Softmax", 50, 0, [50]),
                    _row("6", "Linear", 50, 2550, [50]),
                    _row("7", "Tanh", 50, 0, [50]),
                    _row("8", "GELU", 50, 0, [50]),
                    _row("9", "Softmax", 50, 0, [50]),
                ],
            ),
            "setup": {"batchSize": 4096, "optimizer": "adamw", "precision": "bf16"},
        },
        "synthetic.functional-cat": {
            "description": "A DenseNet-style block with functional rows: a torch.cat feeding a Conv2d (kept for backward: the conv saves its input) and one feeding an AvgPool2d (not kept), the second the largest activation. Every feature but the analytical three and the two functional ones equals that of the same table without the torch.cat rows.",
            "layerTable": _table(
                "dense-block",
                [3, 32, 32],
                [
                    _row("stem", "Conv2d", 32768, 896, [32, 32, 32]),
                    _row("act", "ReLU", 32768, 0, [32, 32, 32]),
                    _row("", "torch.cat", 32768, 0, [32, 32, 32]),
                    _row("grow", "Conv2d", 32768, 9248, [32, 32, 32]),
                    _row("norm", "BatchNorm2d", 32768, 64, [32, 32, 32]),
                    _row("", "torch.cat", 65536, 0, [64, 32, 32]),
                    _row("pool", "AvgPool2d", 16384, 0, [64, 16, 16]),
                    _row("flat", "Flatten", 16384, 0, [16384]),
                    _row("head", "Linear", 10, 163850, [10]),
                ],
            ),
            "setup": {"batchSize": 64, "optimizer": "adam", "precision": "fp32"},
        },
    }


def corpus_vectors() -> Dict[str, Dict[str, Any]]:
    manifest = json.loads((REPO_ROOT / "test" / "fixtures" / "corpus" / "manifest.json").read_text(encoding="utf-8"))
    setups: Dict[str, Dict[str, Any]] = {}
    for entry in manifest:
        stem = entry["file"][:-3]
        for model in entry["models"]:
            setup = {**entry["setup"], **(model.get("setup") or {})}
            setups[f"{stem}.{model['name']}"] = {"batchSize": setup["batchSize"], "optimizer": setup["optimizer"], "precision": setup["precision"]}
    vectors = {}
    for key in CORPUS:
        table = json.loads((REPO_ROOT / "test" / "vectors" / "layer-tables" / f"{key}.json").read_text(encoding="utf-8"))
        table.pop("generatedBy", None)
        vectors[f"corpus.{key}"] = {"description": f"The layer table PyTorch measured for test/fixtures/corpus/{key.split('.')[0]}.py, with the manifest's set-up.", "layerTable": table, "setup": setups[key]}
    return vectors


def reference_vectors(directory: Path) -> Dict[str, Dict[str, Any]]:
    vectors = {}
    csv.field_size_limit(sys.maxsize)
    for family, index in REFERENCE_ROWS:
        with (directory / f"{family}.csv").open(newline="", encoding="utf-8") as handle:
            record = next(r for i, r in enumerate(csv.DictReader(handle)) if i == index)
        run = reference_run(family, record)
        assert run is not None
        dense = " A dense record: a torch.cat row goes before every Conv2d (the generator's DenseBlock concatenates before each conv)." if "arch:dense" in record["Filename"] else ""
        vectors[f"gpumemnet.{family}.{index}"] = {
            "description": f"Row {index} of GPUMemNet's {family}.csv: the record becomes a layer table (scripts/evaluation/referenceData.ts, harness/training/data.py), then features.{dense}",
            "gpumemnet": {"family": family, "record": record},
            "layerTable": run.table,
            "setup": run.setup,
        }
    return vectors


def build(reference_dir: Optional[Path]) -> Dict[str, Dict[str, Any]]:
    vectors = {**synthetic_vectors(), **corpus_vectors()}
    if reference_dir is not None:
        vectors.update(reference_vectors(reference_dir))
    for vector in vectors.values():
        vector["features"] = feature_record(vector["layerTable"], vector["setup"])
    return vectors


def text(vector: Dict[str, Any]) -> str:
    return json.dumps(vector, indent=2) + "\n"


def main_vectors(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m harness.training vectors")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a stored vector is stale")
    parser.add_argument("--reference-data", type=Path, default=None)
    args = parser.parse_args(argv)
    directory = args.reference_data or default_reference_dir()
    vectors = build(directory if (directory / "cnn.csv").exists() else None)
    stale = []
    VECTORS.mkdir(parents=True, exist_ok=True)
    for name, vector in sorted(vectors.items()):
        path = VECTORS / f"{name}.json"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text(vector):
                stale.append(path.name)
        else:
            path.write_text(text(vector), encoding="utf-8")
    if args.check and stale:
        print(f"stale feature vectors: {', '.join(stale)} (run /usr/bin/python3 -m harness.training vectors)", file=sys.stderr)
        return 1
    print(f"{'checked' if args.check else 'wrote'} {len(vectors)} vectors in {VECTORS}")
    return 0
