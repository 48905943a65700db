#!/usr/bin/python3
"""Does training on the dry-run labelled rows improve the real-model estimator? (issue 19, item 5)

    npm run label:dry-run && npm run compile-tests && node out/scripts/realModel/dumpSamples.js
    /usr/bin/python3 scripts/labeller/compare_with_dry_run.py [--share 0.1 0.25]

Interpreter: Debian's /usr/bin/python3 with python3-numpy (fit.py's). Reads the measured runs'
samples (build/real-model/samples-<the shipped fit's optimizer>.csv) and the labeller's rows
(build/real-model/dry-run-rows.csv). Fits the shipped model (fit.py: the same terms, the shipped
point and range quantiles, the physical floor) with and without the dry-run rows, and scores:
- the measured runs out of sample, by fit.py's grouped 5-fold cross-validation (folds by sha256
  of the model name); the dry-run rows of the test fold's models are left out of its training too;
- the dry-run rows against their labels: out of fold (the same folds: an architecture's batch
  sizes and sequence lengths on one side), and leaving each labelled family out (a language-model
  family, the torchvision classifiers, one realworld project never seen in training).
The dry-run rows weigh --share times the timm runs' total weight (the synthetic runs weigh 0.25).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "realModel"))
import fit  # noqa: E402

ROWS = fit.SAMPLES / "dry-run-rows.csv"


def combined(base: Dict[str, object], extra: Dict[str, object]) -> Dict[str, object]:
    assert list(base["features"]) == list(extra["features"]), "the dry-run rows' features are not the samples' schema"
    return {key: (base[key] if key == "features" else np.concatenate([base[key], extra[key]])) for key in base}


def predictions(data: Dict[str, object], train: np.ndarray, folds: np.ndarray, quantiles: Sequence[float], points: Sequence[float], model_terms) -> Dict[float, np.ndarray]:
    """Out-of-fold predictions for every row; only rows in `train` (and outside the test fold) are fitted. `points`: the quantiles held at the point's floor."""
    x = fit.expand(data["x"], model_terms)
    y = np.log(data["measured"])
    w = data["weight"]
    out = {q: np.zeros(len(y)) for q in quantiles}
    for fold in np.unique(folds):
        test = folds == fold
        start = None
        for q in sorted(quantiles, key=lambda q: abs(q - 0.5)):
            beta = fit.fit_quantile(x[train & ~test], y[train & ~test], w[train & ~test], q, start)
            start = beta
            out[q][test] = x[test] @ beta
    return fit.floored(out, data["x"], data["features"], points)


def point_of(data: Dict[str, object], cv: Dict[float, np.ndarray], point_q: float, rows_alone_q: float) -> np.ndarray:
    """Each row's point as the estimator picks it: a catalog model's quantile, or a model read from source's."""
    measured_share = data["x"][:, list(data["features"]).index("measuredShare")]
    return np.exp(np.where(measured_share >= fit.MEASURED, cv[point_q], cv[rows_alone_q]))


