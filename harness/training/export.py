"""Export of a trained family: the ONNX graph (`models/<family>.onnx`) and its model card
(`models/<family>.card.json`), which src/core/estimators/onnx reads at run time."""
from __future__ import annotations

import hashlib
import json
import platform
import warnings
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import torch

from .data import CV_FOLDS, STRATUM_MIB, TEST_SHARE
from .definitions import feature_definition, feature_names, feature_transforms
from .ensemble import QUANTILES, RANGE_QUANTILES, UTILIZATION_CLASSES, UTILIZATION_EDGES, FamilyModel
from .train import POINT_CANDIDATES, TARGETS, FamilyResult

OPSET = 13
PRIMARY_BIN = {"mlp": 1024, "cnn": 8192, "transformer": 8192}
SELF_TEST_ROWS = 6


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def output_names(model: FamilyModel) -> List[str]:
    names = ["memory_mib"] + [f"bins_{width}" for width, _ in model.bin_sets]
    if model.utilization:
        names += ["smact", "smocc"]
    return names


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def card_for(result: FamilyResult, sources: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Everything about the model except the ONNX file's hash (added on export)."""
    model = result.model
    train_ok = result.train.take(~result.train.oom)
    low, high = train_ok.features.min(axis=0), train_ok.features.max(axis=0)
    definition = feature_definition()
    sample = result.test.features[:SELF_TEST_ROWS] if len(result.test.runs) else train_ok.features[:SELF_TEST_ROWS]
    with torch.no_grad():
        outputs = model(torch.tensor(sample, dtype=torch.float32))
    names = output_names(model)
    return {
        "name": f"gpu-estimator-{result.family}",
        "family": result.family,
        "file": f"{result.family}.onnx",
        "description": (
            f"{result.family.upper()} memory ensemble ({len(model.memory)} members) predicting quantiles of log(measured / analytical), "
            f"memory-bin probabilities from those quantiles, and SMACT/SMOCC classes ({len(model.utilization)} members), in one graph "
            "with feature clipping, scaling and member averaging inside."
        ),
        "retrain": "npm run train:models",
        "featureDefinitionVersion": definition["version"],
        "input": {"name": "features", "shape": ["rows", len(feature_names())], "dtype": "float32", "note": "raw features in featureDefinition.json order"},
        "features": [
            {"name": name, "transform": transform, "min": float(low[i]), "max": float(high[i]), "constantInTraining": bool(model.preprocess.keep[i].item() == 0)}
            for i, (name, transform) in enumerate(zip(feature_names(), feature_transforms()))
        ],
        "outputs": {
            "memory": {
                "name": "memory_mib",
                "columns": ["low", "point", "high"],
                "anchor": "analytical_mib (our analytical model); the members predict quantiles of log(measured / analytical) and the graph multiplies",
                "trainedQuantiles": list(QUANTILES),
                "pointQuantile": model.calibration.point_quantile,
                "pointQuantileRule": "the smallest level whose out-of-fold share of under-estimates beyond 10% is at most 2% with a median absolute error of at most 5%; else the fewest such under-estimates within 5%; else the median",
                "range": {
                    "quantiles": list(RANGE_QUANTILES),
                    "calibration": "offsets in log space from 3-fold out-of-fold predictions on the training split, one per side, so that 10% of runs fall below and 10% above (split-conformal style)",
                    "offsets": [model.calibration.low_offset, model.calibration.high_offset],
                },
            },
            "bins": [
                {"name": f"bins_{width}", "widthMiB": width, "count": count, "edgesMiB": [i * width for i in range(count)], "lastBinOpenAbove": True, "primary": width == PRIMARY_BIN[result.family]}
                for width, count in model.bin_sets
            ],
            "utilization": {
                "classes": list(UTILIZATION_CLASSES),
                "edges": list(UTILIZATION_EDGES),
                "binning": "thirds of the 0..1 range of the run's DCGM average",
                "smact": "smact" if model.utilization else None,
                "smocc": "smocc" if model.utilization else None,
                "drama": None,
            },
        },
        "members": {
            "memory": [config.describe() for config in result.memory_configs],
            "utilization": [config.describe() for config in result.utilization_configs] if model.utilization else [],
            "architecture": "Linear(features, hidden) - act - Linear(hidden, hidden) - act - head; Adam with cosine decay, minibatches of 256, seeded",
        },
        "training": {
            "data": sources,
            "runs": {
                "train": len(result.train.runs),
                "trainSuccessful": int((~result.train.oom).sum()),
                "trainWithUtilization": int((~np.isnan(train_ok.smact)).sum()),
                "test": len(result.test.runs),
            },
            "split": (
                f"successful runs per family and memory stratum (floor(peak / {STRATUM_MIB[result.family]} MiB)), ordered by sha256('family/id'): "
                f"the first round({TEST_SHARE:.0%}) are the held-out test split; the rest are cross-validated in {CV_FOLDS} folds (position mod {CV_FOLDS}) "
                "and the shipped model is trained on all of them. OOM runs (lower bounds) are left out."
            ),
        },
        "libraries": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__, "onnxOpset": OPSET},
        "metrics": _rounded(
            {
                "crossValidation": result.cv,
                "test": result.test_metrics,
                "pointQuantileCandidates": result.point_table,
                "targets": TARGETS.get(result.family, {}),
            }
        ),
        "selfTest": {
            "features": sample.tolist(),
            "outputs": {name: tensor.numpy().astype(np.float64).tolist() for name, tensor in zip(names, outputs)},
        },
    }


def export_onnx(model: FamilyModel, path: Path) -> None:
    names = output_names(model)
    dummy = torch.zeros(2, len(feature_names()), dtype=torch.float32) + 1.0
    dummy[:, feature_names().index("analytical_mib")] = 2000.0
    axes = {"features": {0: "rows"}, **{name: {0: "rows"} for name in names}}
    model.eval()
    # torch 1.13 warns that it cannot infer the shape of constants; the graph has fixed widths anyway.
    warnings.filterwarnings("ignore", message="The shape inference of prim::Constant type is missing")
    torch.onnx.export(model, (dummy,), str(path), input_names=["features"], output_names=names, dynamic_axes=axes, opset_version=OPSET, do_constant_folding=True)


def write_family(model: FamilyModel, card: Dict[str, Any], out_dir: Path) -> Dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx_path = out_dir / card["file"]
    export_onnx(model, onnx_path)
    card = dict(card)
    card["sha256"] = sha256_file(onnx_path)
    card["bytes"] = onnx_path.stat().st_size
    card_path = out_dir / f"{card['family']}.card.json"
    card_path.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return {"onnx": onnx_path, "card": card_path}
