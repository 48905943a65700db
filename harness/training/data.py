"""Measurement tables the estimators train on, as one list of `Run`s.

Two sources:
- The published GPUMemNet reference data (A100 40 GB, PyTorch 2.4.1), read in place from
  `../shared/data/gpumemnet-a100/{mlp,cnn}.csv` beside the repository (or GPUMEMNET_DATA, or
  --reference-data). Their `Activations-Params` layer lists become layer tables exactly as
  scripts/evaluation/referenceData.ts builds them.
- JSON Lines that our harness collects (one measured run per line; see README.md in this folder
  for the fields read).

The held-out test split is a pure function of the file name, so TypeScript (`npm run evaluate`)
picks the same rows: see `split`.
"""
from __future__ import annotations

import csv
import hashlib
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..results import iter_numbered_rows
from .definitions import REPO_ROOT

SCHEMA_VERSION = 1
#: Share of each stratum held out for the final test; the rest is cross-validated in 3 folds.
TEST_SHARE = 0.3
CV_FOLDS = 3
#: Strata of the held-out split and the folds: the coarsest memory bins the issue scores.
STRATUM_MIB = {"mlp": 1024, "cnn": 8192, "transformer": 8192}

#: The generator's layer names in `Activations-Params`, as torch.nn class names.
LAYER_TYPES = {
    "linear": "Linear",
    "batch_normalization": "BatchNorm1d",
    "batchnorm2d": "BatchNorm2d",
    "dropout": "Dropout",
    "conv2d": "Conv2d",
    "adaptive_avg_pool2d": "AdaptiveAvgPool2d",
    "softmax": "Softmax",
    "gelu": "GELU",
}

_LAYER = re.compile(r"\('([^']+)',\s*(\d+),\s*(\d+)\)")


@dataclass
class Run:
    """One measured training run: what the features need, what was measured."""

    id: str
    family: str
    table: Dict[str, Any]
    setup: Dict[str, Any]
    #: Peak GPU memory as nvidia-smi saw it (MiB); for an OOM run, the peak before the crash.
    peak_mib: float
    oom: bool = False
    #: DCGM averages in 0..1; None where not recorded.
    smact: Optional[float] = None
    smocc: Optional[float] = None
    drama: Optional[float] = None
    source: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)
    #: The feature vector when it was read ready-made (an exported training table); else computed
    #: from `table` and `setup`.
    features: Optional[List[float]] = None


def default_reference_dir() -> Path:
    env = os.environ.get("GPUMEMNET_DATA")
    return Path(env) if env else (REPO_ROOT.parent / "shared" / "data" / "gpumemnet-a100")


