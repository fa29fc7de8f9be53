"""Cascade thresholds: the fit against a slow reference, and the guarantee it states."""

from __future__ import annotations

import json

import numpy as np
import pytest

from logic_rag.verifiers.thresholds import (
    Band,
    CascadeSample,
    CascadeThresholds,
    fit_band,
    importance_sample,
    rate_lower_bound,
    rate_upper_bound,
)


def _slow_rate(flags, conditions, weights):
    """Weighted share of ``flags`` among ``conditions`` and its Kish size, by loops."""
    num = den = sq = 0.0
    for f, c, w in zip(flags, conditions, weights, strict=True):
        if c:
            den += w
            sq += w * w
            if f:
                num += w
    return (num / den if den else 0.0), (den * den / sq if sq else 0.0)


def _slow_band(s, y, w, *, positive, recall, precision, delta):
    """The band's definition, threshold by threshold, written as plainly as possible."""
    cuts = sorted(set(s.tolist()))
    yes = [v >= 0.5 for v in y]
    lo, hi = 0.0, float("inf")
    if positive:
        for t in cuts:
            rate, n = _slow_rate([v < t for v in s], yes, w)
            if rate_upper_bound(rate, n, delta) > 1 - recall:
                break
            lo = t
        for t in cuts:
            rate, n = _slow_rate(yes, [v >= t for v in s], w)
            if rate_lower_bound(rate, n, delta) >= precision:
                hi = t
                break
    else:
        for t in reversed(cuts):
            rate, n = _slow_rate([v >= t for v in s], [not b for b in yes], w)
            if rate_upper_bound(rate, n, delta) > 1 - recall:
                break
            hi = t
        for t in reversed(cuts):
            rate, n = _slow_rate([not b for b in yes], [v < t for v in s], w)
            if rate_lower_bound(rate, n, delta) >= precision:
                lo = t
                break
    return Band(lo, max(hi, lo))


def _population(rng, n=20000):
    """Cheap scores and the costly verifier's labels: members score higher, with noise."""
    member = rng.random(n) < 0.3
    score = np.clip(np.where(member, rng.beta(5, 2, n), rng.beta(2, 5, n)), 0, 1)
    return score, member.astype(float)


@pytest.mark.parametrize("positive", [True, False])
def test_fit_matches_the_slow_reference(positive):
    rng = np.random.default_rng(3)
    for trial in range(6):
        s, y = _population(rng, 400)
        idx, w = importance_sample(s, 150, rng)
        s, y = np.round(s[idx], 2), y[idx]  # ties on purpose
        for recall, precision, delta in ((0.9, 0.9, 0.1), (0.8, 0.95, 0.05), (0.99, 0.5, 0.2)):
            got = fit_band(
                s, y, w, positive=positive, recall=recall, precision=precision, delta=delta
            )
            want = _slow_band(
                s, y, w, positive=positive, recall=recall, precision=precision, delta=delta
            )
            assert got == want, (trial, recall, precision, got, want)


def test_bounds_are_clopper_pearson():
    from scipy.stats import beta

    assert rate_upper_bound(0.1, 50, 0.05) == pytest.approx(beta.ppf(0.95, 6, 45))
    assert rate_lower_bound(0.9, 50, 0.05) == pytest.approx(beta.ppf(0.05, 45, 6))
    assert rate_upper_bound(0.0, 0, 0.1) == 1.0 and rate_lower_bound(1.0, 0, 0.1) == 0.0


