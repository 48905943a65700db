#!/work/venvs/timm/bin/python
"""Layer tables of the timm models in the shared A100 runs (training data for the real-model estimator).

    nice -n 10 /work/venvs/timm/bin/python scripts/timm_layer_tables.py            # fill build/timm-layer-tables
    nice -n 10 /work/venvs/timm/bin/python scripts/timm_layer_tables.py resnet50   # only these models

Interpreter: the venv at /work/venvs/timm, made with
    python3 -m venv --system-site-packages /work/venvs/timm
    /work/venvs/timm/bin/pip install --no-deps -r scripts/timm_layer_tables.requirements.txt
so torch is Debian's python3-torch 1.13 (CPU) and timm is the pinned 1.0.31.

For every model named in ../shared/data/gpumemnet-a100/timm_faketensor.csv (or GPUMEMNET_DATA) it
builds `timm.create_model(name, pretrained=False)`, reads the default input size from the model's
`pretrained_cfg["input_size"]` (the data does not record the resolution: this is the assumption the
training checks against the residuals) and records the layer table with harness.layer_table at that
size. One JSON file per model goes to build/timm-layer-tables/<name>.json (gitignored, a cache: a
model whose file exists is skipped) with the table, the input size, timm's model module (the family
used for leave-one-family-out splits) and the parameter and buffer counts; a model that fails gets
<name>.error.txt instead. One thread, so it can run niced beside other work (~0.5 s a model).
"""
from __future__ import annotations

import contextlib
import csv
import json
import os
import sys
import time
import traceback
from pathlib import Path

sys.dont_write_bytecode = True

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "timm-layer-tables"
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import timm  # noqa: E402

from harness.layer_table import layer_table  # noqa: E402

TIMM_VERSION = "1.0.31"


def data_dir() -> Path:
    return Path(os.environ.get("GPUMEMNET_DATA", ROOT.parent / "shared" / "data" / "gpumemnet-a100"))


def model_names() -> list:
    names = []
    with open(data_dir() / "timm_faketensor.csv", newline="") as handle:
        for record in csv.DictReader(handle):
            stem = record["Filename"].rsplit("_", 1)[0]
            if stem not in names:
                names.append(stem)
    return names


@contextlib.contextmanager
def no_random_init():
    """Random initialisation skipped while a model is built: the table needs shapes only, and
    timm's truncated-normal init of a 300M-parameter model takes ~10 s on this CPU (0.5 s without)."""
    saved = {method: getattr(torch.Tensor, method) for method in ("normal_", "uniform_", "erfinv_")}
    saved_orthogonal = torch.nn.init.orthogonal_
    try:
        for method in saved:
            setattr(torch.Tensor, method, lambda self, *args, **kwargs: self)
        torch.nn.init.orthogonal_ = lambda tensor, *args, **kwargs: tensor
        yield
    finally:
        for method, function in saved.items():
            setattr(torch.Tensor, method, function)
        torch.nn.init.orthogonal_ = saved_orthogonal


def record(name: str, device: str = "meta") -> dict:
    # Shapes are all the table needs: on the meta device the forward passes cost milliseconds instead
    # of up to a minute (ViT-B at batch 3 on this CPU); the tables equal the CPU ones (checked on
    # resnet50 and vit_base_patch16_224, row for row).
    with no_random_init():
        model = timm.create_model(name, pretrained=False).to(device)
    cfg = dict(getattr(model, "pretrained_cfg", {}) or {})
    input_size = list(cfg.get("input_size") or (3, 224, 224))

    def make_input(batch_size: int) -> torch.Tensor:
        return torch.zeros([batch_size] + input_size, device=device)

    table = layer_table(model, make_input, name)
    return {
        "model": name,
        "timmVersion": timm.__version__,
        "torchVersion": torch.__version__,
        "module": type(model).__module__.rsplit(".", 1)[-1],
        "inputSize": input_size,
        "params": sum(p.numel() for p in model.parameters()),
        "buffers": sum(b.numel() for b in model.buffers()),
        "table": table,
    }


def main(argv: list) -> int:
    if timm.__version__ != TIMM_VERSION:
        print(f"timm {timm.__version__} found, {TIMM_VERSION} pinned", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    names = argv or model_names()
    failed = 0
    for index, name in enumerate(names):
        target = OUT / f"{name}.json"
        if target.exists():
            continue
        started = time.time()
        try:
            with torch.random.fork_rng():
                torch.manual_seed(0)
                try:
                    result = record(name)
                except RuntimeError as error:
                    # A few ops have no meta kernel in torch 1.13 (gcvit's repeat_interleave): run those on the CPU.
                    if "meta" not in str(error):
                        raise
                    result = record(name, "cpu")
        except Exception:  # noqa: BLE001 - one model's failure must not stop the others
            failed += 1
            (OUT / f"{name}.error.txt").write_text(traceback.format_exc())
            print(f"[{index + 1}/{len(names)}] {name}: FAILED", flush=True)
            continue
        target.write_text(json.dumps(result, sort_keys=True) + "\n")
        print(f"[{index + 1}/{len(names)}] {name}: {len(result['table']['rows'])} rows, {time.time() - started:.1f} s", flush=True)
    print(f"done, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
