"""The architecture family of a layer table, as src/core/estimators/family.ts decides it."""
from __future__ import annotations

import re
from typing import Any, Mapping

from .definitions import analytical_model

_TRANSFORMER = re.compile(r"^(MultiheadAttention|Transformer.*)$")


def model_family(table: Mapping[str, Any]) -> str:
    rows = table["rows"]
    if any(_TRANSFORMER.match(row["type"]) for row in rows):
        return "transformer"
    traits = analytical_model()["layerTraits"]
    if any((traits.get(row["type"]) or {}).get("category") == "conv" for row in rows):
        return "cnn"
    return "mlp"
