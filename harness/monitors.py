"""GPU monitors: parsers for `nvidia-smi --query-...` CSV and `dcgmi dmon` tables, and samplers
that run those tools beside a training process.

Two memory numbers come from outside PyTorch: the process's memory as `nvidia-smi
--query-compute-apps` reports it (what a scheduler sees: the CUDA context, the caching
allocator's reserve, cuDNN/cuBLAS workspaces), and, where the process is not listed (a container
whose PIDs differ from the host's), the growth of the GPU's `memory.used` over its value before
the process started. Utilization comes from DCGM profiling fields when `dcgmi dmon` works
(SMACT 1002, SMOCC 1003, DRAMA 1005: ratios in [0, 1]), else from nvidia-smi's coarse
`utilization.gpu` / `utilization.memory` percentages.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time
from typing import Any, Dict, IO, List, Optional, Sequence, Tuple

#: Values nvidia-smi prints where a field has no value.
MISSING = {"[N/A]", "N/A", "[Not Supported]", "[Insufficient Permissions]", "[Unknown Error]", ""}
_UNIT_SUFFIX = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(MiB|GiB|KiB|%|W|MHz|C)$")
_HEADER_UNIT = re.compile(r"\s*\[[^\]]*\]$")

DCGM_FIELDS = {1002: "smact", 1003: "smocc", 1005: "drama"}
DCGM_SHORT_NAMES = {"SMACT": "smact", "SMOCC": "smocc", "DRAMA": "drama"}


# --------------------------------------------------------------------------- parsing


def parse_smi_value(text: str) -> Any:
    """One CSV cell: '40960 MiB' -> 40960, '12 %' -> 12, '[N/A]' -> None, '535.104.05' stays text."""
    text = text.strip()
    if text in MISSING:
        return None
    match = _UNIT_SUFFIX.match(text)
    number = match.group(1) if match else text
    try:
        return int(number)
    except ValueError:
        pass
    try:
        return float(number)
    except ValueError:
        return text


def parse_smi_csv(text: str, fields: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
    """Rows of `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]` output.

    With a header (the default format), keys are the header's names without their unit
    ('memory.total [MiB]' -> 'memory.total'); with `noheader`, pass the queried `fields`. Lines
    that are not CSV rows (nvidia-smi's 'No devices were found', blank lines) are skipped."""
    rows: List[Dict[str, Any]] = []
    names = list(fields) if fields else None
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split(", ")]
        if names is None:
            names = [_HEADER_UNIT.sub("", cell) for cell in cells]
            continue
        if len(cells) != len(names):
            if len(names) == 1 or "," not in line:
                continue
            # A value containing ', ' (a process name) joins the surplus into the last text column.
            if len(cells) > len(names):
                cells = cells[: len(names) - 1] + [", ".join(cells[len(names) - 1 :])]
            else:
                continue
        rows.append({name: parse_smi_value(cell) for name, cell in zip(names, cells)})
    return rows


def parse_dcgmi_dmon(text: str) -> List[Dict[str, Any]]:
    """Samples of `dcgmi dmon -e 1002,1003,1005` output: one dict per entity row with 'entity'
    ('GPU 0') and the fields under their names here (smact, smocc, drama; ratios, None for N/A).

    The table (DCGM's dcgmi/DeviceMonitor.cpp) starts with '#Entity' and field short names, then a
    units line starting with 'ID'; both repeat every 15 samples. Rows start with the entity group
    and id ('GPU 0', 'GPU-I 1'). Other lines (errors, 'dmon was stopped ...') are skipped."""
    parser = DmonParser()
    return [sample for sample in (parser.feed(line) for line in text.splitlines()) if sample is not None]


class DmonParser:
    """Line-at-a-time `dcgmi dmon` parser: remembers the last header, so samples streamed long
    after it (and filtered by time) still get their column names."""

    def __init__(self) -> None:
        self.columns: List[str] = []

    def feed(self, line: str) -> Optional[Dict[str, Any]]:
        stripped = line.strip()
        if not stripped:
            return None
        if stripped.startswith("#Entity"):
            self.columns = stripped.split()[1:]
            return None
        if stripped == "ID" or stripped.startswith("ID ") or not self.columns:
            return None
        parts = stripped.split()
        if len(parts) != len(self.columns) + 2 or not parts[1].isdigit():
            return None
        sample: Dict[str, Any] = {"entity": f"{parts[0]} {parts[1]}"}
        for name, cell in zip(self.columns, parts[2:]):
            key = DCGM_SHORT_NAMES.get(name, name.lower())
            sample[key] = None if cell == "N/A" else _float_or_none(cell)
        return sample


