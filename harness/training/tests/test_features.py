"""The Python feature code against the shared vectors (test/vectors/features), which mocha
checks against the TypeScript code too: both must give exactly these numbers."""
import json
from pathlib import Path

import pytest

from harness.training.analytical import allocated_bytes, analytical_bytes, analytical_mib
from harness.training.data import reference_run
from harness.training.definitions import REPO_ROOT, analytical_model, feature_definition, feature_names
from harness.training.features import feature_record, feature_vector, hidden_activation, is_functional_row

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


#: The features functional rows feed: the analytical three and the two of their own.
ANALYTICAL = {"analytical_mib", "analytical_state_mib", "analytical_activations_mib", "functional_calls", "functional_activations_x_batch"}


def _without_functional_rows(table):
    return {**table, "rows": [row for row in table["rows"] if not is_functional_row(row)]}


def test_every_feature_but_the_analytical_and_functional_ones_ignores_functional_rows():
    with_functional = [p for p in VECTORS if any(is_functional_row(row) for row in _load(p)["layerTable"]["rows"])]
    names = {p.name for p in with_functional}
    assert "synthetic.functional-cat.json" in names
    assert any(name.startswith("gpumemnet.cnn.") for name in names), "a dense GPUMemNet record"
    for path in with_functional:
        vector = _load(path)
        full = feature_record(vector["layerTable"], vector["setup"])
        modules = feature_record(_without_functional_rows(vector["layerTable"]), vector["setup"])
        assert {k: v for k, v in full.items() if k not in ANALYTICAL} == {k: v for k, v in modules.items() if k not in ANALYTICAL}, path.name
    # The synthetic block's cat feeding a conv is kept (8 MiB at batch 64) and its cat feeding the
    # pool is the largest activation (the transient term grows from 2 x 8 to 2 x 16 MiB).
    vector = _load(REPO_ROOT / "test" / "vectors" / "features" / "synthetic.functional-cat.json")
    full = feature_record(vector["layerTable"], vector["setup"])
    modules = feature_record(_without_functional_rows(vector["layerTable"]), vector["setup"])
    assert full["analytical_activations_mib"] - modules["analytical_activations_mib"] == 8 + 16
    assert full["analytical_state_mib"] == modules["analytical_state_mib"]
    assert full["layer_calls"] == 7
    assert full["largest_activations_x_batch"] == 32768 * 64
    cats = [row for row in vector["layerTable"]["rows"] if is_functional_row(row)]
    assert full["functional_calls"] == 2 and modules["functional_calls"] == 0
    assert full["functional_activations_x_batch"] == sum(row["activations"] for row in cats) * 64
    assert modules["functional_activations_x_batch"] == 0


def _cat_table(following, cat_elements):
    """A stem conv and its ReLU, optionally a torch.cat of `cat_elements`, then `following`, a flatten and a head."""

    def row(path, layer_type, activations, params):
        return {"path": path, "type": layer_type, "outputShape": None, "activations": activations, "params": params, "trainable": True}

    rows = [row("stem", "Conv2d", 32768, 896), row("act", "ReLU", 32768, 0)]
    if cat_elements is not None:
        rows.append(row("", "torch.cat", cat_elements, 0))
    rows.append(row("next", "Conv2d", 32768, 9248) if following == "Conv2d" else row("next", "AvgPool2d", 8192, 0))
    rows += [row("flat", "Flatten", 8192, 0), row("head", "Linear", 10, 81930)]
    params = sum(r["params"] for r in rows)
    activations = sum(r["activations"] for r in rows if not is_functional_row(r))
    return {"schemaVersion": 1, "model": "cat", "inputShape": [3, 32, 32], "rows": rows, "totals": {"params": params, "trainableParams": params, "activations": activations}, "incomplete": False}


def test_the_analytical_model_counts_a_cat_feeding_a_conv_not_one_feeding_a_pool():
    traits = analytical_model()["layerTraits"]
    for layer_type in ("torch.cat", "torch.stack"):
        assert traits[layer_type] == {"category": "functional", "savesInput": False, "savesOutput": False, "extraBytesPerElement": 0}

    def parts(following, cat):
        return analytical_bytes(_cat_table(following, cat), 64, "adam", "fp32")

    assert parts("Conv2d", 32768).saved_bytes - parts("Conv2d", None).saved_bytes == allocated_bytes(64 * 32768 * 4)
    assert parts("Conv2d", 32768).backward_bytes == parts("Conv2d", None).backward_bytes
    assert parts("AvgPool2d", 32768).saved_bytes == parts("AvgPool2d", None).saved_bytes
    # A cat larger than every module output sets the transient backward term.
    assert parts("AvgPool2d", 65536).backward_bytes == 2 * allocated_bytes(64 * 65536 * 4)
    assert parts("AvgPool2d", None).backward_bytes == 2 * allocated_bytes(64 * 32768 * 4)


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
