"""Parsers of nvidia-smi CSV and dcgmi dmon output, on fixtures in the tools' own layout
(fixtures/README.md says where each layout comes from), and the monitor's summary."""
from pathlib import Path

import pytest

from harness.monitors import GpuMonitor, _LineSampler, parse_dcgmi_dmon, parse_smi_csv, parse_smi_value

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def read(name):
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_query_gpu_with_header_and_units():
    rows = parse_smi_csv(read("nvidia-smi-query-gpu.csv"))
    assert rows == [
        {"index": 0, "name": "NVIDIA A100-SXM4-40GB", "memory.total": 40960, "memory.used": 4, "driver_version": "535.104.05", "utilization.gpu": 0, "utilization.memory": 0},
        {"index": 1, "name": "NVIDIA A100-SXM4-40GB", "memory.total": 40960, "memory.used": 31517, "driver_version": "535.104.05", "utilization.gpu": 97, "utilization.memory": 41},
    ]


def test_not_available_values_are_none():
    (row,) = parse_smi_csv(read("nvidia-smi-query-gpu-mig.csv"))
    assert row["name"] == "NVIDIA H100 80GB HBM3" and row["memory.total"] == 81559
    assert row["utilization.gpu"] is None and row["utilization.memory"] is None
    assert [parse_smi_value(v) for v in ("[Not Supported]", "N/A", "12.5 W", "1980 MHz", "text")] == [None, None, 12.5, 1980, "text"]


def test_compute_apps_header_names_used_memory_used_gpu_memory():
    assert parse_smi_csv(read("nvidia-smi-compute-apps.csv")) == [
        {"pid": 44378, "process_name": "tritonserver", "used_gpu_memory": 1836},
        {"pid": 52114, "process_name": "/usr/bin/python3", "used_gpu_memory": 6294},
    ]
    assert parse_smi_csv(read("nvidia-smi-compute-apps-empty.csv")) == []


def test_streamed_noheader_nounits_samples():
    rows = parse_smi_csv(read("nvidia-smi-compute-apps-lms-noheader-nounits.csv"), ("pid", "used_memory"))
    assert len(rows) == 6
    assert max(r["used_memory"] for r in rows if r["pid"] == 52114) == 6294


def test_dcgmi_dmon_rows_header_repeats_na_and_stop_message():
    samples = parse_dcgmi_dmon(read("dcgmi-dmon-1002-1003-1005.txt"))
    assert len(samples) == 17  # the repeated header, the units lines and the stop message are not samples
    assert samples[0] == {"entity": "GPU 0", "smact": 0.0, "smocc": 0.0, "drama": 0.0}
    assert samples[2] == {"entity": "GPU 0", "smact": 0.887, "smocc": 0.421, "drama": 0.372}
    assert samples[4] == {"entity": "GPU 0", "smact": None, "smocc": None, "drama": None}
    assert samples[16]["smact"] == 0.512


def test_dcgmi_error_output_yields_no_samples():
    text = "Error setting watches. Result: -6: The third-party Profiling module returned an unrecoverable error\n"
    assert parse_dcgmi_dmon(text) == []


class _Replay(_LineSampler):
    """A sampler whose lines are a fixture's, stamped one second apart from t=100."""

    def __init__(self, text):
        super().__init__(["replay"])
        self.lines = [(100.0 + i, line) for i, line in enumerate(text.splitlines())]


def test_summary_uses_the_process_peak_and_dcgm_means_inside_the_window():
    monitor = GpuMonitor()
    monitor._smi_apps = _Replay(read("nvidia-smi-compute-apps-lms-noheader-nounits.csv"))
    monitor._smi_gpu = _Replay("0, 6500, 97, 41\n0, 6600, 99, 40\n")
    monitor._dcgmi = _Replay(read("dcgmi-dmon-1002-1003-1005.txt"))
    # Lines 0-1 are the header and units, so sample k is line k + 2, stamped 102 + k: the window
    # [104, 112] holds samples 2..10, one of them N/A.
    summary = monitor.summary(52114, (104.0, 112.0))
    assert summary["peakMiB"] == 6294 and summary["peakMiBSource"] == "process"
    utilization = summary["utilization"]
    assert utilization["source"] == "dcgm"
    smact = [0.887, 0.903, 0.911, 0.899, 0.905, 0.908, 0.902, 0.897]
    assert utilization["smact"] == pytest.approx(sum(smact) / len(smact), abs=1e-4) == 0.9015
    assert utilization["samples"] == 9


def test_summary_falls_back_to_device_delta_and_nvidia_smi_utilization():
    monitor = GpuMonitor()
    monitor.baseline_used_mib = 500
    monitor._smi_apps = _Replay("")  # a container: the worker's PID is not listed
    monitor._smi_gpu = _Replay("0, 500, 0, 0\n0, 2600, 90, 30\n0, 2650, 96, 34\n")
    summary = monitor.summary(1234, (101.0, 102.0))
    assert summary["peakMiB"] == 2150 and summary["peakMiBSource"] == "device-delta"
    assert summary["utilization"] == {"source": "nvidia-smi", "samples": 2, "smact": None, "smocc": None, "drama": None, "gpuUtilPercent": 93.0, "memUtilPercent": 32.0}
