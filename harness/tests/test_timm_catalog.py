"""Tests of the timm catalog's generator (scripts/catalog/generate_timm.py).

The size laws (timm_laws) run under any Python. The generator itself needs the venv of
scripts/catalog/requirements-timm.txt (timm 1.0.31 on Debian's torch 1.13); its `--check` test
runs there, re-measuring a few models and comparing them with the committed data, and is skipped
where that interpreter is missing (TIMM_PYTHON names it; by default build/venvs/timm, which
`npm run test:python` makes with scripts/catalog/timm-venv.cjs, or /work/venvs/timm).

Run from the repository root: /usr/bin/python3 -m pytest harness/tests -p no:cacheprovider
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "catalog"))

from timm_laws import evaluate, fit  # noqa: E402

# The venv `npm run test:python` makes (scripts/catalog/timm-venv.cjs), else the developers' one.
_MADE = ROOT / "build" / "venvs" / "timm" / "bin" / "python"
TIMM_PYTHON = Path(os.environ.get("TIMM_PYTHON") or (_MADE if _MADE.exists() else "/work/venvs/timm/bin/python"))
# The sizes scripts/catalog/timm_record.py samples around a 224x224 default.
SAMPLES = [(224, 224)] + [(224 + d, 224) for d in (-128, -9, 3, 13, 21, 160)] + [(224, 224 + d) for d in (-128, -9, 3, 13, 21, 160)] + [(256, 288), (215, 237)]


def check_law(truth, samples=SAMPLES):
    """The law gives the truth at multiples of 32 (the sizes people use), and elsewhere either the
    truth or an open interval (which the TypeScript side reports in a note)."""
    law = fit(samples, [truth(h, w) for h, w in samples])
    assert law is not None
    for h in range(64, 600, 7):
        for w in (64, 131, 224, 301, 517):
            low, high = evaluate(law, h, w), evaluate(law, h, w, high=True)
            assert low == truth(h, w) or low != high, (law, h, w)
            if h % 32 == 0 and w % 32 == 0:
                assert low == high == truth(h, w), (law, h, w)
    return law


def test_a_convolution_chain_is_one_floor_law():
    # ResNet's stem (7x7/2 pad 3, then 3x3/2 pad 1) and three stride-2 stages: ceil(H / 32).
    def side(n):
        n = (n + 2 * 3 - 7) // 2 + 1
        n = (n + 2 - 3) // 2 + 1
        for _ in range(3):
            n = (n + 2 - 3) // 2 + 1
        return n

    law = check_law(lambda h, w: side(h))
    assert law[3] == 32


def test_patch_tokens_are_a_product_plus_the_class_token():
    check_law(lambda h, w: (h // 16) * (w // 16) + 1)
    check_law(lambda h, w: 768 * ((h // 16) * (w // 16) + 1))


def test_window_counts_upsampling_and_valid_convolutions():
    check_law(lambda h, w: ((h // 4 + 6) // 7) * ((w // 4 + 6) // 7))
    check_law(lambda h, w: 2 * ((w + 31) // 32))
    check_law(lambda h, w: (h // 14) * (w // 14) + 5)
    check_law(lambda h, w: ((h - 3) // 2 - 2) // 2 - 5)


def test_relative_position_tables_have_linear_terms():
    # BEiT's table: heads * ((2 Wh - 1) * (2 Ww - 1) + 3) with Wh = H // 16.
    law = check_law(lambda h, w: 12 * ((2 * (h // 16) - 1) * (2 * (w // 16) - 1) + 3))
    assert len(law) == 10


def test_a_constant_and_a_law_the_samples_do_not_explain():
    assert fit(SAMPLES, [1000] * len(SAMPLES)) == 1000
    assert fit(SAMPLES, [(h * h) % 97 for h, _ in SAMPLES]) is None


@pytest.mark.skipif(not TIMM_PYTHON.exists(), reason=f"no timm venv at {TIMM_PYTHON} (scripts/catalog/requirements-timm.txt)")
def test_check_passes_on_the_committed_data():
    result = subprocess.run(
        [str(TIMM_PYTHON), str(ROOT / "scripts" / "catalog" / "generate_timm.py"), "--check", "resnet18", "vit_tiny_patch16_224"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(not TIMM_PYTHON.exists(), reason=f"no timm venv at {TIMM_PYTHON} (scripts/catalog/requirements-timm.txt)")
def test_repeat_interleave_on_meta_gives_the_cpu_shapes():
    """gcvit's global query and rotary embeddings call repeat_interleave, which torch 1.13's meta
    device refuses without output_size: while recording it is patched for meta tensors."""
    code = """
import sys, torch
sys.path[:0] = ['.', 'scripts/catalog']
from timm_record import meta_kernels
x = torch.randn(2, 3, 4)
cases = [((3,), {'dim': 0}), ((3,), {'dim': 1}), ((3,), {'dim': -1}), ((3,), {}), ((torch.tensor([2]),), {'dim': 2}), ((torch.tensor([1, 2]),), {'dim': 0})]
original = torch.Tensor.repeat_interleave
with meta_kernels():
    for args, kwargs in cases:
        cpu = original(x, *args, **kwargs)
        assert x.to('meta').repeat_interleave(*args, **kwargs).shape == cpu.shape, (args, kwargs)
        assert torch.repeat_interleave(x.to('meta'), *args, **kwargs).shape == cpu.shape, (args, kwargs)
        assert torch.equal(x.repeat_interleave(*args, **kwargs), cpu)
    assert torch.repeat_interleave(torch.tensor([1, 2])).tolist() == [0, 1, 1]
assert torch.Tensor.repeat_interleave is original
"""
    result = subprocess.run([str(TIMM_PYTHON), "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


#: A run as timm's own API writes it: a dataset from a folder, its loader with the prefetcher (a side
#: CUDA stream), the optimizer by name.
TIMM_TRAINING = """
import timm
from timm.data import create_dataset, create_loader, resolve_data_config
from timm.optim import create_optimizer_v2

model = timm.create_model("resnet18", pretrained=True, num_classes=10)
config = resolve_data_config(model=model)
dataset = create_dataset("", root="data/imagenette", split="train", is_training=True)
loader = create_loader(dataset, input_size=(3, 64, 64), batch_size=8, is_training=True, use_prefetcher=True)
optimizer = create_optimizer_v2(model, opt="adamw", lr=1e-3)
model.cuda()
for images, targets in loader:
    loss = model(images).logsumexp(dim=1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.skipif(not TIMM_PYTHON.exists(), reason=f"no timm venv at {TIMM_PYTHON} (scripts/catalog/requirements-timm.txt)")
def test_a_dry_run_of_timm_s_training_api_reads_no_folder_and_runs_on_one_stream(tmp_path: Path) -> None:
    script, spec = tmp_path / "train.py", tmp_path / "spec.json"
    script.write_text(TIMM_TRAINING)
    spec.write_text(json.dumps({"tensors": [{"shape": [3, 64, 64], "dtype": "float32"}, {"shape": [], "dtype": "int64"}], "argv": []}))
    done = subprocess.run([str(TIMM_PYTHON), "-m", "harness.dry_run", str(script), "--spec", str(spec), "--steps", "2"], cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ok"], result.get("error")
    assert result["steps"] == 2
    # The batch reached the GPU: 8 images of 3 x 64 x 64 floats among the storages.
    assert 8 * 3 * 64 * 64 * 4 in [event[1] for event in result["events"] if len(event) == 3]
