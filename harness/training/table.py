"""The training table: `python3 -m harness export` flattens collected runs into one CSV, and
`train --table` reads it back.

One row per labelled configuration (status ok or oom) with its identity, the set-up, the feature
vector (features.py, in featureDefinition.json order), the measured targets and the provenance.
Rows are selected by the same rules as `train --data` (data.py), so training from the table and
from the JSON Lines it came from sees the same runs and the same features: floats are written in
Python's shortest round-trip form, so they read back bit for bit.
"""
from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..results import iter_numbered_rows
from .data import LABELS, Run, check_layer_table, is_cpu_row, row_family, row_gpu, row_id, row_peak, row_setup, row_status, row_utilization, unlabelled
from .definitions import feature_definition, feature_names
from .features import feature_record

IDENTITY = ("run", "line", "id", "family", "variant", "device", "status", "oom", "batchSize", "optimizer", "precision")
TARGETS = ("peakMiB", "peakMiBSource", "torchMaxAllocatedMiB", "torchMaxReservedMiB", "utilizationSource", "smact", "smocc", "drama", "gpuUtilPercent", "memUtilPercent")
PROVENANCE = ("gpu", "gpuMemoryMiB", "driver", "cuda", "torch", "configHash", "cpuMemoryCapMiB", "featureDefinitionVersion")


class TableError(Exception):
    """A problem with the command's inputs or output: one line for the user, no traceback."""


def columns() -> List[str]:
    return [*IDENTITY, *feature_names(), *TARGETS, *PROVENANCE]


def results_file(source: str) -> Path:
    """A collect --out directory, a downloaded remote run (its out/), or a results.jsonl itself."""
    path = Path(source)
    if path.is_file():
        return path
    if not path.exists():
        raise TableError(f"{source}: no such file or directory")
    for candidate in (path / "results.jsonl", path / "out" / "results.jsonl"):
        if candidate.is_file():
            return candidate
    raise TableError(f"{source}: has no results.jsonl (nor out/results.jsonl); pass a `harness collect --out` directory")


def _config_hash(results: Path) -> Optional[str]:
    try:
        return json.loads((results.parent / "run.json").read_text(encoding="utf-8")).get("configHash")
    except (OSError, ValueError, AttributeError):
        return None


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)  # shortest form that reads back as the same float
    return str(value)


def table_row(record: Dict[str, Any], run: str, line: int, config_hash: Optional[str]) -> Dict[str, str]:
    """The table row of a labelled collected row (`unlabelled(record)` is None)."""
    setup = row_setup(record)
    utilization = record.get("utilization") if isinstance(record.get("utilization"), dict) else {}
    values: Dict[str, Any] = {
        "run": run,
        "line": line,
        "id": row_id(record, f"{run}:{line}"),
        "family": row_family(record),
        "variant": record.get("variant"),
        "device": record.get("device"),
        "status": row_status(record),
        "oom": LABELS[row_status(record)],
        **setup,
        **feature_record(record["layerTable"], setup),
        "peakMiB": row_peak(record),
        "peakMiBSource": record.get("peakMiBSource"),
        "torchMaxAllocatedMiB": record.get("torchMaxAllocatedMiB"),
        "torchMaxReservedMiB": record.get("torchMaxReservedMiB"),
        "utilizationSource": utilization.get("source"),
        **row_utilization(record),
        "gpuUtilPercent": utilization.get("gpuUtilPercent"),
        "memUtilPercent": utilization.get("memUtilPercent"),
        "gpu": row_gpu(record),
        **{key: record.get(key) for key in ("gpuMemoryMiB", "driver", "cuda", "torch", "cpuMemoryCapMiB")},
        "configHash": config_hash,
        "featureDefinitionVersion": feature_definition()["version"],
    }
    return {name: _cell(values.get(name)) for name in columns()}


