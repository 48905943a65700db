"""Tests of harness.layer_table: the row rules of docs/layer-table.md on small models.

Run from the repository root: /usr/bin/python3 -m pytest harness/tests -p no:cacheprovider
"""
import copy
import json
import runpy
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn

from harness.layer_table import (
    LayerTableError,
    flatten_tensors,
    is_layer_module,
    layer_modules,
    layer_table,
    make_input_factory,
    per_sample_shape,
)
from harness.schema_check import SchemaError, errors, load_schema, validate


def floats(*shape, batch_dim=0):
    return make_input_factory([{"shape": list(shape), "dtype": "float", "batchDim": batch_dim}])


def longs(*shape, high, batch_dim=0):
    return make_input_factory([{"shape": list(shape), "dtype": "long", "high": high, "batchDim": batch_dim}])


def rows_of(table, *keys):
    return [tuple(row[key] for key in keys) for row in table["rows"]]


def test_sequential_mlp_rows_shapes_and_totals():
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 10))
    table = layer_table(model, floats(1, 28, 28), "model")
    assert rows_of(table, "path", "type", "outputShape", "activations", "params") == [
        ("0", "Flatten", [784], 784, 0),
        ("1", "Linear", [32], 32, 784 * 32 + 32),
        ("2", "ReLU", [32], 32, 0),
        ("3", "Linear", [10], 10, 330),
    ]
    assert table["inputShape"] == [1, 28, 28]
    assert table["totals"] == {"params": 25450, "trainableParams": 25450, "activations": 784 + 32 + 32 + 10}
    assert table["schemaVersion"] == 1 and table["model"] == "model" and table["incomplete"] is False
    validate(table)


class TiedLM(nn.Module):
    """GPT-2 style: the head reuses the embedding matrix."""

    def __init__(self, head_first=False):
        super().__init__()
        if head_first:
            self.head = nn.Linear(16, 100, bias=False)
            self.emb = nn.Embedding(100, 16)
            self.emb.weight = self.head.weight
        else:
            self.emb = nn.Embedding(100, 16)
            self.head = nn.Linear(16, 100, bias=False)
            self.head.weight = self.emb.weight

    def forward(self, idx):
        return self.head(self.emb(idx))


@pytest.mark.parametrize("head_first", [False, True])
def test_tied_weights_count_once_in_the_first_row_that_uses_them(head_first):
    table = layer_table(TiedLM(head_first), longs(12, high=100), "TiedLM")
    assert rows_of(table, "path", "type", "params") == [("emb", "Embedding", 1600), ("head", "Linear", 0)]
    assert table["totals"]["params"] == 1600 == sum(p.numel() for p in TiedLM(head_first).parameters())
    assert rows_of(table, "outputShape") == [([12, 16],), ([12, 100],)]


class Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.fc(self.act(self.fc(x)))


def test_a_module_called_twice_gives_two_rows_with_its_params_once():
    table = layer_table(Twice(), floats(8), "net")
    assert rows_of(table, "path", "type", "params", "activations") == [
        ("fc", "Linear", 72, 8),
        ("act", "ReLU", 0, 8),
        ("fc", "Linear", 0, 8),
    ]
    assert table["totals"]["params"] == 72


def test_siamese_encoder_shared_between_two_inputs():
    class Siamese(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(6, 4), nn.Tanh())

        def forward(self, a, b):
            return torch.abs(self.encoder(a) - self.encoder(b))

    make = make_input_factory([{"shape": [6], "dtype": "float"}, {"shape": [6], "dtype": "float"}])
    table = layer_table(Siamese(), make, "model")
    assert rows_of(table, "path", "params") == [("encoder.0", 28), ("encoder.1", 0), ("encoder.0", 0), ("encoder.1", 0)]


@pytest.mark.parametrize("batch_first", [False, True])
def test_lstm_shapes_do_not_depend_on_the_batch_layout(batch_first):
    lstm = nn.LSTM(10, 20, num_layers=2, batch_first=batch_first)
    make = floats(7, 10, batch_dim=0 if batch_first else 1)
    table = layer_table(lstm, make, "lstm")
    (row,) = table["rows"]
    assert row["path"] == "" and row["type"] == "LSTM"
    assert row["outputShape"] == [7, 20]
    # output (7 x 20) + h_n (2 layers x 20) + c_n (2 layers x 20), per sample
    assert row["activations"] == 7 * 20 + 2 * 20 + 2 * 20
    assert row["params"] == sum(p.numel() for p in lstm.parameters())
    assert table["inputShape"] == [7, 10]


