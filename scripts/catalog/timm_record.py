"""One timm model's catalog record, measured from timm itself (see generate_timm.py).

The model is built with its parameters on the meta device (shapes only: building and running
forward cost no arithmetic), and harness/layer_table.py records its layer table at the default
input size and at about thirty others; timm_laws.fit turns each row's numbers into size laws.
Options become linear coefficients (num_classes, in_chans change only the head's and the stem's
parameters) or variants (another row list, stored as its differences from the base rows).
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

import timm
from generate_catalog import fast_init
from harness.layer_table import LayerTableError, layer_table, per_sample_shape
from timm_laws import fit

#: Offsets from the default side: two far ones (a deep stage's stride only shows over a wide span
#: of sizes) and residues that pin down each law's rounding.
SIDE_OFFSETS = (-128, -9, 3, 13, 21, 160)
MIXED_OFFSETS = ((32, 64), (-9, 13))
#: Variants are recorded at one more size: their rows mostly repeat base rows, whose laws they reuse.
VARIANT_SIZE = (32, 64)

FACTORIES = (torch.empty, torch.zeros, torch.ones, torch.randn, torch.rand, torch.full)
ERRORS = (RuntimeError, ValueError, LayerTableError, IndexError, AssertionError, TypeError, KeyError, ZeroDivisionError, NotImplementedError, AttributeError)


class _MetaFactories(TorchFunctionMode):
    """torch 1.13 has no `with torch.device('meta')`: tensor factories called without a device
    (the parameters modules create) make meta tensors, so a 1B-parameter model builds in
    milliseconds. Index arithmetic (arange, linspace) stays on the CPU, where `.item()` works."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        if func in FACTORIES and kwargs.get("device") is None:
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


def build(name: str, options: Dict[str, Any]) -> torch.nn.Module:
    torch.manual_seed(0)
    with fast_init(), _MetaFactories(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = timm.create_model(name, **options)
    model.to("meta")
    model.train()
    return model


def _same_shape(input: torch.Tensor, *_args: Any, **_kwargs: Any) -> torch.Tensor:
    return torch.empty_like(input)


#: Normalisations keep their input's shape; on the meta device torch 1.13 runs them through Python
#: decompositions that cost more than the rest of forward, so the tables use this shortcut.
NORMS = ("batch_norm", "layer_norm", "group_norm")


def table(model: torch.nn.Module, sample: Sequence[int], name: str) -> Dict[str, Any]:
    saved = {n: getattr(F, n) for n in NORMS}
    try:
        for n in NORMS:
            setattr(F, n, _same_shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = layer_table(model, lambda batch: torch.empty(batch, *sample, device="meta"), name)
    finally:
        for n, f in saved.items():
            setattr(F, n, f)
    for row in result["rows"]:
        if row["outputShape"] is not None and any(d <= 0 for d in row["outputShape"]):
            raise LayerTableError(f"{row['path']} gives an empty output")
    return result


def table_and_output(model: torch.nn.Module, sample: Sequence[int], name: str) -> Tuple[Dict[str, Any], List[int]]:
    """The table, and the per-sample shape of the first tensor forward returns (the first
    feature map for features_only), caught on the harness's own two passes."""
    shapes: List[Tuple[int, ...]] = []

    def catch(_module: Any, _inputs: Any, out: Any) -> None:
        while isinstance(out, (list, tuple, dict)):
            out = list(out.values())[0] if isinstance(out, dict) else out[0]
        shapes.append(tuple(out.shape))

    handle = model.register_forward_hook(catch)
    try:
        result = table(model, sample, name)
    finally:
        handle.remove()
    return result, per_sample_shape(shapes[0], shapes[1], name)


class Sampler:
    """Tables of one option set at many sizes. A strict model (a ViT whose patch embedding takes
    only its img_size) is rebuilt with img_size = the size for each sample."""

    def __init__(self, name: str, options: Dict[str, Any], channels: int, strict: bool):
        self.name, self.options, self.channels, self.strict = name, options, channels, strict
        self.model = None if strict else build(name, options)

    def at(self, h: int, w: int) -> Tuple[Dict[str, Any], List[int]]:
        model = build(self.name, {**self.options, "img_size": (h, w)}) if self.strict else self.model
        sample = [self.options.get("in_chans", self.channels), h, w]
        return table_and_output(model, sample, self.name)


def sizes(h0: int, w0: int, side: Sequence[int], mixed: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
    out = [(h0, w0)] + [(h0 + d, w0) for d in side] + [(h0, w0 + d) for d in side] + [(h0 + dh, w0 + dw) for dh, dw in mixed]
    return [(h, w) for h, w in out if h >= 16 and w >= 16]


def key(rows: Sequence[Dict[str, Any]]) -> List[Tuple[str, str]]:
    return [(r["path"], r["type"]) for r in rows]


def sweep(sampler: Sampler, points: List[Tuple[int, int]]) -> Tuple[List[Tuple[int, int]], List[Dict[str, Any]], List[List[int]], List[List[int]]]:
    """(sizes that worked, their tables, output shapes, refused sizes); the first size must work."""
    done, tables, outputs, refused = [], [], [], []
    for h, w in points:
        try:
            t, out = sampler.at(h, w)
        except ERRORS:
            if not done:
                raise
            refused.append([h, w])
            continue
        if tables and key(t["rows"]) != key(tables[0]["rows"]):
            # Another structure at this size (a branch taken on the input size): not one law.
            refused.append([h, w])
            continue
        done.append((h, w))
        tables.append(t)
        outputs.append(out)
    return done, tables, outputs, refused


def fit_rows(points: List[Tuple[int, int]], tables: List[Dict[str, Any]]) -> Tuple[List[list], int]:
    """Rows with laws, and how many numbers no law explains (those keep the default size's value
    as a list [value, None] the TS side reports as not derived)."""
    rows, unfitted = [], 0
    for i, row in enumerate(tables[0]["rows"]):
        def law(values: List[int]) -> Any:
            nonlocal unfitted
            found = fit(points, values)
            if found is None:
                unfitted += 1
                return [values[0], None]
            return found

        params = law([t["rows"][i]["params"] for t in tables])
        shape = None
        if row["outputShape"] is not None:
            shapes = [t["rows"][i]["outputShape"] for t in tables]
            if len({len(s) for s in shapes}) != 1:
                unfitted += 1
                shape = [[d, None] for d in row["outputShape"]]
            else:
                shape = [law([s[d] for s in shapes]) for d in range(len(row["outputShape"]))]
        entry = [row["path"], row["type"], params, shape, row["trainable"]]
        extra = [t["rows"][i]["activations"] - (math.prod(t["rows"][i]["outputShape"]) if t["rows"][i]["outputShape"] is not None else 0) for t in tables]
        if any(extra):
            entry.append(law(extra))
        rows.append(entry)
    return rows, unfitted


def fit_output(points: List[Tuple[int, int]], outputs: List[List[int]]) -> Optional[List[Any]]:
    if len({len(o) for o in outputs}) != 1:
        return None
    laws = [fit(points, [o[d] for o in outputs]) for d in range(len(outputs[0]))]
    return None if any(l is None for l in laws) else laws