def cell(measured: np.ndarray, point: np.ndarray, mask: np.ndarray, low: np.ndarray | None = None, high: np.ndarray | None = None) -> str:
    if not mask.any():
        return "-"
    s = fit.summary(measured[mask], point[mask], None if low is None else low[mask], None if high is None else high[mask])
    text = f"{100 * s['medianAbsError']:.1f}% / {100 * s['underBy10']:.1f}%"
    return text + (f" / {100 * s['rangeCoverage']:.1f}%" if "rangeCoverage" in s else "")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--share", type=float, nargs="+", default=[0.1, 0.25])
    args = parser.parse_args()
    shipped = json.loads(fit.COEFFICIENTS.read_text())
    optimizer = shipped["trainedOn"]["timmAssumed"]["optimizer"]
    point_q, rows_alone_q = shipped["pointQuantile"], shipped["pointQuantileRowsAlone"]
    low_q, high_q = shipped["rangeQuantiles"]
    quantiles = sorted({point_q, rows_alone_q, low_q, high_q})
    base = fit.load(optimizer)
    extra = fit.load_csv(ROWS)
    data = combined(base, extra)
    model_terms = fit.terms(len(data["features"]))
    case, group, family = data["case"], data["group"], data["family"]
    dry = case == "dry-run"
    timm_weight = float(data["weight"][(case == "catalog") | (case == "table")].sum())
    folds = np.array([fit.grouped_fold(m) for m in data["model"]])
    measured = data["measured"]
    print(f"{int((case == 'catalog').sum())} timm runs, {int((case == 'synthetic').sum())} synthetic runs, {int(dry.sum())} dry-run rows of {len(set(data['model'][dry]))} architectures; assumed optimizer {optimizer}, quantiles {quantiles}", flush=True)

    columns: List[str] = []
    results: List[Dict[str, np.ndarray]] = []
    lofo_points: List[np.ndarray] = []

    def run(name: str, share: float | None) -> None:
        weight = data["weight"].copy()
        if share is not None:
            weight[dry] = share * timm_weight / dry.sum()
        variant = {**data, "weight": weight}
        train = ~dry if share is None else np.ones(len(dry), dtype=bool)
        print(f"fitting: {name} ...", flush=True)
        cv = predictions(variant, train, folds, quantiles, (point_q, rows_alone_q), model_terms)
        results.append(cv)
        columns.append(name)
        # Leave each labelled family out: its rows are predicted by a fit that never saw the family.
        lofo = point_of(data, cv, point_q, rows_alone_q).copy()
        if share is not None:
            for held in sorted(set(family[dry])):
                out = family == held
                x = fit.expand(data["x"], model_terms)
                fitted = {}
                for q in (point_q, rows_alone_q):
                    beta = fit.fit_quantile(x[~out], np.log(measured[~out]), weight[~out], q)
                    fitted[q] = x[out] @ beta
                fitted = fit.floored(fitted, data["x"][out], data["features"], (point_q, rows_alone_q))
                share_measured = data["x"][out][:, list(data["features"]).index("measuredShare")]
                lofo[out] = np.exp(np.where(share_measured >= fit.MEASURED, fitted[point_q], fitted[rows_alone_q]))
        lofo_points.append(lofo)

    run("without dry-run rows", None)
    for share in args.share:
        run(f"with dry-run rows (share {share})", share)

    print("\nEach cell: median absolute error / under by more than 10% [/ range holds]. Measured runs: fit.py's grouped 5-fold CV.")
    print("Dry-run rows: error against the dry run's label; out of fold (grouped CV) and, after the bar, leaving the row's family out.\n")
    print("| rows | n | " + " | ".join(columns) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in columns) + " |")
    measured_rows = [("timm runs, catalog (ours)", case == "catalog", point_q), ("timm runs, rows alone", case == "table", rows_alone_q)]
    for g in fit.GROUPS:
        measured_rows.append((f"timm {g}, catalog", (case == "catalog") & (group == g), point_q))
    for g in fit.SYNTHETIC_GROUPS:
        measured_rows.append((f"GPUMemNet {g}", (case == "synthetic") & (group == g), rows_alone_q))
    for label, mask, q in measured_rows:
        print(f"| {label} | {int(mask.sum())} | " + " | ".join(cell(measured, np.exp(cv[q]), mask, np.exp(cv[low_q]), np.exp(cv[high_q])) for cv in results) + " |")
    for g in ["all"] + sorted(set(group[dry])):
        mask = dry & ((group == g) if g != "all" else True)
        label = "dry-run rows, all" if g == "all" else g
        cells = []
        for cv, lofo in zip(results, lofo_points):
            cells.append(f"{cell(measured, point_of(data, cv, point_q, rows_alone_q), mask)} \\| {cell(measured, lofo, mask)}")
        print(f"| {label} | {int(mask.sum())} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
