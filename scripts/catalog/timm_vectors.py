"""Test vectors of the timm catalog, measured on the real model on the CPU (not the meta device
the catalog is recorded on): harness/layer_table.py's tables at the default size, at a size the
laws were not measured at, and with options, as test/unit/core/catalog/timm/ checks them.

The sample: per timm module file of the shared A100 runs, its model that is cheapest to run on
the CPU, and a few popular models.
"""
from __future__ import annotations

import hashlib
import json
import sys
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch

import timm
from generate_catalog import vector_text
from harness.layer_table import layer_table

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "test" / "vectors" / "catalog" / "timm"
#: The second size: off the sizes the laws were measured at (timm_record's offsets), so it checks
#: the laws, not the samples; smaller than the default, so the CPU takes less time over it.
FURTHER = (-48, -80)
#: Popular models beyond the per-family sample (legacy_xception: the catalog built it by hand before).
EXTRA = ["resnet50", "legacy_xception"]


def cpu_model(name: str, options: Dict[str, Any]) -> torch.nn.Module:
    """The model as timm builds it, weights initialised: index buffers (Swin's relative position
    index) are computed with the in-place ops fast_init skips."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = timm.create_model(name, **options)
    model.train()
    return model


def rows_of(table: Dict[str, Any]) -> List[list]:
    return [[r["path"], r["type"], r["outputShape"], r["activations"], r["params"], r["trainable"]] for r in table["rows"]]


def case(name: str, options: Dict[str, Any], sample: List[int], full_rows: bool) -> Dict[str, Any]:
    out: Dict[str, Any] = {"options": options, "input": sample}
    try:
        model = cpu_model(name, options)
    except Exception as error:  # timm refuses the options: the catalog must answer with a miss
        out["refused"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
        return out
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = layer_table(model, lambda batch: torch.randn(batch, *sample), name, functional_calls="concatenations")
    except (RuntimeError, ValueError, AssertionError, IndexError) as error:
        out["error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
        return out
    rows = rows_of(table)
    out["totals"] = table["totals"]
    out["rowCount"] = len(rows)
    out["rowsSha256"] = hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()
    if full_rows:
        out["rows"] = rows
    return out


def sample_names(shared: List[str]) -> List[str]:
    """Per timm module file, its cheapest model on the CPU (fewest parameters times pixels), the
    cheapest families first, so an interrupted run (the list is kept in build/) covers the most."""
    from timm.models import _registry

    from timm_record import build

    saved = ROOT / "build" / "timm-vector-sample.json"
    if saved.exists():
        return json.loads(saved.read_text())
    best: Dict[str, Any] = {}
    for name in shared:
        fam = _registry._model_to_module[name]
        _, h, w = timm.models.get_pretrained_cfg(name).input_size
        cost = sum(p.numel() for p in build(name, {}).parameters()) * h * w
        if fam not in best or cost < best[fam][1]:
            best[fam] = (name, cost)
    chosen = sorted(best.values(), key=lambda item: item[1])
    names = [n for n, _ in chosen] + [n for n in EXTRA if n not in {m for m, _ in chosen}]
    saved.write_text(json.dumps(names))
    return names


def vectors(name: str) -> Dict[str, Any]:
    cfg = timm.models.get_pretrained_cfg(name)
    c, h, w = (int(x) for x in cfg.input_size)
    strict = bool(cfg.fixed_input_size)
    params = []
    for options in ({}, {"num_classes": 10}, {"in_chans": 1}):
        try:
            params.append({"options": options, "params": sum(p.numel() for p in cpu_model(name, options).parameters())})
        except Exception as error:  # an option timm refuses for this model has no count
            print(f"{name} {options}: {error}", file=sys.stderr)
    cases = [case(name, {}, [c, h, w], True)]
    if strict:
        size = h + FURTHER[0]
        cases.append(case(name, {"img_size": size}, [c, size, size], False))
    else:
        cases.append(case(name, {}, [c, h + FURTHER[0], w + FURTHER[1]], False))
    cases.append(case(name, {"num_classes": 10, "drop_path_rate": 0.1, "in_chans": 1}, [1, h, w], False))
    cases.append(case(name, {"features_only": True}, [c, h, w], False))
    return {
        "name": name,
        "library": "timm",
        "generatedBy": {"timm": timm.__version__, "torch": torch.__version__.split("+")[0], "script": "scripts/catalog/generate_timm.py --vectors", "device": "cpu"},
        "params": params,
        "smallestSquare": None,
        "cases": cases,
    }


def write_vectors(names: Optional[List[str]]) -> None:
    from generate_timm import shared_names

    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names or sample_names(shared_names()):
        path = OUT / f"{name}.json"
        if path.exists() and not names:
            continue
        path.write_text(vector_text(vectors(name)))
        print(f"vectors: {name}", flush=True)