@pytest.mark.parametrize("positive", [True, False])
def test_the_stated_recall_holds_with_probability_one_minus_delta(positive):
    """Fit on importance samples of a population with known labels, then measure the
    kept share on the whole population: it misses the target in at most ~delta of fits."""
    rng = np.random.default_rng(7)
    score, label = _population(rng)
    truth = label >= 0.5
    recall, precision, delta = 0.9, 0.8, 0.1
    misses = precision_misses = 0
    fits = 150
    for _ in range(fits):
        idx, w = importance_sample(score, 300, rng)
        band = fit_band(
            score[idx],
            label[idx],
            w,
            positive=positive,
            recall=recall,
            precision=precision,
            delta=delta,
        )
        decided = band.decide(score)
        if positive:
            kept = (decided[truth] != 0).mean()  # true pairs not rejected
            accepted = decided == 1
            agree = truth[accepted].mean() if accepted.any() else 1.0
        else:
            kept = (decided[~truth] != 1).mean()  # false pairs not accepted
            rejected = decided == 0
            agree = (~truth[rejected]).mean() if rejected.any() else 1.0
        misses += kept < recall
        precision_misses += agree < precision
    assert misses / fits <= delta + 0.05
    assert precision_misses / fits <= delta + 0.05


def test_the_band_decides_something_when_the_sample_is_large():
    rng = np.random.default_rng(0)
    score, label = _population(rng)
    idx, w = importance_sample(score, 2000, rng)
    band = fit_band(score[idx], label[idx], w, positive=True, recall=0.9, precision=0.9, delta=0.1)
    decided = band.decide(score)
    assert 0 < (decided == -1).mean() < 0.9
    assert (decided == 0).any() and (decided == 1).any()


def test_too_few_labels_decide_nothing():
    band = fit_band(
        np.array([0.2, 0.8]),
        np.array([0.0, 1.0]),
        np.ones(2),
        positive=True,
        recall=0.95,
        precision=0.95,
        delta=0.05,
    )
    assert (band.decide(np.linspace(0, 1, 11)) == -1).all()


def test_importance_weights_make_unbiased_means():
    rng = np.random.default_rng(1)
    score = rng.random(5000) ** 3
    values = score * 2 + 1
    estimates = []
    for _ in range(200):
        idx, w = importance_sample(score, 200, rng)
        estimates.append((w * values[idx]).sum() / w.sum())
    assert np.mean(estimates) == pytest.approx(values.mean(), rel=0.02)


def test_save_and_load_round_trip_and_refuse_other_verifiers(tmp_path):
    sample = CascadeSample()
    for s, y in ((0.1, 0.0), (0.5, 0.3), (0.9, 1.0)):
        sample.add(s, y, 1.0, True)
    sample.add(0.7, 0.9, 2.0, False)
    fitted = CascadeThresholds(sample, {"expensive": "llm:a", "encoder": "m"})
    path = fitted.save(tmp_path / "cascade.json")
    loaded = CascadeThresholds.load(path, key={"expensive": "llm:a", "encoder": "m"})
    assert loaded.sample == sample
    for positive in (True, False):
        assert loaded.band(positive=positive, recall=0.9, precision=0.9, delta=0.1) == fitted.band(
            positive=positive, recall=0.9, precision=0.9, delta=0.1
        )
        np.testing.assert_allclose(
            loaded.expected(np.linspace(0, 1, 5), positive=positive),
            fitted.expected(np.linspace(0, 1, 5), positive=positive),
        )
    with pytest.raises(ValueError, match="fitted for another expensive"):
        CascadeThresholds.load(path, key={"expensive": "llm:b", "encoder": "m"})
    (tmp_path / "bad.json").write_text(json.dumps({"format": "nope"}))
    with pytest.raises(ValueError, match="not a cascade thresholds file"):
        CascadeThresholds.load(tmp_path / "bad.json")


def test_expected_verdicts_are_monotone_in_the_cheap_score():
    rng = np.random.default_rng(2)
    score, label = _population(rng, 3000)
    sample = CascadeSample()
    for s, y in zip(score[:500], label[:500], strict=True):
        sample.add(s, y, 1.0, True)
    curve = CascadeThresholds(sample).expected(np.linspace(0, 1, 50), positive=True)
    assert np.all(np.diff(curve) >= -1e-12) and curve[0] < 0.2 and curve[-1] > 0.8
