#!/usr/bin/python3
"""Generates the torchvision part of the architecture catalog from the real library (the timm
part comes from timm itself: scripts/catalog/generate_timm.py).

    /usr/bin/python3 scripts/catalog/generate_catalog.py             # (re)write the data and the vectors
    /usr/bin/python3 scripts/catalog/generate_catalog.py --check     # write nothing; exit 1 if anything is stale
    /usr/bin/python3 scripts/catalog/generate_catalog.py resnet18 vgg11      # only these models (no stale-file sweep)
    /usr/bin/python3 scripts/catalog/generate_catalog.py --dump resnet18     # print one model's decoded data

For each model it builds the torchvision model (torch 1.13, torchvision 0.14) in train mode and
records:

* the layer modules (docs/layer-table.md rule 1) in `named_modules()` order with the constructor
  arguments the TypeScript LayerSpecs read, and the parameters registered outside them;
* a torch.fx graph of forward in which the layer modules are leaves: placeholders, module calls,
  functions (`torch.cat`, `operator.add`, `F.adaptive_avg_pool2d`...), methods (`view`, `mean`...)
  and attribute reads, with arguments that refer to earlier nodes;
* how each constructor option changes that data, found by building the model again: `num_classes`
  and vit's `image_size` become symbolic values (`{"$": "num_classes"}`) where the data differs,
  options with a few values that restructure the model (`aux_logits`, `width_mult`) become
  variants, options that leave the layer table unchanged are accepted, and the rest are refused;
* what each `weights=` value (and the legacy `pretrained=True`) implies, from torchvision's own
  builders, with the weight download stubbed out.

The data goes to src/core/catalog/data/torchvision.ts: an index (names, options, weights,
default input) and one gzip+base64 blob per model, decoded lazily by src/core/catalog/traced.

It also writes test vectors to test/vectors/catalog/: for several inputs and options per model,
the layer table harness/layer_table.py measures (on the meta device: shapes only, no
arithmetic; harness/tests/test_catalog_generator.py checks that meta and CPU agree), the exact
parameter count, and the smallest square image the model takes. test/unit/core/catalog/ checks the
TypeScript evaluator against them. docs/catalog.md describes the format.
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import dis
import gzip
import hashlib
import inspect
import json
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

sys.dont_write_bytecode = True

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT / "src" / "core" / "catalog" / "data"
VECTORS_DIR = ROOT / "test" / "vectors" / "catalog"
SCRIPT = "scripts/catalog/generate_catalog.py"
FORMAT = 1

sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
import torch.fx  # noqa: E402
import torchvision  # noqa: E402
import torchvision.models as tvm  # noqa: E402
from torch import nn  # noqa: E402

from harness.layer_table import LayerTableError, is_layer_module, layer_modules, layer_table  # noqa: E402

# ---------------------------------------------------------------------------------------------
# What to generate
# ---------------------------------------------------------------------------------------------

ALT_INPUT = [3, 160, 192]


@dataclass
class ModelConfig:
    """Per-model choices the generator cannot guess. Everything else is found by building."""

    #: Options with a few values that restructure the model: one variant of the data per value.
    variants: Dict[str, List[Any]] = field(default_factory=dict)
    #: Options whose effect is a formula of their value (vit's image_size): the probe values.
    templates: Dict[str, List[int]] = field(default_factory=dict)
    #: A template option's values must be multiples of this (vit: the patch size); checked by building.
    template_multiples: Dict[str, int] = field(default_factory=dict)
    #: Options to probe besides the model class's constructor parameters, with their defaults.
    extra_options: Dict[str, Any] = field(default_factory=dict)
    #: A second input size for the vectors (default: 3x160x192).
    alt_input: Optional[List[int]] = None
    #: Extra vector cases: (options, input shape or None for the default).
    extra_cases: List[Tuple[Dict[str, Any], Optional[List[int]]]] = field(default_factory=list)


def _torchvision_models() -> Dict[str, ModelConfig]:
    plain = [
        "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
        "wide_resnet50_2", "wide_resnet101_2", "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d",
        "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
        "mobilenet_v3_small", "mobilenet_v3_large",
        *[f"efficientnet_b{i}" for i in range(8)], "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l",
        "densenet121", "densenet161", "densenet169", "densenet201",
        "alexnet", "squeezenet1_0", "squeezenet1_1",
        "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0",
        "convnext_tiny", "convnext_small", "convnext_base", "convnext_large",
        "swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s", "swin_v2_b",
        "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3",
        *[f"regnet_x_{s}" for s in ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf")],
        *[f"regnet_y_{s}" for s in ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf", "128gf")],
    ]
    models: Dict[str, ModelConfig] = {name: ModelConfig() for name in plain}
    for name in ("mobilenet_v3_small", "mobilenet_v3_large"):
        # Taken by _mobilenet_v3_conf, which torchvision 0.14 then also passes on to MobileNetV3.
        models[name] = ModelConfig(extra_options={"width_mult": 1.0, "reduced_tail": False, "dilated": False})
    models["mobilenet_v2"] = ModelConfig(
        variants={"width_mult": [1.0, 0.35, 0.5, 0.75, 1.3, 1.4]},
        extra_cases=[({"width_mult": 0.5}, None)],
    )
    models["inception_v3"] = ModelConfig(
        variants={"aux_logits": [True, False]},
        alt_input=[3, 320, 288],
        extra_cases=[({"aux_logits": False}, None), ({"aux_logits": False}, [3, 160, 192])],
    )
    models["googlenet"] = ModelConfig(variants={"aux_logits": [True, False]}, extra_cases=[({"aux_logits": False}, None)])
    for name, patch in (("vit_b_16", 16), ("vit_b_32", 32), ("vit_l_16", 16), ("vit_l_32", 32)):
        models[name] = ModelConfig(
            templates={"image_size": [224, 256, 384]},
            template_multiples={"image_size": patch},
            alt_input=None,
            extra_cases=[({"image_size": 384}, [3, 384, 384]), ({}, [3, 160, 192])],
        )
    return dict(sorted(models.items()))


TORCHVISION = _torchvision_models()

#: Options whose value only scales dropout or stochastic depth: never a layer-table change. Where
#: torchvision 0.14's builder refuses one (efficientnet passes its own dropout), it is accepted
#: with a note, since newer torchvision takes it.
REGULARIZATION = {"dropout", "attention_dropout", "stochastic_depth_prob", "dropout_aux", "drop_rate"}

# ---------------------------------------------------------------------------------------------
# Building models quickly
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def fast_init() -> Iterator[None]:
    """Skips weight initialisation while models are built: shapes do not depend on values, and
    initialising 600M parameters on two cores takes longer than everything else together."""
    saved: List[Tuple[Any, str, Any]] = []

    def skip(tensor: Any, *_args: Any, **_kwargs: Any) -> Any:
        return tensor

    for owner in (torch.nn.init,):
        for name in dir(owner):
            if name.endswith("_") and not name.startswith("_") and callable(getattr(owner, name)):
                saved.append((owner, name, getattr(owner, name)))
                setattr(owner, name, skip)
    for name in ("normal_", "uniform_", "zero_", "fill_", "copy_"):
        saved.append((torch.Tensor, name, getattr(torch.Tensor, name)))
        setattr(torch.Tensor, name, skip)
    try:
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


class _WeightsRequested(Exception):
    def __init__(self, weights: Any) -> None:
        super().__init__(str(weights))
        self.weights = weights


@contextlib.contextmanager
def no_downloads(capture: bool = False) -> Iterator[None]:
    """Stubs out the weight download: `get_state_dict` raises (capture) or returns an empty state
    that loading ignores (so the builder finishes and its post-load changes, like dropping aux
    heads, apply)."""
    from torchvision.models._api import WeightsEnum

    original_get = WeightsEnum.get_state_dict
    original_load = nn.Module.load_state_dict

    def get_state_dict(self: Any, progress: bool = True) -> Any:
        if capture:
            raise _WeightsRequested(self)
        return {}

    def load_state_dict(self: nn.Module, state_dict: Any, strict: bool = True) -> Any:
        if not state_dict:
            return None
        return original_load(self, state_dict, strict)

    WeightsEnum.get_state_dict = get_state_dict
    nn.Module.load_state_dict = load_state_dict
    try:
        yield
    finally:
        WeightsEnum.get_state_dict = original_get
        nn.Module.load_state_dict = original_load


def build(name: str, library: str, options: Dict[str, Any]) -> nn.Module:
    torch.manual_seed(0)
    with fast_init(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with no_downloads():
            model = tvm.get_model(name, **options)
    # Everything downstream needs shapes only: the meta device keeps them without any data.
    model.to("meta")
    model.train()
    return model


# ---------------------------------------------------------------------------------------------
# Tracing
# ---------------------------------------------------------------------------------------------


def _proxy_iter(self: torch.fx.Proxy) -> Any:
    """torch 1.13's Proxy.__iter__ finds the unpacking instruction (`n, c, h, w = x.shape`) by
    `f_lasti // 2`, which is wrong on Python 3.11 (inline caches); this looks it up by offset."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    caller = frame.f_back
    instruction = next((i for i in dis.get_instructions(caller.f_code) if i.offset == caller.f_lasti), None)
    if instruction is not None and instruction.opname == "UNPACK_SEQUENCE":
        return (self[i] for i in range(instruction.argval))
    return self.tracer.iter(self)