def _float_or_none(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


# --------------------------------------------------------------------------- samplers


class _LineSampler:
    """Runs a command that prints one sample per line until stopped; keeps (time, line) pairs."""

    def __init__(self, argv: Sequence[str]):
        self.argv = list(argv)
        self.lines: List[Tuple[float, str]] = []
        self.error: Optional[str] = None
        self._process: Optional[subprocess.Popen] = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> "_LineSampler":
        try:
            self._process = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        except OSError as error:
            self.error = f"{self.argv[0]}: {error.strerror or error}"
            return self
        self._thread = threading.Thread(target=self._read, args=(self._process.stdout,), daemon=True)
        self._thread.start()
        return self

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append((time.time(), line.rstrip("\n")))

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def text_between(self, start: float, end: float) -> str:
        return "\n".join(line for when, line in self.lines if start <= when <= end)

    def all_text(self) -> str:
        return "\n".join(line for _, line in self.lines)


class GpuMonitor:
    """nvidia-smi (and dcgmi when it works) sampling one GPU while a process trains on it."""

    PROCESS_FIELDS = ("pid", "used_memory")
    GPU_FIELDS = ("index", "memory.used", "utilization.gpu", "utilization.memory")
    DCGM_ARGS = ("-e", "1002,1003,1005")

    def __init__(self, gpu_index: int = 0, interval_ms: int = 200):
        self.gpu_index = gpu_index
        self.interval_ms = interval_ms
        self.baseline_used_mib: Optional[float] = None
        self._smi_apps: Optional[_LineSampler] = None
        self._smi_gpu: Optional[_LineSampler] = None
        self._dcgmi: Optional[_LineSampler] = None

    def start(self) -> "GpuMonitor":
        rows = query_gpus(self.gpu_index, ("memory.used",))
        self.baseline_used_mib = rows[0].get("memory.used") if rows else None
        interval = str(self.interval_ms)
        self._smi_apps = _LineSampler(["nvidia-smi", f"--query-compute-apps={','.join(self.PROCESS_FIELDS)}", "--format=csv,noheader,nounits", "-lms", interval]).start()
        self._smi_gpu = _LineSampler(["nvidia-smi", "-i", str(self.gpu_index), f"--query-gpu={','.join(self.GPU_FIELDS)}", "--format=csv,noheader,nounits", "-lms", interval]).start()
        if shutil.which("dcgmi"):
            self._dcgmi = _LineSampler(["dcgmi", "dmon", *self.DCGM_ARGS, "-i", str(self.gpu_index), "-d", str(max(self.interval_ms, 100))]).start()
        return self

    def stop(self) -> None:
        for sampler in (self._smi_apps, self._smi_gpu, self._dcgmi):
            if sampler is not None:
                sampler.stop()

    def summary(self, pid: int, window: Optional[Tuple[float, float]]) -> Dict[str, Any]:
        """Peak process memory over the whole run; utilization means over `window` (the timed
        training loop, epoch seconds) when given."""
        peak, source = None, None
        if self._smi_apps is not None:
            rows = parse_smi_csv(self._smi_apps.all_text(), self.PROCESS_FIELDS)
            used = [row["used_memory"] for row in rows if row.get("pid") == pid and isinstance(row.get("used_memory"), (int, float))]
            if used:
                peak, source = max(used), "process"
        gpu_rows = parse_smi_csv(self._smi_gpu.all_text(), self.GPU_FIELDS) if self._smi_gpu is not None else []
        if peak is None and self.baseline_used_mib is not None:
            used = [row["memory.used"] for row in gpu_rows if isinstance(row.get("memory.used"), (int, float))]
            if used:
                peak, source = max(used) - self.baseline_used_mib, "device-delta"
        start, end = window if window else (0.0, float("inf"))
        utilization = self._dcgm_utilization(start, end) or self._smi_utilization(start, end)
        return {"peakMiB": peak, "peakMiBSource": source, "utilization": utilization}

    def _dcgm_utilization(self, start: float, end: float) -> Optional[Dict[str, Any]]:
        if self._dcgmi is None:
            return None
        parser = DmonParser()
        samples = [sample for when, sample in ((when, parser.feed(line)) for when, line in self._dcgmi.lines) if sample is not None and start <= when <= end]
        if not samples:
            return None
        result: Dict[str, Any] = {"source": "dcgm", "samples": len(samples)}
        for key in ("smact", "smocc", "drama"):
            values = [s[key] for s in samples if s.get(key) is not None]
            result[key] = round(sum(values) / len(values), 4) if values else None
        result["gpuUtilPercent"] = None
        result["memUtilPercent"] = None
        return result

    def _smi_utilization(self, start: float, end: float) -> Dict[str, Any]:
        rows = parse_smi_csv(self._smi_gpu.text_between(start, end), self.GPU_FIELDS) if self._smi_gpu is not None else []
        gpu = [r["utilization.gpu"] for r in rows if isinstance(r.get("utilization.gpu"), (int, float))]
        mem = [r["utilization.memory"] for r in rows if isinstance(r.get("utilization.memory"), (int, float))]
        return {
            "source": "nvidia-smi" if rows else None,
            "samples": len(rows),
            "smact": None,
            "smocc": None,
            "drama": None,
            "gpuUtilPercent": round(sum(gpu) / len(gpu), 2) if gpu else None,
            "memUtilPercent": round(sum(mem) / len(mem), 2) if mem else None,
        }


def no_utilization() -> Dict[str, Any]:
    return {"source": None, "samples": 0, "smact": None, "smocc": None, "drama": None, "gpuUtilPercent": None, "memUtilPercent": None}


def query_gpus(gpu_index: Optional[int], fields: Sequence[str]) -> List[Dict[str, Any]]:
    """`nvidia-smi --query-gpu=FIELDS --format=csv` rows (empty when nvidia-smi is missing or fails)."""
    argv = ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv"]
    if gpu_index is not None:
        argv[1:1] = ["-i", str(gpu_index)]
    try:
        completed = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if completed.returncode != 0:
        return []
    return parse_smi_csv(completed.stdout)


def gpu_info(gpu_index: int) -> Dict[str, Any]:
    """Name, memory and driver of one GPU from nvidia-smi; None values when unavailable."""
    rows = query_gpus(gpu_index, ("name", "memory.total", "driver_version"))
    row = rows[0] if rows else {}
    return {"gpu": row.get("name"), "gpuMemoryMiB": row.get("memory.total"), "driver": row.get("driver_version")}
