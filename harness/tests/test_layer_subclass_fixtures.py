"""The parameter counts test/unit/core/analysis/layerSubclasses.unit.test.ts expects of the
fixtures whose layers derive from torch's, as PyTorch itself counts them."""
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "test" / "fixtures" / "scripts"


def _namespace(name):
    # run_name other than "__main__": the fixture's classes are defined, nothing trains.
    return runpy.run_path(str(SCRIPTS / name), run_name="fixture")


def _counts(model):
    return sum(p.numel() for p in model.parameters()), sum(p.numel() for p in model.parameters() if p.requires_grad)


def test_layer_subclasses_counts_as_the_analyzer_expects():
    model = _namespace("layer_subclasses.py")["Net"]()
    assert _counts(model) == (1_619_876, 1_619_876)


def test_hand_written_lora_counts_as_the_analyzer_expects():
    source = (SCRIPTS / "hand_written_lora.py").read_text(encoding="utf-8")
    # The script builds and trains at module level on a GPU: define its classes only.
    namespace = {"__name__": "fixture"}
    exec(compile(source.split("model = Encoder()")[0], "hand_written_lora.py", "exec"), namespace)
    assert _counts(namespace["Encoder"]()) == (67_831_818, 681_994)
