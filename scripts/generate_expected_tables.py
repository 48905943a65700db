#!/usr/bin/python3
"""Writes the expected layer tables of the training-script corpus, measured by PyTorch.

    /usr/bin/python3 scripts/generate_expected_tables.py           # (re)write test/vectors/layer-tables
    /usr/bin/python3 scripts/generate_expected_tables.py --check   # exit 1 if a vector is stale
    /usr/bin/python3 scripts/generate_expected_tables.py resnet18_cifar.py   # only these fixtures

For each entry of test/fixtures/corpus/manifest.json it imports the fixture (runpy, with a
run_name other than "__main__", so nothing trains or downloads and sys.argv holds just the
file name for argparse), evaluates each model's `build` expression in the fixture's namespace,
and runs harness.layer_table on CPU. Each table goes to
test/vectors/layer-tables/<fixture stem>.<model name>.json with sorted keys and 2-space indents.
The output depends only on the fixtures, the manifest and the torch version; re-running changes
nothing. docs/layer-table.md describes the rules and the manifest.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import runpy
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Dict, List

sys.dont_write_bytecode = True  # keep __pycache__ out of the fixture and harness folders

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "test" / "fixtures" / "corpus"
MANIFEST = CORPUS / "manifest.json"
VECTORS = ROOT / "test" / "vectors" / "layer-tables"
SCRIPT = "scripts/generate_expected_tables.py"

sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from harness.layer_table import layer_table, make_input_factory  # noqa: E402
from harness.schema_check import load_schema, validate  # noqa: E402

OPTIMIZERS = {"sgd", "sgd-momentum", "adam", "adamw", "rmsprop", "adagrad", "other"}
PRECISIONS = {"fp32", "fp16-mixed", "bf16-mixed", "fp16", "bf16"}
SETUP_KEYS = {"batchSize", "inputShape", "optimizer", "precision", "gradientCheckpointing", "compiled"}


def vector_path(fixture: str, model: str) -> Path:
    return VECTORS / f"{Path(fixture).stem}.{model}.json"


def serialize(table: Dict[str, Any]) -> str:
    return json.dumps(table, indent=2, sort_keys=True) + "\n"


def check_entry(entry: Dict[str, Any]) -> None:
    """Catches manifest typos before anything runs."""
    where = entry.get("file", "<entry without file>")
    assert (CORPUS / entry["file"]).is_file(), f"{where}: no such fixture"
    setup = entry["setup"]
    assert not set(setup) - SETUP_KEYS, f"{where}: unknown setup keys {set(setup) - SETUP_KEYS}"
    assert setup["optimizer"] in OPTIMIZERS, f"{where}: optimizer {setup['optimizer']!r}"
    assert setup["precision"] in PRECISIONS, f"{where}: precision {setup['precision']!r}"
    assert entry["models"], f"{where}: no models"
    for model in entry["models"]:
        effective = {**setup, **model.get("setup", {})}
        assert effective["inputShape"] == model["inputs"][0]["shape"], (
            f"{where} {model['name']}: setup.inputShape {effective['inputShape']} is not the first input's shape {model['inputs'][0]['shape']}"
        )


def load_fixture(file: str) -> Dict[str, Any]:
    saved_argv = sys.argv
    sys.argv = [file]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return runpy.run_path(str(CORPUS / file), run_name="corpus_fixture")
    finally:
        sys.argv = saved_argv


def seed_everything(seed: int = 0) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def generate(entry: Dict[str, Any]) -> List[tuple]:
    """The tables of one manifest entry: [(path, table)]."""
    seed_everything()
    namespace = load_fixture(entry["file"])
    results = []
    for spec in entry["models"]:
        seed_everything()
        started = time.perf_counter()
        model = eval(spec["build"], namespace)  # noqa: S307 - the manifest is ours
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = layer_table(model, make_input_factory(spec["inputs"]), spec["name"])
        table["generatedBy"] = {"torch": torch.__version__, "script": SCRIPT}
        results.append((vector_path(entry["file"], spec["name"]), table, time.perf_counter() - started))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any vector differs or is missing")
    parser.add_argument("files", nargs="*", help="only these fixtures (file names from the manifest)")
    options = parser.parse_args()

    torch.set_num_threads(max(1, min(8, os.cpu_count() or 1)))  # shapes do not depend on it
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    entries = [e for e in manifest if not options.files or e["file"] in options.files]
    unknown = set(options.files) - {e["file"] for e in manifest}
    if unknown:
        parser.error(f"not in the manifest: {', '.join(sorted(unknown))}")
    for entry in manifest:
        check_entry(entry)

    schema = load_schema()
    VECTORS.mkdir(parents=True, exist_ok=True)
    stale: List[str] = []
    expected_paths = {vector_path(e["file"], m["name"]) for e in manifest for m in e["models"]}
    if len(expected_paths) != sum(len(e["models"]) for e in manifest):
        raise SystemExit("two manifest models map to the same vector file")

    for entry in entries:
        for path, table, seconds in generate(entry):
            validate(table, schema)
            text = serialize(table)
            old = path.read_text(encoding="utf-8") if path.exists() else None
            status = "unchanged" if old == text else ("stale" if options.check else ("updated" if old else "new"))
            if old != text:
                stale.append(str(path.relative_to(ROOT)))
                if not options.check:
                    path.write_text(text, encoding="utf-8")
            totals = table["totals"]
            print(
                f"{entry['file']:<32} {table['model']:<12} params {totals['params']:>12,}  "
                f"trainable {totals['trainableParams']:>12,}  activations {totals['activations']:>12,}  "
                f"rows {len(table['rows']):>4}  {seconds:5.2f}s  {status}"
            )

    if not options.files:
        for path in sorted(VECTORS.glob("*.json")):
            if path not in expected_paths:
                stale.append(str(path.relative_to(ROOT)))
                print(f"{path.relative_to(ROOT)}: no longer in the manifest" + ("" if options.check else ", removed"))
                if not options.check:
                    path.unlink()

    models = sum(len(e["models"]) for e in entries)
    print(f"{len(entries)} fixtures, {models} models, torch {torch.__version__}; {len(stale)} vector(s) {'stale' if options.check else 'written or removed'}")
    return 1 if options.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