def test_bidirectional_lstm_with_projection():
    lstm = nn.LSTM(10, 20, batch_first=True, bidirectional=True, proj_size=5)
    (row,) = layer_table(lstm, floats(7, 10), "lstm")["rows"]
    assert row["outputShape"] == [7, 10]
    assert row["activations"] == 7 * 10 + 2 * 5 + 2 * 20


class Flattened(nn.Module):
    """A language model head on (B * T, C), as `x.view(-1, C)` makes it."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 6)
        self.decoder = nn.Linear(6, 50)

    def forward(self, idx):
        x = self.emb(idx)
        return self.decoder(x.view(-1, x.size(-1)))


def test_a_batch_dimension_merged_with_another_keeps_its_factor():
    table = layer_table(Flattened(), longs(35, high=50), "model")
    assert rows_of(table, "path", "outputShape", "activations") == [("emb", [35, 6], 210), ("decoder", [35, 50], 1750)]


def test_per_sample_shape():
    assert per_sample_shape((2, 35, 6), (3, 35, 6)) == [35, 6]
    assert per_sample_shape((7, 2, 20), (7, 3, 20)) == [7, 20]
    assert per_sample_shape((70, 50), (105, 50)) == [35, 50]
    assert per_sample_shape((5, 8), (5, 8)) == [5, 8]
    assert per_sample_shape((2,), (3,)) == []
    with pytest.raises(LayerTableError):
        per_sample_shape((5, 8), (6, 8))  # B + 3: not a multiple of the batch
    with pytest.raises(LayerTableError):
        per_sample_shape((2, 2), (3, 3))  # two batch dimensions
    with pytest.raises(LayerTableError):
        per_sample_shape((2, 4), (3, 4, 1))


class WithParameters(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.pos = nn.Parameter(torch.zeros(1, 5, 8))
        self.block = Scaled()

    def forward(self, x):
        return self.block(self.fc(x) + self.pos)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.gamma = nn.Parameter(torch.ones(8))

    def forward(self, x):
        return self.norm(x) * self.gamma


def test_parameters_of_user_modules_are_rows_first_in_named_parameters_order():
    table = layer_table(WithParameters(), floats(5, 8), "model")
    assert rows_of(table, "path", "type", "outputShape", "activations", "params") == [
        ("pos", "Parameter", None, 0, 40),
        ("block.gamma", "Parameter", None, 0, 8),
        ("fc", "Linear", [5, 8], 40, 72),
        ("block.norm", "LayerNorm", [5, 8], 40, 16),
    ]
    assert table["totals"]["params"] == 40 + 8 + 72 + 16


class WithUnused(nn.Module):
    def __init__(self):
        super().__init__()
        self.aux_head = nn.Linear(4, 3)  # kept for old checkpoints, never called
        self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.dropout = nn.Dropout(0.1)  # never called either
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.body(x))


def test_layer_modules_forward_never_calls_come_last():
    table = layer_table(WithUnused(), floats(4), "model")
    assert rows_of(table, "path", "outputShape", "activations", "params") == [
        ("body.0", [4], 4, 20),
        ("body.1", [4], 4, 0),
        ("head", [2], 2, 10),
        ("aux_head", None, 0, 15),
        ("dropout", None, 0, 0),
    ]


def test_frozen_layers_are_not_trainable():
    model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 2))
    model[0].weight.requires_grad = False
    table = layer_table(model, longs(3, high=10), "model")
    assert rows_of(table, "trainable") == [(False,), (True,), (True,)]
    assert table["totals"] == {"params": 40 + 26, "trainableParams": 26, "activations": 12 + 12 + 2}


def test_multihead_attention_counts_every_output_tensor():
    class Attn(nn.Module):
        def __init__(self, need_weights):
            super().__init__()
            self.need_weights = need_weights
            self.attn = nn.MultiheadAttention(16, 4, batch_first=True)

        def forward(self, x):
            out, _ = self.attn(x, x, x, need_weights=self.need_weights)
            return out

    with_weights = layer_table(Attn(True), floats(10, 16), "m")["rows"][0]
    without = layer_table(Attn(False), floats(10, 16), "m")["rows"][0]
    assert with_weights["outputShape"] == without["outputShape"] == [10, 16]
    assert with_weights["activations"] == 10 * 16 + 10 * 10  # attention weights averaged over heads
    assert without["activations"] == 10 * 16  # the None is skipped
    assert with_weights["params"] == 4 * 16 * 16 + 4 * 16


def test_composite_torch_nn_modules_are_one_row():
    layer = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
    model = nn.Sequential(nn.Linear(8, 16), nn.TransformerEncoder(layer, 2), nn.Linear(16, 3))
    assert [name for name, _ in layer_modules(model)] == ["0", "1", "2"]
    table = layer_table(model, floats(6, 8), "model")
    assert rows_of(table, "path", "type", "outputShape") == [
        ("0", "Linear", [6, 16]),
        ("1", "TransformerEncoder", [6, 16]),
        ("2", "Linear", [6, 3]),
    ]
    assert table["totals"]["params"] == sum(p.numel() for p in model.parameters())


def test_containers_and_user_modules_are_not_layer_modules():
    assert not is_layer_module(nn.Sequential())
    assert not is_layer_module(nn.ModuleList())
    assert not is_layer_module(nn.ModuleDict())
    assert not is_layer_module(Twice())
    assert is_layer_module(nn.Identity())
    assert is_layer_module(nn.LSTM(2, 2))


def test_an_output_without_batch_dimension_counts_whole():
    class Positions(nn.Module):
        def __init__(self):
            super().__init__()
            self.wpe = nn.Embedding(16, 4)

        def forward(self, idx):
            return self.wpe(torch.arange(idx.size(1)))

    (row,) = layer_table(Positions(), longs(9, high=3), "m")["rows"]
    assert row["outputShape"] == [9, 4] and row["activations"] == 36


def test_tuple_outputs_and_return_indices():
    class Pool(nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = nn.MaxPool2d(2, return_indices=True)
            self.unpool = nn.MaxUnpool2d(2)

        def forward(self, x):
            y, indices = self.pool(x)
            return self.unpool(y, indices)

    table = layer_table(Pool(), floats(3, 8, 8), "m")
    assert rows_of(table, "type", "outputShape", "activations") == [("MaxPool2d", [3, 4, 4], 96), ("MaxUnpool2d", [3, 8, 8], 192)]


def test_gradient_checkpointing_records_each_call_once():
    class Deep(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(8, 8), nn.GELU()) for _ in range(3)])

        def forward(self, x):
            for block in self.blocks:
                x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
            return x

    table = layer_table(Deep(), floats(8), "m")
    assert [row["path"] for row in table["rows"]] == ["blocks.0.0", "blocks.0.1", "blocks.1.0", "blocks.1.1", "blocks.2.0", "blocks.2.1"]


def test_dropout_and_batchnorm_run_in_train_mode():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5))
    model.eval()
    layer_table(model, floats(4), "m")
    assert model.training and model[1].num_batches_tracked.item() == 2


def test_a_batch_dependent_control_flow_is_an_error():
    class Odd(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            for _ in range(x.size(0)):
                x = self.fc(x)
            return x

    with pytest.raises(LayerTableError):
        layer_table(Odd(), floats(2), "m")


def test_layer_table_is_deterministic_and_leaves_no_hooks():
    model = WithParameters()
    first = layer_table(model, floats(5, 8), "model")
    second = layer_table(copy.deepcopy(model), floats(5, 8), "model")
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    assert all(not m._forward_hooks for m in model.modules())


def test_flatten_tensors():
    a, b, c = torch.zeros(1), torch.zeros(2), torch.zeros(3)
    assert [t.numel() for t in flatten_tensors((a, None, [b, {"x": c}], 3))] == [1, 2, 3]


def test_tables_validate_against_the_schema():
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for model, make in [(WithParameters(), floats(5, 8)), (WithUnused(), floats(4)), (TiedLM(), longs(12, high=100))]:
        table = layer_table(model, make, "model")
        validate(table, schema)
        table["generatedBy"] = {"torch": torch.__version__, "script": "test"}
        validate(table, schema)


def test_the_validator_rejects_broken_tables():
    schema = load_schema()
    table = layer_table(Twice(), floats(8), "net")
    broken = copy.deepcopy(table)
    del broken["totals"]
    broken["rows"][0]["params"] = -1
    broken["rows"][1]["outputShape"] = [2.5]
    broken["rows"][2]["trainable"] = 1
    broken["schemaVersion"] = 2
    broken["extra"] = True
    found = errors(broken, schema)
    assert any("missing required property 'totals'" in e for e in found)
    assert any(e.startswith("$.rows[0].params") for e in found)
    assert any(e.startswith("$.rows[1].outputShape[0]") for e in found)
    assert any(e.startswith("$.rows[2].trainable") for e in found)
    assert any(e.startswith("$.schemaVersion") for e in found)
    assert any("unexpected property 'extra'" in e for e in found)
    with pytest.raises(SchemaError):
        validate(broken, schema)
    nulls = copy.deepcopy(table)
    nulls["rows"][0].update(outputShape=None, activations=None, params=None)
    nulls["inputShape"] = None
    nulls["incomplete"] = True
    validate(nulls, schema)


class DenseBlock(nn.Module):
    """A DenseNet-style block: every convolution reads the concatenation of what came before."""

    def __init__(self, channels, growth, layers):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(channels + i * growth, growth, 3, padding=1) for i in range(layers)])

    def forward(self, x):
        features = [x]
        for conv in self.convs:
            features.append(conv(torch.cat(features, 1)))
        return torch.cat(features, 1)


def test_concatenations_in_user_code_are_rows_in_call_order():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 4, 3, padding=1)
            self.dense = DenseBlock(4, 2, 2)
            self.pool = nn.AdaptiveAvgPool2d(1)

        def forward(self, x):
            pooled = self.pool(self.dense(self.stem(x))).flatten(1)
            return torch.stack([pooled, pooled], 1)

    table = layer_table(Net(), floats(3, 5, 5), "net")
    assert rows_of(table, "path", "type", "outputShape", "activations", "params") == [
        ("stem", "Conv2d", [4, 5, 5], 100, 112),
        ("dense", "torch.cat", [4, 5, 5], 100, 0),
        ("dense.convs.0", "Conv2d", [2, 5, 5], 50, 74),
        ("dense", "torch.cat", [6, 5, 5], 150, 0),
        ("dense.convs.1", "Conv2d", [2, 5, 5], 50, 110),
        ("dense", "torch.cat", [8, 5, 5], 200, 0),
        ("pool", "AdaptiveAvgPool2d", [8, 1, 1], 8, 0),
        ("", "torch.stack", [2, 8], 16, 0),
    ]
    # totals.activations stays the layer modules' outputs (the Horus formula's A).
    assert table["totals"]["activations"] == 100 + 50 + 50 + 8
    validate(table, load_schema())


def test_concatenations_inside_layer_modules_and_outside_forward_are_not_rows():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            # MultiheadAttention with add_bias_kv concatenates inside torch.nn: part of its row.
            self.attn = nn.MultiheadAttention(8, 2, add_bias_kv=True, batch_first=True)

        def forward(self, x):
            return self.attn(x, x, x)[0]

    torch.cat([torch.zeros(1), torch.ones(1)])  # outside any forward
    table = layer_table(Net(), floats(4, 8), "net")
    assert rows_of(table, "type") == [("MultiheadAttention",)]


def test_functional_calls_false_gives_the_module_only_table():
    model = nn.Sequential(nn.Conv2d(3, 4, 1), DenseBlock(4, 2, 1))
    with_cat = layer_table(model, floats(3, 4, 4), "m")
    without = layer_table(model, floats(3, 4, 4), "m", functional_calls=False)
    assert [row for row in with_cat["rows"] if not row["type"].startswith("torch.")] == without["rows"]
    assert with_cat["totals"] == without["totals"]


def test_transformer_stacks_carry_their_number_of_layers():
    # Rule 13; the analyzer's twin is buildLayerTable.unit.test.ts ("Transformer stacks keep every layer").
    fixture = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "scripts" / "transformer_stacks.py"
    model = runpy.run_path(str(fixture), run_name="fixture")["StackedModel"]()
    table = layer_table(model, floats(10, 64), "model")
    assert [(row["path"], row["type"], row.get("stackedLayers")) for row in table["rows"]] == [
        ("encoder", "TransformerEncoder", 4),
        ("decoder", "TransformerDecoder", 2),
        ("full", "Transformer", 3),
        ("one", "TransformerEncoderLayer", None),
    ]
    validate(table, load_schema())
