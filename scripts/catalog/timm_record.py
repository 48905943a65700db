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
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

import timm
from generate_catalog import fast_init
from harness.layer_table import LayerTableError, flatten_tensors, layer_modules, layer_table, per_sample_shape
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
        try:
            return func(*args, **kwargs)
        except RuntimeError as error:
            # A meta factory's tensor met the CPU's index arithmetic (timm's mixed-mode rotary
            # frequencies: arange magnitudes times rand angles): the CPU operands go to meta too.
            if "meta and cpu" not in str(error) and "cpu and meta" not in str(error):
                raise
            return func(*_to_meta(args), **_to_meta(kwargs))


def _to_meta(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to("meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_to_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_meta(v) for k, v in value.items()}
    return value


_REPEAT_INTERLEAVE = (torch.repeat_interleave, torch.Tensor.repeat_interleave)


def _meta_repeat_interleave(original: Any) -> Any:
    """torch 1.13's meta kernel of repeat_interleave refuses to run without output_size (the
    output's length would come from the repeats' values). With an int repeat (or a one-element
    tensor) the length is known: the meta tensor is repeated as unsqueeze/expand/flatten, which
    gives the same shape. Other calls, and tensors not on the meta device, go to torch's own."""

    def call(input: Any, repeats: Any = None, dim: Optional[int] = None, *, output_size: Optional[int] = None) -> Any:
        if isinstance(input, torch.Tensor) and input.is_meta and output_size is None and repeats is not None:
            count = repeats if isinstance(repeats, int) else int(repeats.item()) if isinstance(repeats, torch.Tensor) and repeats.numel() == 1 and not repeats.is_meta else None
            if count is not None:
                x = input.flatten() if dim is None else input
                d = 0 if dim is None else dim % x.dim()
                shape = list(x.shape)
                return x.unsqueeze(d + 1).expand(*shape[: d + 1], count, *shape[d + 1 :]).flatten(d, d + 1)
        args = [input] + ([] if repeats is None else [repeats]) + ([] if dim is None else [dim])
        return original(*args, **({} if output_size is None else {"output_size": output_size}))

    return call


_ONE_HOT = F.one_hot


def _meta_one_hot(input: torch.Tensor, num_classes: int = -1) -> torch.Tensor:
    """torch 1.13's meta one_hot refuses even with num_classes given (gemma4_vit's position
    embeddings); with it, the shape is the input's plus num_classes."""
    if isinstance(input, torch.Tensor) and input.is_meta and num_classes > 0:
        return torch.empty(*input.shape, num_classes, dtype=torch.long, device="meta")
    return _ONE_HOT(input, num_classes)


_ASSERT_ASYNC = torch._assert_async


def _meta_assert_async(input: torch.Tensor, *args: Any) -> None:
    """An assertion on a meta tensor's values (gemma4_vit's encoder checks its grid divides the
    pooling) has no values to check: meta has no kernel for it, the CPU checks it in the vectors."""
    if not (isinstance(input, torch.Tensor) and input.is_meta):
        _ASSERT_ASYNC(input, *args)


@contextmanager
def meta_kernels() -> Iterator[None]:
    """While recording: the ops torch 1.13's meta device refuses although the shape is known,
    repeat_interleave with a known count (gcvit's global query, rotary embeddings, grouped
    key/value heads; see _meta_repeat_interleave), one_hot with num_classes, and _assert_async
    (no values to assert)."""
    torch.repeat_interleave = _meta_repeat_interleave(_REPEAT_INTERLEAVE[0])
    torch.Tensor.repeat_interleave = _meta_repeat_interleave(_REPEAT_INTERLEAVE[1])
    F.one_hot = _meta_one_hot
    torch._assert_async = _meta_assert_async
    try:
        yield
    finally:
        torch.repeat_interleave, torch.Tensor.repeat_interleave = _REPEAT_INTERLEAVE
        F.one_hot = _ONE_HOT
        torch._assert_async = _ASSERT_ASYNC


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
            result = layer_table(model, lambda batch: torch.empty(batch, *sample, device="meta"), name, functional_calls="concatenations")
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


#: The fast tracer's batch: a prime no layer's own dimension is a multiple of (checked against the
#: harness at the first size), so the dimension that carries it shows with its factor in one pass.
FAST_BATCH = 97
CONCATS = ("cat", "concat", "stack")


class FastTracer:
    """harness/layer_table.py's rows at one more size in one forward pass (the harness runs two,
    registers its hooks anew and dispatches every op through a TorchFunctionMode): forward hooks
    on the layer modules and torch.cat/stack replaced for the pass. It gives only output shapes
    and activations; paths, types and parameters come from the harness's table at the first size,
    which the tracer must reproduce exactly before it is used."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.calls: List[List[Tuple[int, ...]]] = []
        self.depth = 0
        self.leaves = [m for _, m in layer_modules(model)]

    def _pre(self, _module: Any, _inputs: Any) -> None:
        self.depth += 1

    def _post(self, _module: Any, _inputs: Any, output: Any) -> None:
        self.depth -= 1
        self.calls.append([tuple(t.shape) for t in flatten_tensors(output)])

    def rows(self, reference: Dict[str, Any], sample: Sequence[int]) -> Optional[Tuple[List[Dict[str, Any]], List[int]]]:
        self.calls, self.depth = [], 0
        handles = [h for m in self.leaves for h in (m.register_forward_pre_hook(self._pre), m.register_forward_hook(self._post))]
        saved = {n: getattr(torch, n) for n in CONCATS}
        norms = {n: getattr(F, n) for n in NORMS}

        def concat(original: Any) -> Any:
            def call(*args: Any, **kwargs: Any) -> Any:
                out = original(*args, **kwargs)
                if self.depth == 0:
                    self.calls.append([tuple(out.shape)])
                return out
            return call

        try:
            for n in CONCATS:
                setattr(torch, n, concat(saved[n]))
            for n in NORMS:
                setattr(F, n, _same_shape)
            with warnings.catch_warnings(), torch.enable_grad():
                warnings.simplefilter("ignore")
                out = self.model(torch.empty(FAST_BATCH, *sample, device="meta"))
        finally:
            for n, f in saved.items():
                setattr(torch, n, f)
            for n, f in norms.items():
                setattr(F, n, f)
            for h in handles:
                h.remove()
        called = [r for r in reference["rows"] if r["type"] != "Parameter" and r["outputShape"] is not None]
        if len(called) != len(self.calls):
            return None
        params = self._params(reference)
        if params is None:
            return None
        rows, i = [], 0
        for r, p in zip(reference["rows"], params):
            if r["type"] == "Parameter" or r["outputShape"] is None:
                rows.append({**r, "params": p})
                continue
            shapes = [_per_sample(shape) for shape in self.calls[i]]
            i += 1
            if any(s is None for s in shapes) or not shapes:
                return None
            rows.append({**r, "params": p, "outputShape": shapes[0], "activations": sum(math.prod(s) for s in shapes)})
        while isinstance(out, (list, tuple, dict)):
            out = list(out.values())[0] if isinstance(out, dict) else out[0]
        output = _per_sample(tuple(out.shape))
        return (rows, output) if output is not None else None


    def _params(self, reference: Dict[str, Any]) -> Optional[List[int]]:
        """Each row's parameters in this model, by the harness's rule 3 (a parameter counts once,
        at its first row): a model rebuilt for another img_size has other position tables."""
        modules = dict(self.model.named_modules())
        parameters = dict(self.model.named_parameters())
        counted: set = set()
        out = []
        for r in reference["rows"]:
            if r["type"].startswith("torch."):
                out.append(0)
                continue
            owned = [parameters[r["path"]]] if r["type"] == "Parameter" and r["path"] in parameters else list(modules[r["path"]].parameters()) if r["path"] in modules else None
            if owned is None:
                return None
            fresh = [p for p in owned if id(p) not in counted]
            counted.update(id(p) for p in fresh)
            out.append(sum(p.numel() for p in fresh))
        return out


def _per_sample(shape: Tuple[int, ...]) -> Optional[List[int]]:
    """The harness's rule 6 for a pass with FAST_BATCH samples (None if no or several dimensions carry it)."""
    carrying = [d for d in shape if d % FAST_BATCH == 0 and d > 0]
    if len(carrying) > 1:
        return None
    out: List[int] = []
    for d in shape:
        if d % FAST_BATCH == 0 and d > 0:
            if d // FAST_BATCH != 1:
                out.append(d // FAST_BATCH)
        else:
            out.append(int(d))
    return out


class Sampler:
    """Tables of one option set at many sizes. A strict model (a ViT whose patch embedding takes
    only its img_size) is rebuilt with img_size = the size for each sample; the others run the
    harness at the first size and the fast tracer (checked against it there) at the rest, on the
    rebuilt model for a strict one."""

    def __init__(self, name: str, options: Dict[str, Any], channels: int, strict: bool):
        self.name, self.options, self.channels, self.strict = name, options, channels, strict
        self.model = None if strict else build(name, options)
        self.reference: Optional[Dict[str, Any]] = None
        self.tracer: Optional[FastTracer] = None

    def at(self, h: int, w: int) -> Tuple[Dict[str, Any], List[int]]:
        sample = [self.options.get("in_chans", self.channels), h, w]
        model = build(self.name, {**self.options, "img_size": (h, w)}) if self.strict else self.model
        if self.reference is None:
            result = table_and_output(model, sample, self.name)
            tracer = FastTracer(model)
            fast = tracer.rows(result[0], sample)
            self.reference = result[0]
            if fast is not None and fast[0] == result[0]["rows"] and fast[1] == result[1]:
                self.tracer = tracer
            return result
        if self.tracer is not None:
            if self.strict:
                self.tracer = FastTracer(model)
            fast = self.tracer.rows(self.reference, sample)
            if fast is not None:
                for row in fast[0]:
                    if row["outputShape"] is not None and any(d <= 0 for d in row["outputShape"]):
                        raise LayerTableError(f"{row['path']} gives an empty output")
                total = sum(r["params"] for r in fast[0])
                trainable = sum(r["params"] for r in fast[0] if r["trainable"])
                totals = {"params": total, "trainableParams": trainable, "activations": sum(r["activations"] for r in fast[0] if not r["type"].startswith("torch."))}
                return {**self.reference, "inputShape": sample, "rows": fast[0], "totals": totals}, fast[1]
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
