"""A FakeTensor-based memory estimate, the "CPU-side library" baseline of the research, for the
benchmark (`npm run bench` times it against one ensemble inference).

PyTorch's FakeTensorMode (torch._subclasses.fake_tensor, here Debian's torch 1.13) runs a
training step without allocating memory; a dispatch mode counts the bytes of every tensor
storage alive at once. The peak covers tensors only: no CUDA context, no allocator reserve, no
cuDNN workspaces (the research found it always under). torch 1.13's fake mode has no backward for
convolutions on the CPU, so this works for models without them.

    /usr/bin/python3 -m harness.training.faketensor --fixture mlp_mnist_sequential.py --model model --runs 20
prints one JSON object: the peak (MiB) and the time of each estimate (s).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import json
import runpy
import sys
import time
import weakref
from typing import Callable, Dict, List, Optional, Sequence

import torch
from torch._subclasses.fake_tensor import FakeCopyMode, FakeTensorMode
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .definitions import REPO_ROOT

CORPUS = REPO_ROOT / "test" / "fixtures" / "corpus"
OPTIMIZERS: Dict[str, Callable[..., torch.optim.Optimizer]] = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd-momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p),
    "adamw": lambda p: torch.optim.AdamW(p),
    "rmsprop": lambda p: torch.optim.RMSprop(p),
    "adagrad": lambda p: torch.optim.Adagrad(p),
}


class StorageTracker(TorchDispatchMode):
    """Bytes of the tensor storages alive, and their peak."""

    def __init__(self) -> None:
        super().__init__()
        self.live: Dict[int, int] = {}
        self.current = 0
        self.peak = 0

    def track(self, tensor: torch.Tensor) -> None:
        key = StorageWeakRef(tensor.storage()).cdata
        if key in self.live:
            return
        size = tensor.storage().nbytes()
        self.live[key] = size
        self.current += size
        self.peak = max(self.peak, self.current)
        weakref.finalize(tensor, self._free, key)

    def _free(self, key: int) -> None:
        self.current -= self.live.pop(key, 0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for value in tree_flatten(out)[0]:
            if isinstance(value, torch.Tensor):
                self.track(value)
        return out


def faketensor_peak_mib(model: torch.nn.Module, inputs: Sequence[torch.Tensor], optimizer: str = "adam", steps: int = 2) -> float:
    """Peak bytes of live tensors over `steps` training steps (forward, backward, optimizer), MiB."""
    fake_mode = FakeTensorMode()
    tracker = StorageTracker()
    with FakeCopyMode(fake_mode):
        fake_model = copy.deepcopy(model)
    for parameter in fake_model.parameters():
        tracker.track(parameter)
    fake_inputs = [fake_mode.from_tensor(x) for x in inputs]
    step = OPTIMIZERS.get(optimizer, OPTIMIZERS["adam"])(fake_model.parameters())
    profiler = torch.autograd.profiler
    saved = profiler.record_function
    # torch 1.13's fake mode cannot run the profiler op the optimizer's step records.
    profiler.record_function = lambda *args, **kwargs: contextlib.nullcontext()
    try:
        with fake_mode, tracker:
            for _ in range(steps):
                output = fake_model(*fake_inputs)
                first = tree_flatten(output)[0][0]
                first.float().pow(2).mean().backward()
                step.step()
                step.zero_grad(set_to_none=True)
    finally:
        profiler.record_function = saved
    return tracker.peak / 2**20


def corpus_model(fixture: str, name: str):
    """(model, inputs factory, set-up) of a corpus fixture, as scripts/generate_expected_tables.py builds it."""
    from harness.layer_table import make_input_factory

    manifest = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
    entry = next(e for e in manifest if e["file"] == fixture)
    spec = next(m for m in entry["models"] if m["name"] == name)
    saved_argv = sys.argv
    sys.argv = [fixture]
    try:
        namespace = runpy.run_path(str(CORPUS / fixture), run_name="corpus_fixture")
    finally:
        sys.argv = saved_argv
    torch.manual_seed(0)
    model = eval(spec["build"], namespace)  # noqa: S307 - the manifest is ours
    setup = {**entry["setup"], **(spec.get("setup") or {})}
    return model, make_input_factory(spec["inputs"]), setup


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m harness.training.faketensor")
    parser.add_argument("--fixture", default="mlp_mnist_sequential.py")
    parser.add_argument("--model", default="model")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    model, make_input, setup = corpus_model(args.fixture, args.model)
    inputs = make_input(setup["batchSize"])
    seconds: List[float] = []
    peak = 0.0
    for _ in range(args.runs):
        begin = time.perf_counter()
        peak = faketensor_peak_mib(model, inputs, setup["optimizer"])
        seconds.append(time.perf_counter() - begin)
    print(json.dumps({"fixture": args.fixture, "model": args.model, "batchSize": setup["batchSize"], "optimizer": setup["optimizer"], "peakMiB": peak, "seconds": seconds, "torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
