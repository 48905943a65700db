"""A CPU dry run of a user's training script: its own model, optimizer and training step, on no GPU.

The script runs as written, with four things changed so that it needs neither a GPU nor its data:
- CUDA is "available" and every tensor lives on PyTorch's meta device (shapes, no values), so a
  ResNet-50 step takes a fraction of a second and a 7B model no RAM. Which tensors the real run
  keeps on the GPU is followed by a tag per storage: made with `device="cuda"`, moved by
  `.cuda()` / `.to("cuda")`, or computed from GPU tensors.
- Data loaders yield fake batches of the shape the static analysis found (the spec); datasets
  (torchvision's, Hugging Face's `load_dataset`) are not read or downloaded.
- Values the script reads back (`loss.item()`) are ones (booleans False).
- After `steps` batches the run stops: the loader's next batch ends it; a loop without a loader
  ends once every optimizer has stepped `steps` times.

Every allocation and free of a GPU tensor's storage is recorded in order, with the phase it
happened in (forward, backward, optimizer); the TypeScript side replays the trace through its
model of the caching allocator (src/core/allocator) and adds the CUDA context.

Safety (the caller also runs this in a clean temporary folder, under a time limit): an audit
hook refuses network connections, new processes and writes outside that folder; an address-space
limit bounds memory.

    python3 -m harness.dry_run SCRIPT --spec SPEC.json [--steps 3] [--out TRACE.json]
    python3 -m harness.dry_run --jobs JOBS.json     # several runs in one process (the evaluation)

Prints one JSON object (or writes it to --out): {"ok", "events", "phases", "steps", "seconds",
"cudnn", "cudnnBenchmark", "torch", "notes", "error"}. Events are [+id, bytes, phase] for an allocation and [-id]
for a free.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import runpy
import sys
import time
import traceback
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from harness import dry_run_datasets, dry_run_diffusers, dry_run_frameworks, dry_run_hub
from harness.dry_run_frameworks import AfterImport, NotDryRunnable

PHASES = ("setup", "forward", "backward", "optimizer")

#: Stops the script once the wanted steps ran; a BaseException so `except Exception` in the script does not swallow it.
class DryRunComplete(BaseException):
    pass


class DryRunRefused(PermissionError):
    pass


class DeviceMismatch(BaseException):
    """An op the real run would stop at: it mixes GPU tensors with ones the script left on the CPU.
    A BaseException, as a real run's error would end the script even inside `except Exception`
    around a step, and a dry run that carried on would report a figure for a script that cannot run."""


def _is_cuda(device: Any) -> bool:
    import torch
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.startswith("cuda")
    if isinstance(device, int) and not isinstance(device, bool):
        return True  # .to(0) and .cuda(0): a GPU ordinal
    return False


def _is_cpu(device: Any) -> bool:
    import torch
    if isinstance(device, torch.device):
        return device.type == "cpu"
    return isinstance(device, str) and device.startswith("cpu")


class Recorder:
    """The GPU storages alive, in allocation order, and the trace of their births and deaths."""

    def __init__(self) -> None:
        self.events: List[List[int]] = []
        self.phase = 1  # forward until a backward or an optimizer step says otherwise
        self._next_id = 1
        # storage key -> (id, gpu?, number of live tensors on it, made on the CPU by a factory?)
        self._live: Dict[int, List[int]] = {}
        # (storage key, id of a tensor object) -> the finalizer that releases that object's reference to the storage.
        self._holders: Dict[Tuple[int, int], Any] = {}
        self._gpu_seen = False
        self.cudnn = False
        self.autocast_seen = False  # some op ran under autocast
        # Per convolution that would run on the GPU: where in the trace, and its shapes (the
        # replay gives it cuDNN's workspace): [event index, phase, backward?, N, C, H, W, O,
        # kernel h, kernel w, stride h, stride w, groups, bytes per element].
        self.convolutions: List[List[int]] = []

    def _key(self, tensor: Any) -> Optional[int]:
        try:
            return int(tensor.storage()._cdata)
        except Exception:  # sparse, nested or other storage-less tensors
            return None

    def has_gpu_storage(self) -> bool:
        """Some storage has been on the GPU: the script trains there."""
        return self._gpu_seen

    def is_gpu(self, tensor: Any) -> bool:
        key = self._key(tensor)
        entry = self._live.get(key) if key is not None else None
        return bool(entry and entry[1])

    def is_cpu_made(self, tensor: Any) -> bool:
        """Made on the CPU by a factory (`torch.zeros(...)`, a layer's `torch.empty` weight, a
        loader's batch) and never moved: what a real run keeps on the CPU for certain. Results of
        ops on CPU tensors are left out: a meta run cannot tell them from copies (`.cpu()`) and
        tables made of real values, which scripts legitimately keep beside GPU tensors."""
        key = self._key(tensor)
        entry = self._live.get(key) if key is not None else None
        return bool(entry and not entry[1] and entry[3])

    def saw(self, tensor: Any, gpu: bool, cpu_made: bool = False, fresh: bool = False) -> None:
        """`tensor` came out of an op: a new storage is born (on the GPU or not); a view adds a reference.

        `fresh`: the op makes new storage (its schema aliases no input). A storage already known at the
        same address is then dead, though a tensor object still refers to its key: a parameter whose
        `.data` was replaced (Module.to) keeps the old storage's key alive. Its place is taken
        afresh, else the new storage would inherit its device."""
        key = self._key(tensor)
        if key is None:
            return
        entry = self._live.get(key)
        if entry is not None and fresh:
            del self._live[key]
            if entry[1]:
                self.events.append([-entry[0]])
            entry = None
        if entry is None:
            ident = self._next_id
            self._next_id += 1
            entry = [ident, 1 if gpu else 0, 0, 1 if cpu_made and not gpu else 0]
            self._live[key] = entry
            if gpu:
                self._gpu_seen = True
                self.events.append([ident, int(tensor.storage().nbytes()), self.phase])
        self._hold(tensor, key, entry)

    def adopt(self, alias: Any, tensor: Any) -> None:
        """`alias` shares `tensor`'s storage without an op the modes see (`nn.Parameter(tensor)`):
        the storage lives on with it after `tensor`, the temporary, is gone."""
        key = self._key(tensor)
        entry = self._live.get(key) if key is not None else None
        if entry is None:
            return
        self._hold(alias, key, entry)

    def _hold(self, holder: Any, key: int, entry: List[int]) -> None:
        """One reference of the tensor object `holder` to the storage (an in-place op returning it again adds none)."""
        token = (key, id(holder))
        known = self._holders.get(token)
        if known is not None and known.alive and known.peek()[0] is holder and known.peek()[2][2] == entry[0]:
            return
        entry[2] += 1
        self._holders[token] = weakref.finalize(holder, self._release_holder, token, key, entry[0])

    def _release_holder(self, token: Tuple[int, int], key: int, ident: int) -> None:
        self._holders.pop(token, None)
        self._released(key, ident)

    def let_go(self, holder: Any, key: Optional[int]) -> None:
        """The tensor object `holder` no longer refers to the storage at `key` (its `.data` was replaced)."""
        finalizer = self._holders.pop((key, id(holder)), None) if key is not None else None
        if finalizer is not None and finalizer.alive:
            _, _, args, _ = finalizer.detach()
            self._released(args[1], args[2])

    def move_to_gpu(self, tensor: Any) -> None:
        """A storage the script made on the CPU goes to the GPU in place (meta tensors need no copy)."""
        key = self._key(tensor)
        entry = self._live.get(key) if key is not None else None
        if entry is None:
            self.saw(tensor, True)
        elif not entry[1]:
            entry[1] = 1
            self._gpu_seen = True
            self.events.append([entry[0], int(tensor.storage().nbytes()), self.phase])

    def _released(self, key: int, ident: int) -> None:
        entry = self._live.get(key)
        if entry is None or entry[0] != ident:
            return
        entry[2] -= 1
        if entry[2] <= 0:
            del self._live[key]
            if entry[1]:
                self.events.append([-ident])


def _meta_kernels() -> Any:
    """Meta kernels torch 1.13 lacks for a training step's backward (shapes from the inputs)."""
    import torch
    lib = torch.library.Library("aten", "IMPL", "Meta")

    def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, output_mask):  # noqa: ANN001
        grad_input = input.new_empty(input.shape) if output_mask[0] else None
        grad_weight = weight.new_empty(weight.shape) if output_mask[1] else None
        channels = bias_sizes[0] if bias_sizes else grad_output.shape[1]
        grad_bias = grad_output.new_empty((channels,)) if output_mask[2] else None
        return grad_input, grad_weight, grad_bias

    def adaptive_avg_pool2d_backward(grad_output, input):  # noqa: ANN001
        return input.new_empty(input.shape)

    def unfold_backward(grad_in, input_sizes, dim, size, step):  # noqa: ANN001
        return grad_in.new_empty(input_sizes)

    def same_as_input(grad_output, input, *args):  # noqa: ANN001
        return input.new_empty(input.shape)

    def masked_select(input, mask):  # noqa: ANN001
        # The size depends on the data: every element selected, as the losses that use it (label smoothing
        # with ignore_index) select all but the ignored targets.
        return input.new_empty((torch.broadcast_shapes(input.shape, mask.shape).numel(),))

    def nonzero(input):  # noqa: ANN001
        # Which elements a mask holds is data (`similarity[~mask]`, `loss[labels != -100]`): every one
        # selected, an upper bound of what the step holds. Not for a detection model, whose boxes and
        # proposals are chosen by value all through its step (`_detection_reason`).
        run = _CURRENT["run"]
        if run is not None and run.detection is not None:
            raise NotImplementedError("aten::nonzero: attempted to run this operator with Meta tensors")
        _note_once("a mask's selection (boolean indexing, nonzero) took every element, as a dry run has no values: an upper bound")
        return input.new_empty((input.numel(), input.dim()), dtype=torch.long)

    def nll_loss2d_forward(input, target, weight, reduction, ignore_index):  # noqa: ANN001
        # Scores per position ([N, C, T] or [N, C, H, W]): a loss per target element, or one for all.
        return input.new_empty(target.shape if reduction == 0 else ()), input.new_empty(())

    kernels = (
        ("convolution_backward", convolution_backward),
        ("nll_loss2d_forward", nll_loss2d_forward),
        ("nll_loss2d_backward", same_as_input),
        ("_adaptive_avg_pool2d_backward", adaptive_avg_pool2d_backward),
        ("unfold_backward", unfold_backward),
        ("adaptive_max_pool2d_backward", same_as_input),
        ("max_pool2d_with_indices_backward", same_as_input),
        ("avg_pool2d_backward", same_as_input),
        ("reflection_pad2d_backward", same_as_input),
        ("smooth_l1_loss_backward", same_as_input),
        ("huber_loss_backward", same_as_input),
        ("mse_loss_backward", same_as_input),
        ("binary_cross_entropy_backward", same_as_input),
        ("soft_margin_loss_backward", same_as_input),
        ("replication_pad2d_backward", same_as_input),
        ("masked_select", masked_select),
        ("nonzero", nonzero),
        ("upsample_nearest2d_backward", lambda grad_output, output_size, input_size, *args: grad_output.new_empty(input_size)),
        ("upsample_bilinear2d_backward", lambda grad_output, output_size, input_size, *args: grad_output.new_empty(input_size)),
    )
    # PyTorch 2's own meta kernels are kept (it has most of these); torch 1.13's registered ones are
    # replaced, as they were written for (and tested with) these.
    keep_own = _pytorch2()
    for name, kernel in kernels:
        if keep_own and torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{name}", "Meta"):
            continue
        try:
            lib.impl(name, kernel)
        except RuntimeError:
            pass
    return lib