class LayerTracer(torch.fx.Tracer):
    """Layer modules (docs/layer-table.md rule 1) are leaves; everything else is traced through.
    Each node remembers the module whose forward made it (its scope), so a part of the model
    (`model.layer1`) can be run on its own."""

    def __init__(self) -> None:
        super().__init__()
        self.scopes: List[str] = []

    def is_leaf_module(self, module: nn.Module, qualified_name: str) -> bool:
        return is_layer_module(module)

    def call_module(self, m: nn.Module, forward: Any, args: Any, kwargs: Any) -> Any:
        if self.is_leaf_module(m, ""):
            return super().call_module(m, forward, args, kwargs)
        self.scopes.append(self.path_of_module(m))
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.scopes.pop()

    def create_proxy(self, kind: str, target: Any, args: Any, kwargs: Any, *rest: Any, **named: Any) -> torch.fx.Proxy:
        proxy = super().create_proxy(kind, target, args, kwargs, *rest, **named)
        proxy.node.meta["scope"] = self.scopes[-1] if self.scopes else ""
        if kind == "call_function" and target is torch._assert:
            proxy.node.meta["assert_source"] = _calling_line("torch._assert(")
        return proxy

    def trace(self, root: Any, concrete_args: Any = None) -> torch.fx.Graph:
        original = torch.fx.Proxy.__iter__
        torch.fx.Proxy.__iter__ = _proxy_iter  # type: ignore[assignment]
        try:
            return super().trace(root, concrete_args)
        finally:
            torch.fx.Proxy.__iter__ = original  # type: ignore[assignment]


def function_name(target: Any) -> str:
    """`operator.add`, `torch.cat`, `torch.nn.functional.relu`, `torchvision.ops.stochastic_depth.stochastic_depth`..."""
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or str(target)
    if module == "_operator":
        return f"operator.{name}"
    if module == "builtins":
        return name
    if module == "torch._C._nn":
        return f"torch.nn.functional.{name}"
    if module in ("torch.functional", "torch._C._VariableFunctions"):
        return f"torch.{name}"
    return f"{module}.{name}"


