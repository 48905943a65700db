"""The pure parts of `collect --slurm` (harness/slurm.py); the real array runs in
test/integration/harness/slurmCollect.integration.test.ts against a local slurmctld and slurmd."""
import json
import shlex

from harness.results import append_row, read_rows
from harness.slurm import batch_script, merge_rows, shares


def test_shares_deal_round_robin_into_at_most_the_tasks_asked():
    ids = [f"c{i}" for i in range(7)]
    assert shares(ids, 3) == [["c0", "c3", "c6"], ["c1", "c4"], ["c2", "c5"]]
    assert shares(ids[:2], 8) == [["c0"], ["c1"]]
    assert sorted(sum(shares(ids, 4), [])) == sorted(ids)


def test_the_batch_script_runs_one_share_per_array_task_with_quoted_paths(tmp_path):
    script = batch_script(python="/usr/bin/python3", root=tmp_path / "my repo", config=tmp_path / "c.yaml", out=tmp_path / "out", submission=tmp_path / "out" / "slurm" / "s1", device="cpu", seconds=1.0, gpu_index=0, tasks=3)
    lines = script.splitlines()
    assert lines[0] == "#!/bin/sh"
    assert "#SBATCH --array=0-2" in lines
    assert f"#SBATCH --output={tmp_path}/out/slurm/s1/task-%a.log" in lines
    assert f"cd {shlex.quote(str(tmp_path / 'my repo'))} || exit 2" in lines
    exec_line = lines[-1]
    assert exec_line.startswith("exec /usr/bin/python3 -m harness collect --config ")
    assert f'--only-ids "{tmp_path}/out/slurm/s1/share-$SLURM_ARRAY_TASK_ID.ids"' in exec_line
    assert f'--rows "{tmp_path}/out/slurm/s1/share-$SLURM_ARRAY_TASK_ID.jsonl"' in exec_line


def test_merge_adds_each_finished_row_once_and_skips_unfinished_ones(tmp_path):
    (tmp_path / "slurm" / "s1").mkdir(parents=True)
    (tmp_path / "slurm" / "s2").mkdir()
    append_row(tmp_path / "results.jsonl", {"id": "a", "status": "ok"})
    append_row(tmp_path / "slurm" / "s1" / "share-0.jsonl", {"id": "a", "status": "ok"})
    append_row(tmp_path / "slurm" / "s1" / "share-0.jsonl", {"id": "b", "status": "oom"})
    append_row(tmp_path / "slurm" / "s2" / "share-0.jsonl", {"id": "b", "status": "ok"})
    append_row(tmp_path / "slurm" / "s2" / "share-1.jsonl", {"id": "c", "status": "running"})
    with open(tmp_path / "slurm" / "s2" / "share-1.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "d", "status": "ok"}))  # a task still writing this line
    seen = []
    assert merge_rows(tmp_path, seen.append) == 1
    assert [row["id"] for row in seen] == ["b"]
    assert [row["id"] for row in read_rows(tmp_path / "results.jsonl")] == ["a", "b"]
    assert merge_rows(tmp_path, seen.append) == 0


def _collect_slurm(tmp_path, env):
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "harness", "collect", "--config", str(root / "harness" / "configs" / "cpu-smoke.yaml"), "--out", str(tmp_path / "out"), "--device", "cpu", "--seconds", "0.2", "--slurm"]
    return subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=180, env=env)


def test_without_sbatch_it_says_where_to_run_and_exits_2(tmp_path):
    import os
    empty = tmp_path / "bin"
    empty.mkdir()
    completed = _collect_slurm(tmp_path, {**os.environ, "PATH": str(empty)})
    assert completed.returncode == 2, completed.stderr
    assert "sbatch not found: run on a SLURM login host" in completed.stderr
    events = [json.loads(line) for line in completed.stdout.splitlines()]
    assert events[-1]["event"] == "error"


def test_an_unreachable_controller_is_a_clear_error_not_a_hang(tmp_path):
    import os
    import shutil
    import pytest
    if shutil.which("sbatch") is None:
        pytest.fail("sbatch is missing: node scripts/test-prerequisites.cjs --for slurm installs it")
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=nowhere\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nAuthType=auth/munge\n"
                    f"AuthInfo=socket={tmp_path}/no-munge.socket\nMessageTimeout=2\n"
                    "NodeName=localhost CPUs=1 State=UNKNOWN\nPartitionName=debug Nodes=localhost Default=YES\n", encoding="utf-8")
    completed = _collect_slurm(tmp_path, {**os.environ, "SLURM_CONF": str(conf)})
    assert completed.returncode == 2, completed.stderr
    assert "sbatch refused the array:" in completed.stderr
    assert "Traceback" not in completed.stderr
