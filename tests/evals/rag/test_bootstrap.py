"""Paired bootstrap: against scipy.stats.bootstrap, a slow loop, and known cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from logic_rag.evals.rag import bootstrap as bootstrap_module
from logic_rag.evals.rag.bootstrap import PairedDifference, paired_bootstrap


def _scores(n: int, shift: float, seed: int) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    item = rng.normal(3.0, 1.0, size=n)  # shared per-item difficulty
    a = item + rng.normal(0.0, 0.3, size=n)
    b = item + shift + rng.normal(0.0, 0.3, size=n)
    return a.tolist(), b.tolist()


def test_agrees_with_scipy_paired_percentile() -> None:
    a, b = _scores(150, 0.1, seed=1)
    ours = paired_bootstrap(a, b, n_boot=20000, confidence=0.9, seed=3)
    ref = stats.bootstrap(
        (np.asarray(a), np.asarray(b)),
        lambda x, y, axis: np.mean(y - x, axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=20000,
        confidence_level=0.9,
        random_state=np.random.default_rng(7),
    )
    se = ref.standard_error
    assert ours.diff == pytest.approx(float(np.mean(np.subtract(b, a))))
    # different random streams: the interval ends agree to a small share of a standard error
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.1 * se)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.1 * se)


def test_matches_slow_loop_reference() -> None:
    a, b = _scores(40, 0.05, seed=2)
    res = paired_bootstrap(a, b, n_boot=500, confidence=0.95, seed=11)
    rng = np.random.default_rng(11)
    d = np.subtract(b, a)
    means = []
    for _ in range(500):
        idx = rng.integers(0, len(d), size=len(d))
        means.append(sum(d[i] for i in idx) / len(d))
    low, high = np.percentile(means, [2.5, 97.5])
    below = sum(m <= 0 for m in means)
    above = sum(m >= 0 for m in means)
    p = min(1.0, 2 * (min(below, above) + 1) / 501)
    assert (res.low, res.high) == (pytest.approx(low), pytest.approx(high))
    assert res.p_value == pytest.approx(p)


def test_blocked_resampling_equals_unblocked(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _scores(30, 0.0, seed=4)
    whole = paired_bootstrap(a, b, n_boot=300, seed=5)
    monkeypatch.setattr(bootstrap_module, "_BLOCK_ELEMENTS", 7 * 30)  # 7 resamples a block
    assert paired_bootstrap(a, b, n_boot=300, seed=5) == whole


def test_identical_inputs_give_zero_difference() -> None:
    a, _ = _scores(50, 0.0, seed=5)
    res = paired_bootstrap(a, list(a), n_boot=1000)
    assert res.diff == 0.0 and res.low == 0.0 and res.high == 0.0
    assert res.low <= 0.0 <= res.high
    assert res.p_value == 1.0


def test_clear_shift_excludes_zero() -> None:
    a, b = _scores(80, 0.5, seed=6)
    res = paired_bootstrap(a, b, n_boot=2000)
    assert res.low > 0.0 and res.high > res.low
    assert res.p_value == pytest.approx(2 / 2001)  # no resample reached 0
    assert res.mean_b - res.mean_a == pytest.approx(res.diff)
    flipped = paired_bootstrap(b, a, n_boot=2000)
    assert flipped.high < 0.0


def test_no_shift_gives_large_p_and_interval_around_zero() -> None:
    a, b = _scores(200, 0.0, seed=8)
    res = paired_bootstrap(a, b, n_boot=2000)
    assert res.low < 0.0 < res.high
    assert res.p_value > 0.05


def test_missing_scores_are_dropped_and_counted() -> None:
    a = [1.0, None, 3.0, 4.0, float("nan"), 2.0]
    b = [2.0, 5.0, None, 5.0, 1.0, 3.0]
    res = paired_bootstrap(a, b, n_boot=200)
    assert isinstance(res, PairedDifference)
    assert (res.n, res.n_dropped, res.n_boot) == (3, 3, 200)
    assert res.mean_a == pytest.approx(7 / 3) and res.mean_b == pytest.approx(10 / 3)
    assert res.diff == pytest.approx(1.0) and res.low == res.high == pytest.approx(1.0)


def test_deterministic_given_seed() -> None:
    a, b = _scores(25, 0.1, seed=9)
    assert paired_bootstrap(a, b, seed=1) == paired_bootstrap(a, b, seed=1)
    assert paired_bootstrap(a, b, seed=1) != paired_bootstrap(a, b, seed=2)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="equal lengths"):
        paired_bootstrap([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="no pair"):
        paired_bootstrap([None, 1.0], [1.0, None])
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap([1.0], [1.0], confidence=1.0)
    with pytest.raises(ValueError, match="infinite"):
        paired_bootstrap([math.inf], [1.0])