def encode_literal(value: Any, where: str) -> Any:
    """A constant argument as JSON: numbers, strings, bools, None, lists; tagged objects for the rest."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return {"float": str(value)}
        return value
    if isinstance(value, (list, tuple, torch.Size)):
        return [encode_literal(v, where) for v in value]
    if isinstance(value, slice):
        return {"slice": [encode_literal(value.start, where), encode_literal(value.stop, where), encode_literal(value.step, where)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).replace("torch.", "")}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.memory_format):
        return {"memory_format": str(value).replace("torch.", "")}
    raise TypeError(f"{where}: cannot encode the constant {value!r} ({type(value).__name__})")


def trace(model: nn.Module, modules: List[Tuple[str, nn.Module]], tree: List[str]) -> Tuple[List[list], List[int]]:
    """The forward graph as compact JSON nodes; call_module targets are indices into `modules`.
    Beside it, each node's scope: 0 for the model's own forward, else 1 + the index in `tree` of
    the module whose forward made the node."""
    tracer = LayerTracer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = tracer.trace(model)
    index_of = {id(module): i for i, (_, module) in enumerate(modules)}
    node_index: Dict[torch.fx.Node, int] = {}
    nodes: List[list] = []
    scopes: List[int] = []
    scope_index = {path: i + 1 for i, path in enumerate(tree)}

    def arg(value: Any, where: str) -> Any:
        if isinstance(value, torch.fx.Node):
            return {"r": node_index[value]}
        if isinstance(value, (list, tuple)):
            return [arg(v, where) for v in value]
        if isinstance(value, dict):
            return {"dict": {str(k): arg(v, where) for k, v in value.items()}}
        return encode_literal(value, where)

    for node in graph.nodes:
        where = f"{type(model).__name__} node {node.name}"
        if node.op == "placeholder":
            encoded: list = ["p", node.target]
        elif node.op == "call_module":
            module = model.get_submodule(node.target)
            if id(module) not in index_of:
                raise RuntimeError(f"{where}: calls {node.target}, which is not a layer module")
            tensors, kwargs = bind_module_call(module, node.args, node.kwargs)
            encoded = ["m", index_of[id(module)], arg(tensors, where), {k: arg(v, where) for k, v in kwargs.items()}]
        elif node.op == "call_function":
            args, kwargs = node.args, dict(node.kwargs)
            if node.target is torch._assert:
                # The message is an f-string formatted at trace time; the evaluator words its own
                # from the condition as the source writes it.
                args = args[:1]
                kwargs = {"check": assert_condition(node)} if assert_condition(node) else {}
            encoded = ["f", function_name(node.target), arg(list(args), where), {k: arg(v, where) for k, v in kwargs.items()}]
        elif node.op == "call_method":
            encoded = ["c", node.target, arg(list(node.args), where), {k: arg(v, where) for k, v in node.kwargs.items()}]
        elif node.op == "get_attr":
            value = attribute(model, node.target)
            if not isinstance(value, torch.Tensor):
                raise RuntimeError(f"{where}: get_attr {node.target} is a {type(value).__name__}, not a tensor")
            encoded = ["g", node.target, list(value.shape)]
        elif node.op == "output":
            continue
        else:
            raise RuntimeError(f"{where}: unexpected op {node.op}")
        node_index[node] = len(nodes)
        nodes.append(encoded)
        scope = node.meta.get("scope", "")
        if scope and scope not in scope_index:
            raise RuntimeError(f"{where}: made in {scope}, which named_modules() does not list")
        scopes.append(scope_index.get(scope, 0))
    return nodes, scopes


def _calling_line(marker: str) -> Optional[str]:
    """The source line of the innermost caller whose line contains `marker`."""
    import linecache

    frame = inspect.currentframe()
    while frame is not None:
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
        if marker in line and not frame.f_code.co_filename.endswith(("generate_catalog.py", "proxy.py", "_symbolic_trace.py")):
            return line
        frame = frame.f_back
    return None


def assert_condition(node: torch.fx.Node) -> Optional[str]:
    """`h == self.image_size` from the source line of a `torch._assert(h == self.image_size, ...)`."""
    line = node.meta.get("assert_source") or ""
    start = line.find("torch._assert(")
    if start < 0:
        return None
    inner = line[start + len("torch._assert("):]
    depth = 0
    for i, char in enumerate(inner):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            return inner[:i].strip()
    return None


def attribute(model: nn.Module, target: str) -> Any:
    value: Any = model
    for part in target.split("."):
        value = getattr(value, part)
    return value


def bind_module_call(module: nn.Module, args: Sequence[Any], kwargs: Dict[str, Any]) -> Tuple[List[Any], Dict[str, Any]]:
    """A module call as the LayerSpecs take it: tensor arguments in forward's positional order (a
    tensor passed by keyword goes at its position), every other argument by name."""
    signature = inspect.signature(module.forward)
    bound = signature.bind(*args, **kwargs)
    tensors: List[Any] = []
    others: Dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind == inspect.Parameter.VAR_POSITIONAL:
            tensors.extend(value)
        elif kind == inspect.Parameter.VAR_KEYWORD:
            others.update(value)
        elif isinstance(value, torch.fx.Node):
            tensors.append(value)
        else:
            others[name] = value
    return tensors, others


# ---------------------------------------------------------------------------------------------
# Module arguments
# ---------------------------------------------------------------------------------------------

SKIPPED_ARGUMENTS = {"self", "device", "dtype", "_weight", "_freeze"}


def module_args(module: nn.Module) -> Dict[str, Any]:
    """The constructor arguments of a layer module, read back from the module; those equal to the
    constructor's default are left out (the LayerSpecs fall back to the same defaults)."""
    signature = inspect.signature(type(module).__init__)
    result: Dict[str, Any] = {}
    for name, parameter in signature.parameters.items():
        if name in SKIPPED_ARGUMENTS or parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        value = read_argument(module, name)
        if value is _MISSING:
            if parameter.default is inspect.Parameter.empty:
                raise RuntimeError(f"{type(module).__name__}: cannot read the required argument {name}")
            continue
        if parameter.default is not inspect.Parameter.empty and _same(value, parameter.default):
            continue
        result[name] = compact(encode_literal(value, f"{type(module).__name__}.{name}"))
    return result


