"""The shared vectors of sampled models (test/vectors/harness-models) are what the sampler and
harness.layer_table produce today; test/unit/core/harnessModels.unit.test.ts checks the analyzer
against the same files."""
import importlib.util
import json
from pathlib import Path

from harness.schema_check import validate

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("generate_harness_model_vectors", ROOT / "scripts" / "generate_harness_model_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stored_vectors_are_current_and_cover_every_variant():
    generator = _generator()
    produced = list(generator.generate())
    assert [variant for variant, _, _ in produced] == list(generator.VARIANTS)
    for variant, source, text in produced:
        assert (generator.OUT / f"{variant}.py").read_text(encoding="utf-8") == source, f"{variant}.py is stale: rerun the generator"
        assert (generator.OUT / f"{variant}.json").read_text(encoding="utf-8") == text, f"{variant}.json is stale: rerun the generator"
        stored = json.loads(text)
        validate(stored["layerTable"])
        assert stored["config"]["variant"] == variant
    assert {p.stem for p in generator.OUT.glob("*")} == set(generator.VARIANTS)
    precisions = {json.loads(text)["config"]["setup"]["precision"] for _, _, text in produced}
    assert precisions == {"fp32", "fp16-mixed", "bf16-mixed"}
