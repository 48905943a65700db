"""The layer table of a PyTorch model, measured by running it.

This is the reference the static analyzer (src/core/layerTable) is tested against: the same
schema (schema/layer-table.schema.json), the same row rules (docs/layer-table.md), but every
number comes from PyTorch itself. The model runs forward twice on CPU, with batch sizes 2 and 3,
in train mode with autograd on (dropout and batch norm behave as in training); forward hooks on
the layer modules record what each call returns, and a TorchFunctionMode records the
concatenations user code makes between them (the one kind of functional call that is a row).
"""
from __future__ import annotations

import inspect
import math
import sys
from functools import partial
from types import FrameType
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import torch
from torch import nn
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from .schema_check import CONCATENATION_ROWS, is_functional_row

SCHEMA_VERSION = 1

#: The two batch sizes the model runs with; a dimension that is 2k in the first run and 3k in the
#: second is a batch dimension of factor k.
BATCH_SIZES = (2, 3)

#: torch.nn classes that only hold other modules (or parameters): never rows, always expanded.
CONTAINERS: Tuple[type, ...] = (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ParameterList, nn.ParameterDict)

Shape = List[int]
InputFactory = Callable[[int], Any]


class LayerTableError(RuntimeError):
    """The model does something the table cannot describe (e.g. a batch-dependent shape that is
    not a multiple of the batch size, or different layer calls for different batch sizes)."""


def is_layer_module(module: nn.Module) -> bool:
    """A class defined in torch.nn, other than a container: one row per call, never expanded."""
    return type(module).__module__.startswith("torch.nn.") and not isinstance(module, CONTAINERS)


def layer_modules(model: nn.Module) -> List[Tuple[str, nn.Module]]:
    """The layer modules of `model` with their first `named_modules()` name, in that order.

    A torch.nn module inside another layer module (the Linear inside a MultiheadAttention, the
    layers of an nn.TransformerEncoder) belongs to the outer row and is not listed."""
    leaves: List[Tuple[str, nn.Module]] = []
    leaf_names: set = set()
    for name, module in model.named_modules():
        # Inside a leaf: the leaf's name is "" (the model itself is a layer) or a dotted prefix.
        parts = name.split(".")
        if leaf_names and ("" in leaf_names or any(".".join(parts[:i]) in leaf_names for i in range(1, len(parts)))):
            continue
        if is_layer_module(module):
            leaves.append((name, module))
            leaf_names.add(name)
    return leaves


