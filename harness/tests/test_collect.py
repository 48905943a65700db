"""`python3 -m harness collect --device cpu` end to end: rows, progress lines, resume after a
real kill, OOM rows, and the refusals. Each worker imports PyTorch, so each configuration costs a
few seconds; the configs here are tiny and train for 0.2 s."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.results import read_rows
from harness.schema_check import validate

ROOT = Path(__file__).resolve().parents[2]

TINY = """
seed: 11
training:
  batchSize: [2, 8]
  optimizer: [sgd, adam]
  precision: [fp32]
families:
  mlp:
    count: {mlp}
    inputShape: [[16], [1, 4, 4]]
    width: [4, 16]
    depth: [1, 2]
    classes: [2, 5]
  transformer:
    count: {transformer}
    layers: 1
    heads: [2]
    dModel: [8, 16]
    seqLen: [4, 8]
    vocab: [20, 40]
    classes: 3
"""

ROW_KEYS = {
    "schemaVersion", "id", "family", "variant", "params", "inputs", "task", "setup", "device", "seconds", "startedAt",
    "status", "oom", "error", "phase", "layerTable", "peakMiB", "peakMiBSource", "torchMaxAllocatedMiB",
    "torchMaxReservedMiB", "cpuMaxRssMiB", "utilization", "steps", "stepTimeMs", "trainSeconds", "gpu", "gpuMemoryMiB",
    "driver", "cuda", "cudnn", "torch", "python", "wallSeconds", "script",
}


def write_config(tmp_path, mlp=1, transformer=1, extra=""):
    path = tmp_path / "config.yaml"
    path.write_text(TINY.format(mlp=mlp, transformer=transformer) + extra, encoding="utf-8")
    return path


def collect(config, out, *extra, check=True):
    command = [sys.executable, "-m", "harness", "collect", "--config", str(config), "--out", str(out), "--device", "cpu", "--seconds", "0.2", *extra]
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    if check:
        assert completed.returncode == 0, completed.stderr
    return completed


def events(stdout):
    lines = stdout.splitlines()
    parsed = [json.loads(line) for line in lines]  # every stdout line is JSON
    return parsed


def test_rows_and_progress_lines_then_a_rerun_skips_everything(tmp_path):
    config, out = write_config(tmp_path, mlp=1, transformer=1), tmp_path / "out"
    first = events(collect(config, out).stdout)
    assert [e["event"] for e in first] == ["start", "config", "config", "end"]
    assert first[0] == {"event": "start", "total": 2, "done": 0, "device": "cpu", "seconds": 0.2, "out": str(out)}
    progress = first[1:3]
    assert [(e["index"], e["total"], e["done"], e["status"]) for e in progress] == [(1, 2, 1, "ok"), (2, 2, 2, "ok")]
    assert progress[0]["etaSeconds"] > 0 and progress[1]["etaSeconds"] == 0.0
    assert first[3]["ok"] == 2 and first[3]["skipped"] == 0

    rows = read_rows(out / "results.jsonl")
    assert [r["id"] for r in rows] == [e["id"] for e in progress]
    assert {r["family"] for r in rows} == {"mlp", "transformer"}
    for row in rows:
        assert set(row) == ROW_KEYS, set(row) ^ ROW_KEYS
        assert row["device"] == "cpu" and row["status"] == "ok" and row["oom"] is False
        assert row["setup"]["precision"] == "fp32" and row["setup"]["family"] == row["family"]
        assert row["peakMiB"] is None and row["torchMaxAllocatedMiB"] is None and row["gpu"] is None
        assert row["utilization"]["source"] is None and row["utilization"]["smact"] is None
        assert row["steps"] >= 1 and row["cpuMaxRssMiB"] > 0 and row["torch"]
        validate(row["layerTable"])
        assert (out / row["script"]).read_text(encoding="utf-8").startswith('"""Sampled by')
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["device"] == "cpu" and run["total"] == 2

    before = (out / "results.jsonl").read_bytes()
    again = events(collect(config, out).stdout)
    assert [e["status"] for e in again if e["event"] == "config"] == ["skipped", "skipped"]
    assert (out / "results.jsonl").read_bytes() == before


