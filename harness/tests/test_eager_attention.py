"""test/vectors/eager-attention.json is what autograd saves for eager attention today, and the layer
table's figure (rule 9 of docs/layer-table.md; src/core/estimators/eagerAttention.ts's bytes per
element) accounts for exactly those bytes; eagerAttention.unit.test.ts checks the TypeScript side
against the same file."""
import importlib.util
import json
from pathlib import Path

from harness.schema_check import validate

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("generate_eager_attention_vectors", ROOT / "scripts" / "generate_eager_attention_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bytes_per_element(dropout: bool) -> int:
    # fp32 on a GPU: softmax's output; with dropout, its 1-byte mask and its output (saved by `@ v`).
    return 4 + 1 + 4 if dropout else 4


def _table_elements(table):
    """The score matrices the table shows: torch.nn attention rows' figure, or a hand-written
    attention's dropout row ([heads, N, N] under an `attn` path), which implies dropout."""
    total = 0
    for row in table["rows"]:
        if "eagerAttention" in row:
            total += row["eagerAttention"]["elements"] * _bytes_per_element(row["eagerAttention"]["dropout"])
        elif row["type"] == "Dropout" and row["outputShape"] and len(row["outputShape"]) >= 3 and row["outputShape"][-1] == row["outputShape"][-2] and "attn" in row["path"]:
            total += row["activations"] * _bytes_per_element(True)
    return total


def test_stored_vectors_are_current():
    generator = _generator()
    text = generator.render(generator.generate())
    assert generator.OUT.read_text(encoding="utf-8") == text, "test/vectors/eager-attention.json is stale: rerun the generator"


def test_the_tables_account_for_every_saved_score_matrix():
    vectors = json.loads((ROOT / "test" / "vectors" / "eager-attention.json").read_text(encoding="utf-8"))
    names = [case["name"] for case in vectors["cases"]]
    assert names == ["transformer_encoder", "transformer_encoder_no_dropout", "transformer_decoder_layer", "gpt_block"]
    for case in vectors["cases"]:
        validate(case["layerTable"])
        assert case["measuredAttentionBytes"] > 0, case["name"]
        assert _table_elements(case["layerTable"]) * case["batch"] == case["measuredAttentionBytes"], case["name"]


def test_nn_attention_rows_count_heads_times_query_times_key_length_per_call():
    vectors = {case["name"]: case for case in json.loads((ROOT / "test" / "vectors" / "eager-attention.json").read_text(encoding="utf-8"))["cases"]}
    encoder = [row for row in vectors["transformer_encoder"]["layerTable"]["rows"] if "eagerAttention" in row]
    assert [(row["type"], row["eagerAttention"]) for row in encoder] == [("TransformerEncoder", {"elements": 2 * 4 * 16 * 16, "dropout": True})]
    decoder = [row["eagerAttention"] for row in vectors["transformer_decoder_layer"]["layerTable"]["rows"] if "eagerAttention" in row]
    assert decoder == [{"elements": 4 * 12 * 12 + 4 * 12 * 20, "dropout": True}]
    assert not any("eagerAttention" in row for row in vectors["gpt_block"]["layerTable"]["rows"])
