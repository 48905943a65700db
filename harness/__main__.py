"""python3 -m harness COMMAND ...

    collect --config CONFIG.yaml --out DIR [--device cuda|cpu] [--seconds N]
    measure SCRIPT.py --steps N [--device cuda|cpu] [--out FILE] [-- SCRIPT_ARGS...]
    export --runs DIR [DIR ...] --out TABLE.csv [--include-cpu] [--force]
                 (harness.training: one training table from collected runs: features, targets, provenance)
    train ...    (harness.training: features from the reference data, collected rows or a table; training, ONNX export)
    export-onnx ...  (harness.training: rewrite the ONNX models and cards from the last training's checkpoints)
"""
from __future__ import annotations

import importlib
import sys
from typing import List, Optional

USAGE = __doc__.strip()


def _training(name: str, argv: List[str]) -> int:
    try:
        cli = importlib.import_module("harness.training.cli")
    except ModuleNotFoundError as error:
        if error.name and (error.name == "harness.training" or error.name.startswith("harness.training")):
            print(f"python3 -m harness {name}: this copy of the harness has no training pipeline (harness/training/cli.py is missing)", file=sys.stderr)
            return 2
        raise
    entry = getattr(cli, f"main_{name.replace('-', '_')}", None)
    if entry is None:
        print(f"python3 -m harness {name}: harness.training.cli has no main_{name.replace('-', '_')}(argv)", file=sys.stderr)
        return 2
    return int(entry(argv) or 0)


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "collect":
        from .collect import main as collect

        return collect(rest)
    if command == "measure":
        from .measure import main as measure

        return measure(rest)
    if command in ("export", "train", "export-onnx"):
        return _training(command, rest)
    print(f"python3 -m harness: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