def flatten_tensors(value: Any) -> List[torch.Tensor]:
    """Every tensor in a module's output, depth first: tuples, lists, dict values (and
    namedtuples) are flattened; None and non-tensors are skipped."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [tensor for item in value for tensor in flatten_tensors(item)]
    return []


def per_sample_shape(small: Sequence[int], large: Sequence[int], where: str = "") -> Shape:
    """The per-sample shape from the shapes of the same tensor at batch sizes 2 and 3.

    A dimension that is 2k in the first run and 3k in the second carries the batch with factor k:
    it is dropped when k == 1 and replaced by k otherwise (`x.view(-1, C)` on (B, 35, C) gives
    [35, C]). A tensor with no such dimension keeps its whole shape."""
    small_batch, large_batch = BATCH_SIZES
    if len(small) != len(large):
        raise LayerTableError(f"{where}: rank changes with the batch size: {list(small)} vs {list(large)}")
    shape: Shape = []
    batch_dims = 0
    for a, b in zip(small, large):
        if a == b:
            shape.append(int(a))
        elif a % small_batch == 0 and b * small_batch == a * large_batch:
            batch_dims += 1
            factor = a // small_batch
            if factor != 1:
                shape.append(int(factor))
        else:
            raise LayerTableError(f"{where}: dimension {a} -> {b} is not a multiple of the batch size")
    if batch_dims > 1:
        raise LayerTableError(f"{where}: more than one dimension carries the batch: {list(small)} vs {list(large)}")
    return shape


def _normalize_inputs(value: Any) -> Tuple[Any, ...]:
    return value if isinstance(value, tuple) else (value,)


#: Functional calls that are rows, by the row type they get: a concatenation is a new tensor as
#: large as its inputs together, and the convolution or norm it feeds keeps it for backward; a
#: functional norm or attention (nanoGPT's LayerNorm calling F.layer_norm) does a layer's work.
FUNCTIONAL_ROWS: Dict[Any, str] = {
    torch.cat: "torch.cat", torch.concat: "torch.cat", torch.stack: "torch.stack",
    F.layer_norm: "torch.layer_norm", torch.layer_norm: "torch.layer_norm",
    F.group_norm: "torch.group_norm", torch.group_norm: "torch.group_norm",
    F.batch_norm: "torch.batch_norm", torch.batch_norm: "torch.batch_norm",
}
if hasattr(torch, "concatenate"):  # torch >= 2.1
    FUNCTIONAL_ROWS[torch.concatenate] = "torch.cat"
for _function, _row in (("rms_norm", "torch.rms_norm"), ("scaled_dot_product_attention", "torch.scaled_dot_product_attention")):
    if hasattr(F, _function):  # torch >= 2.4 and 2.0
        FUNCTIONAL_ROWS[getattr(F, _function)] = _row
#: Attention written out (minGPT, vit-pytorch): `q @ k.transpose(-2, -1)`, `F.softmax(att, dim=-1)`, `att @ v`.
FUNCTIONAL_ROWS.update({
    torch.matmul: "torch.matmul", torch.Tensor.matmul: "torch.matmul", torch.Tensor.__matmul__: "torch.matmul",
    torch.bmm: "torch.matmul", torch.Tensor.bmm: "torch.matmul",
    F.softmax: "torch.softmax", torch.softmax: "torch.softmax", torch.Tensor.softmax: "torch.softmax",
})
#: Rows only of the batch's activations: a product of weights (a LoRA's `B @ A`) is none.
BATCH_ONLY_ROWS = {"torch.matmul", "torch.softmax"}


#: One traced call: the layer module, or the functional row type with the path of the user module
#: that made it, and the shapes of the tensors returned.
Call = Tuple[Any, str, List[Tuple[int, ...]]]


class _FunctionalCalls(TorchFunctionMode):
    """Records the FUNCTIONAL_ROWS calls made by user code (not inside a layer module)."""

    def __init__(self, calls: List[Call], state: Dict[str, Any], kinds: Optional[frozenset] = None):
        super().__init__()
        self.calls = calls
        self.state = state
        self.kinds = kinds  # the row types recorded; None: every FUNCTIONAL_ROWS type

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        kind = FUNCTIONAL_ROWS.get(func)
        if self.kinds is not None and kind not in self.kinds:
            kind = None
        if kind is not None and self.state["inside_layer"] == 0 and isinstance(result, torch.Tensor):
            path = self.state["user_stack"][-1] if self.state["user_stack"] else ""
            _record_grad_mode(self.state, len(self.calls))
            self.calls.append((kind, path, [tuple(result.shape)]))
        return result


def _checkpoint_frame() -> Optional[FrameType]:
    """The frame of the outermost torch.utils.checkpoint.checkpoint call running now, or None
    (checkpoint_sequential calls checkpoint for each segment but its last)."""
    frame: Optional[FrameType] = sys._getframe(1)
    found = None
    while frame is not None:
        if frame.f_code.co_name == "checkpoint" and frame.f_globals.get("__name__") == "torch.utils.checkpoint":
            found = frame
        frame = frame.f_back
    return found


def _record_grad_mode(state: Dict[str, Any], index: int) -> None:
    """Rules 11 and 12 for the call about to be recorded at `index`: inside a checkpoint it gets
    the segment's number (a new checkpoint call, a new number; the reentrant checkpoint runs its
    function under no_grad, which is not rule 11), else noGrad when autograd is off."""
    frame = _checkpoint_frame()
    if frame is None:
        if not torch.is_grad_enabled():
            state["no_grad"].add(index)
        return
    if frame is not state["segment_frame"]:
        # The frame is held until the next segment's, so a new call's frame is never taken for it.
        state["segment_frame"] = frame
        state["segment_count"] += 1
    state["segments"][index] = state["segment_count"] - 1


# Hooks must return None: a forward hook's return value would replace the module's output.
def _enter_user_module(stack: List[str], path: str, _module: nn.Module, _inputs: Any) -> None:
    stack.append(path)


def _leave_user_module(stack: List[str], _module: nn.Module, _inputs: Any, _output: Any) -> None:
    stack.pop()


def _trace(model: nn.Module, make_input: InputFactory, batch_size: int, leaves: Iterable[Tuple[str, nn.Module]], functional_calls: Union[bool, str]):
    """Runs forward once; returns (calls, input shapes)."""
    calls: List[Call] = []
    # Per index in `calls`: the eager attention (rule 9) inside that layer call.
    attention: Dict[int, Dict[str, Any]] = {}
    handles = []
    # Indices in `calls` of the calls made with autograd off (rule 11).
    # Per index in `calls`: the checkpointed segment the call ran in (rule 12).
    state: Dict[str, Any] = {"inside_layer": 0, "user_stack": [], "attention": None, "no_grad": set(), "segments": {}, "segment_frame": None, "segment_count": 0}

    def enter_layer(_module: nn.Module, _inputs: Any) -> None:
        if state["inside_layer"] == 0:
            state["attention"] = None
        state["inside_layer"] += 1

    def leave_layer(module: nn.Module, _inputs: Any, output: Any) -> None:
        state["inside_layer"] -= 1
        if state["inside_layer"] == 0 and state["attention"] is not None:
            attention[len(calls)] = state["attention"]
        _record_grad_mode(state, len(calls))
        calls.append((module, "", [tuple(t.shape) for t in flatten_tensors(output)]))

    def enter_attention(module: nn.MultiheadAttention, arguments: Dict[str, Any]) -> None:
        matrices = _attention_matrices(module, arguments)
        if matrices is None or state["inside_layer"] == 0:
            return
        known = state["attention"] or {"elements": 0, "dropout": False}
        state["attention"] = {"elements": known["elements"] + matrices, "dropout": known["dropout"] or (module.training and module.dropout > 0)}

    for _, module in leaves:
        handles.append(module.register_forward_pre_hook(enter_layer))
        handles.append(module.register_forward_hook(leave_layer))
    for module in model.modules():
        if isinstance(module, nn.MultiheadAttention):
            handles.append(_CallWatch(module, enter_attention))
    if functional_calls:
        # The user modules (and containers) whose forward is running: a concatenation's row takes
        # the path of the innermost one.
        in_leaves = {id(inner) for _, leaf in leaves for inner in leaf.modules()}
        for path, module in model.named_modules():
            if id(module) in in_leaves:
                continue
            handles.append(module.register_forward_pre_hook(partial(_enter_user_module, state["user_stack"], path)))
            handles.append(module.register_forward_hook(partial(_leave_user_module, state["user_stack"])))
    try:
        torch.manual_seed(0)
        inputs = _normalize_inputs(make_input(batch_size))
        with torch.enable_grad():
            if functional_calls:
                with _FunctionalCalls(calls, state, CONCATENATION_ROWS if functional_calls == "concatenations" else None):
                    model(*inputs)
            else:
                model(*inputs)
    finally:
        for handle in handles:
            handle.remove()
    state["segment_frame"] = None
    input_shapes = [tuple(t.shape) for t in inputs if isinstance(t, torch.Tensor)]
    return calls, input_shapes, attention, state["no_grad"], state["segments"]


class _CallWatch:
    """Calls `watch(module, arguments by name)` before each call of the module's forward (a
    forward pre-hook sees no keyword arguments in torch 1.13); remove() puts forward back."""

    def __init__(self, module: nn.Module, watch: Callable[[nn.Module, Dict[str, Any]], None]):
        self.module = module
        self.had_own = "forward" in module.__dict__
        original = module.forward
        signature = inspect.signature(original)

        def forward(*args: Any, **kwargs: Any) -> Any:
            watch(module, dict(signature.bind(*args, **kwargs).arguments))
            return original(*args, **kwargs)

        self.original = original
        module.forward = forward  # type: ignore[assignment]

    def remove(self) -> None:
        if self.had_own:
            self.module.forward = self.original  # type: ignore[assignment]
        else:
            del self.module.forward


def _attention_matrices(module: nn.MultiheadAttention, arguments: Dict[str, Any]) -> Optional[int]:
    """Elements per sample of the score matrices one call keeps for backward on PyTorch >= 2,
    heads x L x S (S with bias_k's and the zero attention's extra key), or None when it keeps none.
    Training skips the inference fast path and runs F.multi_head_attention_forward, which in
    PyTorch 2 computes softmax(q k^T) (and its dropout) eagerly only when need_weights is true
    (the default) and otherwise calls scaled_dot_product_attention, whose fused kernels keep no
    matrix; the nn.Transformer* layers pass need_weights=False. Torch 1.13, which this harness
    runs on, computes the matrices in both cases: this is PyTorch 2's rule, not a measurement."""
    query, key = arguments.get("query"), arguments.get("key")
    if not arguments.get("need_weights", True) or not isinstance(query, torch.Tensor) or not isinstance(key, torch.Tensor):
        return None
    position = 1 if module.batch_first and query.dim() == 3 else 0
    extra = (1 if module.bias_k is not None else 0) + (1 if module.add_zero_attn else 0)
    return module.num_heads * query.shape[position] * (key.shape[position] + extra)


