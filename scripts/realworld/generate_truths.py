#!/usr/bin/python3
"""Writes the parameter counts of the real-projects corpus (test/fixtures/realworld/) as PyTorch gives them.

    /usr/bin/python3 scripts/realworld/generate_truths.py           # (re)write test/fixtures/realworld/truths.json
    /usr/bin/python3 scripts/realworld/generate_truths.py --check   # exit 1 if truths.json is stale

Needs Debian's /usr/bin/python3 with its torch 1.13 and torchvision 0.14; nothing else. Every model
of test/fixtures/realworld/manifest.json names how its truth is obtained:

- "pytorch": the entry's `build` code runs in a fresh interpreter with the project's folders on
  sys.path as the script would have them (the entry's folder first, then the project root and any
  `sysPath` folders) and binds `model`; its parameters are counted the way PyTorch reports a
  model's size (shared tensors once). Lightning is not installed: scripts/realworld/pystubs/ is on
  sys.path after the project, with a LightningModule that is a plain nn.Module (as in Lightning),
  so a LightningModule's own layers are built and counted by PyTorch. `defs(path, **names)` runs
  the imports, classes, functions and literal constants of a script whose module level trains (so
  it cannot be imported), with `names` standing in for its argparse defaults.
- "formula": the model comes from a library that is not installed here (transformers); `build`
  binds `params` from the architecture's formula in this file (bert_for_sequence_classification,
  gpt2_lm_head), each checked below against the count the library publishes for a known
  checkpoint.

Batch size, optimizer and precision are not computed: the manifest states them per model, read
from the project's defaults by hand (each with the line that decides it in `why`).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
CORPUS = ROOT / "test" / "fixtures" / "realworld"
MANIFEST = CORPUS / "manifest.json"
TRUTHS = CORPUS / "truths.json"
STUBS = Path(__file__).resolve().parent / "pystubs"

HELPERS = r'''
import ast as _ast
import sys as _sys

_MISSING = ("transformers", "datasets", "accelerate", "hydra", "omegaconf", "torchaudio")


def defs(path, **names):
    """The imports, classes, functions and literal constants of the script at `path`, with `names` bound first."""
    tree = _ast.parse(open(path).read(), path)
    namespace = {"__name__": "__truths__", "__file__": path, **names}
    for node in tree.body:
        keep = False
        if isinstance(node, (_ast.Import, _ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, _ast.Import) else [node.module or ""]
            keep = not any(m.split(".")[0] in _MISSING for m in modules)
        elif isinstance(node, (_ast.ClassDef, _ast.FunctionDef)):
            keep = True
        elif isinstance(node, _ast.Assign) and all(isinstance(t, _ast.Name) and t.id not in names for t in node.targets):
            try:
                _ast.literal_eval(node.value)
                keep = True
            except ValueError:
                keep = False
        if keep:
            exec(compile(_ast.Module(body=[node], type_ignores=[]), path, "exec"), namespace)
    return namespace


def bert_for_sequence_classification(vocab_size=30522, hidden=768, layers=12, intermediate=3072, max_positions=512, type_vocab=2, num_labels=2):
    """BertForSequenceClassification: embeddings (+LayerNorm), encoder layers, pooler, classifier."""
    embeddings = vocab_size * hidden + max_positions * hidden + type_vocab * hidden + 2 * hidden
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden + (hidden * intermediate + intermediate) + (intermediate * hidden + hidden) + 2 * hidden
    pooler = hidden * hidden + hidden
    classifier = hidden * num_labels + num_labels
    return embeddings + layers * layer + pooler + classifier


def gpt2_lm_head(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_inner=None):
    """GPT2LMHeadModel: token and position embeddings, blocks, final LayerNorm; lm_head tied to wte."""
    inner = n_inner or 4 * n_embd
    block = 2 * n_embd + (n_embd * 3 * n_embd + 3 * n_embd) + (n_embd * n_embd + n_embd) + 2 * n_embd + (n_embd * inner + inner) + (inner * n_embd + n_embd)
    return vocab_size * n_embd + n_positions * n_embd + n_layer * block + 2 * n_embd


# The formulas against the counts the libraries publish for these checkpoints.
assert bert_for_sequence_classification() == 109483778, bert_for_sequence_classification()
assert gpt2_lm_head() == 124439808, gpt2_lm_head()
'''

BUILD_ONE = r"""
import json, sys
sys.dont_write_bytecode = True
import torch
namespace = {}
exec(compile(HELPERS, "<helpers>", "exec"), namespace)
exec(compile(BUILD, "<build>", "exec"), namespace)
if namespace.get("model") is not None:
    model = namespace["model"]
    params = sum(p.numel() for p in model.parameters())
    out = {"params": params, "builtClass": type(model).__name__}
else:
    out = {"params": int(namespace["params"])}
print(json.dumps({**out, "torch": torch.__version__.split("+")[0]}))
"""


def build(project: dict, model: dict) -> dict:
    folder = CORPUS / project["project"]
    script_dir = (folder / project["entry"]).parent
    paths = [str(script_dir), str(folder)] + [str(folder / extra) for extra in project.get("sysPath", [])] + [str(STUBS)]
    code = "import sys\nBUILD = sys.argv[1]\nsys.path[:0] = " + json.dumps(paths) + "\nsys.argv = [" + json.dumps(project["entry"]) + "]\nHELPERS = " + repr(HELPERS) + "\n" + BUILD_ONE
    result = subprocess.run([sys.executable, "-c", code, model["truth"]["build"]], cwd=script_dir, capture_output=True, text=True, check=False, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"{project['project']} / {model['name']}: the build failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if truths.json differs from what PyTorch gives now")
    parser.add_argument("--only", help="build only this project (prints, writes nothing)")
    args = parser.parse_args()
    manifest = json.loads(MANIFEST.read_text())
    truths = {"generatedBy": "scripts/realworld/generate_truths.py", "projects": {}}
    for project in manifest["projects"]:
        if args.only and project["project"] != args.only:
            continue
        entry = {}
        for model in project["models"]:
            built = build(project, model)
            truths["torch"] = built.pop("torch")
            if "builtClass" in built and built["builtClass"] != model["className"]:
                raise SystemExit(f"{project['project']} / {model['name']}: built a {built['builtClass']}, the manifest says {model['className']}")
            entry[model["name"]] = {"className": model["className"], "params": built["params"], "source": model["truth"]["source"]}
            print(f"{project['project']:22} {model['name']:12} {model['className']:30} {built['params']:>13,} {model['truth']['source']}", file=sys.stderr)
        truths["projects"][project["project"]] = entry
    if args.only:
        return 0
    text = json.dumps(truths, indent=2, sort_keys=True) + "\n"
    if args.check:
        if not TRUTHS.exists() or TRUTHS.read_text() != text:
            print(f"{TRUTHS.relative_to(ROOT)} is stale: run {Path(__file__).relative_to(ROOT)}", file=sys.stderr)
            return 1
        return 0
    TRUTHS.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
