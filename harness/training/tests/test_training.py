"""Training is deterministic, the exported graph is the trained model, and the card says what the
runner needs. Small and fast: a few hundred reference runs and a few dozen steps per member."""
import json

import numpy as np
import pytest
import torch

from harness.training.data import default_reference_dir, load_reference
from harness.training.definitions import feature_names
from harness.training.ensemble import QUANTILES, Calibration, FamilyModel, MemberConfig, MemoryMember, bin_index, interpolate_quantile, utilization_class
from harness.training.export import card_for, write_family
from harness.training.train import Arrays, bin_sets_for, choose_point_quantile, fit, train_family

REFERENCE = default_reference_dir()
pytestmark = pytest.mark.skipif(not (REFERENCE / "mlp.csv").exists(), reason="GPUMemNet reference data not beside the repository")


@pytest.fixture(scope="module")
def runs():
    torch.set_num_threads(1)
    return load_reference(REFERENCE, "mlp")[:360]


def _configs(seed):
    return [MemberConfig(hidden=16, activation="silu", lr=5e-3, weight_decay=1e-4, steps=40, seed=seed), MemberConfig(hidden=12, activation="tanh", lr=5e-3, weight_decay=0.0, steps=40, seed=seed + 1)]


def test_fitting_twice_gives_identical_members(runs):
    data = Arrays.of(runs)
    bins = bin_sets_for("mlp", data.peak)
    first = fit(data, bins, _configs(1), _configs(5)[:1])
    second = fit(data, bins, _configs(1), _configs(5)[:1])
    for a, b in zip(first.memory + first.utilization, second.memory + second.utilization):
        for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
            assert torch.equal(x, y), name


def test_quantiles_are_monotone_by_construction():
    member = MemoryMember(len(feature_names()), MemberConfig(hidden=8, activation="relu", lr=1e-3, weight_decay=0, steps=1, seed=3))
    quantiles = member(torch.randn(50, len(feature_names())) * 5)
    assert quantiles.shape == (50, len(QUANTILES))
    assert bool((quantiles[:, 1:] >= quantiles[:, :-1]).all())
    assert torch.allclose(interpolate_quantile(quantiles, 0.6), 0.6 * quantiles[:, 3] + 0.4 * quantiles[:, 4])


def test_bins_and_utilization_classes():
    assert bin_index(np.array([0.0, 1023.0, 1024.0, 99999.0]), 1024, 5).tolist() == [0, 0, 1, 4]
    assert utilization_class(np.array([0.1, 0.34, 0.7, float("nan")])).tolist() == [0, 1, 2, -1]


def test_point_quantile_rule():
    peak = np.full(100, 1000.0)
    anchor = np.log(peak)
    # The median under-estimates everything by 20% and the 0.75 quantile is exact; between them the
    # log ratio is interpolated: 0.65 is 0.8^0.4 (8.5% under, beyond 5%), 0.7 is 0.8^0.2 (4.4% under).
    quantiles = np.tile(np.log(np.array([0.6, 0.7, 0.75, 0.8, 1.0, 1.2, 1.3])), (100, 1))
    tau, table = choose_point_quantile(peak, anchor, quantiles)
    assert tau == 0.7
    assert [row["quantile"] for row in table] == [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]
    assert [row["under_10pct"] for row in table] == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert table[3]["median_abs_error"] == pytest.approx(1 - 0.8 ** 0.4)


def test_train_family_evaluates_and_exports_a_graph_with_a_card(runs, tmp_path, monkeypatch):
    import harness.training.train as train_module

    monkeypatch.setattr(train_module, "memory_members", lambda steps: _configs(11))
    monkeypatch.setattr(train_module, "utilization_members", lambda steps: _configs(21)[:1])
    result = train_family("mlp", runs, steps=40, utilization_steps=40, log=lambda *_: None)
    model = result.model
    assert len(result.test.runs) + len(result.train.runs) == len(runs)
    assert abs(len(result.test.runs) - 0.3 * len(runs)) <= 4
    assert set(result.cv["mean"]) >= {"memory", "bins_1024", "bins_2048", "smact", "smocc"}
    with torch.no_grad():
        memory, *rest = model(torch.tensor(result.test.features, dtype=torch.float32))
    assert bool((memory[:, 0] <= memory[:, 1]).all() and (memory[:, 1] <= memory[:, 2]).all())
    for probabilities in rest:
        assert torch.allclose(probabilities.sum(1), torch.ones(len(memory)), atol=1e-5)

    card = card_for(result, [{"family": "mlp", "path": "x", "sha256": "0" * 64, "runs": len(runs)}])
    written = write_family(model, card, tmp_path)
    stored = json.loads(written["card"].read_text())
    assert stored["file"] == "mlp.onnx" and stored["bytes"] == written["onnx"].stat().st_size < 1_000_000
    assert [f["name"] for f in stored["features"]] == feature_names()
    assert [b["widthMiB"] for b in stored["outputs"]["bins"]] == [1024, 2048, 512]
    assert [b["primary"] for b in stored["outputs"]["bins"]] == [True, False, False]
    assert stored["outputs"]["utilization"]["smact"] == "smact"
    assert len(stored["selfTest"]["features"]) == 6 and set(stored["selfTest"]["outputs"]) == {"memory_mib", "bins_1024", "bins_2048", "bins_512", "smact", "smocc"}
    # The ONNX protobuf carries the graph's outputs by name.
    blob = written["onnx"].read_bytes()
    for name in ("features", "memory_mib", "bins_1024", "smact", "smocc"):
        assert name.encode() in blob
