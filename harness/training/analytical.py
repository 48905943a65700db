"""Our analytical model of a training step's peak GPU memory, exactly as
src/core/estimators/analytical.ts computes it (the constants and per-layer traits come from
analyticalModel.json, generated from the TypeScript). Integer byte counts, so Python and
TypeScript agree to the last bit."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

from .definitions import analytical_model


@dataclass(frozen=True)
class AnalyticalBytes:
    weight_bytes: int
    optimizer_bytes: int
    saved_bytes: int
    backward_bytes: int

    @property
    def state_bytes(self) -> int:
        return 2 * self.weight_bytes + self.optimizer_bytes

    @property
    def activation_bytes(self) -> int:
        return self.saved_bytes + self.backward_bytes


def allocated_bytes(size: int) -> int:
    """The caching allocator hands out 512-byte blocks, and 2 MiB ones for anything above 1 MiB."""
    if size <= 0:
        return 0
    mib = analytical_model()["bytesPerMiB"]
    granularity = 2 * mib if size > mib else 512
    return -(-size // granularity) * granularity


def _traits(layer_type: str) -> Optional[Mapping[str, Any]]:
    return analytical_model()["layerTraits"].get(layer_type)


def _product(dims) -> int:
    result = 1
    for d in dims:
        result *= int(d)
    return result


def analytical_bytes(table: Mapping[str, Any], batch_size: int, optimizer: str, precision: str) -> AnalyticalBytes:
    data = analytical_model()
    sizes: Dict[str, int] = data["precisionBytes"][precision]
    weight_bytes = sum(allocated_bytes(int(row["params"]) * sizes["weights"]) for row in table["rows"] if (row.get("params") or 0) > 0)
    optimizer_bytes = weight_bytes * data["optimizerCopies"][optimizer]
    rows = table["rows"]
    shape = table.get("inputShape")
    saved = allocated_bytes(batch_size * _product(shape) * sizes["activations"]) if shape else 0
    largest = 0
    for index, row in enumerate(rows):
        if row.get("activations") is None:
            continue
        traits = _traits(row["type"])
        following = _traits(rows[index + 1]["type"]) if index + 1 < len(rows) else None
        is_last = index == len(rows) - 1
        kept = is_last or (traits is not None and traits["savesOutput"]) or (following is not None and following["savesInput"])
        elements = batch_size * int(row["activations"])
        if kept:
            saved += allocated_bytes(elements * sizes["activations"])
        saved += allocated_bytes(elements * (traits["extraBytesPerElement"] if traits else 0))
        largest = max(largest, elements)
    backward = 2 * allocated_bytes(largest * sizes["activations"])
    return AnalyticalBytes(weight_bytes, optimizer_bytes, saved, backward)


def analytical_mib(table: Mapping[str, Any], batch_size: int, optimizer: str, precision: str) -> float:
    parts = analytical_bytes(table, batch_size, optimizer, precision)
    data = analytical_model()
    return (parts.state_bytes + parts.activation_bytes) / data["bytesPerMiB"] + data["runtimeOverheadMiB"]
