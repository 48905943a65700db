"""`python3 -m harness collect --slurm`: the collection as a SLURM job array.

The configurations not yet in OUT/results.jsonl are dealt into shares, one per array task. Each task
runs `harness collect` on its share (`--only-ids`) and appends its rows to a file of its own
(`--rows`), so tasks never write the same file. This process follows the array: it merges new rows
into OUT/results.jsonl (each id once), prints the usual progress lines, and when the array has
ended says which tasks left configurations undone. Running the same command again resumes: only
the configurations still missing are submitted. SIGTERM cancels the array.

It assumes what SLURM clusters provide: OUT, the config and the harness on a filesystem the compute
nodes share, and the same Python there.
"""
from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from .results import FINISHED, append_row, finished_ids, iter_rows

#: Exit code when the array ended with configurations undone (run again to resume them).
EXIT_INCOMPLETE = 4
POLL_SECONDS = 2.0


class SlurmError(Exception):
    pass


def shares(ids: Sequence[str], tasks: int) -> List[List[str]]:
    """Deals the ids round-robin into at most `tasks` non-empty shares."""
    count = max(1, min(tasks, len(ids)))
    return [list(ids[k::count]) for k in range(count)]


def batch_script(*, python: str, root: Path, config: Path, out: Path, submission: Path, device: str, seconds: float, gpu_index: int, tasks: int) -> str:
    q = shlex.quote
    command = [python, "-m", "harness", "collect", "--config", str(config), "--out", str(out), "--device", device, "--seconds", repr(seconds), "--gpu-index", str(gpu_index)]
    share = f"{submission}/share-$SLURM_ARRAY_TASK_ID"
    return "\n".join([
        "#!/bin/sh",
        "#SBATCH --job-name=gpu-estimator-collect",
        f"#SBATCH --array=0-{tasks - 1}",
        f"#SBATCH --output={submission}/task-%a.log",
        "# Written by python3 -m harness collect --slurm: one share of the configurations per array task.",
        f"cd {q(str(root))} || exit 2",
        f"exec {' '.join(q(part) for part in command)} --only-ids \"{share}.ids\" --rows \"{share}.jsonl\"",
        "",
    ])


def merge_rows(out: Path, emit_row: Callable[[Dict[str, Any]], None]) -> int:
    """Appends the tasks' finished rows not yet in OUT/results.jsonl; returns how many."""
    results = out / "results.jsonl"
    known = finished_ids(results)
    added = 0
    for rows in sorted((out / "slurm").glob("*/share-*.jsonl")):
        for row in iter_rows(rows):
            if row.get("status") in FINISHED and isinstance(row.get("id"), str) and row["id"] not in known:
                append_row(results, row)
                known.add(row["id"])
                added += 1
                emit_row(row)
    return added


def _sbatch(script: Path, extra: Sequence[str]) -> str:
    try:
        completed = subprocess.run(["sbatch", "--parsable", *extra, str(script)], capture_output=True, text=True, timeout=120)
    except FileNotFoundError as error:
        raise SlurmError("sbatch not found: run on a SLURM login host (or put SLURM's commands on the PATH)") from error
    except subprocess.TimeoutExpired as error:
        raise SlurmError("sbatch did not answer within 120 s (is slurmctld reachable?)") from error
    if completed.returncode != 0:
        raise SlurmError(f"sbatch refused the array: {(completed.stderr or completed.stdout).strip()[:500]}")
    return completed.stdout.strip().split(";")[0]


def _running(job: str) -> Optional[bool]:
    """Whether any task of the array is still queued or running; None when squeue cannot say."""
    try:
        completed = subprocess.run(["squeue", "-h", "-r", "-j", job, "-o", "%T"], capture_output=True, text=True, timeout=60)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    if completed.returncode != 0:
        # squeue forgets a job soon after it ends and then calls its id invalid.
        return False if "Invalid job id" in completed.stderr else None
    return bool(completed.stdout.strip())


def run_array(*, config_path: Path, out: Path, configs: List[Dict[str, Any]], device: str, seconds: float, gpu_index: int, tasks: int, sbatch_args: Sequence[str], emit: Callable[[Dict[str, Any]], None], progress: Callable[[Dict[str, Any], int], Dict[str, Any]]) -> int:
    by_id = {item["id"]: item for item in configs}
    done_count = [0]

    def emit_row(row: Dict[str, Any]) -> None:
        done_count[0] += 1
        item = by_id.get(row["id"])
        if item is not None:
            emit(progress({**item, "status": row.get("status", "crashed")}, done_count[0]))

    (out / "slurm").mkdir(exist_ok=True)
    merge_rows(out, lambda row: None)
    done = finished_ids(out / "results.jsonl")
    done_count[0] = sum(1 for item in configs if item["id"] in done)
    remaining = [item["id"] for item in configs if item["id"] not in done]
    emit({"event": "start", "total": len(configs), "done": done_count[0], "device": device, "seconds": seconds, "out": str(out), "scheduler": "slurm"})
    if not remaining:
        emit({"event": "end", "total": len(configs), "done": done_count[0], "missing": 0})
        return 0

    submission = out / "slurm" / time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    suffix = 1
    while submission.exists():
        suffix += 1
        submission = submission.with_name(f"{submission.name.split('-')[0]}-{suffix}")
    submission.mkdir()
    dealt = shares(remaining, tasks)
    for k, share in enumerate(dealt):
        (submission / f"share-{k}.ids").write_text("\n".join(share) + "\n", encoding="utf-8")
    script = submission / "collect.sbatch"
    root = Path(__file__).resolve().parent.parent
    script.write_text(batch_script(python=sys.executable, root=root, config=config_path.resolve(), out=out.resolve(), submission=submission.resolve(), device=device, seconds=seconds, gpu_index=gpu_index, tasks=len(dealt)), encoding="utf-8")
    job = _sbatch(script, sbatch_args)
    emit({"event": "submitted", "jobId": job, "tasks": len(dealt), "configs": len(remaining), "folder": str(submission)})

    def cancel(signum, _frame):
        subprocess.run(["scancel", job], capture_output=True, timeout=60)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, cancel)
    unknown_since: Optional[float] = None
    while True:
        merge_rows(out, emit_row)
        state = _running(job)
        if state is False:
            break
        if state is None:
            unknown_since = unknown_since or time.time()
            if time.time() - unknown_since > 600:
                raise SlurmError(f"squeue has not answered for 10 minutes about job {job}; the rows merged so far are in {out / 'results.jsonl'}")
        else:
            unknown_since = None
        time.sleep(POLL_SECONDS)
    merge_rows(out, emit_row)

    done = finished_ids(out / "results.jsonl")
    undone = [k for k, share in enumerate(dealt) if any(i not in done for i in share)]
    missing = sum(1 for item in configs if item["id"] not in done)
    emit({"event": "end", "total": len(configs), "done": len(configs) - missing, "missing": missing, "jobId": job})
    if undone:
        logs = ", ".join(str(submission / f"task-{k}.log") for k in undone)
        message = f"array job {job}: task(s) {', '.join(map(str, undone))} left {missing} configuration(s) undone (see {logs}); run the same command again to resume them"
        print(f"harness collect: {message}", file=sys.stderr)
        emit({"event": "error", "message": message})
        return EXIT_INCOMPLETE
    return 0


def read_ids(path: Path) -> List[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SlurmError(f"--only-ids: cannot read {path}: {error.strerror or error}") from error
    return [line.strip() for line in text.splitlines() if line.strip()]
