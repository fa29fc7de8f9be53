"""Per-atom calibration of similarities into membership probabilities."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.compose.calibration import atom_thresholds, calibrate


def test_threshold_is_the_score_at_the_rank_and_maps_to_one_half():
    neighbours = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.4, 0.3, 0.2]])
    th = atom_thresholds(neighbours, 2)
    np.testing.assert_allclose(th, [0.8, 0.4])
    p = calibrate(np.array([[0.8, 0.9, 0.5], [0.4, 0.1, 0.6]]), th, 0.05)
    assert p[0, 0] == pytest.approx(0.5) and p[1, 0] == pytest.approx(0.5)
    assert p[0, 1] > 0.5 > p[0, 2]
    assert p[1, 2] > 0.5 > p[1, 1]


def test_rank_is_clipped_to_the_depth_and_bad_input_is_refused():
    neighbours = np.array([[0.9, 0.8]])
    assert atom_thresholds(neighbours, 50)[0] == pytest.approx(0.8)
    assert atom_thresholds(neighbours, 0)[0] == pytest.approx(0.9)
    with pytest.raises(ValueError):
        atom_thresholds(np.zeros((1, 0)), 1)
    with pytest.raises(ValueError, match="temperature"):
        calibrate(neighbours, np.array([0.5]), 0.0)


def test_calibration_is_monotone_and_saturates_without_overflow():
    th = np.array([0.0])
    s = np.linspace(-5, 5, 101)[None, :]
    p = calibrate(s, th, 1e-4)
    assert np.all(np.diff(p[0]) >= 0)
    assert p[0, 0] == pytest.approx(0.0) and p[0, -1] == pytest.approx(1.0)
