"""Trains one sampled configuration for a fixed time, in a process of its own.

`python3 -m harness collect` starts one worker per configuration (so each measurement starts from
a fresh CUDA context and nvidia-smi can attribute memory to its PID), passes the configuration
as JSON on stdin, and reads the result from the file named by --result. The worker never writes
to stdout.

    python3 -m harness.worker --result FILE --device cuda|cpu --seconds N [--cpu-memory-cap-mib M] < config.json

Every result carries `system`: the PyTorch, CUDA, cuDNN and Python versions the worker ran with.

--cpu-memory-cap-mib exists to exercise the OOM path without a GPU: after a two-sample warm-up
step it limits the process's address space (RLIMIT_AS) to its current size plus M MiB, so a
larger batch makes PyTorch's CPU allocator fail for real ("DefaultCPUAllocator: can't allocate
memory"). Such rows carry `cpuMemoryCapMiB` and are CPU rows, never GPU training data.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
import traceback
from typing import Any, Dict, Optional

MIB = 1024 * 1024


def is_oom(error: BaseException) -> bool:
    """True for an allocation failure: CUDA's, the CPU allocator's, or Python's MemoryError."""
    if isinstance(error, MemoryError):
        return True
    name = type(error).__name__
    if name == "OutOfMemoryError":
        return True
    message = str(error)
    return isinstance(error, RuntimeError) and (
        "out of memory" in message or "can't allocate memory" in message or "Cannot allocate memory" in message
    )


def _first_line(error: BaseException, limit: int = 500) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    line = next((part for part in text.splitlines() if part.strip()), text)
    return line[:limit]


def probe(device: str) -> Dict[str, Any]:
    """Versions, and for device "cuda" the device's name (which creates the CUDA context)."""
    import torch

    cuda_available = torch.cuda.is_available()
    result: Dict[str, Any] = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "python": platform.python_version(),
        "cudaAvailable": cuda_available,
        "deviceName": None,
        "bf16": None,
    }
    if device == "cuda" and cuda_available:
        result["deviceName"] = torch.cuda.get_device_name(0)
        result["bf16"] = bool(torch.cuda.is_bf16_supported())
    return result


def _vm_size_bytes() -> Optional[int]:
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _targets(torch, config: Dict[str, Any], batch: int, device):
    task = config["task"]
    generator = torch.Generator().manual_seed(7)
    if task["kind"] == "language-model":
        shape = [batch, *config["inputs"][0]["shape"]]
        return torch.randint(0, task["vocab"], shape, generator=generator).to(device)
    return torch.randint(0, task["classes"], (batch,), generator=generator).to(device)


def train(config: Dict[str, Any], device_name: str, seconds: float, cpu_cap_mib: Optional[int]) -> Dict[str, Any]:
    import torch
    import torch.nn.functional as F

    from .layer_table import LayerTableError, layer_table, make_input_factory
    from .sampling import build_model, make_optimizer, render_source

    result: Dict[str, Any] = {"status": "ok", "oom": False, "error": None, "phase": None, "system": probe(device_name)}
    if device_name == "cuda" and not result["system"]["cudaAvailable"]:
        return {**result, "status": "no-device", "error": "PyTorch sees no CUDA device (torch.cuda.is_available() is False)"}
    torch.manual_seed(0)
    source = render_source(config)
    phase = "build"
    try:
        model = build_model(config, source)
        phase = "layer-table"
        make_input = make_input_factory(config["inputs"])
        try:
            result["layerTable"] = layer_table(model, make_input, "model")
        except LayerTableError as error:
            result["layerTable"] = None
            result["layerTableError"] = str(error)
        device = torch.device(device_name)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
        phase = "to-device"
        model = model.to(device)
        model.train()
        optimizer = make_optimizer(config["setup"]["optimizer"], model.parameters())
        precision = config["setup"]["precision"]
        scaler = torch.cuda.amp.GradScaler() if precision == "fp16-mixed" else None
        autocast_dtype = {"fp16-mixed": torch.float16, "bf16-mixed": torch.bfloat16}.get(precision)
        language_model = config["task"]["kind"] == "language-model"

        def step(inputs, targets) -> None:
            if autocast_dtype is not None:
                with torch.autocast(device_type=device.type, dtype=autocast_dtype):
                    output = model(*inputs)
                    loss = F.cross_entropy(output.reshape(-1, output.size(-1)), targets.reshape(-1)) if language_model else F.cross_entropy(output, targets)
            else:
                output = model(*inputs)
                loss = F.cross_entropy(output.reshape(-1, output.size(-1)), targets.reshape(-1)) if language_model else F.cross_entropy(output, targets)
            optimizer.zero_grad(set_to_none=True)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
            if device.type == "cuda":
                torch.cuda.synchronize()

        phase = "warm-up"
        step(tuple(t.to(device) for t in make_input(2)), _targets(torch, config, 2, device))
        if cpu_cap_mib is not None:
            current = _vm_size_bytes()
            if current is None:
                raise RuntimeError("--cpu-memory-cap-mib needs /proc/self/status (Linux)")
            limit = current + cpu_cap_mib * MIB
            resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))
            result["cpuMemoryCapMiB"] = cpu_cap_mib
        phase = "data"
        batch = config["setup"]["batchSize"]
        inputs = tuple(t.to(device) for t in make_input(batch))
        targets = _targets(torch, config, batch, device)
        phase = "train"
        step_times = []
        start = time.time()
        while True:
            began = time.perf_counter()
            step(inputs, targets)
            step_times.append(time.perf_counter() - began)
            if time.time() - start >= seconds:
                break
        end = time.time()
        result.update({
            "steps": len(step_times),
            "stepTimeMs": round(statistics.median(step_times[1:] or step_times) * 1000, 3),
            "window": [start, end],
            "trainSeconds": round(end - start, 3),
        })
    except Exception as error:  # noqa: BLE001 - every failure becomes a labelled row
        result["status"] = "oom" if is_oom(error) else "error"
        result["oom"] = result["status"] == "oom"
        result["error"] = _first_line(error)
        result["phase"] = phase
        if result["status"] == "error":
            result["traceback"] = traceback.format_exc(limit=8)[-4000:]
    finally:
        if cpu_cap_mib is not None:
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.getrlimit(resource.RLIMIT_AS)[1]))
    if torch.cuda.is_available() and device_name == "cuda":
        result["torchMaxAllocatedMiB"] = round(torch.cuda.max_memory_allocated() / MIB, 3)
        result["torchMaxReservedMiB"] = round(torch.cuda.max_memory_reserved() / MIB, 3)
    else:
        result["torchMaxAllocatedMiB"] = None
        result["torchMaxReservedMiB"] = None
    result["cpuMaxRssMiB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 3)
    return result


def write_result(path: str, result: Dict[str, Any]) -> None:
    temporary = f"{path}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    os.replace(temporary, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m harness.worker")
    parser.add_argument("--result", required=True)
    parser.add_argument("--device", choices=("cuda", "cpu"), required=True)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cpu-memory-cap-mib", type=int)
    args = parser.parse_args(argv)
    config = json.load(sys.stdin)
    write_result(args.result, train(config, args.device, args.seconds, args.cpu_memory_cap_mib))
    return 0


if __name__ == "__main__":
    sys.exit(main())
