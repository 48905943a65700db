"""Reading measurements and splitting them."""
import json

import pytest

from harness.training.data import Run, default_reference_dir, dense_concat_activations, jsonl_run, load_jsonl, load_reference, reference_run, split, split_key

REFERENCE = default_reference_dir()
needs_reference = pytest.mark.skipif(not (REFERENCE / "mlp.csv").exists(), reason="GPUMemNet reference data not beside the repository")


def _table(params=1000, activations=100):
    return {
        "schemaVersion": 1,
        "model": "m",
        "inputShape": [10],
        "rows": [{"path": "0", "type": "Linear", "outputShape": [100], "activations": activations, "params": params, "trainable": True}],
        "totals": {"params": params, "trainableParams": params, "activations": activations},
        "incomplete": False,
    }


def _run(i, peak, family="mlp", oom=False):
    return Run(id=f"run{i}", family=family, table=_table(), setup={"batchSize": 8, "optimizer": "adam", "precision": "fp32"}, peak_mib=peak, oom=oom)


def test_split_holds_out_30_percent_of_each_stratum_and_keeps_oom_runs_for_training():
    runs = [_run(i, 1500 + (i % 2) * 1024) for i in range(100)] + [_run(100 + i, 40000, oom=True) for i in range(5)]
    train, test, folds = split(runs)
    assert len(test) == 30
    assert sum(1 for r in test if r.peak_mib < 2048) == 15
    assert all(not r.oom for r in test)
    assert sorted(folds[r.id] for r in train if r.oom) == [-1] * 5
    counts = [sum(1 for r in train if folds[r.id] == f) for f in range(3)]
    assert sum(counts) == 70 and max(counts) - min(counts) <= 2
    # A pure function of the ids: the order runs come in does not matter.
    again = split(list(reversed(runs)))
    assert {r.id for r in again[1]} == {r.id for r in test}


def test_split_key_is_sha256_of_family_and_id():
    import hashlib

    assert split_key(_run(7, 2000)) == hashlib.sha256(b"mlp/run7").hexdigest()


def test_jsonl_rows_from_our_harness(tmp_path):
    lines = [
        {"id": "a", "layerTable": _table(), "setup": {"batchSize": 32, "optimizer": "sgd", "precision": "fp16-mixed"}, "peakMiB": 2100, "status": "ok", "gpu": "NVIDIA H100", "utilization": {"smact": 0.5, "smocc": 0.2}},
        {"id": "b", "layerTable": _table(), "setup": {"batchSize": 64}, "measured": {"peakMiB": 40000, "status": "oom"}},
        {"id": "c", "layerTable": _table(), "setup": {"batchSize": 64}, "status": "error"},
        {"id": "d", "layerTable": _table(), "setup": {"batchSize": 64}},
        {"id": "e", "layerTable": _table(), "setup": {"batchSize": 64}, "device": "cpu", "peakMiB": None, "status": "ok"},
        {"id": "f", "layerTable": _table(), "setup": {"batchSize": 64}, "device": "cpu", "peakMiB": 5, "status": "oom", "cpuMemoryCapMiB": 100},
    ]
    path = tmp_path / "runs.jsonl"
    # The last line is a write a kill cut short.
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n" + '{"id": "g", "layerT', encoding="utf-8")
    runs = load_jsonl(path)
    assert [r.id for r in runs] == ["a", "b"]
    assert runs[0].family == "mlp" and runs[0].setup == {"batchSize": 32, "optimizer": "sgd", "precision": "fp16-mixed"}
    assert (runs[0].peak_mib, runs[0].smact, runs[0].smocc, runs[0].extra["gpu"]) == (2100.0, 0.5, 0.2, "NVIDIA H100")
    assert runs[1].oom and runs[1].setup["optimizer"] == "adam"


def test_jsonl_rejects_another_layer_table_schema():
    with pytest.raises(ValueError, match="schemaVersion"):
        jsonl_run({"layerTable": {**_table(), "schemaVersion": 2}, "setup": {"batchSize": 1}, "peakMiB": 1}, "x:1")