def test_resume_after_the_run_is_killed(tmp_path):
    config, out = write_config(tmp_path, mlp=2, transformer=1), tmp_path / "out"
    command = [sys.executable, "-m", "harness", "collect", "--config", str(config), "--out", str(out), "--device", "cpu", "--seconds", "0.2"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        seen = []
        for line in process.stdout:
            seen.append(json.loads(line))
            if seen[-1]["event"] == "config":
                break
        # The first configuration is done; kill the whole run (orchestrator and worker) at once.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL
    done_before = read_rows(out / "results.jsonl")
    assert 1 <= len(done_before) < 3
    bytes_before = (out / "results.jsonl").read_bytes()

    resumed = events(collect(config, out).stdout)
    statuses = [e["status"] for e in resumed if e["event"] == "config"]
    assert statuses.count("skipped") == len(done_before) and len(statuses) == 3
    rows = read_rows(out / "results.jsonl")
    assert len(rows) == 3 and len({r["id"] for r in rows}) == 3
    assert (out / "results.jsonl").read_bytes().startswith(bytes_before)  # append-only


def test_an_unfinished_last_line_is_dropped_and_the_run_goes_on(tmp_path):
    config, out = write_config(tmp_path, mlp=1, transformer=0), tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text('{"id": "mlp-cut-short", "stat', encoding="utf-8")
    completed = collect(config, out)
    assert "dropped an unfinished last line" in completed.stderr
    rows = read_rows(out / "results.jsonl")
    assert len(rows) == 1 and rows[0]["status"] == "ok"


def test_oom_is_a_labelled_row_and_the_run_continues(tmp_path):
    """A real allocation failure: the worker caps its address space at its size after warm-up plus
    24 MiB (RLIMIT_AS), and the big configuration's first forward needs more (1024 x 2048 floats per
    layer output, 8 MiB each, and the 8 MiB weights' gradients and Adam state)."""
    config = tmp_path / "config.yaml"
    config.write_text("""
seed: 1
training:
  batchSize: 1024
  optimizer: adam
  precision: fp32
families:
  mlp:
    count: 2
    inputShape: [[1024]]
    width: [1024, 2048]
    depth: 4
    classes: 10
    activation: ReLU
    normalization: none
    dropout: 0.0
    residual: false
""", encoding="utf-8")
    out = tmp_path / "out"
    progress = [e for e in events(collect(config, out, "--cpu-memory-cap-mib", "24").stdout) if e["event"] == "config"]
    rows = read_rows(out / "results.jsonl")
    assert len(rows) == 2 and [e["status"] for e in progress] == [r["status"] for r in rows]
    oom = [r for r in rows if r["oom"]]
    assert oom, [r["error"] for r in rows]
    for row in oom:
        assert row["status"] == "oom" and row["device"] == "cpu" and row["cpuMemoryCapMiB"] == 24
        assert "allocate" in row["error"] or "MemoryError" in row["error"], row["error"]
        assert row["phase"] in ("data", "train") and row["steps"] is None
        validate(row["layerTable"])  # measured before the cap


def test_refusals_exit_2_with_an_error_line(tmp_path):
    config, out = write_config(tmp_path, mlp=1, transformer=0), tmp_path / "out"
    collect(config, out)
    other = collect(config, out, "--seconds", "0.3", check=False)
    assert other.returncode == 2 and "different seconds" in other.stderr
    assert events(other.stdout)[-1]["event"] == "error"
    bad = tmp_path / "bad.yaml"
    bad.write_text("families:\n  rnn:\n    count: 1\n", encoding="utf-8")
    refused = collect(bad, tmp_path / "out2", check=False)
    assert refused.returncode == 2 and "unknown ['rnn']" in refused.stderr
    capped = subprocess.run([sys.executable, "-m", "harness", "collect", "--config", str(config), "--out", str(tmp_path / "o3"), "--device", "cuda", "--cpu-memory-cap-mib", "5"], cwd=ROOT, capture_output=True, text=True)
    assert capped.returncode == 2 and "for --device cpu only" in capped.stderr


def test_device_cuda_without_a_gpu_stops_with_exit_3(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    config = write_config(tmp_path, mlp=1, transformer=0)
    completed = subprocess.run([sys.executable, "-m", "harness", "collect", "--config", str(config), "--out", str(tmp_path / "out"), "--device", "cuda", "--seconds", "0.2"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 3 and "no CUDA device" in completed.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists() or read_rows(tmp_path / "out" / "results.jsonl") == []
