"""What an unchecked (atom, page) pair may still turn out to be, before the costly verifier
answers it: the bounds that certified top-k verification reasons with.

* :class:`HardBounds`: ``[0, 1]`` for every unchecked pair, no risk. A top k certified
  with them is exactly the top k that checking every pair of the pool would give.
* :class:`CalibratedBounds`: fitted on pairs the costly verifier labelled (the sample that
  ``logic-rag fit-cascade`` saves). The cheap scores are cut into quantile bins; in each
  bin the upper bound ``hi`` is the smallest cap in :data:`CAPS` such that the costly
  verifier's probability exceeds it at a rate whose one-sided Clopper-Pearson upper bound
  (importance-weighted, Kish effective size) is at most ``pair_risk``; the lower bound is
  the mirror image. That bound is the pair's *risk* on that side. Every bin and cap is
  tested, so the bounds hold jointly with probability at least ``1 - fit_delta`` (a
  Bonferroni split). Given they hold, a top k certified while relying on calibrated
  bounds differs from the all-pairs top k with probability at most the sum of the risks
  relied on (a union bound over pairs, no independence assumed); the stage stops only
  when that sum is within its budget.

The point estimate of an unchecked pair (what the ranking uses when the budget runs out,
and where the bounds allow it) is the costly verifier's expected probability given the
cheap score (the isotonic fit of the same sample), clipped into the bounds; with hard
bounds it is the cheap probability itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from logic_rag.verifiers.thresholds import CascadeThresholds, rate_upper_bound

__all__ = ["PairBounds", "HardBounds", "CalibratedBounds", "CAPS"]

#: Candidate caps (and, mirrored, floors) for a bin's bounds, in probability units.
CAPS = (0.05, 0.2, 0.5)


@dataclass(frozen=True)
class PairBounds:
    """Bounds per unchecked pair: ``lo``, ``hi``, the risk of each side, the point estimate."""

    lo: np.ndarray
    hi: np.ndarray
    risk_lo: np.ndarray
    risk_hi: np.ndarray
    estimate: np.ndarray


class HardBounds:
    """``[0, 1]`` for every unchecked pair (exact certification)."""

    kind = "hard"

    def bounds(self, cheap: np.ndarray, *, positive: bool) -> PairBounds:
        cheap = np.asarray(cheap, dtype=np.float64)
        zeros = np.zeros(cheap.shape)
        return PairBounds(zeros, np.ones(cheap.shape), zeros, zeros, np.clip(cheap, 0.0, 1.0))


@dataclass
class _Bin:
    edge_hi: float  # the bin holds cheap scores below this (the last one: all above)
    hi: float
    risk_hi: float
    lo: float
    risk_lo: float


@dataclass
class CalibratedBounds:
    """Bounds fitted from a labelled sample (see the module doc).

    Attributes:
        thresholds: the labelled sample (cheap score, costly probability, weight, polarity).
        pair_risk: the largest per-pair risk a calibrated bound may carry.
        fit_delta: the probability that some bin's bound is wrong.
        bins: quantile bins of the cheap score per polarity.
    """

    thresholds: CascadeThresholds
    pair_risk: float = 0.05
    fit_delta: float = 0.05
    bins: int = 8
    kind: str = field(default="calibrated", init=False)
    _fitted: dict[bool, list[_Bin]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0.0 < self.pair_risk < 1.0:
            raise ValueError("pair_risk must be in (0, 1)")
        if not 0.0 < self.fit_delta < 1.0:
            raise ValueError("fit_delta must be in (0, 1)")
        if self.bins < 1:
            raise ValueError("bins must be >= 1")

    def _bins(self, positive: bool) -> list[_Bin]:
        if positive in self._fitted:
            return self._fitted[positive]
        s, y, w = self.thresholds.sample.arrays(positive)
        out: list[_Bin] = []
        if len(s):
            n_bins = max(1, min(self.bins, len(s) // 20))
            edges = np.unique(np.quantile(s, np.linspace(0, 1, n_bins + 1)[1:-1]))
            # Every (bin, cap, side) is one test: Bonferroni over all of them.
            tests = (len(edges) + 1) * len(CAPS) * 2
            delta = self.fit_delta / tests
            lower = -math.inf
            for upper in [*edges.tolist(), math.inf]:
                inside = (s >= lower) & (s < upper)
                out.append(self._fit_bin(y[inside], w[inside], upper, delta))
                lower = upper
        self._fitted[positive] = out
        return out

    def _fit_bin(self, y: np.ndarray, w: np.ndarray, upper: float, delta: float) -> _Bin:
        total = w.sum()
        n_eff = float(total * total / (w * w).sum()) if total > 0 else 0.0
        hi, risk_hi, lo, risk_lo = 1.0, 0.0, 0.0, 0.0
        for cap in CAPS:  # smallest cap that is exceeded rarely enough
            rate = float(w[y > cap].sum() / total) if total > 0 else 1.0
            bound = rate_upper_bound(rate, n_eff, delta)
            if bound <= self.pair_risk:
                hi, risk_hi = cap, bound
                break
        for floor in sorted((1.0 - c for c in CAPS), reverse=True):  # largest floor
            rate = float(w[y < floor].sum() / total) if total > 0 else 1.0
            bound = rate_upper_bound(rate, n_eff, delta)
            if bound <= self.pair_risk:
                lo, risk_lo = floor, bound
                break
        return _Bin(upper, hi, risk_hi, min(lo, hi), risk_lo)

    def bounds(self, cheap: np.ndarray, *, positive: bool) -> PairBounds:
        cheap = np.asarray(cheap, dtype=np.float64)
        fitted = self._bins(positive)
        if not fitted:
            return HardBounds().bounds(cheap, positive=positive)
        edges = np.array([b.edge_hi for b in fitted[:-1]])
        at = np.searchsorted(edges, cheap, side="right")
        pick = np.array([[b.lo, b.hi, b.risk_lo, b.risk_hi] for b in fitted])[at]
        lo, hi = pick[..., 0], pick[..., 1]
        estimate = np.clip(self.thresholds.expected(cheap, positive=positive), lo, hi)
        return PairBounds(lo, hi, pick[..., 2], pick[..., 3], estimate)