def _call_key(call: Call) -> Tuple[Any, str]:
    target, path, _ = call
    return (target, path) if isinstance(target, str) else (id(target), "")


def layer_table(model: nn.Module, make_input: InputFactory, name: str, functional_calls: Union[bool, str] = True) -> Dict[str, Any]:
    """The layer table of `model` as a JSON-ready dict (docs/layer-table.md has the rules).

    `make_input(batch_size)` returns the positional arguments of `model.forward` (a tuple, or a
    single tensor). `functional_calls=False` leaves out the functional rows (the module-only
    tables the catalog's builders reproduce); `"concatenations"` keeps only the concatenations'
    (timm's catalog, recorded before the other functional rows were)."""
    model.train()
    leaves = layer_modules(model)
    first_name: Dict[int, str] = {}
    for path, module in model.named_modules():
        first_name.setdefault(id(module), path)

    small_calls, small_inputs, small_attention, small_no_grad, small_segments = _trace(model, make_input, BATCH_SIZES[0], leaves, functional_calls)
    large_calls, large_inputs, large_attention, _large_no_grad, _large_segments = _trace(model, make_input, BATCH_SIZES[1], leaves, functional_calls)
    if [_call_key(c) for c in small_calls] != [_call_key(c) for c in large_calls]:
        raise LayerTableError(f"{name}: forward calls different layers for batch sizes {BATCH_SIZES}")
    if small_attention != large_attention:
        raise LayerTableError(f"{name}: the attention matrices per sample change with the batch size")

    counted: set = set()

    def new_params(params: Iterable[nn.Parameter]) -> int:
        total = 0
        for p in params:
            if id(p) not in counted:
                counted.add(id(p))
                total += p.numel()
        return total

    rows: List[Dict[str, Any]] = []

    # Parameters registered on user modules (not inside any layer module) come first.
    in_leaves = {id(p) for _, module in leaves for p in module.parameters()}
    for path, param in model.named_parameters():
        if id(param) in in_leaves:
            continue
        rows.append(_row(path, "Parameter", None, 0, new_params([param]), param.requires_grad))

    # One row per call, in call order.
    called = set()
    for index, ((target, functional_path, small), (_, _, large)) in enumerate(zip(small_calls, large_calls)):
        functional = isinstance(target, str)
        path = functional_path if functional else first_name[id(target)]
        type_name = target if functional else type(target).__name__
        where = f"{name}: call {index} of {path or '<root>'} ({type_name})"
        if len(small) != len(large):
            raise LayerTableError(f"{where}: the number of output tensors changes with the batch size")
        shapes = [per_sample_shape(s, l, where) for s, l in zip(small, large)]
        output_shape = shapes[0] if shapes else None
        activations = sum(math.prod(shape) for shape in shapes)
        if functional:
            if type_name in BATCH_ONLY_ROWS and all(s == l for s, l in zip(small, large)):
                continue
            rows.append(_row(path, type_name, output_shape, activations, 0, True))
            _mark(rows[-1], index, small_no_grad, small_segments)
            continue
        params = list(target.parameters())
        called.add(id(target))
        rows.append(_row(path, type_name, output_shape, activations, new_params(params), all(p.requires_grad for p in params)))
        if index in small_attention:
            rows[-1]["eagerAttention"] = small_attention[index]
        stacked = _stacked_layers(target)
        if stacked is not None:
            rows[-1]["stackedLayers"] = stacked
        _mark(rows[-1], index, small_no_grad, small_segments)

    # Layer modules forward never calls come last.
    for path, module in leaves:
        if id(module) in called:
            continue
        params = list(module.parameters())
        rows.append(_row(path, type(module).__name__, None, 0, new_params(params), all(p.requires_grad for p in params)))

    total_params = sum(row["params"] for row in rows)
    expected = sum(p.numel() for p in model.parameters())
    if total_params != expected:  # a parameter outside every row: a bug in the rules above
        raise LayerTableError(f"{name}: rows hold {total_params} parameters, the model {expected}")

    input_shape: Optional[Shape] = None
    if small_inputs and large_inputs:
        input_shape = per_sample_shape(small_inputs[0], large_inputs[0], f"{name}: input")

    return {
        "schemaVersion": SCHEMA_VERSION,
        "model": name,
        "inputShape": input_shape,
        "rows": rows,
        "totals": {
            "params": total_params,
            "trainableParams": sum(row["params"] for row in rows if row["trainable"]),
            # The layer modules' outputs (the research's A): concatenations are left out.
            "activations": sum(row["activations"] for row in rows if not is_functional_row(row)),
        },
        "incomplete": False,
    }


