"""Generates the timm part of the catalog from timm itself (docs/catalog.md, "timm").

Interpreter: the venv of scripts/catalog/requirements-timm.txt, made with Debian's Python 3.11
and its torch 1.13 / torchvision 0.14 (python3-torch, python3-torchvision):

    python3 -m venv --system-site-packages /work/venvs/timm
    /work/venvs/timm/bin/pip install --no-deps -r scripts/catalog/requirements-timm.txt

Usage (from the repository root):

    $PY scripts/catalog/generate_timm.py --record [NAMES...]   # measure models into build/timm-catalog/ (resumable)
    $PY scripts/catalog/generate_timm.py --write               # write src/core/catalog/data/timm*.ts from that cache
    $PY scripts/catalog/generate_timm.py --check [NAMES...]    # re-measure NAMES (a default few), exit 1 if the data differs
    $PY scripts/catalog/generate_timm.py --vectors [NAMES...]  # test vectors from the real model on the CPU

Without NAMES, --record takes every name of timm.list_models(), the names of the shared A100
runs (../shared/data/gpumemnet-a100/timm_faketensor.csv, read in place when present) first.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "catalog"))

import brotli  # noqa: E402
import timm  # noqa: E402
import torch  # noqa: E402

from timm_model import record  # noqa: E402
from timm_record import meta_kernels  # noqa: E402

CACHE = ROOT / "build" / "timm-catalog"
DATA = ROOT / "src" / "core" / "catalog" / "data"
SHARED_RUNS = ROOT.parent / "shared" / "data" / "gpumemnet-a100" / "timm_faketensor.csv"
#: Models --check re-measures by default: one per kind of size law (CNN, strict ViT, windowed, hybrid).
CHECK_DEFAULT = ["resnet18", "vit_tiny_patch16_224", "swin_tiny_patch4_window7_224", "efficientnet_b0", "convnext_atto", "levit_128s"]
VERSIONS = {"timm": timm.__version__, "torch": torch.__version__.split("+")[0]}


def shared_names() -> List[str]:
    if not SHARED_RUNS.exists():
        return []
    names = set()
    for line in SHARED_RUNS.read_text().splitlines()[1:]:
        file = line.split(",", 1)[0]
        if file.endswith(".out"):
            names.add(file[: -len(".out")].rsplit("_", 1)[0])
    return sorted(names)


def all_names() -> List[str]:
    first = [n for n in shared_names() if n in set(timm.list_models())]
    return first + [n for n in timm.list_models() if n not in set(first)]


def cache_path(name: str) -> Path:
    return CACHE / f"{name}.json"


def measure(name: str) -> Dict[str, Any]:
    start = time.time()
    try:
        with meta_kernels():
            out = record(name)
    except Exception as error:  # every failure is reported in the catalog's summary
        out = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}", "where": traceback.format_exc().splitlines()[-3][:300]}
    out["seconds"] = round(time.time() - start, 2)
    return out


def do_record(names: List[str]) -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(names):
        path = cache_path(name)
        if path.exists():
            continue
        out = measure(name)
        path.write_text(json.dumps(out, sort_keys=True))
        print(f"[{i + 1}/{len(names)}] {name}: {out.get('error') or str(len(out['rows'])) + ' rows'} ({out['seconds']} s)", flush=True)


def do_features() -> None:
    """Adds the features_only feature maps to records measured before record() kept them."""
    from timm_model import feature_outputs

    for path in sorted(CACHE.glob("*.json")):
        rec = json.loads(path.read_text())
        variant = rec.get("variants", {}).get("features_only=true", {})
        if "error" in rec or "rows" not in variant or "outputs" in variant:
            continue
        c, h, w = rec["input"]
        with meta_kernels():
            variant["outputs"] = feature_outputs(path.stem, c, h, w, bool(rec.get("strict")))
        path.write_text(json.dumps(rec, sort_keys=True))
        print(f"features: {path.stem}", flush=True)


def encode_blob(value: Any) -> str:
    """Brotli with a 16 MiB window (Node's zlib decodes it): the models of a family repeat each
    other's rows farther apart than gzip's 32 KiB window reaches, and brotli makes them 4-5 times
    smaller than gzip does."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
    return base64.b64encode(brotli.compress(text, quality=11, lgwin=24)).decode()


def decode_blob(text: str) -> Any:
    return json.loads(brotli.decompress(base64.b64decode(text)))


#: Models per blob: a script naming one model decodes its blob only (a whole vision_transformer
#: family would be 200 models).
CHUNK = 12


INDEX_KEYS = ("className", "input", "params")


def split_record(record_: Dict[str, Any]) -> Dict[str, Any]:
    """What the family blob keeps (everything but timing and the index's fields)."""
    return {k: v for k, v in record_.items() if k not in ("seconds",) + INDEX_KEYS}


def data_modules(records: Dict[str, Dict[str, Any]]) -> Dict[str, str]:
    """The two generated modules: the index (one blob, decoded on the first timm name) and one blob
    per timm module file (family), decoded when a script names one of its models."""
    built = {n: r for n, r in records.items() if "error" not in r}
    failed = {n: r["error"] for n, r in records.items() if "error" in r}
    from timm.models import _registry

    aliases = {old: new for old, new in _registry._deprecated_models.items() if new and new.split(".")[0] in built}
    chunk_of: Dict[str, str] = {}
    by_family: Dict[str, List[str]] = {}
    for n, r in sorted(built.items()):
        by_family.setdefault(r["family"], []).append(n)
    for fam, names in by_family.items():
        for i, n in enumerate(names):
            chunk_of[n] = fam if len(names) <= CHUNK else f"{fam}#{i // CHUNK}"
    index = {
        "models": {n: [chunk_of[n], r["className"], r["params"], r["input"]] for n, r in sorted(built.items())},
        "failed": dict(sorted(failed.items())),
        "aliases": dict(sorted(aliases.items())),
    }
    families: Dict[str, Dict[str, Any]] = {}
    for n, r in sorted(built.items()):
        families.setdefault(chunk_of[n], {})[n] = {**split_record(r), "family": r["family"]}
    header = f"// Generated by scripts/catalog/generate_timm.py from timm {VERSIONS['timm']}, torch {VERSIONS['torch']}. Do not edit: see docs/catalog.md.\n"
    index_text = (
        header
        + "// The index of timm names (brotli-compressed JSON in base64), decoded when a script first names a timm model.\n\n"
        + f"export const TIMM_VERSIONS: Readonly<Record<string, string>> = {json.dumps(VERSIONS, sort_keys=True)};\n\n"
        + f"export const TIMM_INDEX_BLOB =\n  {json.dumps(encode_blob(index))};\n"
    )
    lines = [header + "// One blob per timm module file, or per 12 of its models (brotli-compressed JSON in base64), decoded when a script names one of its models.\n", "export const TIMM_FAMILY_BLOBS: Readonly<Record<string, string>> = {"]
    for fam in sorted(families):
        lines.append(f"  {json.dumps(fam)}: {json.dumps(encode_blob(families[fam]))},")
    lines.append("};")
    return {"timmIndex.ts": index_text, "timmFamilies.ts": "\n".join(lines) + "\n"}


def read_cache() -> Dict[str, Dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted(CACHE.glob("*.json"))}


def committed_records() -> Dict[str, Any]:
    """The models of the committed data, decoded, keyed by name (index fields merged back)."""
    text = (DATA / "timmIndex.ts").read_text()
    index = decode_blob(text.split("TIMM_INDEX_BLOB =\n  ", 1)[1].split(";\n", 1)[0].strip('"'))
    families: Dict[str, Any] = {}
    for line in (DATA / "timmFamilies.ts").read_text().splitlines():
        if line.startswith('  "') and '": "' in line:
            fam, blob = line.strip().rstrip(",").split(": ", 1)
            families[json.loads(fam)] = decode_blob(json.loads(blob))
    out: Dict[str, Any] = {}
    for name, (fam, class_name, params, input_) in index["models"].items():
        out[name] = {**families[fam][name], "className": class_name, "params": params, "input": input_}
    for name, error in index["failed"].items():
        out[name] = {"error": error}
    return out


def do_check(names: List[str]) -> int:
    committed = committed_records()
    stale = []
    for name in names:
        fresh = measure(name)
        fresh.pop("seconds", None)
        if "error" in fresh:
            fresh = {"error": fresh["error"]}
        if committed.get(name) != json.loads(json.dumps(fresh, sort_keys=True)):
            stale.append(name)
    if stale:
        print(f"timm catalog data is stale for: {', '.join(stale)} (run --record/--write, see docs/catalog.md)")
        return 1
    print(f"timm catalog data is up to date for {len(names)} models")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--vectors", action="store_true")
    parser.add_argument("--features", action="store_true", help="add features_only's feature maps to records cached without them")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.record:
        do_record(args.names or all_names())
    if args.features:
        do_features()
    if args.write:
        for file, text in data_modules(read_cache()).items():
            (DATA / file).write_text(text)
    if args.check:
        return do_check(args.names or CHECK_DEFAULT)
    if args.vectors:
        from timm_vectors import write_vectors

        write_vectors(args.names)
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
