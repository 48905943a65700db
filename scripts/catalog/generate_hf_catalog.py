#!/work/venvs/hf/bin/python
"""Generates the Hugging Face transformers part of the catalog and its test vectors from the library itself.

    /work/venvs/hf/bin/python scripts/catalog/generate_hf_catalog.py           # (re)write the data and the vectors
    /work/venvs/hf/bin/python scripts/catalog/generate_hf_catalog.py --check   # write nothing; exit 1 if anything is stale

It needs transformers==5.18.0 and torch==2.13.0 (the package index's build; it runs on the CPU),
pinned with their dependencies in scripts/catalog/requirements-hf.txt. The repository's own Python
(Debian's torch 1.13) cannot run transformers 5, so the environment is a separate venv:

    python3 -m venv /work/venvs/hf
    /work/venvs/hf/bin/pip install -r scripts/catalog/requirements-hf.txt

It writes:

* src/core/catalog/hf/llamaStyle.json: the LLaMA-style decoders (llama, mistral, qwen2, gemma) as
  the library defines them (hf_llama_style.py), which src/core/catalog/hf/models/llama.ts builds;
* test/unit/core/catalog/hf/expected-tables.json: for every case of hf_cases.py, the layer table
  harness/layer_table.py records (module rows), the parameter count and the config values the
  library resolved; test/unit/core/catalog/hf/library.unit.test.ts compares the catalog with it.

Before writing it checks every checkpoint of src/core/catalog/hf/checkpoints.json that names a
published parameter count (`published`): the library's count from the recorded config must equal
it exactly, or the script stops. Output is deterministic; --check compares it with the files.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

import torch  # noqa: E402
import transformers  # noqa: E402

from scripts.catalog import hf_cases  # noqa: E402
from scripts.catalog.hf_llama_style import describe_all  # noqa: E402

LLAMA_STYLE_FILE = os.path.join(ROOT, "src", "core", "catalog", "hf", "llamaStyle.json")
VECTORS_FILE = os.path.join(ROOT, "test", "unit", "core", "catalog", "hf", "expected-tables.json")
PINNED = {"transformers": "5.18.0", "torch": "2.13.0"}


def check_published(cases):
    """Every checkpoint's published count against the library's count for the class it was published for."""
    by_id = {c["id"]: c for c in cases}
    for name, checkpoint in hf_cases.CHECKPOINTS.items():
        published = checkpoint.get("published")
        # The mixture-of-experts types are not recorded against the library (hf_cases.py builds no case of them):
        # their counts are checked against hand sums by test/unit/core/estimators/moe.unit.test.ts.
        if not published or checkpoint["modelType"] not in hf_cases.CLASSES:
            continue
        case = by_id.get(f"full/{name}/{published['className']}")
        if case is None:
            raise SystemExit(f"{name}: no case builds {published['className']}")
        # `plus`: what the publisher's model holds beyond the class (KerasHub's ELECTRA backbone has a pooler).
        if case["params"] + published.get("plus", 0) != published["params"]:
            raise SystemExit(f"{name}: the library counts {case['params']:,} parameters for {published['className']} "
                             f"(+ {published.get('plus', 0):,}), the published figure is {published['params']:,} ({published['source']})")


def vectors_text(cases):
    lines = ['{"transformers": %s, "torch": %s, "script": %s, "cases": [' % (
        json.dumps(transformers.__version__), json.dumps(torch.__version__.split("+")[0]),
        json.dumps("scripts/catalog/generate_hf_catalog.py"))]
    for i, case in enumerate(cases):
        lines.append(json.dumps(case, sort_keys=True) + ("," if i + 1 < len(cases) else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is stale")
    args = parser.parse_args()
    versions = {"transformers": transformers.__version__, "torch": torch.__version__.split("+")[0]}
    if versions != PINNED:
        raise SystemExit(f"needs {PINNED}, found {versions}: pip install -r scripts/catalog/requirements-hf.txt")
    transformers.logging.set_verbosity_error()
    # It only warns, and on the meta device its check (`pad_token_id in input_ids`) cannot run.
    transformers.PreTrainedModel.warn_if_padding_and_no_attention_mask = lambda self, input_ids, attention_mask: None

    described = describe_all()
    hf_cases.add_llama_style(described)
    cases = [hf_cases.run_case(case) for case in hf_cases.cases()]
    check_published(cases)
    outputs = {LLAMA_STYLE_FILE: json.dumps(described, indent=1, sort_keys=True) + "\n", VECTORS_FILE: vectors_text(cases)}
    stale = []
    for path, text in outputs.items():
        current = open(path).read() if os.path.exists(path) else None
        if current == text:
            continue
        stale.append(os.path.relpath(path, ROOT))
        if not args.check:
            with open(path, "w") as f:
                f.write(text)
    if args.check:
        print("stale: " + ", ".join(stale) if stale else "up to date")
        sys.exit(1 if stale else 0)
    print(f"{len(cases)} cases; wrote " + (", ".join(stale) if stale else "nothing (up to date)"))


if __name__ == "__main__":
    main()