def _mark(row: Dict[str, Any], index: int, no_grad: set, segments: Dict[int, int]) -> None:
    if index in no_grad:
        row["noGrad"] = True
    if index in segments:
        row["checkpoint"] = segments[index]


def _stacked_layers(module: nn.Module) -> Optional[int]:
    """Rule 13: the layers of a Transformer stack, each keeping its own tensors for backward; for
    nn.Transformer the larger of its encoder's and decoder's counts (None with a custom one)."""
    if type(module) in (nn.TransformerEncoder, nn.TransformerDecoder):
        return len(module.layers)
    if type(module) is nn.Transformer and type(module.encoder) is nn.TransformerEncoder and type(module.decoder) is nn.TransformerDecoder:
        return max(len(module.encoder.layers), len(module.decoder.layers))
    return None


def _row(path: str, type_name: str, output_shape: Optional[Shape], activations: int, params: int, trainable: bool) -> Dict[str, Any]:
    return {
        "path": path,
        "type": type_name,
        "outputShape": output_shape,
        "activations": int(activations),
        "params": int(params),
        "trainable": bool(trainable),
    }


def make_input_factory(inputs: Sequence[Dict[str, Any]], seed: int = 1234) -> InputFactory:
    """`make_input` for the corpus manifest's `inputs`: per-sample `shape`, `dtype` "float" (randn)
    or "long" (randint in [low, high)), and the batch dimension's place `batchDim` (default 0)."""

    def make(batch_size: int) -> Tuple[torch.Tensor, ...]:
        generator = torch.Generator().manual_seed(seed)
        tensors = []
        for spec in inputs:
            shape = list(spec["shape"])
            shape.insert(spec.get("batchDim", 0), batch_size)
            dtype = spec.get("dtype", "float")
            if dtype == "float":
                tensors.append(torch.randn(shape, generator=generator))
            elif dtype == "long":
                tensors.append(torch.randint(spec.get("low", 0), spec["high"], shape, generator=generator))
            else:
                raise ValueError(f"unknown input dtype {dtype!r}")
        return tuple(tensors)

    return make
