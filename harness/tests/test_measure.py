"""`python3 -m harness measure SCRIPT --steps N --device cpu`, and the export/train dispatch."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import __main__ as entry
from harness.config import load_config
from harness.sampling import render_source, sample_configs

ROOT = Path(__file__).resolve().parents[2]

STUBBORN = '''
import torch, torch.nn as nn
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters())
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 2)
print("the script's own output")
for step in range(10000):
    try:  # a script that swallows every Exception still stops after N steps
        loss = model(torch.randn(4, 8)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    except Exception:
        pass
'''


def measure(script, *extra):
    completed = subprocess.run([sys.executable, "-m", "harness", "measure", str(script), "--device", "cpu", *extra], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    lines = [json.loads(line) for line in completed.stdout.splitlines()]
    assert [line["event"] for line in lines] == ["start", "measurement", "end"]
    return lines[1], completed


def test_stops_after_n_optimizer_steps_and_keeps_stdout_for_json(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(STUBBORN, encoding="utf-8")
    out = tmp_path / "measured.jsonl"
    row, completed = measure(script, "--steps", "7", "--out", str(out))
    assert row["status"] == "ok" and row["steps"] == 7 and row["requestedSteps"] == 7
    assert row["optimizers"] == ["Adam"] and row["device"] == "cpu" and row["usedCuda"] is False
    assert row["peakMiB"] is None and row["torchMaxAllocatedMiB"] is None and row["cpuMaxRssMiB"] > 0
    assert "the script's own output" in completed.stderr and "the script's own output" not in completed.stdout
    (saved,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert saved == {k: v for k, v in row.items() if k != "event"}


def test_scripts_that_end_early_fail_or_take_arguments(tmp_path):
    short = tmp_path / "short.py"
    short.write_text("import sys, torch\nm = torch.nn.Linear(2, 2)\no = torch.optim.SGD(m.parameters(), lr=0.1)\n"
                     "for _ in range(int(sys.argv[1])):\n    m(torch.randn(3, 2)).sum().backward(); o.step()\n", encoding="utf-8")
    row, _ = measure(short, "--steps", "5", "--", "2")
    assert row["status"] == "finished" and row["steps"] == 2
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nraise ValueError('no data here')\n", encoding="utf-8")
    row, _ = measure(broken, "--steps", "5")
    assert row["status"] == "error" and row["error"] == "ValueError: no data here" and row["steps"] == 0


def test_a_sampled_configurations_script_is_measurable(tmp_path):
    config = load_config(ROOT / "harness" / "configs" / "cpu-smoke.yaml")
    config["families"] = {"transformer": {**config["families"]["transformer"], "style": "gpt"}}
    (item,) = sample_configs(config, "cpu")
    script = tmp_path / "gpt.py"
    script.write_text(render_source(item), encoding="utf-8")
    row, _ = measure(script, "--steps", "3")
    assert row["status"] == "ok" and row["steps"] == 3


def test_export_and_train_dispatch_to_the_training_pipeline(monkeypatch, capsys):
    calls = []

    class FakeCli:
        @staticmethod
        def main_export(argv):
            calls.append(("export", argv))
            return 0

        @staticmethod
        def main_train(argv):
            calls.append(("train", argv))
            return 4

    monkeypatch.setattr(entry.importlib, "import_module", lambda name: FakeCli if name == "harness.training.cli" else None)
    assert entry.main(["export", "--in", "x"]) == 0
    assert entry.main(["train", "--data", "y"]) == 4
    assert calls == [("export", ["--in", "x"]), ("train", ["--data", "y"])]


def test_a_missing_training_pipeline_is_a_clear_message(monkeypatch, capsys):
    def missing(name):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(entry.importlib, "import_module", missing)
    assert entry.main(["train"]) == 2
    assert "has no training pipeline" in capsys.readouterr().err


def test_unknown_commands_and_help(capsys):
    assert entry.main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err
    assert entry.main(["--help"]) == 0
    assert "collect --config" in capsys.readouterr().out