_MISSING = object()


def read_argument(module: nn.Module, name: str) -> Any:
    if isinstance(module, nn.MultiheadAttention):
        special = {
            "bias": module.in_proj_bias is not None,
            "add_bias_kv": module.bias_k is not None,
        }
        if name in special:
            return special[name]
    if name == "bias" and hasattr(module, "bias"):
        bias = getattr(module, "bias")
        if bias is None or isinstance(bias, torch.Tensor):
            return bias is not None
    if not hasattr(module, name):
        return _MISSING
    value = getattr(module, name)
    if isinstance(value, (nn.Module, torch.Tensor)) or callable(value):
        return _MISSING
    return value


def _same(value: Any, default: Any) -> bool:
    if isinstance(value, bool) or isinstance(default, bool):
        return value is default
    if isinstance(value, (list, tuple)) or isinstance(default, (list, tuple)):
        a = list(value) if isinstance(value, (list, tuple)) else None
        b = list(default) if isinstance(default, (list, tuple)) else None
        if a is None:
            a = [value] * len(b or [])
        if b is None:
            b = [default] * len(a)
        return a == b
    return value == default


def compact(value: Any) -> Any:
    """(3, 3) -> 3: LayerArgs spreads an int over the spatial dimensions."""
    if isinstance(value, list) and len(value) > 1 and all(isinstance(v, int) and not isinstance(v, bool) and v == value[0] for v in value):
        return value[0]
    return value


# ---------------------------------------------------------------------------------------------
# One model's data
# ---------------------------------------------------------------------------------------------


def extract(model: nn.Module) -> Dict[str, Any]:
    """modules: [path, type, args] per layer module; parameters: [name, shape] for parameters
    outside every layer module; graph: the forward's nodes; tree: the paths of every module but
    those inside a layer module, in named_modules() order, so a part's children are listed as
    named_children() lists them; scopes: each graph node's module (trace)."""
    leaves = layer_modules(model)
    in_leaves = {id(p) for _, module in leaves for p in module.parameters()}
    parameters = [[name, list(p.shape)] for name, p in model.named_parameters() if id(p) not in in_leaves]
    modules = [[path, type(module).__name__, module_args(module)] for path, module in leaves]
    leaf_paths = [path for path, _ in leaves]
    inside_leaf = lambda name: any(name.startswith(f"{leaf}.") for leaf in leaf_paths)
    tree = [name for name, _ in model.named_modules() if name and not inside_leaf(name)]
    graph, scopes = trace(model, leaves, tree)
    return {"modules": modules, "parameters": parameters, "graph": graph, "tree": tree, "scopes": scopes}


def param_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# -- symbolic options ----------------------------------------------------------------------------


def candidate_expressions(option: str) -> List[Dict[str, Any]]:
    """Formulas tried for a value that follows an option: the value itself, and for an image size
    the number of patch tokens plus the class token, (size // patch)^2 + 1."""
    expressions: List[Dict[str, Any]] = [{"$": option}]
    if option == "image_size":
        expressions += [{"$": option, "div": patch, "pow": 2, "add": 1} for patch in (14, 16, 32)]
    return expressions


def evaluate_expression(expression: Dict[str, Any], values: Dict[str, Any]) -> Any:
    x = values[expression["$"]]
    x = x // expression.get("div", 1)
    x = x ** expression.get("pow", 1)
    return x * expression.get("mul", 1) + expression.get("add", 0)


def templated(base: Any, probes: List[Tuple[Dict[str, Any], Any]], base_values: Dict[str, Any], where: str = "") -> Any:
    """`base` with every leaf that differs between the probes replaced by a formula of the option
    that explains all of them; an error where no formula does or the structure differs."""
    if all(_json_equal(base, other) for _, other in probes):
        return base
    if isinstance(base, dict) and all(isinstance(o, dict) and set(o) == set(base) for _, o in probes):
        return {k: templated(base[k], [(v, o[k]) for v, o in probes], base_values, f"{where}.{k}") for k in base}
    if isinstance(base, list) and all(isinstance(o, list) and len(o) == len(base) for _, o in probes):
        return [templated(b, [(v, o[i]) for v, o in probes], base_values, f"{where}[{i}]") for i, b in enumerate(base)]
    if isinstance(base, int) and not isinstance(base, bool):
        for option in base_values:
            for expression in candidate_expressions(option):
                if evaluate_expression(expression, base_values) == base and all(evaluate_expression(expression, v) == o for v, o in probes):
                    return expression
    raise RuntimeError(f"{where}: {base!r} changes with the options ({[o for _, o in probes]!r}) in a way no formula explains")


