"""Consistency of the corpus manifest, the stored layer-table vectors and the generator.

The full regeneration takes a minute or two on CPU; these tests regenerate only a few quick
fixtures and check the rest structurally. `scripts/generate_expected_tables.py --check` is the
complete check.
"""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from harness.layer_table import is_functional_row
from harness.schema_check import load_schema, validate

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "test" / "fixtures" / "corpus"
VECTORS = ROOT / "test" / "vectors" / "layer-tables"


def _generator():
    spec = importlib.util.spec_from_file_location("generate_expected_tables", ROOT / "scripts" / "generate_expected_tables.py")
    module = importlib.util.module_from_spec(spec)
    saved = sys.dont_write_bytecode
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


generator = _generator()
manifest = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
models = [(entry, model) for entry in manifest for model in entry["models"]]


def test_the_corpus_has_at_least_32_fixtures_all_in_the_manifest():
    on_disk = {p.name for p in CORPUS.glob("*.py")}
    listed = [entry["file"] for entry in manifest]
    assert len(on_disk) >= 32
    assert sorted(listed) == sorted(on_disk) and len(set(listed)) == len(listed)


@pytest.mark.parametrize("entry", manifest, ids=[e["file"] for e in manifest])
def test_manifest_entries_are_well_formed(entry):
    generator.check_entry(entry)


@pytest.mark.parametrize("entry,model", models, ids=[f"{e['file']}:{m['name']}" for e, m in models])
def test_stored_vectors_validate_and_add_up(entry, model):
    path = generator.vector_path(entry["file"], model["name"])
    text = path.read_text(encoding="utf-8")
    table = json.loads(text)
    validate(table, load_schema())
    assert text == generator.serialize(table), "not in the generator's canonical format"
    assert table["model"] == model["name"]
    assert table["inputShape"] == model["inputs"][0]["shape"]
    rows = table["rows"]
    assert table["totals"] == {
        "params": sum(r["params"] for r in rows),
        "trainableParams": sum(r["params"] for r in rows if r["trainable"]),
        "activations": sum(r["activations"] for r in rows if not is_functional_row(r)),
    }
    assert table["generatedBy"]["script"] == "scripts/generate_expected_tables.py"
    # Parameter rows first, uncalled modules last.
    kinds = ["parameter" if r["type"] == "Parameter" else "call" if r["outputShape"] is not None else "unused" for r in rows]
    assert kinds == sorted(kinds, key=["parameter", "call", "unused"].index)


def test_no_stray_vectors():
    expected = {generator.vector_path(e["file"], m["name"]).name for e, m in models}
    assert {p.name for p in VECTORS.glob("*.json")} == expected


@pytest.mark.parametrize("file", ["lenet5_mnist.py", "dcgan_celeba.py", "multitask_moduledict.py", "recsys_embeddingbag.py"])
def test_regenerating_quick_fixtures_reproduces_the_stored_vectors(file):
    (entry,) = [e for e in manifest if e["file"] == file]
    for path, table, _seconds in generator.generate(entry):
        assert generator.serialize(table) == path.read_text(encoding="utf-8"), f"{path.name} is stale: rerun the generator"
