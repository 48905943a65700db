"""The real-model estimator's fit (scripts/realModel/fit.py): the quantile regression finds known
quantiles, and the committed coefficients give the committed shared vectors (TypeScript checks
the same vectors in test/unit/core/estimators/realModel.unit.test.ts)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
SPEC = importlib.util.spec_from_file_location("real_model_fit", ROOT / "scripts" / "realModel" / "fit.py")
fit = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(fit)


def test_quantile_regression_recovers_the_quantiles_of_a_known_linear_model():
    rng = np.random.default_rng(7)
    x1 = rng.uniform(0, 10, 4000)
    noise = rng.uniform(-1, 1, 4000)  # uniform: the q-quantile of the noise is 2q - 1
    y = 3 + 0.5 * x1 + noise
    x = np.stack([np.ones_like(x1), x1], axis=1)
    for tau in (0.1, 0.5, 0.9):
        beta = fit.fit_quantile(x, y, np.ones_like(y), tau)
        assert abs(beta[0] - (3 + 2 * tau - 1)) < 0.08
        assert abs(beta[1] - 0.5) < 0.01


def test_terms_are_the_features_and_their_pairwise_products_without_the_bias():
    assert fit.terms(3) == [[0], [1], [2], [1, 1], [1, 2], [2, 2]]
    x = np.array([[1.0, 2.0, 3.0]])
    assert fit.expand(x, fit.terms(3)).tolist() == [[1.0, 2.0, 3.0, 4.0, 6.0, 9.0]]


def test_the_committed_coefficients_give_the_shared_vectors():
    coefficients = json.loads(fit.COEFFICIENTS.read_text())
    cases = json.loads(fit.VECTORS.read_text())["cases"]
    assert len(cases) >= 10
    assert coefficients["terms"] == fit.terms(len(coefficients["features"]))
    for case in cases:
        predicted = fit.predict(coefficients, np.array(case["features"]))
        for side in ("low", "point", "high"):
            assert abs(predicted[side] - case[side]) <= 1e-9 * case[side]