def _autocast_arguments(name: str, dtype: Any, args: Any, kwargs: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """The call's floating-point tensors cast as autocast would: to `dtype` for its half-precision ops, up to fp32 for its fp32 ones."""
    import torch
    if dtype is None:
        return args, kwargs
    if name in _AUTOCAST_OPS:
        def cast(a: Any) -> Any:
            return a.to(dtype) if isinstance(a, torch.Tensor) and a.dtype.is_floating_point and a.dtype != dtype else a
    elif name in _AUTOCAST_FP32_OPS:
        def cast(a: Any) -> Any:
            return a.float() if isinstance(a, torch.Tensor) and a.dtype in (torch.float16, torch.bfloat16) else a
    else:
        return args, kwargs
    return tuple(cast(a) for a in args), {key: cast(value) for key, value in kwargs.items()}


def _in_run_mode(call: Callable[..., Any]) -> Callable[..., Any]:
    """`call` run inside the current run's torch-function mode where it is not active (backward)."""
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        from torch.overrides import _get_current_function_mode
        run = _CURRENT["run"]
        mode = getattr(run, "device_mode", None) if run is not None else None
        if mode is None or _get_current_function_mode() is not None:
            return call(*args, **kwargs)
        with mode:
            return call(*args, **kwargs)
    return wrapped


def _patch_checkpoint_reruns() -> None:
    """Backward runs without the torch-function mode (torch 1.13 does not carry it into the engine): a
    checkpoint's rerun of its segment needs it back, for devices and autocast. The reentrant
    checkpoint reruns in its backward; the non-reentrant one from a saved-tensor hook, so its function
    re-enters the mode."""
    import torch.utils.checkpoint as checkpoint_module
    checkpoint_module.CheckpointFunction.backward = staticmethod(_in_run_mode(checkpoint_module.CheckpointFunction.backward))  # type: ignore[assignment]
    # torch 1.13's function, PyTorch 2's generator: both take the segment's function first.
    for name in ("_checkpoint_without_reentrant", "_checkpoint_without_reentrant_generator"):
        original = getattr(checkpoint_module, name, None)
        if original is not None:
            setattr(checkpoint_module, name, _with_function_in_run_mode(original))


def _with_function_in_run_mode(original: Callable[..., Any]) -> Callable[..., Any]:
    def without_reentrant(function: Any, *args: Any, **kwargs: Any) -> Any:
        return original(_in_run_mode(function), *args, **kwargs)
    return without_reentrant


def _autocast_dtype() -> Optional[Any]:
    import torch
    try:
        if hasattr(torch, "get_autocast_dtype"):  # PyTorch 2.4 on; the GPU-only functions are deprecated there
            return torch.get_autocast_dtype("cuda") if torch.is_autocast_enabled("cuda") else None
        if torch.is_autocast_enabled():
            return torch.get_autocast_gpu_dtype()
    except Exception:
        return None
    return None


_DEVICE_GETTER: Any = None


def _pytorch2() -> bool:
    import torch
    return int(torch.__version__.split(".")[0]) >= 2


def _note_pytorch2_foreach_step(optimizer: Any) -> None:
    """torch 1.13 steps Adam and AdamW one parameter at a time, on a GPU as here; PyTorch 2 on a GPU
    takes their foreach step by default, which holds the square roots of every second moment at once
    (test_foreach_adamw_makes_a_temporary_...): the user's GPU may well run PyTorch 2, so the trace
    says how much more that step holds, once per optimizer."""
    import torch
    run = _CURRENT["run"]
    if run is None or _pytorch2() or getattr(optimizer, "_dry_run_foreach_noted", False):
        return
    if type(optimizer) not in (torch.optim.Adam, torch.optim.AdamW):
        return
    optimizer._dry_run_foreach_noted = True
    sizes = [p.numel() * p.element_size() for group in optimizer.param_groups if group.get("foreach") is None and not group.get("differentiable")
             for p in group["params"] if isinstance(p, torch.Tensor) and p.requires_grad and run.recorder.is_gpu(p)]
    # The loop holds the largest parameter's square root and quotient at once; the foreach step every root.
    extra = sum(sizes) - 2 * max(sizes, default=0)
    if extra >= 1 << 20:
        run.notes.append(f"torch {torch.__version__} steps {type(optimizer).__name__} one parameter at a time, as it does on a GPU; PyTorch 2 on a GPU steps them all at once (foreach, its default) and holds about {extra / (1 << 20):.0f} MiB more at the optimizer step")


#: The fused optimizers' in-place steps (PyTorch 2).
_FUSED_OPTIMIZER_STEPS = {"_fused_adam_", "_fused_adamw_", "_fused_sgd_", "_fused_adagrad_"}

#: Ops autocast runs in fp32 on CUDA (its "fp32" list, as they reach the dispatcher): their half inputs are cast up.
_AUTOCAST_FP32_OPS = {"layer_norm", "group_norm", "softmax", "log_softmax", "cross_entropy", "nll_loss", "native_layer_norm", "native_group_norm", "_softmax", "_log_softmax", "nll_loss_forward", "nll_loss2d_forward", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy_with_logits", "logsumexp", "cumsum", "cumprod", "linalg_vector_norm", "norm", "pow", "rsqrt", "exp", "log", "log1p", "reciprocal", "softplus", "cosine_similarity", "dist", "cdist", "renorm"}
#: Ops autocast runs in the lower precision on CUDA (its "lower_precision_fp" list, the ones training uses).
_AUTOCAST_OPS = {"convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "__matmul__", "__rmatmul__", "linear", "_convolution", "addmv", "mv", "prelu", "_scaled_dot_product_attention", "scaled_dot_product_attention"}


def _make_modes(recorder: Recorder) -> Tuple[Any, Any]:
    import torch
    global _DEVICE_GETTER
    _DEVICE_GETTER = torch.Tensor.device  # the property's descriptor: each `.__get__` is a new wrapper
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode
    # "target": "cuda" / "cpu" while a call that names a device runs; "autocast": autocast's dtype while a call
    # made under it runs (read here: inside the dispatch mode torch reports autocast as off).
    state: Dict[str, Any] = {"target": None, "autocast": None}

    def meta(device: Any) -> Any:
        return torch.device("meta") if (_is_cuda(device) or _is_cpu(device) or device is None) else device

    class DeviceToMeta(TorchFunctionMode):
        """Every tensor goes to meta; the device the script asked for becomes the call's target tag."""

        def __torch_function__(self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: Optional[Dict[str, Any]] = None) -> Any:
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            if getattr(func, "__self__", None) is torch.Tensor.is_cuda and args and isinstance(args[0], torch.Tensor):
                return recorder.is_gpu(args[0])
            if getattr(func, "__self__", None) is _DEVICE_GETTER and args and isinstance(args[0], torch.Tensor):
                # `x.device` says where the real run keeps x: `torch.zeros(..., device=x.device)`
                # and `x.device.type == "cuda"` then behave as on the GPU.
                tensor = args[0]
                return torch.device("cuda", 0) if recorder.is_gpu(tensor) else torch.device("cpu") if tensor.is_meta or tensor.device.type == "cpu" else func(*args)
            if name == "copy_" and len(args) > 1 and isinstance(args[0], torch.Tensor) and isinstance(args[1], torch.Tensor) \
                    and not args[0].is_meta and args[1].is_meta:
                # A small CPU tensor kept real (`torch.empty(16)` then `.copy_(...)` of values made on meta: timm's
                # rotary embeddings fill their bands so) cannot take values meta does not have: ones, as a
                # number read back from meta is one.
                return args[0].fill_(1)
            target = None
            real = name in _REAL_CPU_FACTORIES or (name == "randint" and _few_indices(args, kwargs)) or (name in ("rand", "randn", "empty") and _few_draws(args, kwargs))
            if name == "_parse_to":
                # Module.to(device="cuda") parses its arguments here: the device must reach the tensors' .to() as given.
                return func(*args, **kwargs)
            if "device" in kwargs:
                target = "cuda" if _is_cuda(kwargs["device"]) else "cpu"
                kwargs["device"] = torch.device("cpu") if target == "cpu" and real else meta(kwargs["device"])
            elif name in _FACTORIES:
                target = "cpu"
                if not real:
                    kwargs["device"] = torch.device("meta")
            if name == "cuda":
                tensor = args[0]
                if not tensor.is_meta:
                    # A real CPU tensor (an index, a table the script computed) goes to the GPU: a copy.
                    previous = state["target"]
                    state["target"] = "cuda"
                    try:
                        tensor = tensor.to("meta")
                    finally:
                        state["target"] = previous
                recorder.move_to_gpu(tensor)
                return tensor
            if name == "cpu":
                return _cpu_copy(recorder, state, args[0])
            if name in ("type_as", "type") and len(args) > 1 and isinstance(args[0], torch.Tensor):
                # `z.type_as(images)` (Lightning's idiom for noise made on the CPU) and `.type(torch.cuda.FloatTensor)` move too.
                other = args[1]
                named = other if isinstance(other, str) else getattr(other, "__module__", "") + "." + getattr(other, "__name__", "") if isinstance(other, type) else ""
                if (name == "type_as" and isinstance(other, torch.Tensor) and recorder.is_gpu(other)) or ".cuda." in named:
                    # The legacy tensor types (torch.cuda.FloatTensor) carry their dtype; a name is looked up on torch.
                    dtype = getattr(other, "dtype", None) if not isinstance(other, str) else getattr(getattr(torch, named.split(".")[-1], None), "dtype", None)
                    cast = args[0].to(dtype) if isinstance(dtype, torch.dtype) else args[0]
                    if not cast.is_meta:  # a real CPU tensor the script made: its GPU copy
                        cast = cast.to("meta")
                    recorder.move_to_gpu(cast)
                    return cast
            if name == "to":
                moved = [a for a in args[1:] if _is_cuda(a) or _is_cpu(a) or isinstance(a, torch.Tensor)]
                if moved:
                    first = moved[0]
                    if isinstance(first, torch.Tensor):
                        target = "cuda" if recorder.is_gpu(first) else None
                    else:
                        target = "cuda" if _is_cuda(first) else "cpu"
                    # A real CPU tensor asked onto the CPU stays real; anything else becomes meta.
                    if not (target == "cpu" and isinstance(args[0], torch.Tensor) and not args[0].is_meta):
                        args = tuple(meta(a) if (_is_cuda(a) or _is_cpu(a)) else a for a in args)
                if target == "cuda" and "device" not in kwargs:
                    result = func(*args, **kwargs)
                    recorder.move_to_gpu(result)
                    return result
            if name in ("cross_entropy", "nll_loss"):
                args, kwargs = _targets_fitting(recorder, args, kwargs)
            if name == "dropout":
                fused = _fused_dropout(recorder, args, kwargs)
                if fused is not None:
                    return fused
            if name == "mish" and args and isinstance(args[0], torch.Tensor) and recorder.is_gpu(args[0]) and not kwargs.get("inplace", args[1] if len(args) > 1 else False):
                return _fused_mish().apply(args[0])
            previous, previous_autocast = state["target"], state["autocast"]
            state["target"] = target if target is not None else previous
            state["autocast"] = _autocast_dtype()
            recorder.autocast_seen = recorder.autocast_seen or state["autocast"] is not None
            # Autocast casts where the call is made, as CUDA's autocast key does before any kernel checks its inputs'
            # dtypes (a half input meeting fp32 weights in conv2d would stop there).
            args, kwargs = _autocast_arguments(name, state["autocast"], args, kwargs)
            try:
                try:
                    result = func(*args, **kwargs)
                    if name == "to" and target == "cuda" and isinstance(result, torch.Tensor):
                        # `x.to(device=device, dtype=x.dtype)` on meta is x itself, no copy born under the target: move it.
                        recorder.move_to_gpu(result)
                    if target == "cuda" and name in _FACTORIES and isinstance(result, torch.Tensor) and result.is_meta and not recorder.is_gpu(result):
                        # `torch.tensor(0.0, device="cuda")` makes its meta tensor without a dispatched op: it is on the GPU all
                        # the same (the Trainer compares its running loss's device with the step's loss).
                        recorder.move_to_gpu(result)
                    # On meta, `.to("cpu")` of a GPU tensor would be the GPU tensor itself.
                    return _cpu_copy(recorder, state, result) if name == "to" and target == "cpu" else result
                except RuntimeError as error:
                    # Real CPU values (indices, small tables) met meta tensors: they go to meta too.
                    if "meta" not in str(error) or "cpu" not in str(error).lower():
                        raise
                    return func(*_to_meta(args), **_to_meta(kwargs))
            finally:
                state["target"], state["autocast"] = previous, previous_autocast

    class TraceStorages(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: Optional[Dict[str, Any]] = None) -> Any:
            kwargs = kwargs or {}
            name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
            if name in ("detach", "alias") and args and isinstance(args[0], (bool, int, float)):
                # A number autograd saved as a tensor (the scale in `q * 0.125`) reaches Python dispatch as a
                # plain number; the non-reentrant checkpoint detaches what it saves, so it needs a tensor back.
                return torch.tensor(args[0])
            if name == "_local_scalar_dense" and args[0].is_meta:
                tensor = args[0]
                # One, not zero: libraries divide by what they read back (Adam: 1 - beta1 ** step).
                return False if tensor.dtype == torch.bool else (1 if not tensor.dtype.is_floating_point else 1.0)
            if name in _FUSED_OPTIMIZER_STEPS:
                # One CUDA kernel updating weights and state in place (AdamW(fused=True), nanoGPT's and HF's
                # default on a GPU): no memory of its own, and no meta kernel to run.
                return None
            if "convolution" in name:
                recorder.cudnn = True
                _record_convolution(recorder, name, args, state["autocast"])
            inputs = [a for a in _flat(args) + _flat(list(kwargs.values())) if isinstance(a, torch.Tensor)]
            if name not in _CROSS_DEVICE_OPS:
                _check_devices(recorder, name, inputs)
            # Ops the calls above reach without passing through the torch-function mode (composites' own calls).
            args, kwargs = _autocast_arguments(name, state["autocast"], args, kwargs)
            if recorder.phase == 1 and state["autocast"] is None and not recorder.autocast_seen:
                # Only a forward without autocast: under it, and in backward, the casts CUDA's autocast and
                # autograd make inside composite ops are more than the dry run mimics.
                _check_matrix_dtypes(recorder, name, args)
            try:
                out = func(*args, **kwargs)
            except NotImplementedError:
                # torch 1.13 has no meta kernels for the in-place foreach ops (the fused Adam's step count):
                # they change values, not memory.
                if name.startswith("_foreach_") and name.endswith("_"):
                    return None
                raise
            target = state["target"]
            # A tensor autograd makes from nothing in backward (the zeros a gather's backward scatters into) is on the
            # gradients' device: the GPU, in a run that trains there.
            made_in_backward = not inputs and target is None and recorder.phase == 2 and recorder.has_gpu_storage()
            gpu = target == "cuda" if target is not None else made_in_backward or any(recorder.is_gpu(t) for t in inputs)
            # An op whose schema aliases none of its outputs to an input makes new storages (each once, however often returned).
            schema = getattr(func, "_schema", None)
            fresh = schema is not None and all(r.alias_info is None for r in schema.returns)
            seen: set = set()
            for tensor in _flat(out if isinstance(out, (tuple, list)) else [out]):
                if isinstance(tensor, torch.Tensor) and id(tensor) not in seen:
                    seen.add(id(tensor))
                    recorder.saw(tensor, gpu, cpu_made=not inputs and tensor.is_meta and not made_in_backward, fresh=fresh)
            return out

    return DeviceToMeta(), TraceStorages()


def _targets_fitting(recorder: Recorder, args: Sequence[Any], kwargs: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """Class targets of the shape the loss needs where the fake batch's do not fit (one label per
    sample met scores per token, or the reverse): the analysis cannot always tell a text classifier
    from a tagger, and a real run's labels fit. Targets that fit, or are not class indices, stay."""
    import torch
    scores = args[0] if args else kwargs.get("input")
    target = args[1] if len(args) > 1 else kwargs.get("target")
    if not isinstance(scores, torch.Tensor) or not isinstance(target, torch.Tensor) or target.dtype.is_floating_point or not target.is_meta or scores.dim() < 2:
        return args, kwargs
    needed = (scores.shape[0], *scores.shape[2:])
    if tuple(target.shape) == tuple(needed):
        return args, kwargs
    fitted = torch.zeros(needed, dtype=target.dtype, device="meta")
    if recorder.is_gpu(target):
        recorder.move_to_gpu(fitted)
    if len(args) > 1:
        return (args[0], fitted, *args[2:]), kwargs
    return args, {**kwargs, "target": fitted}


#: Matrix products and where their two operands are in the arguments.
_MATRIX_OPERANDS = {"mm": (0, 1), "bmm": (0, 1), "addmm": (1, 2), "baddbmm": (1, 2), "addbmm": (1, 2), "mv": (0, 1), "addmv": (1, 2)}


def _check_matrix_dtypes(recorder: Recorder, name: str, args: Sequence[Any]) -> None:
    """A matrix product of two dtypes stops a GPU run ("expected mat1 and mat2 to have the same
    dtype"); the meta device computes it anyway (an fp32 activation meeting bf16 weights would
    otherwise double the activations the dry run counts, where the real run ends)."""
    import torch
    where = _MATRIX_OPERANDS.get(name)
    if where is None or len(args) <= max(where):
        return
    first, second = args[where[0]], args[where[1]]
    if not (isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor)) or first.dtype == second.dtype:
        return
    if first.dtype.is_floating_point and second.dtype.is_floating_point and (recorder.is_gpu(first) or recorder.is_gpu(second)):
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: {first.dtype} != {second.dtype} (aten.{name}; {_user_frames()}): a GPU run stops here")


def _cpu_copy(recorder: Recorder, state: Dict[str, Any], tensor: Any) -> Any:
    """`.cpu()` of a GPU tensor: a CPU copy, as on a real GPU (metrics compare it with CPU tensors)."""
    import torch
    if not (isinstance(tensor, torch.Tensor) and tensor.is_meta and recorder.is_gpu(tensor)):
        return tensor
    previous = state["target"]
    state["target"] = "cpu"
    try:
        return tensor.clone()
    finally:
        state["target"] = previous


#: Ops a real GPU run accepts across devices: copies, and advanced indexing by CPU indices or masks.
_CROSS_DEVICE_OPS = {"copy_", "_copy_from", "_copy_from_and_resize", "_to_copy", "to", "index", "index_put", "index_put_", "_index_put_impl_", "lift_fresh", "lift_fresh_copy", "set_", "_has_compatible_shallow_copy_type", "_local_scalar_dense", "detach", "alias"}


def _check_devices(recorder: Recorder, name: str, inputs: Sequence[Any]) -> None:
    """Stops the run at an op whose inputs mix GPU tensors with tensors the script made on the CPU
    and never moved: there a GPU run stops with "Expected all tensors to be on the same device".
    Real CPU tensors (the index tables the dry run keeps real) and 0-dim ones are left out, as
    CUDA ops take CPU scalars."""
    gpu = [t for t in inputs if recorder.is_gpu(t)]
    if not gpu:
        return
    cpu = [t for t in inputs if t.is_meta and t.dim() > 0 and recorder.is_cpu_made(t)]
    if not cpu:
        return
    raise DeviceMismatch(_mismatch_message(recorder, name, gpu, cpu))


def _mismatch_message(recorder: Recorder, name: str, gpu: Sequence[Any], cpu: Sequence[Any]) -> str:
    """Which tensors are where, in the script's words, and the line it happened at."""
    import gc
    import torch.nn as nn
    weights = set()
    for candidate in gc.get_objects():
        if isinstance(candidate, nn.Module):
            for tensor in list(candidate.parameters(recurse=False)) + list(candidate.buffers(recurse=False)):
                key = recorder._key(tensor)
                if key is not None:
                    weights.add(key)
    cpu_weights = any(recorder._key(t) in weights for t in cpu)
    gpu_weights = any(recorder._key(t) in weights for t in gpu)
    largest = lambda tensors: max(tensors, key=lambda t: t.numel())  # noqa: E731 (a weight, not its bias)
    shapes = f"{tuple(largest(cpu).shape)} on the CPU, {tuple(largest(gpu).shape)} on the GPU"
    if cpu_weights and not gpu_weights:
        what, fix = "the model's weights are on the CPU but its input is on the GPU", "move the model with .to(device)"
    elif gpu_weights and not cpu_weights:
        what, fix = "the batch is on the CPU but the model's weights are on the GPU", "move the batch with .to(device)"
    elif cpu_weights:
        what, fix = "some of the model's weights are on the CPU and some on the GPU", "move the whole model with .to(device) after building it"
    else:
        what, fix = "a tensor made on the CPU meets one on the GPU", "make it with device=... or move it with .to(device)"
    return f"{what} (aten.{name}: {shapes}; {_user_frames()}): a GPU run stops here with a device mismatch; {fix}"


def _user_frames() -> str:
    """The script's own lines on the stack: the innermost, and the outermost of the script when it differs."""
    run = _CURRENT["run"]
    roots = run.user_dirs if run is not None else ()
    here = os.path.abspath(__file__)

    def users(filename: str) -> bool:
        path = os.path.abspath(filename)
        return not filename.startswith("<") and path != here and "-packages" + os.sep not in path and any(path.startswith(root + os.sep) for root in roots)

    frames = [f for f in traceback.extract_stack() if users(f.filename)]
    if not frames:
        return "in a library the script calls"

    def at(frame: Any) -> str:
        code = (frame.line or "").strip()
        place = f"{os.path.basename(frame.filename)}:{frame.lineno}"
        return f"{code[:80]} at {place}" if code else place

    inner, outer = frames[-1], frames[0]
    return at(inner) if inner is outer or (inner.filename, inner.lineno) == (outer.filename, outer.lineno) else f"{at(inner)}, from {at(outer)}"


def _fused_dropout(recorder: Recorder, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    """Dropout as CUDA runs it: on a GPU tensor, in training and not in place, ATen takes the fused
    kernel (native_dropout), which keeps a 1-byte mask for the backward; the CPU path the meta
    device would take keeps a 4-byte noise tensor instead, a third more than the activation itself."""
    import torch
    names = ("input", "p", "training", "inplace")
    given = dict(zip(names, args))
    given.update({k: v for k, v in kwargs.items() if k in names})
    tensor, p = given.get("input"), given.get("p", 0.5)
    training, inplace = given.get("training", True), given.get("inplace", False)
    if not isinstance(tensor, torch.Tensor) or not recorder.is_gpu(tensor) or not training or inplace or not isinstance(p, (int, float)) or not 0 < p < 1 or tensor.numel() == 0 or not tensor.dtype.is_floating_point:
        return None
    return torch.native_dropout(tensor, float(p), True)[0]


_FUSED_MISH: Any = None


def _fused_mish() -> Any:
    """Mish as CUDA runs it. Its backward has a CUDA kernel but only a composite form elsewhere,
    which on meta makes eight temporaries of the input's size (softplus, tanh, sigmoid, products)
    and would raise the backward's peak; CUDA's makes just the gradient."""
    global _FUSED_MISH
    if _FUSED_MISH is None:
        import torch

        class FusedMish(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                return torch.ops.aten.mish(x)

            @staticmethod
            def backward(ctx: Any, grad: Any) -> Any:
                (x,) = ctx.saved_tensors
                return torch.empty_like(x)  # meta: the shape is all there is

        _FUSED_MISH = FusedMish
    return _FUSED_MISH


def _record_convolution(recorder: Recorder, name: str, args: Sequence[Any], autocast: Any) -> None:
    """A 2-d convolution on the GPU, forward (aten.convolution) or backward (convolution_backward)."""
    import torch
    backward = name == "convolution_backward"
    if name not in ("convolution", "convolution_backward"):
        return
    try:
        x, weight = (args[1], args[2]) if backward else (args[0], args[1])
        # convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask)
        stride, transposed, groups = (args[4], args[7], args[9]) if backward else (args[3], args[6], args[8])
        if transposed or x.dim() != 4 or not (recorder.is_gpu(x) or recorder.is_gpu(weight)):
            return
        dtype = autocast if autocast is not None and not backward and x.dtype.is_floating_point else x.dtype
        element = torch.empty((), dtype=dtype).element_size()
        n, c, h, w = (int(d) for d in x.shape)
        recorder.convolutions.append([len(recorder.events), recorder.phase, 1 if backward else 0, n, c, h, w, int(weight.shape[0]), int(weight.shape[2]), int(weight.shape[3]), int(stride[0]), int(stride[-1]), int(groups), element])
    except Exception:
        return  # an unusual signature: no workspace for it


def _to_meta(value: Any) -> Any:
    import torch
    if isinstance(value, torch.Tensor):
        return value if value.is_meta else value.to("meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_to_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_meta(v) for k, v in value.items()}
    return value


#: Factories whose values scripts and libraries compute with (indices, positions, small tables):
#: on the CPU they stay real tensors; the others (weights, buffers, batches) are shapes only.
_REAL_CPU_FACTORIES = {"arange", "tensor", "as_tensor", "linspace", "logspace", "from_numpy", "randperm", "scalar_tensor", "eye"}
# Factories that make a CPU tensor unless told a device (the `_like` ones follow their input instead).
_FACTORIES = {"randn", "rand", "randint", "zeros", "ones", "empty", "full", "arange", "tensor", "as_tensor", "randperm", "linspace", "eye", "normal", "from_numpy", "empty_strided", "logspace", "scalar_tensor"}


#: A CPU `torch.randint` of at most this many elements stays real: offsets a script slices its data
#: with (nanoGPT's `ix = torch.randint(len(data) - block_size, (batch_size,))`), which read back as
#: ones would give empty slices.
FEW_INDICES = 1 << 16


#: A CPU `torch.rand`/`randn`/`empty` of at most this many elements stays real: draws the script decides by
#: (PEFT's LyCORIS layers apply their adapter when `torch.rand(1) > module_dropout`; torchvision's
#: detection transform indexes its sizes by `torch.empty(1).uniform_(0, len(sizes))`), which read back
#: from meta would always say no, or index out of range.
FEW_DRAWS = 16


def _elements(size: Any) -> Optional[int]:
    """How many elements a factory's size makes, where every dimension is a plain int."""
    if not size or not all(isinstance(dim, int) and not isinstance(dim, bool) for dim in size):
        return None
    count = 1
    for dim in size:
        count *= dim
    return count


def _few_draws(args: Sequence[Any], kwargs: Dict[str, Any]) -> bool:
    size = kwargs.get("size")
    if size is None:
        size = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    count = _elements(size)
    return count is not None and count <= FEW_DRAWS


def _few_indices(args: Sequence[Any], kwargs: Dict[str, Any]) -> bool:
    count = _elements(kwargs.get("size", next((a for a in reversed(args) if isinstance(a, (tuple, list))), None)))
    return count is not None and count <= FEW_INDICES


def _flat(values: Any) -> List[Any]:
    out: List[Any] = []
    for value in values:
        if isinstance(value, (list, tuple)):
            out.extend(_flat(value))
        else:
            out.append(value)
    return out


class _Run:
    """What the patched torch reports to: the run in progress (one at a time per process)."""

    def __init__(self, spec: Dict[str, Any], steps: int, tmp: str, user_dirs: Tuple[str, ...] = ()) -> None:
        self.recorder = Recorder()
        self.assumed = _assumed(spec)
        self.applied: set = set()  # where the assumed values went in (argparse options, constants)
        self.user_dirs = user_dirs  # the user's frames on a stack: the ones under these (the script's folder, the project)
        self.spec = spec
        self.notes: List[str] = []  # what the patches changed that the user should know
        self.steps = steps
        self.batches = 0
        self.tmp = tmp
        # Optimizer steps taken, per optimizer: a loop with no DataLoader (random batches, a
        # generator) ends once every optimizer that stepped has stepped `steps` times.
        self.optimizer_steps: Dict[int, int] = {}
        self.optimizers = 0  # made by the script
        self.detection: Optional[str] = None  # a torchvision detection model the script moved (Module._apply)
        # The torch-function mode of this run (_make_modes), re-entered where torch leaves it (a checkpoint's rerun).
        self.device_mode: Any = None
        # Paths in the project the script looked for and did not find (`assert os.path.exists(path)`), for the error.
        self.missing_paths: List[str] = []

    def completed_steps(self) -> int:
        # Optimizer steps where the script took any (several batches each when it accumulates), else batches.
        return min(self.optimizer_steps.values()) if self.optimizer_steps else self.batches


_CURRENT: Dict[str, Optional[_Run]] = {"run": None}


def _note_once(note: str) -> None:
    """A note for the run in progress, said once however often the patch that makes it is called."""
    run = _CURRENT["run"]
    if run is not None and note not in run.notes:
        run.notes.append(note)


def _current() -> _Run:
    run = _CURRENT["run"]
    if run is None:
        raise RuntimeError("no dry run in progress")
    return run


#: Batches per optimizer step a dry run follows at most (gradient accumulation).
ACCUMULATION_LIMIT = 16


class FakeBatches:
    """A DataLoader's stand-in: `steps` batches, then the run ends. A batch is shaped like the
    dataset's first sample where the dataset can give one without reading files (in-memory
    tensors), else like the spec."""

    def __init__(self, dataset: Any = None, batch_size: Optional[int] = 1, *args: Any, **kwargs: Any) -> None:
        run = _current()
        self.dataset = dataset
        self.batch_size = int(run.spec.get("batchSize") or batch_size or 1)
        self.sample = _with_stand_ins_shaped(dataset, _first_sample(dataset), run.spec)
        # What code that reads a DataLoader's attributes (or subclasses it, as timm does) expects.
        self.sampler = kwargs.get("sampler")
        self.batch_sampler = kwargs.get("batch_sampler")
        self.num_workers = 0
        self.drop_last = bool(kwargs.get("drop_last", False))
        self.pin_memory = bool(kwargs.get("pin_memory", False))
        self.collate_fn = kwargs.get("collate_fn")
        self.shuffle = bool(kwargs.get("shuffle", False))
        self.timeout = kwargs.get("timeout", 0)
        self.worker_init_fn = kwargs.get("worker_init_fn")
        self.multiprocessing_context = None
        self.generator = kwargs.get("generator")
        self.prefetch_factor = kwargs.get("prefetch_factor")
        self.persistent_workers = bool(kwargs.get("persistent_workers", False))
        self.pin_memory_device = kwargs.get("pin_memory_device", "")

    def __len__(self) -> int:
        return int(_current().spec.get("length", 1000))

    def __iter__(self) -> Iterator[Any]:
        while True:
            run = _current()
            # Where the script made an optimizer, the run ends at its steps (optimizer_init): a loop that
            # accumulates gradients, or fetches a step's micro-batches first (transformers' Trainer),
            # takes several batches per step. Without one, after `steps` batches.
            if run.batches >= (run.steps * ACCUMULATION_LIMIT if run.optimizers else run.steps):
                raise DryRunComplete()
            run.batches += 1
            if self.sample is not None:
                yield self._collated() if self.collate_fn is not None else _stacked(self.sample, self.batch_size)
                continue
            hub_batch = dry_run_datasets.batch_from(self.dataset, self.collate_fn, run.spec, self.batch_size, make_batch)
            if hub_batch is not None:
                yield hub_batch
                continue
            # Tensors the script loaded from a file it does not have here: one (token ids) gives its rows
            # as the batches; where it moved them to the GPU first, the batches come from there.
            loaded = [self.dataset] if isinstance(self.dataset, PretrainedWeights) else [t for t in getattr(self.dataset, "tensors", ()) if isinstance(t, PretrainedWeights)]
            one_tensor = isinstance(self.dataset, PretrainedWeights) and self.dataset.tensor
            batch = make_batch({**run.spec, "tensors": run.spec.get("tensors", [])[:1]} if one_tensor else run.spec, self.batch_size)
            yield _to_gpu(batch) if loaded and all(t.gpu for t in loaded) else batch

    def _collated(self) -> Any:
        """The loader's own collate function over `batch_size` of the dataset's samples (in memory: `_first_sample`
        read one), as a DataLoader gives them: a collator that pads or pairs (TRL's preference collator) makes its own batch."""
        rows = len(self.dataset)
        return self.collate_fn([self.dataset[i % rows] for i in range(self.batch_size)])


#: Operations whose result's shape depends on the tensor's values: no meta kernel can give it.
_DATA_DEPENDENT = {"nonzero", "argwhere", "masked_select", "unique", "_unique", "_unique2", "unique_consecutive", "unique_dim", "bincount", "_local_scalar_dense", "histc", "nonzero_numpy"}


def _values_read(error: BaseException) -> Optional[str]:
    """Where the step reads a GPU tensor's values to decide what to do next (`torch.nonzero` of a mask, a
    tensor's `.item()` in a library), which a dry run does not have: the error says which operation and
    where, plainly, instead of PyTorch's note about meta kernels."""
    text = str(error)
    match = re.search(r"aten::(\w+)'?:? (?:attempted to run this operator with Meta tensors|with arguments from the 'Meta' backend)", text)
    if not (match and match.group(1) in _DATA_DEPENDENT) and "cannot be called on meta tensors" not in text:
        return None
    operation = match.group(1) if match else "a tensor's value"
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not os.path.abspath(f.filename).startswith(os.path.dirname(os.path.abspath(__file__)))]
    frame = next((f for f in reversed(frames) if "/torch/" not in f.filename.replace(os.sep, "/")), None)
    where = f" in {_library_path(frame.filename)} line {frame.lineno}" if frame else ""
    return (f"the training step reads the values of a GPU tensor ({operation}{where}), which a dry run does not have: "
            "it keeps shapes, not values; the static estimate stands")


#: torchvision's detection models (and their subclasses: MaskRCNN, KeypointRCNN are FasterRCNNs).
_DETECTION_MODELS = {"FasterRCNN", "MaskRCNN", "KeypointRCNN", "RetinaNet", "SSD", "SSDLite", "FCOS", "GeneralizedRCNN"}


def _detection_reason(run: "_Run", error: BaseException) -> Optional[str]:
    """A torchvision detection model's training step picks its proposals and the boxes it learns from
    by their scores' and overlaps' values (nms, top-k, matching), and its loader gives targets as
    dicts of boxes and labels that fake batches are not: whatever stopped the run first (the script's
    `t.items()` on a fake label, or torchvision's nonzero), the reason is the same, said once."""
    if run.detection is None:
        return None
    values = _values_read(error)
    frames = traceback.extract_tb(error.__traceback__)
    in_detection = any("torchvision/models/detection/" in f.filename.replace(os.sep, "/") or "torchvision/ops/" in f.filename.replace(os.sep, "/") for f in frames)
    if values is None and not in_detection and not isinstance(error, (AttributeError, TypeError, KeyError, IndexError)):
        return None
    return (f"torchvision's {run.detection} chooses the proposals and boxes it trains on by the values of its scores and "
            "of the targets' boxes, which a dry run does not have (it keeps shapes, not values, and its fake batches "
            "carry no boxes): the static estimate stands")


def _library_path(filename: str) -> str:
    """`trl/trainer/utils.py` for a file inside an installed package, else the file's name."""
    parts = filename.replace(os.sep, "/").split("/")
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[parts.index(marker) + 1:])
    return os.path.basename(filename)


def _to_gpu(batch: Any) -> Any:
    if isinstance(batch, dict):
        return {key: value.cuda() for key, value in batch.items()}
    return tuple(t.cuda() for t in batch) if isinstance(batch, tuple) else batch.cuda()


def _first_sample(dataset: Any) -> Any:
    import torch
    if dataset is None:
        return None
    try:
        sample = dataset[0]
    except BaseException:  # the dataset's own code: a file it cannot read, anything
        return None
    leaves = _flat(list(sample.values()) if isinstance(sample, dict) else sample if isinstance(sample, (tuple, list)) else [sample])
    return sample if leaves and all(isinstance(leaf, (torch.Tensor, int, float)) for leaf in leaves) else None


def _is_stand_in(tensor: Any) -> bool:
    """A tensor made from what `np.load` and its kin give for a file that is not here (`_patch_token_files`):
    one dimension of TOKEN_FILE_ELEMENTS zeros (a cast, `.float()`, keeps both)."""
    import torch
    return isinstance(tensor, torch.Tensor) and tensor.device.type == "cpu" and tensor.dim() == 1 and tensor.shape[0] == TOKEN_FILE_ELEMENTS and not bool(tensor.any())


def _with_stand_ins_shaped(dataset: Any, sample: Any, spec: Dict[str, Any]) -> Any:
    """A `TensorDataset` of arrays loaded from files that are not here (`np.load("data/features.npy")`)
    gives one number per sample where the script's rows have a shape: each such tensor's sample takes the
    shape of the spec's tensor at its place (the input first, then the labels), keeping the script's dtype."""
    import torch
    tensors = getattr(dataset, "tensors", None)
    if not isinstance(sample, tuple) or not isinstance(tensors, tuple) or len(tensors) != len(sample):
        return sample
    stand_ins = [_is_stand_in(t) for t in tensors]  # each a scan of 4M elements: once
    if not any(stand_ins):
        return sample
    shapes = [entry.get("shape", []) for entry in (spec.get("tensors") or [])]
    return tuple(torch.empty([int(d) for d in shapes[i]], dtype=t.dtype) if stand_in and i < len(shapes) else part
                 for i, (t, part, stand_in) in enumerate(zip(tensors, sample, stand_ins)))


def _stacked(sample: Any, batch_size: int) -> Any:
    """What the default collate makes of `batch_size` samples like `sample` (shapes only)."""
    import torch
    if isinstance(sample, torch.Tensor):
        return torch.empty((batch_size, *sample.shape), dtype=sample.dtype)
    if isinstance(sample, bool):
        return torch.zeros(batch_size, dtype=torch.bool)
    if isinstance(sample, int):
        return torch.zeros(batch_size, dtype=torch.long)
    if isinstance(sample, float):
        return torch.zeros(batch_size, dtype=torch.float64)
    if isinstance(sample, dict):
        return {key: _stacked(value, batch_size) for key, value in sample.items()}
    return type(sample)(_stacked(value, batch_size) for value in sample) if isinstance(sample, tuple) else [_stacked(value, batch_size) for value in sample]


def make_batch(spec: Dict[str, Any], batch_size: int) -> Any:
    """One batch on the CPU as the loader gives it: the tensors of the spec with the batch prepended."""
    import torch

    def tensor(entry: Dict[str, Any]) -> Any:
        shape = (batch_size, *[int(d) for d in entry.get("shape", [])])
        kind = entry.get("dtype", "float32")
        if kind in ("int64", "long"):
            return torch.zeros(shape, dtype=torch.long)
        return torch.zeros(shape, dtype=getattr(torch, kind, torch.float32))

    parts = spec.get("tensors") or [{"shape": [1], "dtype": "float32"}, {"shape": [], "dtype": "int64"}]
    if spec.get("kind") == "dict":
        return {entry["name"]: tensor(entry) for entry in parts}
    return tuple(tensor(entry) for entry in parts) if len(parts) > 1 else tensor(parts[0])


def _sandbox_hook(event: str, args: Tuple[Any, ...]) -> None:
    """Refuses, while a run is in progress, what a dry run must not do (an audit hook stays for the process's life)."""
    run = _CURRENT["run"]
    if run is None:
        return
    allowed = os.path.realpath(run.tmp)

    def inside(path: Any) -> bool:
        try:
            real = os.path.realpath(os.fsdecode(path))
        except Exception:
            return False
        return real == allowed or real.startswith(allowed + os.sep)

    if event in ("socket.connect", "socket.getaddrinfo", "socket.sendto", "socket.bind"):
        raise DryRunRefused(f"the dry run has no network ({event})")
    if event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "pty.spawn"):
        raise DryRunRefused(f"the dry run starts no processes ({event})")
    if event == "open" and len(args) >= 2 and isinstance(args[1], str) and any(c in args[1] for c in "wax+") and not inside(args[0]):
        raise DryRunRefused(f"the dry run writes only in its temporary folder, not {args[0]}")
    if event == "open" and len(args) >= 3 and isinstance(args[2], int) and args[2] & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and not inside(args[0]):
        raise DryRunRefused(f"the dry run writes only in its temporary folder, not {args[0]}")
    if event in ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "shutil.rmtree", "os.truncate", "os.chmod", "os.symlink", "os.link") and args and not inside(args[0]):
        raise DryRunRefused(f"the dry run changes no file outside its temporary folder ({event} {args[0]})")


_PATCHED: Dict[str, Any] = {}


def _stream_classes() -> Tuple[type, type]:
    """A CUDA stream and event where the dry run runs every op in order on the CPU: waiting is a
    no-op, no time passes. On PyTorch 2 they derive from its stream and event bases, as its compiler's
    device registry requires of `torch.cuda.Stream` and `torch.cuda.Event`."""
    try:
        from torch._streambase import _EventBase, _StreamBase  # type: ignore[import-not-found]
    except ImportError:
        _StreamBase = _EventBase = object  # type: ignore[misc,assignment]

    class Stream(_StreamBase):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        def wait_event(self, event: Any) -> None:
            return None

        def wait_stream(self, stream: Any) -> None:
            return None

        def record_event(self, event: Any = None) -> Any:
            return event if event is not None else Event()

        def query(self) -> bool:
            return True

        def synchronize(self) -> None:
            return None

        def __eq__(self, other: Any) -> bool:
            return isinstance(other, Stream)

        __hash__ = object.__hash__

    class Event(_EventBase):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        def record(self, stream: Any = None) -> None:
            return None

        def wait(self, stream: Any = None) -> None:
            return None

        def query(self) -> bool:
            return True

        def elapsed_time(self, end_event: Any) -> float:
            return 0.0

        def synchronize(self) -> None:
            return None

    return Stream, Event


class _DeviceProperties:
    """What `torch.cuda.get_device_properties` says in a dry run: the A100 40GB its constants were measured on."""

    name = "dry run (A100-SXM4-40GB)"
    major, minor = 8, 0
    total_memory = 40 * 1024 ** 3
    multi_processor_count = 108
    is_integrated = is_multi_gpu_board = False


def _patch_torch() -> None:
    """CUDA looks present; loaders, datasets, backward and optimizer steps report to the run in
    progress. Once per process: the patches read the current run."""
    if _PATCHED:
        return
    import torch
    import torch.utils.data as data
    # The patches in the other modules read the run in progress through this.
    dry_run_frameworks.current_run = lambda: _CURRENT["run"]
    _PATCHED["meta kernels"] = _meta_kernels()
    sys.addaudithook(_sandbox_hook)
    torch.cuda.is_available = lambda: True  # type: ignore[assignment]
    torch.cuda.device_count = lambda: 1  # type: ignore[assignment]
    for name in ("set_device", "synchronize", "empty_cache", "manual_seed", "manual_seed_all", "reset_peak_memory_stats", "init"):
        setattr(torch.cuda, name, lambda *a, **k: None)
    torch.cuda.get_device_name = lambda *a, **k: "dry run"  # type: ignore[assignment]
    torch.cuda.current_device = lambda: 0  # type: ignore[assignment]
    torch.cuda.is_bf16_supported = lambda: True  # type: ignore[assignment]
    for name in ("max_memory_allocated", "memory_allocated", "max_memory_reserved", "memory_reserved"):
        setattr(torch.cuda, name, lambda *a, **k: 0)
    # PyTorch 2 asks the driver from inside its optimizers (is a CUDA graph being captured?) and
    # libraries ask what GPU this is: on a machine without one, a CUDA build of torch would fail there.
    torch.cuda.is_current_stream_capturing = lambda: False  # type: ignore[assignment]
    torch.cuda.get_device_capability = lambda *a, **k: (8, 0)  # type: ignore[assignment]
    torch.cuda.get_device_properties = lambda *a, **k: _DeviceProperties()  # type: ignore[assignment]
    torch.cuda.mem_get_info = lambda *a, **k: (_DeviceProperties.total_memory, _DeviceProperties.total_memory)  # type: ignore[assignment]
    torch.cuda.memory_stats = lambda *a, **k: {}  # type: ignore[assignment]
    # Streams and events (timm's PrefetchLoader copies the next batch on a side stream): one stream, in order.
    stream, event = _stream_classes()
    torch.cuda.Stream, torch.cuda.Event = stream, event  # type: ignore[assignment,misc]
    torch.cuda.current_stream = lambda *a, **k: stream()  # type: ignore[assignment]
    torch.cuda.default_stream = lambda *a, **k: stream()  # type: ignore[assignment]
    torch.cuda.stream = lambda *a, **k: contextlib.nullcontext()  # type: ignore[assignment]

    # A class, not a function: libraries subclass DataLoader (timm's MultiEpochsDataLoader).
    data.DataLoader = FakeBatches  # type: ignore[assignment,misc]
    torch.utils.data.DataLoader = FakeBatches  # type: ignore[assignment,misc]

    original_backward = torch.Tensor.backward
    original_autograd_backward = torch.autograd.backward

    def in_phase(phase: int, call: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            run = _CURRENT["run"]
            if run is None:
                return call(*args, **kwargs)
            recorder = run.recorder
            before = recorder.phase
            recorder.phase = phase
            try:
                return call(*args, **kwargs)
            finally:
                recorder.phase = 1 if phase == 3 else before
        return wrapped

    original_parameter_new = torch.nn.Parameter.__new__

    def parameter_new(cls: Any, data: Any = None, requires_grad: bool = True) -> Any:
        parameter = original_parameter_new(cls, data, requires_grad)
        run = _CURRENT["run"]
        if run is not None and isinstance(data, torch.Tensor):
            run.recorder.adopt(parameter, data)
        return parameter

    torch.nn.Parameter.__new__ = staticmethod(parameter_new)  # type: ignore[assignment]
    original_apply = torch.nn.Module._apply

    def apply(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        # Module.to / .half() / .cuda() replace each parameter's `.data` (set_data, no op the modes see):
        # the parameter no longer holds its old storage, which is freed unless something else holds it.
        run = _CURRENT["run"]
        if run is None:
            return original_apply(self, fn, *args, **kwargs)
        if run.detection is None and type(self).__module__.startswith("torchvision.models.detection.") and type(self).__name__ in _DETECTION_MODELS:
            run.detection = type(self).__name__
        # Its own tensors: each submodule's _apply (called from this one) sees to its own.
        tensors = list(self.parameters(recurse=False)) + list(self.buffers(recurse=False))
        before = [(t, run.recorder._key(t)) for t in tensors]
        result = original_apply(self, fn, *args, **kwargs)
        for tensor, key in before:
            if run.recorder._key(tensor) != key:
                run.recorder.let_go(tensor, key)
        return result

    torch.nn.Module._apply = apply  # type: ignore[method-assign]
    _patch_checkpoint_reruns()
    torch.Tensor.backward = in_phase(2, original_backward)  # type: ignore[method-assign]
    torch.autograd.backward = in_phase(2, original_autograd_backward)  # type: ignore[assignment]

    import types
    original_init = torch.optim.Optimizer.__init__

    def counted(optimizer: Any) -> None:
        """One more step of this optimizer; the run ends once every optimizer has stepped `steps` times."""
        run = _CURRENT["run"]
        if run is not None:
            run.optimizer_steps[id(optimizer)] = run.optimizer_steps.get(id(optimizer), 0) + 1
            if min(run.optimizer_steps.values()) >= run.steps:
                raise DryRunComplete()

    def optimizer_init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        if _CURRENT["run"] is not None:
            _CURRENT["run"].optimizers += 1
        step = type(self).step

        def stepped(this: Any, *a: Any, **k: Any) -> Any:
            # A closure (Lightning's training step, LBFGS) runs the forward and backward inside step().
            if a and callable(a[0]):
                a = (in_phase(1, a[0]),) + tuple(a[1:])
            elif callable(k.get("closure")):
                k = {**k, "closure": in_phase(1, k["closure"])}
            _note_pytorch2_foreach_step(this)
            result = in_phase(3, step)(this, *a, **k)
            counted(this)
            return result

        self.step = types.MethodType(stepped, self)
        # LOMO and AdaLomo (lomo-optim, the Trainer's optim="lomo") update each parameter inside the backward
        # their fused_backward(loss, lr) runs, and never call step(): that call is their step.
        fused = getattr(type(self), "fused_backward", None)
        if callable(fused):

            def fused_backward(this: Any, *a: Any, **k: Any) -> Any:
                result = in_phase(2, fused)(this, *a, **k)
                counted(this)
                return result

            self.fused_backward = types.MethodType(fused_backward, self)

    torch.optim.Optimizer.__init__ = optimizer_init  # type: ignore[method-assign]

    class GradScaler:
        """Loss scaling changes no memory worth counting; its CUDA checks do not run on meta."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

        def scale(self, value: Any) -> Any:
            return value

        def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
            return optimizer.step(*args, **kwargs)

        def unscale_(self, optimizer: Any) -> None:
            pass

        def update(self, *args: Any, **kwargs: Any) -> None:
            pass

        def get_scale(self) -> float:
            return 65536.0

        def state_dict(self) -> Dict[str, Any]:
            return {}

        def load_state_dict(self, state: Any) -> None:
            pass

        def is_enabled(self) -> bool:
            return True

    torch.cuda.amp.GradScaler = GradScaler  # type: ignore[misc,assignment]
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):
        torch.amp.GradScaler = GradScaler  # type: ignore[misc,assignment]

    torch.Tensor.numpy = lambda self, *a, **k: __import__("numpy").zeros(tuple(self.shape))  # type: ignore[method-assign]
    original_tolist = torch.Tensor.tolist

    def tolist(self: Any) -> Any:
        # Model code reads small tensors back while it builds (timm: drop-path rates from a linspace).
        if self.device.type == "meta":
            return __import__("numpy").zeros(tuple(self.shape), dtype=float if self.dtype.is_floating_point else int).tolist()
        return original_tolist(self)

    torch.Tensor.tolist = tolist  # type: ignore[method-assign]
    torch.save = lambda *a, **k: None  # checkpoints are not written  # type: ignore[assignment]
    _patch_value_dependent_ops()
    _patch_argparse()
    _patch_datasets()
    _patch_pretrained_weights()
    _patch_token_files()
    _patch_fused_attention()
    _patch_compile()
    dry_run_frameworks.patch_distributed()
    # Lightning, sharding, Hugging Face (transformers, datasets, diffusers): patched as the script imports them.
    sys.meta_path.insert(0, AfterImport({**dry_run_frameworks.after_import_patches(), **dry_run_hub.after_import_patches(), **dry_run_datasets.after_import_patches(), **dry_run_diffusers.after_import_patches()}))
    # Hugging Face's own offline switches: a checkpoint or dataset not cached is an error the hub's patches catch.
    dry_run_hub.offline_environment()
    _patch_writes()
    _patch_path_checks()


#: What a script raises when it checked for its data first (`assert os.path.exists(path)`): said with the paths it looked for.
_MISSING_DATA_ERRORS = (AssertionError,)


_HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))


def _patch_path_checks() -> None:
    """`os.path.exists`, `isfile` and `isdir` answer as before; a path in the project they deny (the
    script's data, not here) is kept for the error, so a bare `assert os.path.exists(path)` says what was
    missing."""
    def watched(original: Callable[[Any], bool]) -> Callable[[Any], bool]:
        def check(path: Any) -> bool:
            found = original(path)
            run = _CURRENT["run"]
            # The harness's own checks (is a checkpoint here to stand in for?) are not the script's.
            caller = sys._getframe(1).f_code.co_filename
            if not found and run is not None and isinstance(path, (str, os.PathLike)) and len(run.missing_paths) < 3 and os.path.dirname(os.path.abspath(caller)) != _HARNESS_DIR:
                given = os.fsdecode(path)
                real = os.path.realpath(given)
                if real.startswith(os.getcwd() + os.sep) and given not in run.missing_paths and not real.startswith(os.path.realpath(run.tmp)):
                    run.missing_paths.append(given)
            return found
        return check

    os.path.exists, os.path.isfile, os.path.isdir = watched(os.path.exists), watched(os.path.isfile), watched(os.path.isdir)  # type: ignore[assignment]


class PretrainedWeights(dict):
    """Weights the script would download (torchvision's `weights=`, timm's `pretrained=True`) or read
    from a file it does not have here: loading them keeps the model's own, of the same sizes. A key
    the script looks up (`checkpoint["model"]`) is more of them."""

    def __missing__(self, key: Any) -> "PretrainedWeights":
        return PretrainedWeights()

    #: Moved to the GPU (`.cuda()`, `.to(device)`): the batches made in its place are there too.
    gpu = False
    #: Given by a tensor's method (`.view(-1, 256)`): one tensor, whose rows a loader gives as its batches.
    tensor = False

    def __getattr__(self, name: str) -> Any:
        # A data file it stands for (`torch.load("data/tokens.pt").view(-1, 256).to(device)`): every
        # method gives more of it; the loaders fed with it make batches of the analysed shape.
        if name.startswith("__"):
            raise AttributeError(name)

        def method(*args: Any, **kwargs: Any) -> "PretrainedWeights":
            more = PretrainedWeights()
            more.gpu = self.gpu or name == "cuda" or (name == "to" and any(_is_cuda(a) for a in (*args, kwargs.get("device"))))
            more.tensor = True
            return more
        return method


def _patch_pretrained_weights() -> None:
    """No download and no missing file stops the run: pretrained weights change values, not memory."""
    import torch
    import torch.hub

    def no_download(*args: Any, **kwargs: Any) -> PretrainedWeights:
        return PretrainedWeights()

    torch.hub.load_state_dict_from_url = no_download  # type: ignore[assignment]
    for module_name in ("torchvision.models._api", "torchvision._internally_replaced_utils"):
        module = sys.modules.get(module_name)
        if module is None:
            with contextlib.suppress(Exception):
                module = __import__(module_name, fromlist=["_"])
        if module is not None and hasattr(module, "load_state_dict_from_url"):
            module.load_state_dict_from_url = no_download  # type: ignore[attr-defined]

    original_load = torch.load

    def load(f: Any, *args: Any, **kwargs: Any) -> Any:
        return PretrainedWeights() if _missing_file(f) else original_load(f, *args, **kwargs)

    torch.load = load  # type: ignore[assignment]
    for owner in (torch.nn.Module, torch.optim.Optimizer):
        original = owner.load_state_dict

        def load_state_dict(self: Any, state_dict: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            if isinstance(state_dict, PretrainedWeights):
                return torch.nn.modules.module._IncompatibleKeys([], []) if isinstance(self, torch.nn.Module) else None
            return _original(self, state_dict, *args, **kwargs)

        owner.load_state_dict = load_state_dict  # type: ignore[method-assign]
    # timm loads pretrained weights from the Hugging Face Hub (or a URL) in timm.models._builder
    # (timm.models.helpers before 0.9): patched when the script imports it.
    sys.meta_path.insert(0, AfterImport({"timm.models._builder": _skip_timm_pretrained, "timm.models.helpers": _skip_timm_pretrained, "timm.data.dataset_factory": _timm_datasets}))


def _patch_compile() -> None:
    """`torch.compile` (which torch 1.13 lacks) and `Module.compile()`: the model runs eagerly
    (compiled kernels keep a little less). PyTorch 2's own would start Inductor's pool of compile
    workers, processes the dry run refuses, and could not compile for a GPU that is not there."""
    import torch

    def eager(what: str) -> None:
        _note_once(f"{what}: run eagerly (compiled kernels would keep a little less)")

    def compile(model: Any = None, *args: Any, **kwargs: Any) -> Any:
        eager("torch.compile")
        return model if model is not None else (lambda fn: fn)

    torch.compile = compile  # type: ignore[attr-defined]
    if hasattr(torch.nn.Module, "compile"):  # PyTorch >= 2.2
        torch.nn.Module.compile = lambda self, *args, **kwargs: eager("Module.compile()")  # type: ignore[method-assign]
    # Pinned host memory is not GPU memory, and torch 1.13 cannot pin without a CUDA runtime.
    torch.Tensor.pin_memory = lambda self, *args, **kwargs: self  # type: ignore[method-assign]


def _patch_fused_attention() -> None:
    """PyTorch 2's `F.scaled_dot_product_attention`, which torch 1.13 lacks, as its fused kernels
    (flash, memory-efficient) run it on a GPU: the output, and for the backward the query, key,
    value, output and an fp32 log-sum-exp per query row; no attention matrix."""
    import torch
    import torch.nn.functional as F
    # PyTorch 2 has the function, but on the meta device it takes the math path, which keeps the
    # attention matrix that a GPU's fused kernels never make: a tensor the script keeps on the
    # CPU gets the real function, one bound for the GPU the fused kernels' memory.
    native = getattr(F, "scaled_dot_product_attention", None)
    # timm takes its fused path when the function exists. On the measured A100 runs (PyTorch 2.4) its
    # manual path, which keeps the attention matrices, left fewer runs under-estimated (vision
    # Transformers: 3.6% under by more than 10%, against 7.2% fused; docs/dry-run.md): the dry run
    # keeps it unless the user chose (TIMM_FUSED_ATTN).
    os.environ.setdefault("TIMM_FUSED_ATTN", "0")

    class FusedAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, query: Any, key: Any, value: Any) -> Any:  # noqa: ANN401
            out = query.new_empty(tuple(query.shape[:-1]) + (value.shape[-1],))
            logsumexp = query.new_empty(tuple(query.shape[:-1]), dtype=torch.float32)
            ctx.save_for_backward(query, key, value, out, logsumexp)
            return out

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:  # noqa: ANN401
            query, key, value, _, _ = ctx.saved_tensors
            return query.new_empty(query.shape), key.new_empty(key.shape), value.new_empty(value.shape)

    def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0, is_causal: bool = False, scale: Any = None, enable_gqa: bool = False) -> Any:
        if native is not None and isinstance(query, torch.Tensor) and not query.is_meta:
            extra = {"scale": scale} if scale is not None else {}
            return native(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, **extra)
        return FusedAttention.apply(query, key, value)

    F.scaled_dot_product_attention = scaled_dot_product_attention  # type: ignore[attr-defined]


#: Elements of a token file the script memory-maps but does not have here (nanoGPT's train.bin): enough for any context.
TOKEN_FILE_ELEMENTS = 1 << 22


def _missing_file(file: Any) -> bool:
    """A path the script names that is not here (a checkpoint, a token file): not a file object."""
    return isinstance(file, (str, os.PathLike)) and not os.path.exists(file)


def _patch_token_files() -> None:
    """`np.memmap`, `np.fromfile`, `np.load` and `torch.from_file` of a file that is not here (a tokenised
    corpus) give zeros of the dtype asked for, as a dataset class that cannot read its files gives fake batches."""
    import torch
    original_from_file = torch.from_file

    def from_file(filename: Any, *args: Any, **kwargs: Any) -> Any:
        if _missing_file(filename):
            size = kwargs.get("size", args[1] if len(args) > 1 else 0) or TOKEN_FILE_ELEMENTS
            return torch.zeros(min(int(size), TOKEN_FILE_ELEMENTS), dtype=kwargs.get("dtype") or torch.float32, device="cpu")
        return original_from_file(filename, *args, **kwargs)

    torch.from_file = from_file  # type: ignore[assignment]
    try:
        import numpy as np
    except ImportError:
        return
    original_memmap, original_fromfile, original_load = np.memmap, np.fromfile, np.load
    missing = _missing_file

    def memmap(filename: Any, dtype: Any = np.uint8, mode: str = "r+", offset: int = 0, shape: Any = None, order: str = "C") -> Any:
        if missing(filename) and mode in ("r", "c", "r+"):
            return np.zeros(shape if shape is not None else TOKEN_FILE_ELEMENTS, dtype=dtype, order=order)
        return original_memmap(filename, dtype=dtype, mode=mode, offset=offset, shape=shape, order=order)

    def fromfile(file: Any, dtype: Any = float, count: int = -1, *args: Any, **kwargs: Any) -> Any:
        if missing(file):
            return np.zeros(count if count >= 0 else TOKEN_FILE_ELEMENTS, dtype=dtype)
        return original_fromfile(file, dtype, count, *args, **kwargs)

    def load(file: Any, *args: Any, **kwargs: Any) -> Any:
        if missing(file):
            return np.zeros(TOKEN_FILE_ELEMENTS, dtype=np.int64)
        return original_load(file, *args, **kwargs)

    np.memmap, np.fromfile, np.load = memmap, fromfile, load  # type: ignore[assignment,misc]


def _skip_timm_pretrained(module: Any) -> None:
    if hasattr(module, "load_pretrained"):
        module.load_pretrained = lambda *args, **kwargs: None


def _timm_datasets(module: Any) -> None:
    """timm's `create_dataset(name, root=...)` of a folder that is not here (timm asserts it exists)
    or a dataset it would download: a stand-in of its length; the loader makes the batches."""
    original = getattr(module, "create_dataset", None)
    if original is None:
        return

    def create_dataset(name: Any = "", root: Any = None, split: Any = "validation", *args: Any, **kwargs: Any) -> Any:
        try:
            return original(name, root, split, *args, **kwargs)
        except (AssertionError, OSError, RuntimeError, ValueError):
            return FakeDataset(split="train" if str(split).startswith("train") else "validation")

    module.create_dataset = create_dataset


def _patch_value_dependent_ops() -> None:
    """Ops whose output shape torch 1.13's meta device wants from values it does not have, where
    the shape is known anyway: repeat_interleave by a count (grouped attention heads, rotary
    tables), one_hot with num_classes, and assertions on values."""
    import torch
    import torch.nn.functional as F
    originals = (torch.repeat_interleave, torch.Tensor.repeat_interleave, F.one_hot, torch._assert_async)

    def repeat_interleave(original: Any) -> Any:
        def call(input: Any, repeats: Any = None, dim: Optional[int] = None, *, output_size: Optional[int] = None) -> Any:
            if isinstance(input, torch.Tensor) and input.is_meta and output_size is None and repeats is not None:
                count = repeats if isinstance(repeats, int) else int(repeats.item()) if isinstance(repeats, torch.Tensor) and repeats.numel() == 1 and not repeats.is_meta else None
                if count is None and isinstance(repeats, torch.Tensor) and not repeats.is_meta:
                    output_size = int(repeats.sum().item())  # real counts: their sum is the length
                if count is not None:
                    x = input.flatten() if dim is None else input
                    d = 0 if dim is None else dim % x.dim()
                    shape = list(x.shape)
                    return x.unsqueeze(d + 1).expand(*shape[: d + 1], count, *shape[d + 1:]).flatten(d, d + 1)
            args = [input] + ([] if repeats is None else [_to_meta(repeats) if isinstance(input, torch.Tensor) and input.is_meta else repeats]) + ([] if dim is None else [dim])
            return original(*args, **({} if output_size is None else {"output_size": output_size}))
        return call

    def one_hot(input: Any, num_classes: int = -1) -> Any:
        if isinstance(input, torch.Tensor) and input.is_meta and num_classes > 0:
            return torch.empty(*input.shape, num_classes, dtype=torch.long, device="meta")
        return originals[2](input, num_classes)

    def assert_async(input: Any, *args: Any) -> None:
        if not (isinstance(input, torch.Tensor) and input.is_meta):
            originals[3](input, *args)

    torch.repeat_interleave = repeat_interleave(originals[0])  # type: ignore[assignment]
    torch.Tensor.repeat_interleave = repeat_interleave(originals[1])  # type: ignore[method-assign]
    F.one_hot = one_hot
    torch._assert_async = assert_async  # type: ignore[assignment]


#: Samples in the train and test splits of torchvision's datasets, and their classes: scripts split
#: them by count (`random_split(mnist, [55000, 5000])`) and size heads by `len(dataset.classes)`.
_DATASET_SIZES: Dict[str, Tuple[int, int, int]] = {
    "MNIST": (60000, 10000, 10), "FashionMNIST": (60000, 10000, 10), "KMNIST": (60000, 10000, 10), "QMNIST": (60000, 60000, 10),
    "CIFAR10": (50000, 10000, 10), "CIFAR100": (50000, 10000, 100), "SVHN": (73257, 26032, 10), "STL10": (5000, 8000, 10),
    "ImageNet": (1281167, 50000, 1000), "Food101": (75750, 25250, 101), "OxfordIIITPet": (3680, 3669, 37),
    "Flowers102": (1020, 6149, 102), "StanfordCars": (8144, 8041, 196), "Caltech101": (8677, 8677, 101), "Places365": (1803460, 36500, 365),
}


class FakeDataset:
    """A dataset that reads nothing. Given the script's transform, each sample is a blank image of the
    dataset's own size and mode put through it, so the loader's batches have the shapes its pipeline
    makes (two augmented views of one image, a grayscale conversion, a crop); without one, its length
    only (the loader makes batches of the analysed shape)."""

    sizes: Tuple[int, int, int] = (1000, 1000, 1000)
    #: The samples' PIL mode and (width, height); None for datasets of many sizes (the analysed image's).
    image: Optional[Tuple[str, Tuple[int, int]]] = None
    signature: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        train = kwargs.get("train", True) is not False and kwargs.get("split", "train") in ("train", "train+unlabeled", "unlabeled", "balanced", "letters", "digits", "byclass", "bymerge", "mnist")
        self.length = self.sizes[0] if train else self.sizes[1]
        self.classes = [str(i) for i in range(self.sizes[2])]
        self.transform, self.target_transform, self.transforms = (_given(self.signature, args, kwargs).get(name) for name in ("transform", "target_transform", "transforms"))

    def __len__(self) -> int:
        return self.length

    def _blank(self, mode: str = "RGB") -> Any:
        from PIL import Image
        own_mode, size = self.image if self.image is not None else (mode, dry_run_hub.image_size())
        return Image.new(own_mode, size)

    def __getitem__(self, index: int) -> Any:
        if self.transform is None and self.transforms is None:
            raise IndexError("the dry run reads no data")
        image, target = self._blank(), 0
        if self.transforms is not None:
            return self.transforms(image, target)
        return (self.transform(image) if self.transform else image, self.target_transform(target) if self.target_transform else target)


def _given(signature: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """The constructor's arguments by name, those it takes through `**kwargs` too (ImageNet's and
    EMNIST's transforms)."""
    import inspect
    if signature is None:
        return kwargs
    try:
        arguments = dict(signature.bind_partial(*args, **kwargs).arguments)
    except TypeError:
        return kwargs
    for name, parameter in signature.parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD and isinstance(arguments.get(name), dict):
            arguments = {**arguments.pop(name), **arguments}
    return arguments


#: torchvision's semantic segmentation datasets: each sample an image and a mask of its size.
_SEGMENTATION_DATASETS = ("VOCSegmentation", "Cityscapes", "SBDataset")
#: torchvision's datasets of one image size: (PIL mode, (width, height)).
_DATASET_IMAGES: Dict[str, Tuple[str, Tuple[int, int]]] = {
    **{name: ("L", (28, 28)) for name in ("MNIST", "FashionMNIST", "KMNIST", "QMNIST", "EMNIST")},
    **{name: ("RGB", (32, 32)) for name in ("CIFAR10", "CIFAR100", "SVHN")},
    "STL10": ("RGB", (96, 96)),
}


class FakeSegmentationDataset(FakeDataset):
    """A segmentation dataset that reads nothing: each sample a blank image and a blank mask put
    through the script's own transforms (a mask after `PILToTensor` is 1 x H x W, uint8), with or
    without them."""

    def __getitem__(self, index: int) -> Any:
        from PIL import Image
        image = self._blank()
        mask = Image.new("L", image.size)
        if self.transforms is not None:
            return self.transforms(image, mask)
        return (self.transform(image) if self.transform else image, self.target_transform(mask) if self.target_transform else mask)


def _patch_writes() -> None:
    """A write outside the run's folder goes to a file of the same name inside it, so a script that
    logs or saves before training still runs; the audit hook refuses what this does not catch.
    A relative read the working folder does not have is looked for beside the script."""
    import builtins
    import io
    original_open = builtins.open
    original_makedirs = os.makedirs
    original_mkdir = os.mkdir

    def inside_run(path: Any) -> Optional[str]:
        run = _CURRENT["run"]
        if run is None or isinstance(path, int):
            return None
        allowed = os.path.realpath(run.tmp)
        real = os.path.realpath(os.fsdecode(path))
        if real == allowed or real.startswith(allowed + os.sep):
            return None
        return os.path.join(allowed, "redirected", real.lstrip(os.sep).replace(os.sep, "__"))

    def beside_script(path: Any) -> Optional[str]:
        # `python train.py` runs from wherever its user stands, often the script's own folder:
        # a relative read (nanoGPT's exec(open('configurator.py').read())) that is not under the
        # run's folder is looked for beside the script.
        run = _CURRENT["run"]
        if run is None or isinstance(path, int) or os.path.isabs(os.fsdecode(path)) or os.path.exists(path):
            return None
        for folder in run.user_dirs:
            candidate = os.path.join(folder, os.fsdecode(path))
            if os.path.isfile(candidate):
                return candidate
        return None

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(c in mode for c in "wax+"):
            target = inside_run(file)
            if target is not None:
                original_makedirs(os.path.dirname(target), exist_ok=True)
                file = target
        else:
            file = beside_script(file) or file
        return original_open(file, mode, *args, **kwargs)

    def makedirs(name: Any, mode: int = 0o777, exist_ok: bool = False) -> None:
        target = inside_run(name)
        return original_makedirs(name if target is None else target, mode, True if target is not None else exist_ok)

    def mkdir(path: Any, mode: int = 0o777, *args: Any, **kwargs: Any) -> None:
        target = inside_run(path)
        return original_mkdir(path, mode, *args, **kwargs) if target is None else original_makedirs(target, mode, True)

    builtins.open = open_  # type: ignore[assignment]
    io.open = open_  # type: ignore[assignment]
    os.makedirs = makedirs  # type: ignore[assignment]
    os.mkdir = mkdir  # type: ignore[assignment]


def _patch_user_datasets() -> None:
    """A Dataset class of the script's that cannot read its files (or download them) while it is
    built becomes an empty stand-in: the loader then makes batches of the analysed shape."""
    import torch.utils.data as data
    original = data.Dataset.__dict__.get("__init_subclass__")

    def init_subclass(cls: Any, **kwargs: Any) -> None:
        if original is not None:
            original.__func__(cls, **kwargs)  # type: ignore[attr-defined]
        else:
            super(data.Dataset, cls).__init_subclass__(**kwargs)  # typing.Generic's
        init = cls.__dict__.get("__init__")
        if init is None or getattr(init, "_dry_run", False):
            return

        def guarded(self: Any, *args: Any, **kw: Any) -> None:
            try:
                init(self, *args, **kw)
            except OSError:
                self._dry_run_unread = True

        guarded._dry_run = True  # type: ignore[attr-defined]
        guarded.__wrapped__ = init  # type: ignore[attr-defined]  # its signature, for inspect
        cls.__init__ = guarded
        length, item = cls.__dict__.get("__len__"), cls.__dict__.get("__getitem__")
        if length is not None:
            cls.__len__ = lambda self: 1000 if getattr(self, "_dry_run_unread", False) else length(self)
        if item is not None:
            def getitem(self: Any, index: Any) -> Any:
                if getattr(self, "_dry_run_unread", False):
                    raise IndexError("the dry run read none of this dataset's files")
                return item(self, index)
            cls.__getitem__ = getitem

    data.Dataset.__init_subclass__ = classmethod(init_subclass)  # type: ignore[assignment]


def _patch_datasets() -> None:
    _patch_user_datasets()
    try:
        import torchvision.datasets as tv_datasets
        for name in dir(tv_datasets):
            value = getattr(tv_datasets, name)
            if isinstance(value, type) and name[:1].isupper() and not issubclass(value, FakeDataset):  # once per process
                fake = FakeSegmentationDataset if name in _SEGMENTATION_DATASETS else FakeDataset
                setattr(tv_datasets, name, type(name, (fake,), {"sizes": _DATASET_SIZES.get(name, FakeDataset.sizes), "image": _DATASET_IMAGES.get(name), "signature": _init_signature(value)}))
    except Exception:
        pass


def _init_signature(cls: type) -> Any:
    """The constructor's parameters after `self`, to read transforms given by position."""
    import inspect
    try:
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
        return inspect.Signature(parameters)
    except (TypeError, ValueError):
        return None


def _normal(name: str) -> str:
    """A name as the static analysis matches it (src/core/analysis/config/configSources.ts)."""
    return name.strip().lower().replace("-", "_")


def _assumed(spec: Dict[str, Any]) -> Dict[str, Any]:
    """The values the user assumes (`--set NAME=VALUE`), by normalised name; dotted config-key paths are left out."""
    values = spec.get("assume") or {}
    return {_normal(name): value for name, value in values.items() if isinstance(name, str) and "." not in name and isinstance(value, (int, float, str, bool))}


def _as_text(value: Any) -> str:
    """A value as an environment variable holds it, as the static analysis reads it (JavaScript's String())."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _like(value: Any, default: Any) -> Any:
    """The assumed value in the type of what it replaces (an int option stays an int, a str one a str)."""
    if isinstance(default, bool) or default is None:
        return value
    try:
        if isinstance(default, int) and isinstance(value, (int, float)) and float(value).is_integer():
            return int(value)
        if isinstance(default, float) and isinstance(value, (int, float)):
            return float(value)
        if isinstance(default, str) and not isinstance(value, str):
            return _as_text(value)
    except (TypeError, ValueError):
        pass
    return value


@contextlib.contextmanager
def _assumed_environment(assumed: Dict[str, Any]) -> Iterator[None]:
    """Each assumed name as an environment variable too (as given and upper-case: BATCH_SIZE),
    as the static analysis reads `os.environ["BATCH_SIZE"]` under `--set batch_size=...`."""
    saved = dict(os.environ)
    try:
        for name, value in assumed.items():
            for variable in {name, name.upper()}:
                os.environ[variable] = _as_text(value)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _patch_argparse() -> None:
    """Assumed values replace what argparse parsed, by dest: they win over the command line, as in the static analysis."""
    import argparse as argparse_module
    original = argparse_module.ArgumentParser.parse_known_args

    def parse_known_args(self: Any, args: Any = None, namespace: Any = None) -> Any:
        run = _CURRENT["run"]
        if run is not None:
            # A required option the user assumes (`--set pretrained_model_name_or_path=...`) is given by that.
            for action in self._actions:
                if action.required and action.option_strings and _normal(action.dest) in run.assumed:
                    action.required = False
        parsed, rest = original(self, args, namespace)
        if run is not None:
            for dest in list(vars(parsed)):
                if _normal(dest) in run.assumed:
                    setattr(parsed, dest, _like(run.assumed[_normal(dest)], getattr(parsed, dest)))
                    run.applied.add(f"argparse option {dest}")
        return parsed, rest

    argparse_module.ArgumentParser.parse_known_args = parse_known_args  # type: ignore[method-assign]


def _script_code(script: str, assumed: Dict[str, Any], applied: set) -> Any:
    """The script compiled with assumed values in place of its own literal settings: top-level
    constants (`BATCH_SIZE = 256`, also inside `if __name__ == "__main__":`) and dataclass field
    defaults, where the static analysis replaces them. None when nothing is replaced (the script
    then runs as runpy reads it)."""
    import ast
    with open(script, "rb") as handle:
        source = handle.read()
    try:
        tree = ast.parse(source, script)
    except SyntaxError:
        return None
    replaced = []

    def literal(node: Any) -> bool:
        return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant))

    def replace(statement: Any, where: str) -> None:
        target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else statement.target if isinstance(statement, ast.AnnAssign) else None
        if not isinstance(target, ast.Name) or statement.value is None or not literal(statement.value) or _normal(target.id) not in assumed:
            return
        default = ast.literal_eval(statement.value)
        statement.value = ast.copy_location(ast.Constant(_like(assumed[_normal(target.id)], default)), statement.value)
        replaced.append(f"{where}{target.id}")

    def visit(body: Sequence[Any]) -> None:
        for statement in body:
            if isinstance(statement, (ast.Assign, ast.AnnAssign)):
                replace(statement, "constant ")
            elif isinstance(statement, ast.If):
                visit(statement.body)
                visit(statement.orelse)
            elif isinstance(statement, ast.ClassDef) and any("dataclass" in ast.dump(d) for d in statement.decorator_list):
                for field in statement.body:
                    if isinstance(field, ast.AnnAssign):
                        replace(field, f"dataclass field {statement.name}.")

    visit(tree.body)
    if not replaced:
        return None
    applied.update(replaced)
    return compile(tree, script, "exec")


def run(script: str, spec: Dict[str, Any], steps: int, tmp: str) -> Dict[str, Any]:
    """One dry run of `script`, in `tmp` (its working folder, the only place it may write)."""
    started = time.time()
    result: Dict[str, Any] = {"ok": False, "phases": list(PHASES), "steps": 0, "notes": []}
    try:
        import torch
    except ImportError as error:
        result["error"] = f"PyTorch is not installed for {sys.executable}: {error}"
        return result
    result["torch"] = torch.__version__
    _patch_torch()
    script_dir = os.path.dirname(os.path.abspath(script))
    saved = (list(sys.path), list(sys.argv), os.getcwd())
    # cudnn.benchmark as the script leaves it (itself, or Lightning's Trainer(benchmark=True)); reset for the next job of a --jobs process.
    saved_benchmark = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = False
    # Run from the project as its user does: relative reads (configs/x.yaml) find their files,
    # and the project's packages import (a src/ layout as an editable install would).
    root = os.path.abspath(spec.get("root") or script_dir)
    state = _Run(spec, steps, tmp, (script_dir, root))
    sys.path[:0] = [p for p in (script_dir, root, os.path.join(root, "src")) if os.path.isdir(p)]
    sys.argv = [script, *spec.get("argv", [])]
    os.chdir(root)
    # Temporary files (torch.distributed's generated modules, a library's scratch) go in the run's folder: the one place it may write.
    import tempfile
    saved_tempdir, tempfile.tempdir = tempfile.tempdir, tmp
    # As torchrun sets them for the first process of one: scripts read them before anything else.
    for name, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500")):
        os.environ.setdefault(name, value)
    device_mode, trace_mode = _make_modes(state.recorder)
    _CURRENT["run"] = state
    dry_run_frameworks.DISTRIBUTED["initialized"] = False
    state.device_mode = device_mode
    code = _script_code(script, state.assumed, state.applied) if state.assumed else None
    try:
        with _assumed_environment(state.assumed), device_mode, trace_mode:
            if code is None:
                runpy.run_path(script, run_name="__main__")
            else:
                runpy._run_module_code(code, None, "__main__", pkg_name="", script_name=script)  # type: ignore[attr-defined]
        result["error"] = None if state.completed_steps() > 0 else "the script ended before its training loop took a batch or an optimizer step"
    except DryRunComplete:
        result["error"] = None
    except (DeviceMismatch, NotDryRunnable) as error:
        result["error"] = str(error)
    except SystemExit as error:
        result["error"] = None if state.completed_steps() > 0 else f"the script exited ({error.code}) before its training loop took a batch or an optimizer step"
    except BaseException as error:  # the user's code: anything may come out of it
        frames = [f for f in traceback.extract_tb(error.__traceback__) if os.path.abspath(f.filename).startswith(script_dir)]
        where = f" ({os.path.basename(frames[-1].filename)} line {frames[-1].lineno})" if frames else ""
        result["error"] = _detection_reason(state, error) or _values_read(error) or f"{type(error).__name__}{f': {error}' if str(error) else ''}{where}"
        if isinstance(error, _MISSING_DATA_ERRORS) and state.missing_paths:
            result["error"] += f"; the script looked for {', '.join(state.missing_paths)}, not here: a dry run has the project's code, not its data"
        # Standard error is the log: the whole traceback, for whoever debugs the harness.
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.__stderr__)
    finally:
        result["cudnnBenchmark"] = bool(torch.backends.cudnn.benchmark)
        torch.backends.cudnn.benchmark = saved_benchmark
        _CURRENT["run"] = None
        sys.path[:], sys.argv[:] = saved[0], saved[1]
        os.chdir(saved[2])
        tempfile.tempdir = saved_tempdir
    result["ok"] = result["error"] is None
    if state.assumed:
        where = ", ".join(sorted(state.applied)) or "nothing the script read through argparse, a constant or a dataclass field"
        result["notes"].append(f"assumed values: set as environment variables; replaced {where}")
    result["notes"].extend(state.notes)
    result["steps"] = state.completed_steps()
    result["cudnn"] = state.recorder.cudnn
    result["convolutions"] = state.recorder.convolutions
    result["events"] = state.recorder.events
    result["seconds"] = round(time.time() - started, 3)
    return result


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m harness.dry_run", description=__doc__.split("\n")[0])
    parser.add_argument("script", nargs="?")
    parser.add_argument("--spec", help="JSON file: the fake batch (tensors, batchSize, kind) and the script's argv")
    parser.add_argument("--jobs", help="JSON file: a list of {id, script, spec, steps}, run one after another in this process, a result line each")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--out", help="write the result here instead of standard output")
    parser.add_argument("--memory-mib", type=int, default=8192, help="address-space limit of this process")
    args = parser.parse_args(argv)
    if (args.script is None) == (args.jobs is None):
        parser.error("give a script or --jobs, not both")
    spec: Dict[str, Any] = {}
    if args.spec:
        with open(args.spec, encoding="utf-8") as handle:
            spec = json.load(handle)
    jobs: List[Dict[str, Any]] = [{"id": None, "script": args.script, "spec": spec, "steps": args.steps}]
    if args.jobs:
        with open(args.jobs, encoding="utf-8") as handle:
            jobs = json.load(handle)
    try:
        import resource
        limit = args.memory_mib * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except Exception:
        pass
    import tempfile
    # Opened before the script runs: from then on, writes outside the temporary folder are refused.
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    failed = False
    for job in jobs:
        with tempfile.TemporaryDirectory(prefix="gpu-estimator-dry-run-") as tmp:
            with contextlib.redirect_stdout(sys.stderr):
                result = run(os.path.abspath(job["script"]), job.get("spec") or {}, max(1, int(job.get("steps") or 3)), tmp)
            if job.get("id") is not None:
                result["id"] = job["id"]
            out.write(json.dumps(result, separators=(",", ":")) + "\n")
            out.flush()
            failed = failed or not result.get("ok")
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
