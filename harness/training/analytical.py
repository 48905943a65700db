"""Our analytical model of a training step's peak GPU memory, exactly as
src/core/estimators/analytical.ts computes it (the constants and per-layer traits come from
analyticalModel.json, generated from the TypeScript). Integer byte counts, so Python and
TypeScript agree to the last bit."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple

from .definitions import analytical_model


@dataclass(frozen=True)
class AnalyticalBytes:
    weight_bytes: int
    gradient_bytes: int
    optimizer_bytes: int
    saved_bytes: int
    backward_bytes: int

    @property
    def state_bytes(self) -> int:
        return self.weight_bytes + self.gradient_bytes + self.optimizer_bytes

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
    def weights(rows) -> int:
        return sum(allocated_bytes(int(row["params"]) * sizes["weights"]) for row in rows if (row.get("params") or 0) > 0)

    weight_bytes = weights(table["rows"])
    gradient_bytes = weights(row for row in table["rows"] if _trains_parameters(row))
    optimizer_bytes = gradient_bytes * data["optimizerCopies"][optimizer]
    rows = table["rows"]
    recorded = recorded_calls(table, rows)
    shape = table.get("inputShape")
    saved = allocated_bytes(batch_size * _product(shape) * sizes["activations"]) if shape and (not recorded or recorded[0]) else 0
    largest = 0
    # Checkpointed segments keep their input; one segment's saved tensors are held at a time, in backward.
    segments = checkpoint_segments(rows)
    segment_bytes: Dict[Tuple[int, int], int] = {}
    for index, row in enumerate(rows):
        if row.get("activations") is None:
            continue
        elements = batch_size * int(row["activations"])
        largest = max(largest, elements)
        if not recorded[index]:
            continue
        traits = _traits(row["type"])
        following = _traits(rows[index + 1]["type"]) if index + 1 < len(rows) else None
        is_last = index == len(rows) - 1
        kept = is_last or (traits is not None and traits["savesOutput"]) or (following is not None and following["savesInput"])
        output = allocated_bytes(elements * sizes["activations"])
        # A Transformer stack keeps each of its layers' extra bytes (rule 13 of docs/layer-table.md).
        extra = (traits["extraBytesPerElement"] if traits else 0) * int(row.get("stackedLayers") or 1)
        keeps = (output if kept else 0) + allocated_bytes(elements * extra)
        segment = segments[index]
        following_segment = segments[index + 1] if index + 1 < len(rows) else None
        segment_input = following_segment is not None and following_segment != segment
        if segment is None:
            saved += keeps + (output if segment_input and not kept else 0)
        else:
            segment_bytes[segment] = segment_bytes.get(segment, 0) + keeps
            if index == segment[1] and (kept or segment_input):
                saved += output
    saved += max(segment_bytes.values(), default=0)
    backward = 2 * allocated_bytes(largest * sizes["activations"])
    return AnalyticalBytes(weight_bytes, gradient_bytes, optimizer_bytes, saved, backward)


def _trains_parameters(row: Mapping[str, Any]) -> bool:
    return bool(row["trainable"]) and not row.get("noGrad", False) and (row.get("params") is None or row["params"] > 0)


def first_recorded_call(table: Mapping[str, Any], calls) -> int:
    """src/core/layerTable/frozenLayers.ts: where autograd's graph starts among `calls` when parameters are frozen."""
    rows = table["rows"]
    if not any(row.get("noGrad", False) or (not row["trainable"] and (row.get("params") or 0) > 0) for row in rows):
        return 0
    if any(row["type"] == "Parameter" and _trains_parameters(row) for row in rows):
        return 0
    return next((index for index, row in enumerate(calls) if _trains_parameters(row)), len(calls))


def recorded_calls(table: Mapping[str, Any], calls) -> list:
    """Per call, whether autograd records it: from the first recorded call on, unless it ran with autograd off."""
    start = first_recorded_call(table, calls)
    return [index >= start and not row.get("noGrad", False) for index, row in enumerate(calls)]


def checkpoint_segments(calls) -> list:
    """src/core/layerTable/checkpointSegments.ts: per call, the (start, end) of the checkpointed segment it lies in, or None."""
    segments: list = [None] * len(calls)
    start = 0
    while start < len(calls):
        number = calls[start].get("checkpoint")
        end = start
        while number is not None and end + 1 < len(calls) and calls[end + 1].get("checkpoint") == number:
            end += 1
        if number is not None:
            for index in range(start, end + 1):
                segments[index] = (start, end)
        start = end + 1
    return segments


def analytical_mib(table: Mapping[str, Any], batch_size: int, optimizer: str, precision: str) -> float:
    parts = analytical_bytes(table, batch_size, optimizer, precision)
    data = analytical_model()
    return (parts.state_bytes + parts.activation_bytes) / data["bytesPerMiB"] + data["runtimeOverheadMiB"]
