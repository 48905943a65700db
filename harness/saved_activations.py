"""The bytes autograd keeps for backward during a model's forward pass, measured by PyTorch itself.

A layer table lists torch.nn modules; the activations a training step holds also include what
functional code between them saves (residual additions, `F.gelu`, `x * scale`, the layer classes
a library writes itself). `saved_tensors_hooks` sees every tensor an autograd node saves, from
modules and functions alike: summed once per storage (views of one tensor share it), without the
parameters (they are state, not activations), that is what the step holds at the end of forward.

Runs on the meta device (shapes only: a 1B-parameter model costs milliseconds) or on the CPU.

Attention: on PyTorch 2 with a GPU, `F.scaled_dot_product_attention` runs a fused kernel that
saves q, k, v, the output and one log-sum-exp per query, never the N x N matrix. Torch 1.13 has
no such function, so libraries that test for it (timm, Hugging Face) fall back to the eager
matrices. `fused_attention()` installs a stand-in with the fused kernel's saved tensors, so a
measurement on 1.13 holds what the GPU run holds.
"""
from __future__ import annotations

import contextlib
import warnings
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import torch
import torch.nn.functional as F

#: Batch sizes of the passes: the differences are the per-sample part, and must agree (batch 1
#: would fail BatchNorm layers that see one value per channel after global pooling).
BATCH_SIZES = (2, 4, 6)
#: Those of a forward pass's peak: larger, so that the point of the forward with the most per-sample
#: tensors is its peak, not one where tensors of fixed size add up (DINOv2 interpolates its position
#: table on every call; an attention's packed projection weights are split).
FORWARD_BATCH_SIZES = (64, 128, 192)
#: How far the per-sample steps between them may differ, relative to the per-sample bytes.
LINEAR_TOLERANCE = 0.001


class _FusedAttention(torch.autograd.Function):
    """What the memory-efficient SDPA kernel keeps: q, k, v, the output and the log-sum-exp."""

    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        out = q.new_empty(q.shape[:-1] + v.shape[-1:])
        logsumexp = q.new_empty(q.shape[:-1])
        ctx.save_for_backward(q, k, v, out, logsumexp)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:  # type: ignore[override]
        q, k, v, _out, _lse = ctx.saved_tensors
        return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _fused_sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, attn_mask: Any = None, dropout_p: float = 0.0, is_causal: bool = False, scale: Optional[float] = None, **_: Any) -> torch.Tensor:
    return _FusedAttention.apply(q, k, v)


def install_fused_attention() -> bool:
    """Gives torch 1.13 a `F.scaled_dot_product_attention` with the fused kernel's saved tensors
    (shapes only: its values are not computed). Must run before the library that checks for it
    is imported. Returns False where torch has its own (PyTorch >= 2.0), which is then used."""
    if hasattr(F, "scaled_dot_product_attention"):
        return False
    F.scaled_dot_product_attention = _fused_sdpa  # type: ignore[attr-defined]
    return True


def _storage_key(tensor: torch.Tensor) -> Any:
    try:
        return tensor.storage()._cdata
    except (RuntimeError, NotImplementedError, AttributeError):
        return id(tensor)


def _storage_bytes(tensor: torch.Tensor) -> int:
    try:
        return int(tensor.storage().nbytes())
    except (RuntimeError, NotImplementedError, AttributeError):
        return tensor.numel() * tensor.element_size()


#: Per storage: its bytes and weak references to the saved tensors on it.
_Seen = Dict[Any, Tuple[int, List["weakref.ref[torch.Tensor]"]]]


def _alive(refs: List["weakref.ref[torch.Tensor]"]) -> bool:
    return any(ref() is not None for ref in refs)


@contextlib.contextmanager
def _recording(into: _Seen) -> Iterator[None]:
    # A storage is known by its address, which a later one takes once it is freed (the graph of a
    # branch whose result is unused is freed during forward, and what it saved with it): an
    # address whose saved tensors are all gone is a new storage.
    def pack(tensor: torch.Tensor) -> torch.Tensor:
        key = _storage_key(tensor)
        known = into.get(key)
        if known is not None and _alive(known[1]):
            known[1].append(weakref.ref(tensor))
        else:
            into[key] = (_storage_bytes(tensor), [weakref.ref(tensor)])
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        yield


