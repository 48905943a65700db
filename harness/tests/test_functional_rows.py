"""Functional norms and attention in user code are layer-table rows (rule 2 of docs/layer-table.md).

The fixture test/fixtures/scripts/functional_layers.py writes its norms and attention as functions;
its table, measured here, is the vector test/vectors/functional-rows/functional_layers.json that
the analyzer's test (test/unit/core/layerTable/functionalRows.unit.test.ts) compares with its own.
F.scaled_dot_product_attention needs PyTorch 2: `npm run test:python` runs this file again in the
PyTorch 2 venv (scripts/venvs/test-dry-run-torch2.cjs).
"""
import json
import runpy
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness.layer_table import layer_table
from harness.schema_check import load_schema, validate

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "test" / "fixtures" / "scripts" / "functional_layers.py"
VECTOR = ROOT / "test" / "vectors" / "functional-rows" / "functional_layers.json"


def fixture_table():
    namespace = runpy.run_path(str(FIXTURE), run_name="fixture")
    torch.manual_seed(0)
    return layer_table(namespace["TinyGPT"](), lambda batch: torch.randint(0, namespace["VOCAB"], (batch, namespace["BLOCK_SIZE"])), "model")


@pytest.mark.skipif(not hasattr(F, "scaled_dot_product_attention"), reason="F.scaled_dot_product_attention needs PyTorch 2")
def test_the_fixture_table_is_the_shared_vector():
    table = fixture_table()
    validate(table, load_schema())
    assert table == json.loads(VECTOR.read_text())


def test_functional_norms_in_user_modules_are_rows_and_not_in_the_totals():
    class LayerNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return F.layer_norm(x, self.weight.shape, self.weight, None, 1e-5)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = LayerNorm(8)
            self.fc = nn.Linear(8, 8)
            self.bn = nn.BatchNorm1d(8)  # a layer module: its own F.batch_norm is inside its row

        def forward(self, x):
            h = F.group_norm(self.fc(self.norm(x)), 2)
            return self.bn(torch.layer_norm(h, (8,)))

    table = layer_table(Net(), lambda batch: torch.randn(batch, 8), "net")
    assert [(row["path"], row["type"], row["outputShape"]) for row in table["rows"] if row["type"] != "Parameter"] == [
        ("norm", "torch.layer_norm", [8]),
        ("fc", "Linear", [8]),
        ("", "torch.group_norm", [8]),
        ("", "torch.layer_norm", [8]),
        ("bn", "BatchNorm1d", [8]),
    ]
    assert table["totals"]["activations"] == 16


def test_products_and_softmax_of_activations_are_rows_and_products_of_weights_are_not():
    # The analyzer's twin reads the same fixture (functionalRows.unit.test.ts).
    model = runpy.run_path(str(ROOT / "test" / "fixtures" / "scripts" / "attention_products.py"), run_name="fixture")["ProductAttention"]()
    table = layer_table(model, lambda batch: torch.randn(batch, 16, 32), "model")
    assert [(row["type"], row["outputShape"]) for row in table["rows"] if row["type"] != "Parameter"] == [
        ("Linear", [16, 96]),
        ("torch.matmul", [16, 16]),
        ("torch.softmax", [16, 16]),
        ("torch.softmax", [16, 16]),
        ("torch.matmul", [16, 32]),
        ("torch.matmul", [16, 32]),
    ]


def test_concatenations_mode_keeps_the_rows_timms_catalog_was_recorded_with():
    model = runpy.run_path(str(ROOT / "test" / "fixtures" / "scripts" / "attention_products.py"), run_name="fixture")["ProductAttention"]()
    table = layer_table(model, lambda batch: torch.randn(batch, 16, 32), "model", functional_calls="concatenations")
    assert [row["type"] for row in table["rows"] if row["type"] != "Parameter"] == ["Linear"]