def export_rows(sources: Sequence[str], include_cpu: bool = False) -> Tuple[List[Dict[str, str]], Counter]:
    """The table's rows from the collected runs, in a fixed order (family, id, run, line), and the
    count of rows left out per reason. Raises TableError for a source that is not there."""
    files = [(source, results_file(source)) for source in sources]
    rows: List[Dict[str, str]] = []
    skipped: Counter = Counter()
    seen = set()
    for source, path in files:
        if path.resolve() in seen:
            print(f"export: {source}: given twice; read once", file=sys.stderr)
            continue
        seen.add(path.resolve())
        config_hash = _config_hash(path)
        for number, record in iter_numbered_rows(path):
            reason = unlabelled(record)
            if reason is None and is_cpu_row(record) and not include_cpu:
                reason = "cpu"
            if reason is not None:
                skipped[reason] += 1
                continue
            try:
                check_layer_table(record["layerTable"], f"{path}:{number}")
                rows.append(table_row(record, source, number, config_hash))
            except (KeyError, TypeError, ValueError) as error:
                # One malformed row must not cost the rest of the table.
                print(f"export: {path}:{number}: skipping a row whose features cannot be computed ({type(error).__name__}: {error})", file=sys.stderr)
                skipped["bad layer table"] += 1
    rows.sort(key=lambda row: (row["family"], row["id"], row["run"], int(row["line"])))
    return rows, skipped


def write_table(rows: Sequence[Dict[str, str]], out: Path, force: bool = False) -> None:
    if out.exists() and not force:
        raise TableError(f"{out} exists; pass --force to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with open(partial, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns(), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    partial.replace(out)  # a reader never sees half a table


_SKIP_WORDS = {"cpu": "CPU (--include-cpu includes them)", "no layer table": "without a layer table", "no batch size": "without a batch size", "bad layer table": "with a layer table the features cannot use"}


def describe_skipped(skipped: Counter) -> str:
    """Like `skipped 4: 2 CPU (...), 1 crashed, 1 error`; a status with no label is named as it is."""
    if not skipped:
        return "skipped none"
    parts = [f"{count} {_SKIP_WORDS.get(reason, reason)}" for reason, count in sorted(skipped.items())]
    return f"skipped {sum(skipped.values())}: " + ", ".join(parts)


# --- Reading it back (train --table) ---------------------------------------------------------


def _number(text: str) -> Optional[float]:
    return float(text) if text != "" else None


def load_table(path: Path) -> List[Run]:
    """The GPU runs of an exported table with their features as written; CPU rows and rows
    without a peak are skipped (counted on stderr). Raises ValueError for a table of another
    feature definition."""
    names = feature_names()
    version = str(feature_definition()["version"])
    runs: List[Run] = []
    skipped = 0
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in columns() if name not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a training table of this feature definition (missing columns {', '.join(missing[:4])}); export it again with python3 -m harness export")
        for record in reader:
            if record["featureDefinitionVersion"] != version:
                raise ValueError(f"{path}:{reader.line_num}: exported with feature definition {record['featureDefinitionVersion']}, this pipeline has {version}; export it again")
            if record["device"] == "cpu" or record["cpuMemoryCapMiB"] or record["peakMiB"] == "":
                skipped += 1  # CPU rows never train, whatever the export included
                continue
            try:
                runs.append(Run(
                    id=record["id"],
                    family=record["family"],
                    table={},
                    setup={"batchSize": int(record["batchSize"]), "optimizer": record["optimizer"], "precision": record["precision"]},
                    peak_mib=float(record["peakMiB"]),
                    oom=record["oom"] == "1",
                    smact=_number(record["smact"]),
                    smocc=_number(record["smocc"]),
                    drama=_number(record["drama"]),
                    source=str(path),
                    extra={"gpu": record["gpu"] or None},
                    features=[float(record[name]) for name in names],
                ))
            except (TypeError, ValueError) as error:  # a cell edited by hand, or a short line
                raise ValueError(f"{path}:{reader.line_num}: {error}") from None
    if skipped:
        print(f"train: {path}: skipped {skipped} rows without a GPU peak (CPU rows never train)", file=sys.stderr)
    return runs