def _json_equal(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def instantiate(value: Any, values: Dict[str, Any]) -> Any:
    if isinstance(value, dict):
        if "$" in value:
            return evaluate_expression(value, values)
        return {k: instantiate(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [instantiate(v, values) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# Layer tables measured by the harness (meta device)
# ---------------------------------------------------------------------------------------------


def harness_table(model: nn.Module, sample: Sequence[int], name: str) -> Dict[str, Any]:
    """harness.layer_table on the meta device: PyTorch's own shape functions, no arithmetic."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = layer_table(model, lambda batch: torch.empty(batch, *sample, device="meta"), name, functional_calls=False)
    for row in table["rows"]:
        if row["outputShape"] is not None and any(d <= 0 for d in row["outputShape"]):
            raise EmptyOutput(f"{name}: {row['path']} ({row['type']}) gives an empty output {row['outputShape']}")
    return table


class EmptyOutput(RuntimeError):
    """Meta kernels do not check sizes: a convolution whose kernel is larger than its input gives a
    zero-sized output where the CPU kernel raises. An empty output is taken as that error."""


def _check_not_empty(module: nn.Module, _inputs: Any, output: Any) -> None:
    from harness.layer_table import flatten_tensors

    for tensor in flatten_tensors(output):
        if any(d <= 0 for d in tensor.shape):
            raise EmptyOutput(f"{type(module).__name__} gives an empty output {list(tensor.shape)}")


INPUT_ERRORS = (RuntimeError, ValueError, LayerTableError, IndexError, AssertionError)


def fits(model: nn.Module, sample: Sequence[int], name: str, quick: bool = False) -> bool:
    """Whether the harness takes the input (quick: one forward pass with a batch of 2 instead)."""
    try:
        if quick:
            handles = [module.register_forward_hook(_check_not_empty) for _, module in layer_modules(model)]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model(torch.empty(2, *sample, device="meta"))
            finally:
                for handle in handles:
                    handle.remove()
        else:
            harness_table(model, sample, name)
        return True
    except INPUT_ERRORS:
        return False


def smallest_square(model: nn.Module, channels: int, name: str) -> Optional[int]:
    """The smallest n for which an n x n image goes through: bisection with single forward passes,
    then the harness at n (fits) and n - 1 (does not)."""
    low, high = 0, 1024
    if not fits(model, [channels, high, high], name, quick=True):
        return None
    while high - low > 1:
        middle = (low + high) // 2
        if fits(model, [channels, middle, middle], name, quick=True):
            high = middle
        else:
            low = middle
    if not fits(model, [channels, high, high], name) or (high > 1 and fits(model, [channels, high - 1, high - 1], name)):
        raise RuntimeError(f"{name}: the smallest square input is not {high} by the harness")
    return high


def rows_of(table: Dict[str, Any]) -> List[list]:
    return [[r["path"], r["type"], r["outputShape"], r["activations"], r["params"], r["trainable"]] for r in table["rows"]]


def rows_hash(rows: List[list]) -> str:
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Options and weights
# ---------------------------------------------------------------------------------------------


def probe_values(option: str, default: Any) -> List[Any]:
    """Values that show whether an option changes the table (two for floats: 0 and another)."""
    if option in ("init_weights",) and default is None:
        return [True, False]
    if isinstance(default, bool):
        return [not default]
    if isinstance(default, float):
        return [0.0 if default else 0.3, 0.3 if default != 0.3 else 0.4]
    if isinstance(default, int):
        return [default + 1]
    return []


def option_defaults(model: nn.Module, config: ModelConfig) -> Dict[str, Any]:
    """The constructor options worth probing: the class's parameters, plus extras (`empty` where
    the class has no default: the builder always passes those)."""
    signature = inspect.signature(type(model).__init__)
    options: Dict[str, Any] = {}
    for name, parameter in signature.parameters.items():
        if name == "self" or parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        options[name] = parameter.default
    for name, default in config.extra_options.items():
        options.setdefault(name, default)
    return options


def plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


class Probe:
    """Builds a model with options and compares it with the base build."""

    def __init__(self, name: str, library: str, base_model: nn.Module, base_data: Dict[str, Any], sizes: List[List[int]]) -> None:
        self.name = name
        self.library = library
        self.sizes = sizes
        self.base_data = base_data
        self.base_tables = self.tables(base_model)

    def outcome(self, options: Dict[str, Any]) -> Tuple[str, str]:
        """("same", ""), ("changed", "") or ("refused", the builder's error)."""
        try:
            model = build(self.name, self.library, options)
        except (TypeError, ValueError, AssertionError, KeyError) as error:
            return "refused", f"{type(error).__name__}: {error}"
        try:
            if _json_equal(extract(model), self.base_data):
                return "same", ""
        except Exception:  # noqa: BLE001 - an untraceable build is compared by its tables
            pass
        return ("same", "") if self.tables(model) == self.base_tables else ("changed", "")

    def tables(self, model: nn.Module) -> List[Any]:
        result: List[Any] = []
        for size in self.sizes:
            try:
                result.append(rows_of(harness_table(model, size, self.name)))
            except Exception as error:  # noqa: BLE001 - both builds must fail alike
                result.append(f"error: {type(error).__name__}")
        return result


def fixed(default: Any, reason: str, covers: bool = False) -> Dict[str, Any]:
    entry = {"kind": "fixed", "default": default if plain(default) else None, "reason": reason}
    if covers:
        entry["covers"] = default
    return entry


def classify_options(name: str, library: str, config: ModelConfig, base_model: nn.Module, base_data: Dict[str, Any], default_input: List[int]) -> Dict[str, Any]:
    """What each constructor option does to the layer table:

    classes   num_classes: symbolic in the data
    template  a formula of the value (vit's image_size)
    variant   one of a few values, each with its own data (aux_logits, width_mult)
    none      accepted; the table is the same for every probed value (dropout, init_weights)
    fixed     only `covers` is covered (where present: the default, when passing it explicitly
              builds the same model); `reason` says why: it changes the architecture, is not a
              plain value, or torchvision's builder sets it or refuses other values
    """
    probe = Probe(name, library, base_model, base_data, [default_input, ALT_INPUT])
    result: Dict[str, Any] = {}
    for option, default in option_defaults(base_model, config).items():
        if option == "num_classes":
            result[option] = {"kind": "classes", "default": default}
        elif option in config.templates:
            default = config.templates[option][0]
            result[option] = {"kind": "template", "default": default}
            multiple = config.template_multiples.get(option)
            if multiple:
                # torchvision refuses a value that is not a multiple (vit: "Input shape indivisible by patch size!").
                if probe.outcome({option: default + 1})[0] != "refused" or probe.outcome({option: default + multiple})[0] == "refused":
                    raise RuntimeError(f"{name}: {option} is not limited to multiples of {multiple}")
                result[option]["multipleOf"] = multiple
        elif option in config.variants:
            result[option] = {"kind": "variant", "default": config.variants[option][0], "values": config.variants[option]}
        elif default is inspect.Parameter.empty and option in REGULARIZATION:
            kind, reason = probe.outcome({option: 0.3})
            if kind == "changed":
                result[option] = fixed(None, "it changes the architecture")
            elif kind == "refused":
                result[option] = {"kind": "none", "default": None, "note": f"torchvision {torchvision.__version__}'s {name} builder sets `{option}` itself and refuses it as an argument ({reason}); newer versions take it, and it does not change the layer table"}
            else:
                result[option] = {"kind": "none", "default": None}
        elif default is inspect.Parameter.empty:
            result[option] = fixed(None, f"torchvision's {name} builder sets it itself")
        else:
            # Passing the default itself must give the same model (resnext50_32x4d refuses groups=1).
            covers = plain(default) and probe.outcome({option: default})[0] == "same"
            outcomes = [probe.outcome({option: value}) for value in probe_values(option, default)] if plain(default) else []
            refused = next((reason for kind, reason in outcomes if kind == "refused"), None)
            if not outcomes:
                result[option] = fixed(default, "the catalog covers only its default", covers)
            elif refused is not None and option in REGULARIZATION:
                result[option] = {"kind": "none", "default": default, "note": f"torchvision {torchvision.__version__} refuses `{option}` for {name} ({refused}); newer versions take it, and it does not change the layer table"}
            elif refused is not None:
                result[option] = fixed(default, f"torchvision {torchvision.__version__} refuses other values for {name} ({refused})", covers)
            elif all(kind == "same" for kind, _ in outcomes):
                result[option] = {"kind": "none", "default": default}
            else:
                result[option] = fixed(default, "it changes the architecture", covers)
    return result


@contextlib.contextmanager
def recorded_overwrites(name: str) -> Iterator[List[Tuple[str, Any]]]:
    """Records torchvision's `_ovewrite_named_param(kwargs, param, value)` calls in the builder's module."""
    module = sys.modules[tvm.get_model_builder(name).__module__]
    original = module._ovewrite_named_param
    calls: List[Tuple[str, Any]] = []

    def record(kwargs: Dict[str, Any], param: str, value: Any) -> None:
        calls.append((param, value))
        original(kwargs, param, value)

    module._ovewrite_named_param = record
    try:
        yield calls
    finally:
        module._ovewrite_named_param = original


def overwrites(name: str, options: Dict[str, Any]) -> Tuple[List[Tuple[str, Any]], Optional[str]]:
    """The builder's overwrite calls for these options, and its error if it refuses them."""
    with recorded_overwrites(name) as calls, no_downloads(capture=True), fast_init(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tvm.get_model(name, **options)
        except _WeightsRequested:
            pass
        except ValueError as error:
            return list(calls), str(error)
    return list(calls), None


def other_value(value: Any) -> Any:
    return (not value) if isinstance(value, bool) else value + 1


def weights_info(name: str, config: ModelConfig, variants: Dict[str, Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The weights enum: its members, DEFAULT, what the legacy `pretrained=True` picks, and per
    member the options its builder fixes (torchvision raises where the script passes another
    value) and the variant the built model is (googlenet drops its aux heads after loading)."""
    try:
        enum = tvm.get_model_weights(name)
    except (ValueError, KeyError):
        return None
    without, _ = overwrites(name, {})
    members: Dict[str, Any] = {}
    for member in enum:
        calls, _ = overwrites(name, {"weights": member})
        fixes: Dict[str, Any] = {}
        for param, value in calls:
            if (param, value) in without or param in fixes:
                continue
            # A conditional overwrite (inception's transform_input) lets another value through.
            _, error = overwrites(name, {"weights": member, param: other_value(value)})
            if error is not None:
                fixes[param] = encode_literal(value, f"{name} weights {param}")
        model = build(name, "torchvision", {"weights": member})
        data = extract(model)
        values = {"num_classes": 1000, **{k: v[0] for k, v in config.templates.items()}, **{k: v for k, v in fixes.items() if k in config.templates or k == "num_classes"}}
        # Same layer modules and parameters (the graph may differ: inception's transform_input
        # adds arithmetic on the input), then the same layer table.
        structure = lambda d: {"modules": d["modules"], "parameters": d["parameters"]}  # noqa: E731
        matches = [json.loads(key) for key, entry in variants.items() if _json_equal(structure(instantiate(entry, values)), structure(data))]
        if len(matches) != 1:
            raise RuntimeError(f"{name} with weights={member.name}: the model matches {len(matches)} variants")
        variant_model = build(name, "torchvision", {**matches[0], **{k: v for k, v in values.items() if k in config.templates}})
        sample = [3, *([values["image_size"]] * 2 if "image_size" in values else default_size(name))]
        if rows_of(harness_table(model, sample, name)) != rows_of(harness_table(variant_model, sample, name)):
            raise RuntimeError(f"{name} with weights={member.name}: the layer table differs from the variant {matches[0]}")
        members[member.name] = {"fixes": fixes, "variant": matches[0]}
    legacy = None
    with no_downloads(capture=True), fast_init(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tvm.get_model(name, pretrained=True)
        except _WeightsRequested as requested:
            legacy = requested.weights.name
        except ValueError:  # "No weights available for model regnet_y_128gf"
            legacy = None
    return {"enum": enum.__name__, "members": members, "default": enum.DEFAULT.name, "legacy": legacy}


# ---------------------------------------------------------------------------------------------
# Generating one model
# ---------------------------------------------------------------------------------------------


@dataclass
class Generated:
    name: str
    index: Dict[str, Any]
    blob: Dict[str, Any]
    vectors: Dict[str, Any]
    seconds: float


def variant_keys(config: ModelConfig) -> List[Dict[str, Any]]:
    keys: List[Dict[str, Any]] = [{}]
    for option, values in config.variants.items():
        keys = [{**key, option: value} for key in keys for value in values]
    return keys


def key_text(key: Dict[str, Any]) -> str:
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


def generate_torchvision(name: str, config: ModelConfig) -> Generated:
    started = time.perf_counter()
    default_input = [3, *default_size(name)]
    variants: Dict[str, Dict[str, Any]] = {}
    params: Dict[str, int] = {}
    base_model: Optional[nn.Module] = None
    base_data: Optional[Dict[str, Any]] = None
    for key in variant_keys(config):
        template_defaults = {option: values[0] for option, values in config.templates.items()}
        model = build(name, "torchvision", {**key, **template_defaults})
        data = extract(model)
        if base_model is None:
            base_model, base_data = model, data
        probes = []
        base_values = {"num_classes": 1000, **template_defaults}
        for classes in (10, 1001):
            probe_model = build(name, "torchvision", {**key, **template_defaults, "num_classes": classes})
            probes.append(({**base_values, "num_classes": classes}, extract(probe_model)))
        for option, values in config.templates.items():
            for value in values[1:]:
                probe_model = build(name, "torchvision", {**key, **template_defaults, option: value})
                probes.append(({**base_values, option: value}, extract(probe_model)))
        variants[key_text(key)] = templated(data, probes, base_values, name)
        params[key_text(key)] = param_count(model)
    assert base_model is not None and base_data is not None
    options = classify_options(name, "torchvision", config, base_model, base_data, default_input)
    weights = weights_info(name, config, variants)
    index = {
        "className": type(base_model).__name__,
        "input": default_input,
        "options": options,
        "weights": weights,
        "variants": [json.loads(k) for k in variants],
    }
    blob = {"variants": [{"when": json.loads(k), **v} for k, v in variants.items()]}
    vectors = torchvision_vectors(name, config, default_input, {k: v for k, v in params.items()})
    return Generated(name, index, blob, vectors, time.perf_counter() - started)


def default_size(name: str) -> List[int]:
    """The crop size of the model's DEFAULT weights' transforms (299 for inception_v3, 600 for efficientnet_b7)."""
    transforms = tvm.get_model_weights(name).DEFAULT.transforms()
    size = transforms.crop_size
    return [int(size[0]), int(size[-1])]


def vector_case(model: nn.Module, name: str, options: Dict[str, Any], sample: List[int], full_rows: bool) -> Dict[str, Any]:
    table = harness_table(model, sample, name)
    rows = rows_of(table)
    case: Dict[str, Any] = {"options": options, "input": sample, "totals": table["totals"], "rowCount": len(rows), "rowsSha256": rows_hash(rows)}
    if full_rows:
        case["rows"] = rows
    return case


def torchvision_vectors(name: str, config: ModelConfig, default_input: List[int], variant_params: Dict[str, int]) -> Dict[str, Any]:
    cases: List[Tuple[Dict[str, Any], List[int]]] = [({}, default_input)]
    if config.alt_input is not None or not config.templates:
        cases.append(({}, config.alt_input or ALT_INPUT))
    cases.append(({"num_classes": 10}, default_input))
    cases += [(options, sample or default_input) for options, sample in config.extra_cases]
    result_cases = []
    models: Dict[str, nn.Module] = {}
    param_counts: Dict[str, int] = dict(variant_params)
    for options, sample in cases:
        key = key_text(options)
        if key not in models:
            models[key] = build(name, "torchvision", options)
            param_counts[key] = param_count(models[key])
        model = models[key]
        try:
            result_cases.append(vector_case(model, name, options, sample, full_rows=not result_cases))
        except INPUT_ERRORS as error:
            result_cases.append({"options": options, "input": sample, "error": f"{type(error).__name__}"})
    base = models[key_text({})]
    smallest = None if config.templates else smallest_square(base, 3, name)
    return {
        "name": name,
        "library": "torchvision",
        "generatedBy": {"torch": torch.__version__, "torchvision": torchvision.__version__, "script": SCRIPT},
        "params": [{"options": json.loads(k), "params": v} for k, v in param_counts.items()],
        "smallestSquare": smallest,
        "cases": result_cases,
    }


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def encode_blob(blob: Dict[str, Any]) -> str:
    text = json.dumps(blob, separators=(",", ":"), sort_keys=True).encode()
    return base64.b64encode(gzip.compress(text, compresslevel=9, mtime=0)).decode()


def decode_blob(text: str) -> Dict[str, Any]:
    return json.loads(gzip.decompress(base64.b64decode(text)))


def data_module(library: str, generated: Dict[str, Generated], version: Dict[str, str]) -> str:
    names = sorted(generated)
    index = {name: generated[name].index for name in names}
    lines = [
        f"// Generated by {SCRIPT} from {', '.join(f'{k} {v}' for k, v in version.items())}. Do not edit: run `npm run catalog:generate`.",
        "// The index is read as is; each model's data is gzip-compressed JSON in base64, decoded on first use (docs/catalog.md).",
        "import type { TracedIndex } from '../traced/tracedData';",
        "",
        f"export const {library.upper()}_VERSIONS: Readonly<Record<string, string>> = {json.dumps(version, sort_keys=True)};",
        "",
        f"export const {library.upper()}_INDEX: TracedIndex = {format_index(index)};",
        "",
        f"export const {library.upper()}_BLOBS: Readonly<Record<string, string>> = {{",
    ]
    for name in names:
        lines.append(f"  {json.dumps(name)}: {json.dumps(encode_blob(generated[name].blob))},")
    lines.append("};")
    return "\n".join(lines) + "\n"


def format_index(value: Any, depth: int = 0) -> str:
    """JSON with objects broken over lines down to the options, and compact below."""
    if not isinstance(value, dict) or depth >= 3 or not value:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    pad = "  " * (depth + 1)
    items = [f"{pad}{json.dumps(k)}: {format_index(v, depth + 1)}" for k, v in sorted(value.items())]
    return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"


def parse_data_module(text: str, library: str) -> Tuple[Dict[str, Any], Dict[str, Dict[str, Any]]]:
    """Index and decoded blobs of a written data module, for --check."""
    start = text.index(f"export const {library.upper()}_INDEX: TracedIndex = ") + len(f"export const {library.upper()}_INDEX: TracedIndex = ")
    end = text.index(";\n\nexport const", start)
    index = json.loads(text[start:end])
    blobs = {}
    marker = f"export const {library.upper()}_BLOBS: Readonly<Record<string, string>> = {{\n"
    body = text[text.index(marker) + len(marker):text.rindex("};")]
    for line in body.strip().splitlines():
        key, value = line.strip().rstrip(",").split(": ", 1)
        blobs[json.loads(key)] = decode_blob(json.loads(value))
    return index, blobs


def vector_text(vectors: Dict[str, Any]) -> str:
    """Two-space JSON, with each row on one line so the files stay readable and small."""
    rows_placeholder = {}
    cases = []
    for i, case in enumerate(vectors["cases"]):
        case = dict(case)
        if "rows" in case:
            token = f"@@ROWS{i}@@"
            rows_placeholder[token] = case["rows"]
            case["rows"] = token
        cases.append(case)
    text = json.dumps({**vectors, "cases": cases}, indent=2, sort_keys=True)
    for token, rows in rows_placeholder.items():
        body = ",\n".join("        " + json.dumps(row, separators=(",", ":")) for row in rows)
        text = text.replace(json.dumps(token), "[\n" + body + "\n      ]")
    return text + "\n"


def generate_one(task: Tuple[str, str]) -> Generated:
    library, name = task
    torch.set_num_threads(1)
    return generate_torchvision(name, TORCHVISION[name])


def generate_all(tasks: List[Tuple[str, str]], jobs: int) -> Iterator[Generated]:
    """The models in `tasks`, generated by `jobs` worker processes (each model is independent)."""
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield generate_one(task)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # The slowest models first, so no worker is left with a long one at the end.
    slow = ("efficientnet_v2_l", "efficientnet_v2_m", "efficientnet_b7", "densenet201", "densenet169", "densenet161", "regnet_y_128gf")
    order = sorted(tasks, key=lambda task: (task[1] not in slow, slow.index(task[1]) if task[1] in slow else 0))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(generate_one, task) for task in order]
        for future in as_completed(futures):
            yield future.result()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any data or vector differs")
    parser.add_argument("--dump", action="store_true", help="print the decoded data of the named models and exit")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes (default: up to 2)")
    parser.add_argument("models", nargs="*", help="only these models (torchvision names)")
    options = parser.parse_args()
    torch.set_num_threads(1)

    known = set(TORCHVISION)
    unknown = [m for m in options.models if m not in known]
    if unknown:
        parser.error(f"not in the catalog: {', '.join(unknown)}")
    selected = options.models or sorted(known)

    modules = {"torchvision": DATA_DIR / "torchvision.ts"}
    catalogs = {"torchvision": TORCHVISION}
    versions = {"torchvision": {"torch": torch.__version__, "torchvision": torchvision.__version__}}
    if options.dump:
        for library, path in modules.items():
            index, blobs = parse_data_module(path.read_text(encoding="utf-8"), library)
            for name in selected:
                if name in blobs:
                    print(json.dumps({"index": index[name], "data": blobs[name]}, indent=1))
        return 0

    old: Dict[str, Tuple[Dict[str, Any], Dict[str, Dict[str, Any]]]] = {
        library: parse_data_module(path.read_text(encoding="utf-8"), library) if path.exists() else ({}, {}) for library, path in modules.items()
    }
    tasks = [(library, name) for library, catalog in catalogs.items() for name in selected if name in catalog]
    generated: Dict[str, Dict[str, Generated]] = {library: {} for library in catalogs}
    stale: List[str] = []
    started = time.perf_counter()
    for result in generate_all(tasks, options.jobs):
        library = "torchvision"
        generated[library][result.name] = result
        old_index, old_blobs = old[library]
        vector_path = VECTORS_DIR / library / f"{result.name}.json"
        text = vector_text(result.vectors)
        old_text = vector_path.read_text(encoding="utf-8") if vector_path.exists() else None
        changed_data = not (_json_equal(old_index.get(result.name), result.index) and _json_equal(old_blobs.get(result.name), result.blob))
        status = "unchanged" if old_text == text and not changed_data else ("stale" if options.check else "updated")
        if old_text != text:
            stale.append(str(vector_path.relative_to(ROOT)))
            if not options.check:
                vector_path.parent.mkdir(parents=True, exist_ok=True)
                vector_path.write_text(text, encoding="utf-8")
        if changed_data:
            stale.append(f"{modules[library].relative_to(ROOT)} ({result.name})")
        first = result.vectors["cases"][0]
        print(
            f"{library:<11} {result.name:<20} params {result.vectors['params'][0]['params']:>12,}  rows {first['rowCount']:>4}  "
            f"blob {len(encode_blob(result.blob)) / 1024:6.1f} KiB  {result.seconds:5.1f}s  {status}",
            flush=True,
        )
    for library, path in modules.items():
        old_index, old_blobs = old[library]
        merged: Dict[str, Generated] = {}
        for name in sorted(set(old_index) | set(generated[library])):
            if name in generated[library]:
                merged[name] = generated[library][name]
            elif name in catalogs[library]:
                merged[name] = Generated(name, old_index[name], old_blobs[name], {}, 0.0)
            else:
                stale.append(f"{path.relative_to(ROOT)} (no longer in the catalog: {name})")
        if not merged:
            continue
        text = data_module(library, merged, versions[library])
        if not options.check and (not path.exists() or path.read_text(encoding="utf-8") != text):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if not options.models:
        expected = {VECTORS_DIR / library / f"{name}.json" for library, catalog in catalogs.items() for name in catalog}
        # test/vectors/catalog/timm/ is generate_timm.py's.
        for path in sorted(VECTORS_DIR.glob("torchvision/*.json")):
            if path not in expected:
                stale.append(str(path.relative_to(ROOT)))
                if not options.check:
                    path.unlink()
    print(f"{len(tasks)} models in {time.perf_counter() - started:.0f}s", flush=True)
    if options.check and stale:
        print("stale: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
