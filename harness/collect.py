"""`python3 -m harness collect`: samples configurations, trains each for a fixed time in its own
worker process under the GPU monitors, and appends one row per configuration to
OUT/results.jsonl. stdout carries only JSON progress lines (one per configuration, plus a start
and an end line); everything else goes to stderr.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from .config import ConfigError, load_config
from .monitors import GpuMonitor, gpu_info, no_utilization
from .results import append_row, finished_ids, repair
from .sampling import SamplingError, render_source, sample_configs
from .slurm import SlurmError, read_ids, run_array

ROW_SCHEMA_VERSION = 1
#: Exit codes: 0 done, 2 bad arguments/config/out dir, 3 the device is unusable.
EXIT_USAGE, EXIT_DEVICE = 2, 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m harness collect", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="YAML (or JSON) with the sampling ranges")
    parser.add_argument("--out", required=True, help="output directory (results.jsonl, run.json, scripts/)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--seconds", type=float, help="training time per configuration (default: the config's `seconds`, else 60)")
    parser.add_argument("--gpu-index", type=int, default=0, help="nvidia-smi / dcgmi index of the GPU torch uses as cuda:0 (default 0)")
    parser.add_argument("--cpu-memory-cap-mib", type=int, help="CPU runs only: cap each worker's memory growth (tests the OOM path)")
    parser.add_argument("--slurm", action="store_true", help="run the configurations as a SLURM job array and follow it (harness/slurm.py)")
    parser.add_argument("--tasks", type=int, default=8, help="with --slurm: array tasks, each running a share of the configurations (default 8)")
    parser.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG", help="with --slurm: passed to sbatch, e.g. --sbatch-arg=--gres=gpu:a100:1 (repeatable)")
    parser.add_argument("--only-ids", type=Path, help="run only the configurations listed in this file, one id a line (a SLURM task's share)")
    parser.add_argument("--rows", type=Path, help="append rows here instead of OUT/results.jsonl (a SLURM task's own file)")
    parser.add_argument("--python", default=sys.executable, help=argparse.SUPPRESS)
    return parser


def emit(event: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int) -> int:
    print(f"harness collect: {message}", file=sys.stderr)
    emit({"event": "error", "message": message})
    return code


def main(argv: Optional[List[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.cpu_memory_cap_mib is not None and args.device != "cpu":
        return fail("--cpu-memory-cap-mib is for --device cpu only", EXIT_USAGE)
    if args.slurm and (args.only_ids or args.rows):
        return fail("--only-ids and --rows are what --slurm gives each task; do not combine them", EXIT_USAGE)
    if args.tasks < 1:
        return fail("--tasks must be at least 1", EXIT_USAGE)
    try:
        config = load_config(args.config)
        configs = sample_configs(config, args.device)
    except (ConfigError, SamplingError) as error:
        return fail(str(error), EXIT_USAGE)
    if args.only_ids is not None:
        try:
            wanted = read_ids(args.only_ids)
        except SlurmError as error:
            return fail(str(error), EXIT_USAGE)
        unknown = sorted(set(wanted) - {item["id"] for item in configs})
        if unknown:
            return fail(f"--only-ids: {len(unknown)} id(s) the config does not give, e.g. {unknown[0]}", EXIT_USAGE)
        configs = [item for item in configs if item["id"] in set(wanted)]
    seconds = float(args.seconds if args.seconds is not None else config.get("seconds", 60))
    if seconds <= 0:
        return fail("--seconds must be > 0", EXIT_USAGE)

    out = Path(args.out)
    (out / "scripts").mkdir(parents=True, exist_ok=True)
    run = {
        "device": args.device,
        "seconds": seconds,
        "configHash": hashlib.sha1(json.dumps(config, sort_keys=True).encode()).hexdigest(),
        "cpuMemoryCapMiB": args.cpu_memory_cap_mib,
        "total": len(configs),
    }
    run_path = out / "run.json"
    if run_path.exists():
        previous = json.loads(run_path.read_text(encoding="utf-8"))
        for key in ("device", "seconds", "configHash", "cpuMemoryCapMiB"):
            if previous.get(key) != run.get(key):
                return fail(f"{out} holds a run with a different {key} ({previous.get(key)!r}, now {run.get(key)!r}); use another --out", EXIT_USAGE)
    else:
        run_path.write_text(json.dumps({**run, "config": config, "createdAt": _now()}, indent=2) + "\n", encoding="utf-8")

    results = args.rows if args.rows is not None else out / "results.jsonl"
    dropped = repair(results)
    if dropped:
        print(f"harness collect: dropped an unfinished last line ({dropped} bytes) of {results}", file=sys.stderr)
    if args.slurm:
        started = time.time()
        positions = {item["id"]: index for index, item in enumerate(configs, start=1)}
        progress = lambda item, done: _progress(positions[item["id"]], len(configs), done, item, item["status"], 0.0, started, [])
        try:
            return run_array(config_path=Path(args.config), out=out, configs=configs, device=args.device, seconds=seconds, gpu_index=args.gpu_index, tasks=args.tasks, sbatch_args=args.sbatch_arg, emit=emit, progress=progress)
        except SlurmError as error:
            return fail(str(error), EXIT_USAGE)
    done = finished_ids(results) | (finished_ids(out / "results.jsonl") if args.rows is not None else set())

    system: Dict[str, Any] = gpu_info(args.gpu_index) if args.device == "cuda" else {"gpu": None, "gpuMemoryMiB": None, "driver": None}

    total = len(configs)
    emit({"event": "start", "total": total, "done": sum(1 for c in configs if c["id"] in done), "device": args.device, "seconds": seconds, "out": str(out)})
    stop = _install_sigterm()
    started = time.time()
    durations: List[float] = []
    counts = {"ok": 0, "oom": 0, "error": 0, "crashed": 0, "skipped": 0}
    finished = 0
    for index, item in enumerate(configs, start=1):
        if item["id"] in done:
            finished += 1
            counts["skipped"] += 1
            emit(_progress(index, total, finished, item, "skipped", 0.0, started, durations))
            continue
        script = out / "scripts" / f"{item['id']}.py"
        script.write_text(render_source(item), encoding="utf-8")
        began = time.time()
        row = _run_one(args, item, seconds, system, stop)
        if row["status"] == "no-device":
            return fail(f"--device {args.device}: {row['error']}", EXIT_DEVICE)
        row["wallSeconds"] = round(time.time() - began, 3)
        row["script"] = f"scripts/{item['id']}.py"
        append_row(results, row)
        durations.append(row["wallSeconds"])
        finished += 1
        counts[row["status"]] += 1
        emit(_progress(index, total, finished, item, row["status"], row["wallSeconds"], started, durations))
    emit({"event": "end", "total": total, "done": finished, **counts, "elapsedSeconds": round(time.time() - started, 3)})
    return 0


def _progress(index: int, total: int, done: int, item: Dict[str, Any], status: str, seconds: float, started: float, durations: List[float]) -> Dict[str, Any]:
    remaining = total - done
    eta = round(remaining * (sum(durations) / len(durations)), 1) if durations else None
    return {
        "event": "config", "index": index, "total": total, "done": done, "id": item["id"], "family": item["family"],
        "variant": item["variant"], "status": status, "seconds": seconds,
        "elapsedSeconds": round(time.time() - started, 3), "etaSeconds": eta if remaining else 0.0,
    }


class _Stop:
    worker: Optional[subprocess.Popen] = None


def _install_sigterm() -> _Stop:
    """SIGTERM ends the current worker too, then exits 143 (no row for the unfinished configuration)."""
    stop = _Stop()

    def handler(signum, _frame):
        if stop.worker is not None and stop.worker.poll() is None:
            stop.worker.kill()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    return stop


def worker_result(worker: subprocess.Popen, result_path: str, timeout: float, timed_out: Dict[str, Any], who: str) -> Dict[str, Any]:
    """What a worker wrote to `result_path` once it exits; `timed_out` when it runs past `timeout`
    (it is killed); a crashed result saying how `who` ended when it wrote none."""
    try:
        code = worker.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
        return timed_out
    if os.path.exists(result_path):
        with open(result_path, encoding="utf-8") as handle:
            return json.load(handle)
    how = f"signal {-code}" if code < 0 else f"exit code {code}"
    return {"status": "crashed", "oom": None, "error": f"{who} ended without a result ({how})"}


def _worker_command(python: str, *extra: str) -> List[str]:
    return [python, "-m", "harness.worker", *extra]


def _worker_env() -> Dict[str, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _run_one(args, item: Dict[str, Any], seconds: float, system: Dict[str, Any], stop: _Stop) -> Dict[str, Any]:
    row: Dict[str, Any] = {
        "schemaVersion": ROW_SCHEMA_VERSION,
        "id": item["id"],
        "family": item["family"],
        "variant": item["variant"],
        "params": item["params"],
        "inputs": item["inputs"],
        "task": item["task"],
        "setup": item["setup"],
        "device": args.device,
        "seconds": seconds,
        "startedAt": _now(),
    }
    monitor = GpuMonitor(args.gpu_index).start() if args.device == "cuda" else None
    with tempfile.TemporaryDirectory(prefix="harness-worker-") as temporary:
        result_path = os.path.join(temporary, "result.json")
        extra = ["--device", args.device, "--seconds", str(seconds), "--result", result_path]
        if args.cpu_memory_cap_mib is not None:
            extra += ["--cpu-memory-cap-mib", str(args.cpu_memory_cap_mib)]
        timeout = max(120.0, 3 * seconds + 120.0)
        worker: Optional[subprocess.Popen] = None
        try:
            worker = subprocess.Popen(_worker_command(args.python, *extra), stdin=subprocess.PIPE, stdout=sys.stderr, env=_worker_env(), text=True)
            stop.worker = worker
            worker.stdin.write(json.dumps(item))
            worker.stdin.close()
            timed_out = {"status": "crashed", "oom": None, "error": f"worker timed out after {timeout:.0f} s"}
            result = worker_result(worker, result_path, timeout, timed_out, "worker")
        finally:
            stop.worker = None
            if monitor is not None:
                monitor.stop()
    window = result.pop("window", None)
    versions = result.pop("system", None) or {}
    gpu_side = monitor.summary(worker.pid, tuple(window) if window else None) if monitor is not None and worker is not None else {"peakMiB": None, "peakMiBSource": None, "utilization": no_utilization()}
    row.update({
        "status": result.get("status", "crashed"),
        "oom": result.get("oom"),
        "error": result.get("error"),
        "phase": result.get("phase"),
        "layerTable": result.get("layerTable"),
        "peakMiB": gpu_side["peakMiB"],
        "peakMiBSource": gpu_side["peakMiBSource"],
        "torchMaxAllocatedMiB": result.get("torchMaxAllocatedMiB"),
        "torchMaxReservedMiB": result.get("torchMaxReservedMiB"),
        "cpuMaxRssMiB": result.get("cpuMaxRssMiB"),
        "utilization": gpu_side["utilization"],
        "steps": result.get("steps"),
        "stepTimeMs": result.get("stepTimeMs"),
        "trainSeconds": result.get("trainSeconds"),
        "gpu": system.get("gpu") or versions.get("deviceName"),
        "gpuMemoryMiB": system.get("gpuMemoryMiB"),
        "driver": system.get("driver"),
        "cuda": versions.get("cuda"),
        "cudnn": versions.get("cudnn"),
        "torch": versions.get("torch"),
        "python": versions.get("python"),
    })
    for key in ("cpuMemoryCapMiB", "layerTableError", "traceback"):
        if key in result:
            row[key] = result[key]
    return row


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
