"""The Python feature code against the shared vectors (test/vectors/features), which mocha
checks against the TypeScript code too: both must give exactly these numbers."""
import json
from pathlib import Path

import pytest

from harness.training.analytical import allocated_bytes, analytical_mib
from harness.training.data import reference_run
from harness.training.definitions import REPO_ROOT, analytical_model, feature_definition, feature_names
from harness.training.features import feature_record, feature_vector, hidden_activation

VECTORS = sorted((REPO_ROOT / "test" / "vectors" / "features").glob("*.json"))


def _load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_vectors_of_each_kind():
    kinds = {path.name.split(".")[0] for path in VECTORS}
    assert kinds == {"corpus", "gpumemnet", "synthetic"}


@pytest.mark.parametrize("path", VECTORS, ids=[p.name for p in VECTORS])
def test_features_equal_the_vector_exactly(path):
    vector = _load(path)
    assert list(vector["features"]) == feature_names()
    assert feature_record(vector["layerTable"], vector["setup"]) == vector["features"]
    assert feature_vector(vector["layerTable"], vector["setup"]) == [vector["features"][n] for n in feature_names()]


@pytest.mark.parametrize("path", [p for p in VECTORS if p.name.startswith("gpumemnet.")], ids=lambda p: p.name)
def test_a_gpumemnet_record_becomes_the_vector_layer_table(path):
    vector = _load(path)
    run = reference_run(vector["gpumemnet"]["family"], vector["gpumemnet"]["record"])
    assert run.table == vector["layerTable"]
    assert run.setup == vector["setup"]


def test_the_anchor_is_the_analytical_model():
    vector = _load(REPO_ROOT / "test" / "vectors" / "features" / "corpus.resnet18_cifar.net.json")
    record = feature_record(vector["layerTable"], vector["setup"])
    assert record["analytical_mib"] == analytical_mib(vector["layerTable"], **{"batch_size": vector["setup"]["batchSize"], "optimizer": vector["setup"]["optimizer"], "precision": vector["setup"]["precision"]})
    # Weights + gradients + SGD-momentum state of 11.2M fp32 parameters alone exceed 120 MiB.
    assert record["analytical_state_mib"] > 120


def test_allocator_rounding_matches_the_typescript_tests():
    mib = analytical_model()["bytesPerMiB"]
    assert [allocated_bytes(0), allocated_bytes(1), allocated_bytes(513), allocated_bytes(mib + 1), allocated_bytes(3 * mib)] == [0, 512, 1024, 2 * mib, 4 * mib]


def test_hidden_activation_skips_the_softmax_family_and_breaks_ties_by_first_call():
    assert hidden_activation(["Linear", "Softmax", "LogSoftmax"]) is None
    assert hidden_activation(["Tanh", "GELU", "GELU", "Tanh"]) == "Tanh"
    assert hidden_activation(["ReLU", "GELU", "GELU"]) == "GELU"


def test_the_stored_vectors_are_current():
    from harness.training.vectors import VECTORS as folder, build, text
    from harness.training.data import default_reference_dir

    directory = default_reference_dir()
    built = build(directory if (directory / "cnn.csv").exists() else None)
    for name, vector in built.items():
        assert (folder / f"{name}.json").read_text(encoding="utf-8") == text(vector), f"{name}: run /usr/bin/python3 -m harness.training vectors"


def test_every_feature_has_a_known_transform():
    assert {f["transform"] for f in feature_definition()["features"]} <= {"log1p", "none"}
    assert len(set(feature_names())) == len(feature_names())
