"""Command line of the training pipeline.

    /usr/bin/python3 -m harness.training export --runs DIR [DIR ...] --out TABLE.csv [--include-cpu] [--force]
    /usr/bin/python3 -m harness.training train [--reference-data DIR] [--data RUNS.jsonl ...] [--table TABLE.csv ...]
                                               [--families mlp,cnn] [--out models] [--work DIR]
                                               [--steps N] [--utilization-steps N] [--no-export]
    /usr/bin/python3 -m harness.training export-onnx [--work DIR] [--out models]
    /usr/bin/python3 -m harness.training vectors [--check]      (test/vectors/features)

`export` flattens collected runs (`harness collect`'s results.jsonl) into one training table
(table.py). `train` reads the measurements, cross-validates, trains each family's ensemble on its
training split, evaluates it on the held-out split, keeps a checkpoint in --work and (unless
--no-export) writes models/<family>.onnx and models/<family>.card.json. `export-onnx` rewrites the
models from the checkpoints. `npm run train:models` runs `train` with the defaults.
Deterministic: seeded and single-threaded, so the same data gives the same files.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .data import Run, default_reference_dir, load_jsonl, load_reference
from .definitions import REPO_ROOT

DEFAULT_OUT = REPO_ROOT / "models"
DEFAULT_WORK = REPO_ROOT / "build" / "training"
DEFAULT_STEPS = 1000
DEFAULT_UTILIZATION_STEPS = 600
REFERENCE_GPU = "NVIDIA A100 40GB (DGX Station A100), PyTorch 2.4.1, CUDA 12.2"


def _parser_train() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m harness.training train", description="Train, evaluate and export the learned estimators.")
    parser.add_argument("--reference-data", type=Path, default=None, help="folder with GPUMemNet's mlp.csv and cnn.csv (default: GPUMEMNET_DATA or ../shared/data/gpumemnet-a100)")
    parser.add_argument("--no-reference-data", action="store_true", help="train on --data only")
    parser.add_argument("--data", type=Path, action="append", default=[], help="JSON Lines of runs our harness measured (repeatable)")
    parser.add_argument("--table", type=Path, action="append", default=[], help="a training table written by `python3 -m harness export` (repeatable)")
    parser.add_argument("--families", default="mlp,cnn,transformer", help="families to train when they have enough runs (default: all)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the ONNX models and cards go (default: models/)")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="checkpoints (default: build/training)")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help=f"optimizer steps per memory member (default {DEFAULT_STEPS})")
    parser.add_argument("--utilization-steps", type=int, default=DEFAULT_UTILIZATION_STEPS, help=f"optimizer steps per utilization member (default {DEFAULT_UTILIZATION_STEPS})")
    parser.add_argument("--no-export", action="store_true", help="train and evaluate only")
    return parser


def _parser_export() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python3 -m harness export",
        description="Write one training table (CSV) from collected runs: a row per labelled configuration (ok or OOM) with its features, targets and provenance. (Rewriting the ONNX models from checkpoints is `export-onnx`.)",
    )
    parser.add_argument("--runs", nargs="+", action="extend", required=True, metavar="DIR", help="`harness collect --out` directories (or their results.jsonl; a downloaded remote run's out/ is found too)")
    parser.add_argument("--out", type=Path, required=True, metavar="TABLE.csv", help="the table to write")
    parser.add_argument("--include-cpu", action="store_true", help="include rows of --device cpu runs (labelled device=cpu; for testing the flow, never GPU training data)")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    return parser


def _parser_export_onnx() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m harness export-onnx", description="Write the ONNX models and cards from the last training's checkpoints.")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser


def _display(path: Path) -> str:
    """Paths in cards are relative to the repository (the reference data sits beside it)."""
    resolved = Path(path).resolve()
    for base, prefix in ((REPO_ROOT.resolve(), ""), (REPO_ROOT.parent.resolve(), "../")):
        try:
            return prefix + resolved.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def load_runs(args: argparse.Namespace) -> Dict[str, Any]:
    from .export import sha256_file
    from .table import load_table

    for path in [*args.data, *args.table]:
        if not Path(path).is_file():
            raise ValueError(f"{path}: no such file")
    runs: List[Run] = []
    sources: List[Dict[str, Any]] = []
    if not args.no_reference_data:
        directory = args.reference_data or default_reference_dir()
        for family in ("mlp", "cnn"):
            path = Path(directory) / f"{family}.csv"
            if not path.exists():
                print(f"train: no reference data at {path}; skipping it", file=sys.stderr)
                continue
            loaded = load_reference(path.parent, family)
            runs.extend(loaded)
            sources.append({"family": family, "path": _display(path), "sha256": sha256_file(path), "runs": len(loaded), "gpu": REFERENCE_GPU, "what": "GPUMemNet reference measurements (itu-rad/GPUMemNet), rows with Depth > 0"})
    for path in args.data:
        loaded = load_jsonl(path)
        runs.extend(loaded)
        gpus = sorted({str(run.extra.get("gpu")) for run in loaded if run.extra.get("gpu")})
        sources.append({"family": "any", "path": _display(path), "sha256": sha256_file(path), "runs": len(loaded), "gpu": ", ".join(gpus) or "unknown", "what": "runs measured by our harness (JSON Lines)"})
    for path in args.table:
        loaded = load_table(path)
        runs.extend(loaded)
        gpus = sorted({str(run.extra.get("gpu")) for run in loaded if run.extra.get("gpu")})
        sources.append({"family": "any", "path": _display(path), "sha256": sha256_file(path), "runs": len(loaded), "gpu": ", ".join(gpus) or "unknown", "what": "runs measured by our harness (training table from harness export)"})
    return {"runs": runs, "sources": sources}


def main_train(argv: Optional[Sequence[str]] = None) -> int:
    import torch

    from .export import card_for, write_family
    from .train import MIN_RUNS, train_family

    args = _parser_train().parse_args(argv)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        loaded = load_runs(args)
    except ValueError as error:
        print(f"train: {error}", file=sys.stderr)
        return 2
    wanted = [f.strip() for f in args.families.split(",") if f.strip()]
    args.work.mkdir(parents=True, exist_ok=True)
    summary = {}
    for family in wanted:
        runs = [run for run in loaded["runs"] if run.family == family]
        successful = sum(not run.oom for run in runs)
        if successful < MIN_RUNS:
            print(f"{family}: {successful} successful runs (< {MIN_RUNS}); no ensemble, the analytical model serves this family")
            continue
        print(f"{family}: {len(runs)} runs ({successful} successful)")
        started = time.time()
        result = train_family(family, runs, args.steps, args.utilization_steps)
        sources = [s for s in loaded["sources"] if s["family"] in (family, "any")]
        card = card_for(result, sources)
        torch.save({"model": result.model, "card": card}, args.work / f"{family}.pt")
        summary[family] = card["metrics"]
        print(_report(family, card))
        if not args.no_export:
            written = write_family(result.model, card, args.out)
            print(f"{family}: wrote {written['onnx']} ({written['onnx'].stat().st_size} bytes) and {written['card']}")
        print(f"{family}: {time.time() - started:.0f} s (training {result.seconds:.0f} s)")
    (args.work / "metrics.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


def main_export(argv: Optional[Sequence[str]] = None) -> int:
    from .table import TableError, describe_skipped, export_rows, write_table

    args = _parser_export().parse_args(argv)
    if args.out.exists() and not args.force:
        print(f"export: {args.out} exists; pass --force to replace it", file=sys.stderr)
        return 2  # before reading the runs, which can take a while
    try:
        rows, skipped = export_rows(args.runs, include_cpu=args.include_cpu)
        write_table(rows, args.out, force=args.force)
    except TableError as error:
        print(f"export: {error}", file=sys.stderr)
        return 2
    families = ", ".join(f"{family} {count}" for family, count in sorted(Counter(row["family"] for row in rows).items()))
    print(f"export: wrote {len(rows)} rows ({families or 'none'}) to {args.out} from {len(args.runs)} run(s); {describe_skipped(skipped)}")
    return 0


def main_export_onnx(argv: Optional[Sequence[str]] = None) -> int:
    import torch

    from .export import write_family

    args = _parser_export_onnx().parse_args(argv)
    checkpoints = sorted(Path(args.work).glob("*.pt"))
    if not checkpoints:
        print(f"export-onnx: no checkpoints in {args.work}; run train first", file=sys.stderr)
        return 1
    for checkpoint in checkpoints:
        saved = torch.load(checkpoint)
        written = write_family(saved["model"], saved["card"], args.out)
        print(f"wrote {written['onnx']} and {written['card']}")
    return 0


def _report(family: str, card: Dict[str, Any]) -> str:
    metrics = card["metrics"]
    lines = [f"{family}: point estimate at the {card['outputs']['memory']['pointQuantile']} quantile; range {card['outputs']['memory']['range']['quantiles']}"]
    for name, block in (("3-fold CV (mean)", metrics["crossValidation"]["mean"]), ("held-out test", metrics["test"])):
        memory = block["memory"]
        bins = ", ".join(f"{key[5:]} MiB bins {block[key]:.3f}" for key in block if key.startswith("bins_"))
        util = ", ".join(
            f"{key.upper()} accuracy {block[key]['accuracy']:.3f}" + (f" (high recall {block[key]['high_recall']:.3f})" if block[key].get("high_recall") is not None else "")
            for key in ("smact", "smocc")
            if block[key].get("accuracy") is not None
        )
        lines.append(
            f"  {name}: median abs error {memory['median_abs_error']:.2%}, under by >10% {memory['under_10pct']:.2%}, "
            f"range coverage {memory.get('range_coverage', float('nan')):.2%}; {bins}; {util}"
        )
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"export": main_export, "train": main_train, "export-onnx": main_export_onnx, "vectors": _vectors}
    if not argv or argv[0] not in commands:
        print("usage: python3 -m harness.training {export|train|export-onnx|vectors} [options] (--help for each)", file=sys.stderr)
        return 2
    return commands[argv[0]](argv[1:])


def _vectors(argv: Sequence[str]) -> int:
    from .vectors import main_vectors

    return main_vectors(list(argv))
