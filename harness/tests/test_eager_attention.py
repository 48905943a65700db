"""test/vectors/eager-attention.json holds what autograd saves for attention on torch 1.13 (this
harness's torch) beside the layer table, which states PyTorch 2's rule (rule 9 of
docs/layer-table.md; src/core/estimators/eagerAttention.ts's bytes per element): where PyTorch 2
runs the attention eagerly (direct nn.MultiheadAttention with need_weights left True, hand-written
attention) its code is 1.13's, and the table accounts for exactly the bytes measured; where
PyTorch 2 runs it fused (need_weights=False, the nn.Transformer* layers) the table counts none,
though 1.13 keeps them. eagerAttention.unit.test.ts checks the TypeScript side against the same
file."""
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


def _cases():
    return {case["name"]: case for case in json.loads((ROOT / "test" / "vectors" / "eager-attention.json").read_text(encoding="utf-8"))["cases"]}


def test_eager_cases_account_for_every_score_matrix_torch_saves():
    """Direct nn.MultiheadAttention with need_weights left True, and hand-written attention: the
    same eager code on 1.13 and 2.x, so the 1.13 measurement is PyTorch 2's."""
    cases = _cases()
    assert [name for name, case in cases.items() if case["pytorch2"] == "eager"] == ["mha_default", "mha_need_weights_true_no_dropout", "gpt_block"]
    for name, case in cases.items():
        validate(case["layerTable"])
        assert case["measuredAttentionBytes"] > 0, name
        if case["pytorch2"] == "eager":
            assert _table_elements(case["layerTable"]) * case["batch"] == case["measuredAttentionBytes"], name


def test_fused_cases_count_no_score_matrix_though_torch_1_13_keeps_them():
    """need_weights=False and the nn.Transformer* layers: PyTorch 2 calls
    scaled_dot_product_attention; torch 1.13 (measured) still keeps the matrices."""
    cases = _cases()
    fused = {name: case for name, case in cases.items() if case["pytorch2"] == "fused"}
    assert list(fused) == ["mha_need_weights_false", "transformer_encoder", "transformer_decoder_layer"]
    for name, case in fused.items():
        assert case["measuredAttentionBytes"] > 0, name
        assert _table_elements(case["layerTable"]) == 0, name
    # The same module and inputs; only need_weights differs.
    assert cases["mha_need_weights_false"]["measuredAttentionBytes"] == cases["mha_default"]["measuredAttentionBytes"]


def test_direct_attention_rows_count_heads_times_query_times_key_length():
    cases = _cases()
    rows = lambda name: [(row["type"], row["eagerAttention"]) for row in cases[name]["layerTable"]["rows"] if "eagerAttention" in row]
    assert rows("mha_default") == [("MultiheadAttention", {"elements": 4 * 12 * 20, "dropout": True})]
    assert rows("mha_need_weights_true_no_dropout") == [("MultiheadAttention", {"elements": 4 * 12 * 20, "dropout": False})]
    assert rows("mha_need_weights_false") == rows("transformer_encoder") == rows("transformer_decoder_layer") == rows("gpt_block") == []


def test_the_harness_reads_need_weights_from_the_call_and_puts_forward_back():
    generator = _generator()
    model = generator.AttendToMemory(0.0, False).train()
    table = generator.layer_table(model, generator._query_and_memory, "need_weights_false")
    assert not any("eagerAttention" in row for row in table["rows"])
    assert "forward" not in model.attn.__dict__
    model.need_weights = None
    assert [row["eagerAttention"] for row in generator.layer_table(model, generator._query_and_memory, "default")["rows"] if "eagerAttention" in row] == [{"elements": 4 * 12 * 20, "dropout": False}]
