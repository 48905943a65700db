"""`python3 -m harness measure SCRIPT.py --steps N`: runs a user's own training script under the
same monitors as `collect` and reports its real peak memory, so an estimate can be checked
against the truth.

stdout carries JSON lines only: a start line, the measurement, an end line. The script's own
output goes to stderr. `--out FILE` also appends the measurement to a JSON Lines file.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

from .collect import _now, _worker_env, emit, fail, worker_result
from .monitors import GpuMonitor, gpu_info, no_utilization
from .results import append_row

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m harness measure", description=__doc__.split("\n\n")[0])
    parser.add_argument("script", help="the training script to run (as __main__)")
    parser.add_argument("--steps", type=int, required=True, help="stop after this many optimizer steps")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cuda: run the GPU monitors; cpu: label the run as CPU")
    parser.add_argument("--gpu-index", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before the script is stopped (default 1800)")
    parser.add_argument("--out", help="also append the measurement to this JSON Lines file")
    parser.add_argument("--python", default=sys.executable, help=argparse.SUPPRESS)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = build_parser().parse_args(argv[:split])
    args.script_args = argv[split + 1 :]  # everything after -- goes to the script
    if args.steps < 1:
        return fail("--steps must be >= 1", EXIT_USAGE)
    if not os.path.isfile(args.script):
        return fail(f"{args.script}: no such file", EXIT_USAGE)
    system: Dict[str, Any] = gpu_info(args.gpu_index) if args.device == "cuda" else {"gpu": None, "gpuMemoryMiB": None, "driver": None}
    emit({"event": "start", "script": os.path.basename(args.script), "steps": args.steps, "device": args.device})
    row = measure(args, system)
    emit({"event": "measurement", **row})
    if args.out:
        append_row(args.out, row)
    emit({"event": "end", "status": row["status"]})
    return 0


def measure(args, system: Dict[str, Any]) -> Dict[str, Any]:
    monitor = GpuMonitor(args.gpu_index).start() if args.device == "cuda" else None
    began = time.time()
    with tempfile.TemporaryDirectory(prefix="harness-measure-") as temporary:
        result_path = os.path.join(temporary, "result.json")
        command = [args.python, "-m", "harness.measure_worker", "--result", result_path, "--steps", str(args.steps), args.script, *args.script_args]
        worker = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sys.stderr, env=_worker_env())
        try:
            timed_out = {"status": "timeout", "oom": None, "error": f"stopped after {args.timeout:.0f} s"}
            result = worker_result(worker, result_path, args.timeout, timed_out, "the script's process")
        finally:
            if monitor is not None:
                monitor.stop()
    window = result.pop("window", None)
    versions = result.pop("system", None) or {}
    gpu_side = monitor.summary(worker.pid, tuple(window) if window else None) if monitor is not None else {"peakMiB": None, "peakMiBSource": None, "utilization": no_utilization()}
    return {
        "script": os.path.basename(args.script),
        "device": args.device,
        "status": result.get("status"),
        "oom": result.get("oom"),
        "error": result.get("error"),
        "steps": result.get("steps"),
        "requestedSteps": args.steps,
        "optimizers": result.get("optimizers"),
        "peakMiB": gpu_side["peakMiB"],
        "peakMiBSource": gpu_side["peakMiBSource"],
        "torchMaxAllocatedMiB": result.get("torchMaxAllocatedMiB"),
        "torchMaxReservedMiB": result.get("torchMaxReservedMiB"),
        "cpuMaxRssMiB": result.get("cpuMaxRssMiB"),
        "usedCuda": result.get("usedCuda"),
        "utilization": gpu_side["utilization"],
        "scriptSeconds": result.get("scriptSeconds"),
        "wallSeconds": round(time.time() - began, 3),
        "gpu": system.get("gpu") or versions.get("deviceName"),
        "gpuMemoryMiB": system.get("gpuMemoryMiB"),
        "driver": system.get("driver"),
        "cuda": versions.get("cuda"),
        "torch": versions.get("torch"),
        "python": versions.get("python"),
        "measuredAt": _now(),
        **({"traceback": result["traceback"]} if "traceback" in result else {}),
    }
