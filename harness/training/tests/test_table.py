"""`python3 -m harness export` (table.py): one training table from collected runs, and `train
--table` reading it back. A real `collect --device cpu` run for the CPU rules, hand-written GPU
rows for the rest (no GPU here)."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from harness.training import cli
from harness.training.data import load_jsonl
from harness.training.definitions import feature_names
from harness.training.ensemble import MemberConfig
from harness.training.features import feature_record
from harness.training.table import columns, load_table
from harness.training.train import Arrays

ROOT = Path(__file__).resolve().parents[3]

TINY = """
seed: 5
training:
  batchSize: [2, 8]
  optimizer: [sgd, adam]
  precision: [fp32]
families:
  mlp:
    count: 2
    inputShape: [[16]]
    width: [4, 16]
    depth: [1, 2]
    classes: [2, 5]
"""


def harness(*args):
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.fixture
def export(capsys):
    """`export` in this process (each `python3 -m harness` pays for importing torch)."""

    def run(*args):
        capsys.readouterr()
        code = cli.main_export([str(arg) for arg in args])
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, captured.out, captured.err)

    return run


def read_table(path):
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return reader.fieldnames, list(reader)


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    """A real collect run on CPU: two tiny MLPs, 0.2 s each."""
    base = tmp_path_factory.mktemp("collect")
    (base / "config.yaml").write_text(TINY, encoding="utf-8")
    completed = harness("collect", "--config", base / "config.yaml", "--out", base / "out", "--device", "cpu", "--seconds", "0.2")
    assert completed.returncode == 0, completed.stderr
    return base / "out"


def test_export_of_a_cpu_collect_run_with_include_cpu(cpu_run, tmp_path):
    out = tmp_path / "table.csv"
    completed = harness("export", "--runs", cpu_run, "--out", out, "--include-cpu")
    assert completed.returncode == 0, completed.stderr
    assert "wrote 2 rows (mlp 2)" in completed.stdout
    header, rows = read_table(out)
    assert header == columns() and len(set(header)) == len(header)  # no feature shadows another column
    collected = {row["id"]: row for row in map(json.loads, (cpu_run / "results.jsonl").read_text().splitlines())}
    config_hash = json.loads((cpu_run / "run.json").read_text())["configHash"]
    assert [row["id"] for row in rows] == sorted(collected)
    for row in rows:
        source = collected[row["id"]]
        assert (row["device"], row["status"], row["oom"], row["family"], row["run"]) == ("cpu", "ok", "0", "mlp", str(cpu_run))
        # CPU rows have no GPU targets: empty cells, never zeros.
        assert row["peakMiB"] == row["torchMaxAllocatedMiB"] == row["smact"] == row["gpu"] == ""
        assert (row["torch"], row["configHash"], row["batchSize"]) == (source["torch"], config_hash, str(source["setup"]["batchSize"]))
        # The features are features.py's for the row's layer table, bit for bit.
        expected = feature_record(source["layerTable"], source["setup"])
        assert {name: float(row[name]) for name in feature_names()} == expected


def test_cpu_rows_are_excluded_by_default_and_never_train(cpu_run, tmp_path, export):
    out = tmp_path / "table.csv"
    completed = export("--runs", cpu_run, "--out", out)
    assert completed.returncode == 0, completed.stderr
    assert "wrote 0 rows" in completed.stdout and "2 CPU (--include-cpu includes them)" in completed.stdout
    assert read_table(out) == (columns(), [])
    # Even when a table includes them, training skips them.
    included = tmp_path / "with-cpu.csv"
    assert export("--runs", cpu_run, "--out", included, "--include-cpu").returncode == 0
    assert load_table(included) == []


# --- Hand-written GPU rows ---------------------------------------------------------------------


def mlp_table(width, depth, inputs=64, classes=10):
    rows, dims = [], [inputs] + [width] * depth
    for i in range(depth):
        rows.append({"path": f"{2 * i}", "type": "Linear", "outputShape": [dims[i + 1]], "activations": dims[i + 1], "params": dims[i] * dims[i + 1] + dims[i + 1], "trainable": True})
        rows.append({"path": f"{2 * i + 1}", "type": "ReLU", "outputShape": [dims[i + 1]], "activations": dims[i + 1], "params": 0, "trainable": True})
    rows.append({"path": f"{2 * depth}", "type": "Linear", "outputShape": [classes], "activations": classes, "params": width * classes + classes, "trainable": True})
    params = sum(r["params"] for r in rows)
    return {"schemaVersion": 1, "model": "m", "inputShape": [inputs], "rows": rows, "totals": {"params": params, "trainableParams": params, "activations": sum(r["activations"] for r in rows)}, "incomplete": False}


def gpu_row(i, status="ok"):
    width, depth, batch = 64 * (1 + i % 7), 1 + i % 3, 16 * (1 + i % 5)
    table = mlp_table(width, depth)
    setup = {"batchSize": batch, "optimizer": ["adam", "sgd"][i % 2], "precision": "fp32", "family": "mlp"}
    analytical = feature_record(table, setup)["analytical_mib"]
    return {
        "schemaVersion": 1, "id": f"mlp-{i:012x}", "family": "mlp", "variant": "mlp", "setup": setup, "device": "cuda",
        "status": status, "oom": status == "oom" if status in ("ok", "oom") else None, "layerTable": table,
        "peakMiB": round(analytical * (1.1 + (i % 11) / 50), 1) + 0.5, "peakMiBSource": "process",
        "torchMaxAllocatedMiB": 12.25 + i, "torchMaxReservedMiB": 20.0 + i,
        "utilization": {"source": "dcgm", "samples": 9, "smact": (i % 10) / 10, "smocc": (i % 7) / 7, "drama": None, "gpuUtilPercent": None, "memUtilPercent": None} if i % 3 else
        {"source": "nvidia-smi", "samples": 9, "smact": None, "smocc": None, "drama": None, "gpuUtilPercent": 80.0, "memUtilPercent": 30.5},
        "gpu": "NVIDIA H100 80GB HBM3", "gpuMemoryMiB": 81559, "driver": "550.54.15", "cuda": "12.1", "torch": "2.3.0",
    }


def write_results(directory, rows, tail=""):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.jsonl").write_text("".join(line if isinstance(line, str) else json.dumps(line) + "\n" for line in rows) + tail, encoding="utf-8")
    return directory


def test_labels_skips_warnings_and_order(tmp_path, export):
    cpu = {**gpu_row(90), "id": "mlp-cpu", "device": "cpu", "peakMiB": None}
    no_table = {**gpu_row(91), "id": "mlp-notable", "layerTable": None, "layerTableError": "boom"}
    newer_table = {**gpu_row(92), "id": "mlp-newer", "layerTable": {**gpu_row(92)["layerTable"], "schemaVersion": 2}}
    run = write_results(tmp_path / "a100", [
        gpu_row(3), "{not json\n", gpu_row(1, "oom"), gpu_row(2, "crashed"), "[1, 2]\n", gpu_row(4, "error"), cpu, no_table, gpu_row(0), newer_table,
    ], tail='{"id": "mlp-cut", "layerT')
    out = tmp_path / "table.csv"
    completed = export("--runs", run, "--out", out)
    assert completed.returncode == 0, completed.stderr
    results = run / "results.jsonl"
    assert f"{results}:2: skipping a line that is not JSON" in completed.stderr
    assert f"{results}:5: skipping a line that is not a JSON object" in completed.stderr
    assert f"{results}:10: skipping a row whose features cannot be computed (ValueError: {results}:10: layer table schemaVersion 2, expected 1)" in completed.stderr
    assert f"{results}:11: ignoring an unfinished last line" in completed.stderr
    assert "wrote 3 rows (mlp 3)" in completed.stdout
    assert "skipped 5: 1 with a layer table the features cannot use, 1 CPU (--include-cpu includes them), 1 crashed, 1 error, 1 without a layer table" in completed.stdout
    _, rows = read_table(out)
    assert [(r["id"], r["status"], r["oom"], r["line"]) for r in rows] == [("mlp-000000000000", "ok", "0", "9"), ("mlp-000000000001", "oom", "1", "3"), ("mlp-000000000003", "ok", "0", "1")]
    first = rows[0]
    assert (first["peakMiB"], first["torchMaxAllocatedMiB"], first["utilizationSource"], first["smact"], first["gpuUtilPercent"], first["memUtilPercent"]) == (repr(gpu_row(0)["peakMiB"]), "12.25", "nvidia-smi", "", "80.0", "30.5")
    assert (rows[1]["smact"], rows[1]["smocc"], rows[1]["drama"]) == ("0.1", repr(1 / 7), "")
    assert (first["gpu"], first["driver"], first["cuda"], first["torch"], first["device"], first["configHash"]) == ("NVIDIA H100 80GB HBM3", "550.54.15", "12.1", "2.3.0", "cuda", "")


def test_order_does_not_depend_on_the_order_of_the_runs(tmp_path, export):
    a = write_results(tmp_path / "a", [gpu_row(i) for i in (5, 2, 8)])
    b = write_results(tmp_path / "b", [gpu_row(i) for i in (2, 7)])  # the same configuration on another host
    assert export("--runs", a, b, "--out", tmp_path / "ab.csv").returncode == 0
    assert export("--runs", b, "--runs", a, "--out", tmp_path / "ba.csv").returncode == 0
    ab, ba = read_table(tmp_path / "ab.csv")[1], read_table(tmp_path / "ba.csv")[1]
    assert ab == ba
    assert [(r["id"][-2:], r["run"][-1]) for r in ab] == [("02", "a"), ("02", "b"), ("05", "a"), ("07", "b"), ("08", "a")]


def test_never_overwrites_without_force_and_refuses_a_missing_dir(tmp_path, export):
    run = write_results(tmp_path / "run", [gpu_row(0)])
    out = tmp_path / "table.csv"
    out.write_text("keep me\n", encoding="utf-8")
    refused = export("--runs", run, "--out", out)
    assert refused.returncode == 2 and refused.stderr.strip() == f"export: {out} exists; pass --force to replace it"
    assert out.read_text(encoding="utf-8") == "keep me\n"
    assert export("--runs", run, "--out", out, "--force").returncode == 0
    assert len(read_table(out)[1]) == 1
    missing = export("--runs", run, tmp_path / "nope", "--out", tmp_path / "other.csv")
    assert missing.returncode == 2 and missing.stderr.strip() == f"export: {tmp_path / 'nope'}: no such file or directory"
    assert not (tmp_path / "other.csv").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "has no results.jsonl" in export("--runs", empty, "--out", tmp_path / "other.csv").stderr


def test_a_downloaded_remote_run_and_a_results_file_are_found(tmp_path, export):
    run = write_results(tmp_path / "run-1" / "out", [gpu_row(0)])
    for n, source in enumerate((tmp_path / "run-1", run / "results.jsonl")):
        out = tmp_path / f"{n}.csv"
        assert export("--runs", source, "--out", out).returncode == 0
        assert [r["run"] for r in read_table(out)[1]] == [str(source)]


def test_the_table_reads_back_as_the_runs_train_data_reads(tmp_path, export):
    rows = [gpu_row(i, "oom" if i % 13 == 0 else "ok") for i in range(40)] + [gpu_row(99, "crashed")]
    run = write_results(tmp_path / "run", rows)
    out = tmp_path / "table.csv"
    assert export("--runs", run, "--out", out).returncode == 0
    from_table, from_jsonl = load_table(out), load_jsonl(run / "results.jsonl")
    by_id = {r.id: r for r in from_jsonl}
    assert sorted(by_id) == [r.id for r in from_table]
    for r in from_table:
        j = by_id[r.id]
        assert (r.family, r.setup, r.peak_mib, r.oom, r.smact, r.smocc, r.drama, r.extra) == (j.family, j.setup, j.peak_mib, j.oom, j.smact, j.smocc, j.drama, j.extra)
    a, b = Arrays.of(from_table), Arrays.of(sorted(from_jsonl, key=lambda r: r.id))
    assert (a.features == b.features).all() and (a.peak == b.peak).all()


def test_export_then_train_gives_what_training_on_the_jsonl_gives(tmp_path, export, monkeypatch):
    import harness.training.train as train_module

    rows = [gpu_row(i, "oom" if i % 13 == 0 else "ok") for i in range(48)]
    run = write_results(tmp_path / "run", rows)
    table = tmp_path / "table.csv"
    assert export("--runs", run, "--out", table).returncode == 0
    monkeypatch.setattr(train_module, "MIN_RUNS", 10)
    monkeypatch.setattr(train_module, "memory_members", lambda steps: [MemberConfig(hidden=8, activation="silu", lr=5e-3, weight_decay=1e-4, steps=steps, seed=1)])
    monkeypatch.setattr(train_module, "utilization_members", lambda steps: [MemberConfig(hidden=8, activation="tanh", lr=5e-3, weight_decay=0.0, steps=steps, seed=2)])
    common = ["--no-reference-data", "--families", "mlp", "--no-export", "--steps", "15", "--utilization-steps", "15"]
    try:
        assert cli.main_train([*common, "--table", str(table), "--work", str(tmp_path / "from-table")]) == 0
        assert cli.main_train([*common, "--data", str(run / "results.jsonl"), "--work", str(tmp_path / "from-jsonl")]) == 0
    finally:
        torch.use_deterministic_algorithms(False)
    metrics = json.loads((tmp_path / "from-table" / "metrics.json").read_text())
    assert metrics["mlp"]["test"]["memory"]["median_abs_error"] >= 0
    assert metrics == json.loads((tmp_path / "from-jsonl" / "metrics.json").read_text())
    sources = torch.load(tmp_path / "from-table" / "mlp.pt")["card"]["training"]["data"]
    assert [(s["runs"], s["gpu"]) for s in sources] == [(48, "NVIDIA H100 80GB HBM3")] and "harness export" in sources[0]["what"]


def test_train_refuses_a_table_of_another_feature_definition_or_a_missing_file(tmp_path, capsys):
    stale = tmp_path / "stale.csv"
    stale.write_text("run,line,id\n", encoding="utf-8")
    try:
        assert cli.main_train(["--no-reference-data", "--table", str(stale), "--work", str(tmp_path / "w")]) == 2
        assert "not a training table of this feature definition" in capsys.readouterr().err
        assert cli.main_train(["--no-reference-data", "--table", str(tmp_path / "nope.csv"), "--work", str(tmp_path / "w")]) == 2
        assert f"{tmp_path / 'nope.csv'}: no such file" in capsys.readouterr().err
    finally:
        torch.use_deterministic_algorithms(False)


def test_the_onnx_re_export_keeps_its_own_name(tmp_path, capsys):
    completed = harness("export-onnx", "--work", tmp_path, "--out", tmp_path / "models")
    assert completed.returncode == 1 and "export-onnx: no checkpoints in" in completed.stderr
    assert cli.main(["export-onnx", "--work", str(tmp_path), "--out", str(tmp_path / "models")]) == 1
    assert "export-onnx: no checkpoints in" in capsys.readouterr().err
