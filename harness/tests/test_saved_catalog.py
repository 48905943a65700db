"""The committed measurements of what autograd saves in the catalog models' forward
(src/core/catalog/data/timmSaved.json, torchvisionSaved.json) are what the scripts measure today:
`--check` re-measures and compares. The timm one runs in the timm venv (see test_timm_catalog.py)."""
import subprocess
import sys
from pathlib import Path

import pytest

from harness.tests.test_timm_catalog import TIMM_PYTHON

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts" / "catalog"


@pytest.mark.skipif(not TIMM_PYTHON.exists(), reason=f"no timm venv at {TIMM_PYTHON} (scripts/catalog/requirements-timm.txt)")
def test_timm_saved_activations_are_as_committed():
    result = subprocess.run([str(TIMM_PYTHON), str(SCRIPTS / "timm_saved.py"), "--check"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 of 6 models as committed" in result.stdout


def test_torchvision_saved_activations_are_as_committed():
    pytest.importorskip("torchvision")
    result = subprocess.run([sys.executable, str(SCRIPTS / "torchvision_saved.py"), "--check"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