def dense_concat_activations(params: int, activations: int) -> Optional[int]:
    """Per-sample elements of the `torch.cat` that feeds a dense-architecture Conv2d, from that
    conv's parameters and activations; None where the conv is neither kind the generator builds.

    - a 3x3 growth conv with 32 outputs: params = 288 C_in + 32, activations = 32 HW;
    - the 1x1 transition conv halving c channels: params = c (c // 2) + c // 2, activations = (c // 2) HW.
    """
    if (params - 32) % 288 == 0 and activations % 32 == 0:
        return (params - 32) // 288 * (activations // 32)
    c = 2
    while c * (c // 2) + c // 2 <= params:  # increasing in c: at most one c fits
        if c * (c // 2) + c // 2 == params:
            return c * (activations // (c // 2)) if activations % (c // 2) == 0 else None
        c += 1
    return None


def reference_layer_table(filename: str, layers: str, input_shape: List[int]) -> Dict[str, Any]:
    """The layer table of a GPUMemNet record, exactly as scripts/evaluation/referenceData.ts builds it.

    Dense records (`arch:dense` in the file name) gain functional rows: the generator's DenseBlock
    runs every convolution on a `torch.cat` of the block's features so far, which the published
    layer lists leave out, so a `torch.cat` row (its elements from the conv's parameters and
    activations, `dense_concat_activations`) goes immediately before every Conv2d row, as our
    analyzer and harness record a script's concatenations (what it measured: README.md, Data). The totals leave functional rows out, as layer tables
    do (totals.activations is the modules' outputs), so they are those of the published list.
    """
    dense = "arch:dense" in filename
    listed = []
    for match in _LAYER.finditer(layers):
        name, activations, params = match.group(1), int(match.group(2)), int(match.group(3))
        listed.append((LAYER_TYPES.get(name, name), activations, params))
    rows = []
    for layer_type, activations, params in listed:
        concat = dense_concat_activations(params, activations) if dense and layer_type == "Conv2d" else None
        if concat is not None:
            rows.append({"path": str(len(rows)), "type": "torch.cat", "outputShape": None, "activations": concat, "params": 0, "trainable": True})
        rows.append({"path": str(len(rows)), "type": layer_type, "outputShape": None, "activations": activations, "params": params, "trainable": True})
    params = sum(params for _, _, params in listed)
    activations = sum(activations for _, activations, _ in listed)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "model": filename,
        "inputShape": input_shape,
        "rows": rows,
        "totals": {"params": params, "trainableParams": params, "activations": activations},
        "incomplete": False,
    }


def reference_input_shape(family: str, filename: str) -> List[int]:
    """The sample shape the generator used, read from the settings encoded in the file name."""

    def setting(name: str) -> int:
        match = re.search(rf"(?:^|_){name}:(\d+)", filename)
        if not match:
            raise ValueError(f"{filename}: no {name} setting in the file name")
        return int(match.group(1))

    if family == "mlp":
        return [setting("input")]
    size = setting("input_size")
    return [setting("input_channels"), size, size]


def _utilization(record: Dict[str, str], column: str) -> Optional[float]:
    value = record.get(column)
    if value is None or value == "":
        return None
    number = float(value)
    return number if number >= 0 else None


def reference_run(family: str, record: Dict[str, str]) -> Optional[Run]:
    """A CSV record as a Run; None for rows with no usable layer list (Depth 0: failed parses)."""
    if int(record["Depth"]) <= 0:
        return None
    filename = record["Filename"]
    status = record.get("Status", "SUCCESSFUL")
    peak = float(record["Max GPU Memory (MiB)"])
    if peak <= 0:
        return None
    table = reference_layer_table(filename, record["Activations-Params"], reference_input_shape(family, filename))
    return Run(
        id=filename,
        family=family,
        table=table,
        # GPUMemNet's generator trains every model with Adam in fp32.
        setup={"batchSize": int(record["Batch Size"]), "optimizer": "adam", "precision": "fp32"},
        peak_mib=peak,
        oom=status != "SUCCESSFUL",
        smact=_utilization(record, "Avg SMACT"),
        smocc=_utilization(record, "Avg SMOCC"),
        source=f"gpumemnet-a100/{family}.csv",
    )


def load_reference(directory: Path, family: str) -> List[Run]:
    path = Path(directory) / f"{family}.csv"
    csv.field_size_limit(sys.maxsize)
    with path.open(newline="", encoding="utf-8") as handle:
        runs = [reference_run(family, record) for record in csv.DictReader(handle)]
    return [run for run in runs if run is not None]


# --- JSON Lines from our harness --------------------------------------------------------------

_PEAK_KEYS = ("peakMiB", "peak_mib", "maxMemoryMiB", "measuredMiB")
#: Statuses that label a run, and whether the label is OOM (older tables' spellings too). Other
#: statuses (`error`, `crashed`) say nothing about memory: those rows never train.
LABELS = {"ok": False, "successful": False, "oom": True, "oom_crash": True}


def _first(record: Dict[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if record.get(key) is not None:
            return record[key]
    return None


def _measured(record: Dict[str, Any]) -> Dict[str, Any]:
    return record["measured"] if isinstance(record.get("measured"), dict) else record


def row_status(record: Dict[str, Any]) -> str:
    return str(record.get("status") or _measured(record).get("status") or "ok").lower()


def row_peak(record: Dict[str, Any]) -> Optional[float]:
    """Peak GPU memory as nvidia-smi saw it (MiB), or None (CPU rows, no sample)."""
    measured = _measured(record)
    peak = _first(measured, _PEAK_KEYS)
    if peak is None and isinstance(measured.get("memory"), dict):
        peak = _first(measured["memory"], _PEAK_KEYS)
    return None if peak is None else float(peak)


def row_utilization(record: Dict[str, Any]) -> Dict[str, Optional[float]]:
    """DCGM's smact, smocc, drama (0..1) where recorded, else None."""
    measured = _measured(record)
    utilization = measured.get("utilization") if isinstance(measured.get("utilization"), dict) else {}

    def value(name: str) -> Optional[float]:
        number = utilization.get(name)
        return float(number) if isinstance(number, (int, float)) and not isinstance(number, bool) and number >= 0 else None

    return {name: value(name) for name in ("smact", "smocc", "drama")}


def row_family(record: Dict[str, Any]) -> str:
    from .family import model_family  # local: family depends on definitions only

    return record.get("family") or model_family(record["layerTable"])


def is_cpu_row(record: Dict[str, Any]) -> bool:
    """Rows of a `--device cpu` run: tests of the collection flow, never GPU training data."""
    return record.get("device") == "cpu" or record.get("cpuMemoryCapMiB") is not None


def unlabelled(record: Dict[str, Any]) -> Optional[str]:
    """Why a collected row cannot become a training row on any device (None: it can): its status
    is not a label, or the features cannot be computed."""
    status = row_status(record)
    if status not in LABELS:
        return status
    if not isinstance(record.get("layerTable"), dict):
        return "no layer table"
    if not isinstance(record.get("setup"), dict) or record["setup"].get("batchSize") is None:
        return "no batch size"
    return None


def check_layer_table(table: Dict[str, Any], where: str) -> None:
    if table.get("schemaVersion") != SCHEMA_VERSION:
        raise ValueError(f"{where}: layer table schemaVersion {table.get('schemaVersion')}, expected {SCHEMA_VERSION}")


def row_setup(record: Dict[str, Any]) -> Dict[str, Any]:
    setup = record["setup"]
    return {"batchSize": int(setup["batchSize"]), "optimizer": setup.get("optimizer") or "adam", "precision": setup.get("precision") or "fp32"}


def row_id(record: Dict[str, Any], where: str) -> str:
    return str(record.get("id") or record.get("runId") or where)


def row_gpu(record: Dict[str, Any]) -> Optional[str]:
    gpu = record.get("gpu")
    return gpu if isinstance(gpu, str) else (gpu or {}).get("name")


def jsonl_run(record: Dict[str, Any], where: str) -> Optional[Run]:
    """One line of a collected table; None for a line that is not a finished GPU measurement."""
    if unlabelled(record) is not None or is_cpu_row(record):
        return None
    peak = row_peak(record)
    if peak is None:
        return None
    table = record["layerTable"]
    check_layer_table(table, where)
    utilization = row_utilization(record)
    return Run(
        id=row_id(record, where),
        family=row_family(record),
        table=table,
        setup=row_setup(record),
        peak_mib=peak,
        oom=LABELS[row_status(record)],
        smact=utilization["smact"],
        smocc=utilization["smocc"],
        drama=utilization["drama"],
        source=where.split(":")[0],
        extra={"gpu": row_gpu(record)},
    )


def load_jsonl(path: Path) -> List[Run]:
    """Finished GPU measurements of a collected file (`harness collect`'s results.jsonl): rows
    with status ok or oom, a layer table, a batch size and a peak; CPU rows, errors, crashes and
    a last line cut short by a kill are skipped."""
    runs: List[Run] = []
    for number, record in iter_numbered_rows(path):
        run = jsonl_run(record, f"{path}:{number}")
        if run is not None:
            runs.append(run)
    return runs


# --- The split -------------------------------------------------------------------------------


def split_key(run: Run) -> str:
    return hashlib.sha256(f"{run.family}/{run.id}".encode("utf-8")).hexdigest()


def stratum(run: Run) -> int:
    return int(run.peak_mib // STRATUM_MIB[run.family])


def split(runs: Iterable[Run]) -> Tuple[List[Run], List[Run], Dict[str, int]]:
    """(train, test, fold of each train run's id).

    Only successful runs are split: within each family and memory stratum (floor(peak /
    STRATUM_MIB)), runs are ordered by sha256("family/id"); the first round(30%) are the test
    split, and the rest go to folds 0, 1, 2 in turn. OOM runs (lower bounds) are always training
    runs, in no fold's validation part (fold -1)."""
    groups: Dict[Tuple[str, int], List[Run]] = {}
    train: List[Run] = []
    test: List[Run] = []
    folds: Dict[str, int] = {}
    for run in runs:
        if run.oom:
            train.append(run)
            folds[run.id] = -1
        else:
            groups.setdefault((run.family, stratum(run)), []).append(run)
    for key in sorted(groups):
        members = sorted(groups[key], key=split_key)
        n_test = int(math.floor(TEST_SHARE * len(members) + 0.5))
        test.extend(members[:n_test])
        for position, run in enumerate(members[n_test:]):
            train.append(run)
            folds[run.id] = position % CV_FOLDS
    return train, test, folds
