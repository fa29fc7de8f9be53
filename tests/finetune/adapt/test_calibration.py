"""Isotonic calibration: the pool-adjacent-violators fit against scikit-learn's."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.finetune.adapt.calibration import (
    Calibration,
    brier,
    expected_calibration_error,
    isotonic_fit,
)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_isotonic_fit_matches_scikit_learn(seed):
    sklearn = pytest.importorskip("sklearn.isotonic")
    rng = np.random.default_rng(seed)
    x = np.round(rng.random(300), 2)  # ties on purpose
    y = (rng.random(300) < x).astype(float)
    kx, ky = isotonic_fit(x, y)
    assert np.all(np.diff(kx) > 0)
    assert np.all(np.diff(ky) >= 0)
    want = sklearn.IsotonicRegression(out_of_bounds="clip").fit(x, y).predict(x)
    got = np.interp(x, kx, ky)
    # At the observed inputs both are the same step function.
    for value in np.unique(x):
        assert got[x == value][0] == pytest.approx(want[x == value][0], abs=1e-9)


def test_isotonic_fit_repairs_a_violation_by_pooling():
    kx, ky = isotonic_fit([0.1, 0.2, 0.3], [0.0, 1.0, 0.0])
    assert kx.tolist() == [0.1, 0.2, 0.3]
    assert ky.tolist() == [0.0, 0.5, 0.5]


def test_isotonic_fit_refuses_bad_input():
    with pytest.raises(ValueError):
        isotonic_fit([], [])
    with pytest.raises(ValueError):
        isotonic_fit([0.1, 0.2], [1.0])


def test_calibration_map_and_scores():
    cal = Calibration(np.array([0.2, 0.8]), np.array([0.1, 0.9]), {}, {})
    assert cal(np.array([0.0, 0.5, 1.0])).tolist() == pytest.approx([0.1, 0.5, 0.9])
    y = np.array([0.0, 1.0, 1.0, 0.0])
    assert brier(y, y) == 0.0
    assert expected_calibration_error(np.array([0.9, 0.9, 0.1, 0.1]), y) == pytest.approx(0.4)
