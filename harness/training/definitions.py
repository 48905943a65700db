"""The shared definitions the training pipeline reads from the TypeScript side, so both compute
the same features: the feature list (src/core/features/featureDefinition.json) and the analytical
model as data (src/core/features/analyticalModel.json, written by `npm run features:sync`)."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List

REPO_ROOT = Path(__file__).resolve().parents[2]
FEATURES_DIR = REPO_ROOT / "src" / "core" / "features"


@lru_cache(maxsize=None)
def feature_definition() -> Dict[str, Any]:
    return json.loads((FEATURES_DIR / "featureDefinition.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def analytical_model() -> Dict[str, Any]:
    return json.loads((FEATURES_DIR / "analyticalModel.json").read_text(encoding="utf-8"))


def feature_names() -> List[str]:
    return [feature["name"] for feature in feature_definition()["features"]]


def feature_transforms() -> List[str]:
    return [feature["transform"] for feature in feature_definition()["features"]]
