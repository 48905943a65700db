"""The labeller's comparison (scripts/labeller/compare_with_dry_run.py): dry-run rows join the
measured samples only in the same schema, each row's point is the quantile its case gets, and a
row is never predicted by a fit that saw its fold."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts" / "realModel"))
SPEC = importlib.util.spec_from_file_location("compare_with_dry_run", ROOT / "scripts" / "labeller" / "compare_with_dry_run.py")
compare = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(compare)
fit = compare.fit

FEATURES = ["bias", "logPhysicalMiB", "measuredShare"]


def write_samples(path: Path, rows):
    header = ["model", "family", "group", "case", "batch", "measured_mib", "weight", "faketensor_mib", "analytical_mib", "horus_mib", *FEATURES]
    path.write_text("\n".join([",".join(header), *(",".join(str(v) for v in row) for row in rows)]) + "\n")


def test_rows_files_load_and_combine_in_one_schema(tmp_path):
    write_samples(tmp_path / "a.csv", [["m1", "f", "ConvNets", "catalog", 8, 2000, 0.5, 1000, 1900, 1800, 1, 7.5, 1]])
    write_samples(tmp_path / "b.csv", [["labeller/gpt", "labeller-gpt", "dry-run GPT", "dry-run", 4, 3000, 1, "", 2500, 2400, 1, 7.9, 0]])
    both = compare.combined(fit.load_csv(tmp_path / "a.csv"), fit.load_csv(tmp_path / "b.csv"))
    assert both["case"].tolist() == ["catalog", "dry-run"]
    assert both["measured"].tolist() == [2000, 3000]
    assert np.isnan(both["fake"][1])
    other = fit.load_csv(tmp_path / "b.csv")
    other["features"] = ["bias", "logPhysicalMiB", "somethingElse"]
    with pytest.raises(AssertionError):
        compare.combined(fit.load_csv(tmp_path / "a.csv"), other)


def test_each_row_gets_the_point_of_its_case():
    data = {"features": FEATURES, "x": np.array([[1, 7.0, 1.0], [1, 7.0, 0.0]])}
    cv = {0.9: np.log(np.array([110.0, 110.0])), 0.75: np.log(np.array([90.0, 90.0]))}
    assert compare.point_of(data, cv, 0.9, 0.75).round(6).tolist() == [110.0, 90.0]


def test_out_of_fold_predictions_never_see_their_fold_and_train_only_on_the_chosen_rows():
    rng = np.random.default_rng(3)
    n = 400
    x = np.stack([np.ones(n), rng.uniform(6, 9, n), np.zeros(n)], axis=1)
    measured = np.exp(x[:, 1] + 0.05)
    folds = np.arange(n) % 5
    data = {"features": FEATURES, "x": x, "measured": measured, "weight": np.ones(n)}
    train = np.ones(n, dtype=bool)
    poisoned = measured.copy()
    poisoned[folds == 0] *= 100  # a fold's labels must not reach its own predictions
    out = compare.predictions({**data, "measured": poisoned}, train, folds, [0.5], [0.5], fit.terms(3))
    assert np.allclose(np.exp(out[0.5][folds == 0]), measured[folds == 0], rtol=1e-3)
    # Rows outside `train` are predicted but never fitted (the "without dry-run rows" column).
    train_without = folds != 1
    out = compare.predictions({**data, "measured": np.where(folds == 1, measured * 100, measured)}, train_without, folds, [0.5], [0.5], fit.terms(3))
    assert np.allclose(np.exp(out[0.5][folds == 1]), measured[folds == 1], rtol=1e-3)