def _gpumemnet_record(arch):
    # 16 x 16 = 256 positions: growth convs 3 -> 32 and 35 -> 32, the transition 131 -> 65, then two
    # convs of neither kind (params fit no rule; a transition's activations not divisible).
    layers = "[('conv2d', 8192, 896), ('ReLU', 8192, 0), ('conv2d', 8192, 10112), ('ReLU', 8192, 0), ('conv2d', 16640, 8580), ('ReLU', 16640, 0), ('conv2d', 100, 1000), ('conv2d', 100, 8580), ('adaptive_avg_pool2d', 65, 0), ('linear', 10, 660), ('softmax', 10, 0)]"
    name = f"input_channels:3_num_classes:10_depth:2_arch:{arch}_base_filters:32_batch:8_input_size:16_act:relu_dropout:0.1_dropout:False_batchnorm:False.out"
    return {"Filename": name, "Depth": "2", "Activations-Params": layers, "Batch Size": "8", "Max GPU Memory (MiB)": "1500", "Status": "SUCCESSFUL"}


def test_dense_concat_activations_from_the_conv_it_feeds():
    assert dense_concat_activations(896, 8192) == 3 * 256
    assert dense_concat_activations(10112, 8192) == 35 * 256
    assert dense_concat_activations(8580, 16640) == 131 * 256
    assert dense_concat_activations(1000, 100) is None
    assert dense_concat_activations(8580, 100) is None


def test_a_dense_gpumemnet_record_gains_a_cat_row_before_every_conv():
    table = reference_run("cnn", _gpumemnet_record("dense")).table
    plain = reference_run("cnn", _gpumemnet_record("uniform")).table
    assert [(r["path"], r["type"], r["activations"], r["params"]) for r in table["rows"]] == [
        ("0", "torch.cat", 768, 0),
        ("1", "Conv2d", 8192, 896),
        ("2", "ReLU", 8192, 0),
        ("3", "torch.cat", 8960, 0),
        ("4", "Conv2d", 8192, 10112),
        ("5", "ReLU", 8192, 0),
        ("6", "torch.cat", 33536, 0),
        ("7", "Conv2d", 16640, 8580),
        ("8", "ReLU", 16640, 0),
        ("9", "Conv2d", 100, 1000),
        ("10", "Conv2d", 100, 8580),
        ("11", "AdaptiveAvgPool2d", 65, 0),
        ("12", "Linear", 10, 660),
        ("13", "Softmax", 10, 0),
    ]
    assert all(r["outputShape"] is None and r["trainable"] for r in table["rows"] if r["type"] == "torch.cat")
    assert table["totals"] == plain["totals"]
    assert table["totals"]["activations"] == 8192 * 4 + 16640 * 2 + 200 + 65 + 20


def test_other_gpumemnet_architectures_are_read_as_published():
    plain = reference_run("cnn", _gpumemnet_record("uniform")).table
    assert [r["type"] for r in plain["rows"]] == ["Conv2d", "ReLU", "Conv2d", "ReLU", "Conv2d", "ReLU", "Conv2d", "Conv2d", "AdaptiveAvgPool2d", "Linear", "Softmax"]
    assert [r["path"] for r in plain["rows"]] == [str(i) for i in range(11)]


@needs_reference
def test_reference_data_reads_as_the_evaluation_does():
    mlp = load_reference(REFERENCE, "mlp")
    cnn = load_reference(REFERENCE, "cnn")
    assert len(mlp) == 3000
    # 1592 successful CNN runs with a layer list (as `npm run evaluate` counts them), plus the OOM runs.
    assert sum(not r.oom for r in cnn) == 1592
    assert all(r.table["inputShape"] and len(r.table["inputShape"]) == 3 for r in cnn)
    assert sum(r.smact is not None for r in cnn if not r.oom) > 600
    # Every conv of a dense record is a growth or transition conv, so each gets its torch.cat.
    dense = [r for r in cnn if "arch:dense" in r.id]
    assert dense and all(sum(row["type"] == "torch.cat" for row in r.table["rows"]) == sum(row["type"] == "Conv2d" for row in r.table["rows"]) for r in dense)
    assert not any(row["type"] == "torch.cat" for r in cnn if "arch:dense" not in r.id for row in r.table["rows"])
