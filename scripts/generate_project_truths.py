#!/usr/bin/python3
"""Writes the parameter counts PyTorch gives for the models of the multi-file project fixtures.

    /usr/bin/python3 scripts/generate_project_truths.py           # (re)write test/fixtures/projects/truths.json
    /usr/bin/python3 scripts/generate_project_truths.py --check   # exit 1 if truths.json is stale

Needs Debian's /usr/bin/python3 with its torch 1.13 (`apt-get install python3-torch`); nothing
else is installed. For each entry of test/fixtures/projects/manifest.json it puts the project's
folders on sys.path as the script would have them (the script's folder first, then the project
root and any `sysPath` folders the entry names), runs the entry's `build` code in a fresh
namespace (it binds `model`), and counts `model.parameters()` the way PyTorch reports a model's
size (shared tensors once). Each project runs in its own interpreter, so one project's modules
(`model`, `models`, `utils`) never stand in for another's. The output depends only on the
fixtures, the manifest and the torch version.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = ROOT / "test" / "fixtures" / "projects"
MANIFEST = PROJECTS / "manifest.json"
TRUTHS = PROJECTS / "truths.json"

BUILD_ONE = r"""
import json, sys
sys.dont_write_bytecode = True
import torch
namespace = {}
exec(compile(sys.argv[1], "<build>", "exec"), namespace)
model = namespace["model"]
params = sum(p.numel() for p in model.parameters())
print(json.dumps({"params": params, "className": type(model).__name__, "torch": torch.__version__.split("+")[0]}))
"""


def build(entry: dict) -> dict:
    project = PROJECTS / entry["project"]
    script_dir = (project / entry["entry"]).parent
    paths = [str(script_dir), str(project)] + [str(project / extra) for extra in entry.get("sysPath", [])]
    code = "import sys\nsys.path[:0] = " + json.dumps(paths) + "\n" + BUILD_ONE
    result = subprocess.run([sys.executable, "-c", code, entry["build"]], cwd=script_dir, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{entry['project']}: the build failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if truths.json differs from what PyTorch gives now")
    args = parser.parse_args()
    manifest = json.loads(MANIFEST.read_text())
    truths = {"generatedBy": "scripts/generate_project_truths.py", "projects": {}}
    for entry in manifest["projects"]:
        built = build(entry)
        truths["torch"] = built.pop("torch")
        truths["projects"][entry["project"]] = {"entry": entry["entry"], "model": entry["model"], **built}
        print(f"{entry['project']:16} {built['className']:14} {built['params']:>12,}", file=sys.stderr)
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