def saved_bytes(model: torch.nn.Module, make_input: Callable[[int], Any], batch_size: int) -> int:
    """Bytes of the distinct storages autograd holds for backward at the end of one forward pass,
    parameters excluded."""
    seen: _Seen = {}
    inputs = make_input(batch_size)
    with _recording(seen), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = model(*inputs) if isinstance(inputs, tuple) else model(inputs)
    parameters = {_storage_key(p) for p in model.parameters()}
    held = sum(size for key, (size, refs) in seen.items() if key not in parameters and _alive(refs))
    del output
    return held


class _LiveStorages:
    """The bytes of the storages that ops made and that some tensor object still refers to, and
    their peak: what a forward pass holds at its fullest, whatever autograd keeps."""

    def __init__(self) -> None:
        self.live = 0
        self.peak = 0
        # storage key -> [bytes, tensor objects referring to it]
        self._storages: Dict[Any, List[int]] = {}
        self._holders: Dict[Tuple[Any, int], Any] = {}

    def saw(self, tensor: torch.Tensor) -> None:
        key = _storage_key(tensor)
        entry = self._storages.get(key)
        if entry is None:
            entry = [_storage_bytes(tensor), 0]
            self._storages[key] = entry
            self.live += entry[0]
            self.peak = max(self.peak, self.live)
        token = (key, id(tensor))
        known = self._holders.get(token)
        # An in-place op hands the same tensor object back: it adds no reference.
        if known is not None and known.alive:
            return
        entry[1] += 1
        self._holders[token] = weakref.finalize(tensor, self._release, token, key, entry)

    def _release(self, token: Tuple[Any, int], key: Any, entry: List[int]) -> None:
        self._holders.pop(token, None)
        entry[1] -= 1
        if entry[1] <= 0 and self._storages.get(key) is entry:
            del self._storages[key]
            self.live -= entry[0]


def forward_peak_bytes(model: torch.nn.Module, make_input: Callable[[int], Any], batch_size: int) -> int:
    """The most bytes that the tensors a forward pass makes hold at once, autograd off (a frozen
    model's forward: each tensor lives as long as the model's code refers to it), the input and
    the parameters excluded."""
    from torch.utils._python_dispatch import TorchDispatchMode

    storages = _LiveStorages()

    class Trace(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            out = func(*args, **(kwargs or {}))
            for value in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(value, torch.Tensor):
                    storages.saw(value)
            return out

    inputs = make_input(batch_size)
    with torch.no_grad(), Trace(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = model(*inputs) if isinstance(inputs, tuple) else model(inputs)
    del output
    return storages.peak


def forward_peak(model: torch.nn.Module, make_input: Callable[[int], Any]) -> Dict[str, int]:
    """Per-sample and constant bytes of a no-grad forward pass at its fullest (forward_peak_bytes)."""
    return _linear_in_batch(FORWARD_BATCH_SIZES, [forward_peak_bytes(model, make_input, b) for b in FORWARD_BATCH_SIZES], "forward peak bytes")


def catalog_figures(model: torch.nn.Module, make_input: Callable[[int], Any], h: int, w: int) -> List[int]:
    """A catalog data file's entry: [saved bytes per sample, h, w, the no-grad forward's peak bytes
    per sample]: what training the model keeps for backward, and what a frozen one holds at the
    fullest point of its forward; the last left off where it is not linear in the batch."""
    saved = saved_activations(model, make_input)["perSample"]
    try:
        return [saved, h, w, forward_peak(model, make_input)["perSample"]]
    except ValueError:
        return [saved, h, w]


def _linear_in_batch(batches: Tuple[int, ...], sizes: List[int], what: str) -> Dict[str, int]:
    steps = [(b - a) / (y - x) for (x, a), (y, b) in zip(zip(batches, sizes), zip(batches[1:], sizes[1:]))]
    per_sample = round((sizes[-1] - sizes[0]) / (batches[-1] - batches[0]))
    # A few bytes that grow otherwise (a batch-sized index) are noise; a part that does not is refused.
    if max(steps) - min(steps) > LINEAR_TOLERANCE * max(1.0, abs(per_sample)):
        raise ValueError(f"{what} {sizes} at batch {batches} are not linear in the batch")
    return {"perSample": per_sample, "constant": sizes[0] - batches[0] * per_sample}


def saved_activations(model: torch.nn.Module, make_input: Callable[[int], Any]) -> Dict[str, int]:
    """Per-sample and constant bytes autograd saves in forward (`model` in train mode; its
    parameters must require grad). The constant is what does not grow with the batch (buffers a
    layer saves, a broadcast mask)."""
    return _linear_in_batch(BATCH_SIZES, [saved_bytes(model, make_input, b) for b in BATCH_SIZES], "saved bytes")
