"""Cascade thresholds: when may the cheap verifier's verdict stand in for the costly one's?

A cascade scores every (atom, page) pair with a cheap verifier (score ``s`` in [0, 1])
and asks the costly one (an LLM) only inside a band ``lo <= s < hi``: below ``lo`` the pair
is called false, at or above ``hi`` true. The band is fitted on a small sample of pairs
that the costly verifier labelled, drawn by importance sampling (probability mixing
``sqrt(s)`` with uniform, so the rare high-scoring pairs are seen; each draw weighted by
``1 / q``), the method of LOTUS' ``sem_filter`` (Patel et al.), written anew here.

What a band guarantees, relative to asking the costly verifier about every pair, with
probability at least ``1 - delta`` over the sample (Clopper-Pearson bounds on the
importance-weighted rates, at the Kish effective sample size):

* a **positive** atom keeps at least ``recall`` of the pairs the costly verifier calls
  true (``lo`` is the largest threshold whose upper bound on the lost share is
  ``<= 1 - recall``), and the pairs it accepts are true at a rate of at least
  ``precision`` (``hi`` is the smallest threshold whose lower bound clears it);
* a **negated** atom is the mirror image (NOT swaps false positives and false
  negatives): it keeps ``recall`` of the pairs the costly verifier calls *false* (that
  sets ``hi``), and the pairs it rejects are false at a rate of at least ``precision``
  (that sets ``lo``).

The per-atom ``recall`` comes from the query's own target split over its logic
(:func:`logic_rag.compose.kleene.atom_requirements`). Like LOTUS, the threshold search
looks at every candidate threshold without a multiple-testing correction; the guarantee
is per pair population (pairs like the sample's), not per query, and the tests measure how
often it holds.

Decided pairs take the costly verifier's *expected* verdict given their cheap score (an
isotonic fit on the same sample), so decided and asked pairs share one scale.

A fitted sample is saved as JSON (no pickle) and reused for a corpus and model pair.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.verifiers.base import Verifier

__all__ = [
    "Band",
    "CascadeSample",
    "CascadeThresholds",
    "importance_sample",
    "thresholds_key",
    "fit_band",
    "rate_upper_bound",
    "rate_lower_bound",
]

FORMAT_VERSION = 1
#: The largest importance weight a saved sample may hold: inverse sampling probabilities
#: stay far below it, and 1e308 overflowed the effective sample size (issue 51 item 14).
MAX_WEIGHT = 1e12


@dataclass(frozen=True)
class Band:
    """``s < lo``: false; ``s >= hi``: true; in between: ask the costly verifier."""

    lo: float
    hi: float

    def decide(self, scores: np.ndarray) -> np.ndarray:
        """1 true, 0 false, -1 undecided (ask), per score."""
        s = np.asarray(scores, dtype=np.float64)
        out = np.full(s.shape, -1, dtype=np.int8)
        out[s < self.lo] = 0
        out[s >= self.hi] = 1
        return out


def importance_sample(
    scores: np.ndarray, n: int, rng: np.random.Generator, *, uniform_share: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` draws (with replacement) and their importance weights ``1 / (N q_i)``.

    ``q`` mixes ``sqrt(score)`` (share ``1 - uniform_share``) with uniform; weights are
    scaled so a uniform draw has weight 1.
    """
    s = np.clip(np.asarray(scores, dtype=np.float64), 0.0, None)
    size = len(s)
    if size == 0 or n <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    root = np.sqrt(s)
    q = np.full(size, 1.0 / size)
    if root.sum() > 0:
        q = uniform_share * q + (1.0 - uniform_share) * root / root.sum()
    draws = rng.choice(size, size=n, replace=True, p=q)
    return draws.astype(np.int64), 1.0 / (size * q[draws])


def _kish(weights: np.ndarray) -> float:
    total = weights.sum()
    return float(total * total / (weights * weights).sum()) if total > 0 else 0.0


def rate_upper_bound(rate: float, n_eff: float, delta: float) -> float:
    """One-sided Clopper-Pearson upper bound of a rate seen as ``rate`` in ``n_eff`` trials."""
    if n_eff <= 0:
        return 1.0
    from scipy.stats import beta

    k = rate * n_eff
    if k >= n_eff:
        return 1.0
    return float(beta.ppf(1.0 - delta, k + 1.0, n_eff - k))


def rate_lower_bound(rate: float, n_eff: float, delta: float) -> float:
    """One-sided Clopper-Pearson lower bound (see :func:`rate_upper_bound`)."""
    if n_eff <= 0:
        return 0.0
    from scipy.stats import beta

    k = rate * n_eff
    if k <= 0:
        return 0.0
    return float(beta.ppf(delta, k, n_eff - k + 1.0))


def _weighted_rate(mask: np.ndarray, within: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Weighted share of ``mask`` among ``within``, and the Kish size of ``within``."""
    ww = w[within]
    if not len(ww) or ww.sum() <= 0:
        return 0.0, 0.0
    return float(ww[mask[within]].sum() / ww.sum()), _kish(ww)


def fit_band(
    scores: np.ndarray,
    labels: np.ndarray,
    weights: np.ndarray,
    *,
    positive: bool,
    recall: float,
    precision: float,
    delta: float,
) -> Band:
    """The widest-deciding band that meets ``recall`` and ``precision`` (see module doc).

    ``labels`` are the costly verifier's probabilities (true at >= 0.5). With too few
    labelled pairs to bound a rate, the band decides nothing on that side (everything is
    asked), which always meets the targets.
    """
    for name, value in (("recall", recall), ("precision", precision)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {value}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64) >= 0.5
    w = np.asarray(weights, dtype=np.float64)
    cuts = np.unique(s)
    lo = 0.0
    hi = math.inf
    if positive:
        # lo: largest cut whose bound on the lost true pairs stays within 1 - recall.
        for t in cuts:
            lost, n = _weighted_rate(s < t, y, w)
            if rate_upper_bound(lost, n, delta) > 1.0 - recall:
                break
            lo = float(t)
        # hi: smallest cut whose accepted pairs are true at >= precision.
        for t in cuts:
            above = s >= t
            rate, n = _weighted_rate(y, above, w)
            if rate_lower_bound(rate, n, delta) >= precision:
                hi = float(t)
                break
    else:
        # hi: smallest cut whose bound on the false pairs called true stays within 1 - recall.
        for t in cuts[::-1]:
            wrong, n = _weighted_rate(s >= t, ~y, w)
            if rate_upper_bound(wrong, n, delta) > 1.0 - recall:
                break
            hi = float(t)
        # lo: largest cut whose rejected pairs are false at >= precision.
        for t in cuts[::-1]:
            below = s < t
            rate, n = _weighted_rate(~y, below, w)
            if rate_lower_bound(rate, n, delta) >= precision:
                lo = float(t)
                break
    return Band(lo=lo, hi=max(hi, lo))


@dataclass
class CascadeSample:
    """Pairs the costly verifier labelled: cheap score, its probability, weight, polarity."""

    scores: list[float] = field(default_factory=list)
    labels: list[float] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    positive: list[bool] = field(default_factory=list)

    def add(self, score: float, label: float, weight: float, positive: bool) -> None:
        self.scores.append(float(score))
        self.labels.append(float(label))
        self.weights.append(float(weight))
        self.positive.append(bool(positive))

    def __len__(self) -> int:
        return len(self.scores)

    def arrays(self, positive: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        keep = np.asarray(self.positive, dtype=bool) == positive
        return (
            np.asarray(self.scores, dtype=np.float64)[keep],
            np.asarray(self.labels, dtype=np.float64)[keep],
            np.asarray(self.weights, dtype=np.float64)[keep],
        )


class CascadeThresholds:
    """A labelled sample, and the bands and expected verdicts fitted from it.

    Args:
        sample: the labelled pairs.
        key: what the sample is valid for (cheap and costly verifier, corpus); a loaded
            file whose key differs is refused.
    """

    def __init__(self, sample: CascadeSample, key: dict[str, str] | None = None) -> None:
        self.sample = sample
        self.key = dict(key or {})
        self._bands: dict[tuple[bool, float, float, float], Band] = {}
        self._iso: dict[bool, tuple[np.ndarray, np.ndarray]] = {}

    def band(self, *, positive: bool, recall: float, precision: float, delta: float) -> Band:
        """The fitted band for one atom polarity and target (memoised)."""
        key = (positive, round(recall, 6), round(precision, 6), round(delta, 6))
        if key not in self._bands:
            s, y, w = self.sample.arrays(positive)
            self._bands[key] = fit_band(
                s, y, w, positive=positive, recall=recall, precision=precision, delta=delta
            )
        return self._bands[key]

    def expected(self, scores: np.ndarray, *, positive: bool) -> np.ndarray:
        """The costly verifier's expected probability given the cheap score (isotonic)."""
        if positive not in self._iso:
            s, y, w = self.sample.arrays(positive)
            if len(s) < 2 or np.ptp(s) == 0:
                self._iso[positive] = (np.array([0.0, 1.0]), np.array([0.0, 1.0]))
            else:
                from sklearn.isotonic import IsotonicRegression

                iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
                iso.fit(s, y, sample_weight=w)
                self._iso[positive] = (
                    np.asarray(iso.X_thresholds_, dtype=np.float64),
                    np.asarray(iso.y_thresholds_, dtype=np.float64),
                )
        xs, ys = self._iso[positive]
        return np.interp(np.asarray(scores, dtype=np.float64), xs, ys)

    # -- persistence -----------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": "logic-rag cascade thresholds",
            "version": FORMAT_VERSION,
            "key": self.key,
            "sample": {
                "scores": self.sample.scores,
                "labels": self.sample.labels,
                "weights": self.sample.weights,
                "positive": self.sample.positive,
            },
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the sample as JSON, atomically (a reader never sees half a file); a
        target inside an index folder, or one that is not a regular file, is refused."""
        from logic_rag.outputs import check_output_file

        target = check_output_file(path, "the thresholds file")
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.to_json(), f)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], *, key: dict[str, str] | None = None
    ) -> CascadeThresholds:
        """Read a saved sample; with ``key``, refuse one fitted for another corpus, encoder
        or verifier (every field of ``key`` must be in the file and equal)."""
        p = Path(path)
        try:
            from logic_rag.inputs import read_small_file

            data = json.loads(read_small_file(p), parse_constant=_refuse_constant)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            if data.get("format") != "logic-rag cascade thresholds":
                raise ValueError("not a cascade thresholds file")
            if data.get("version") != FORMAT_VERSION:
                raise ValueError(
                    f"format version {data.get('version')!r} (expected {FORMAT_VERSION})"
                )
            raw = data["sample"]
            if not isinstance(raw, dict):
                raise ValueError("'sample' is not an object")
            sample = CascadeSample(
                _numbers(raw, "scores", 0.0, 1.0),
                _numbers(raw, "labels", 0.0, 1.0),
                _numbers(raw, "weights", 0.0, MAX_WEIGHT, open_low=True),
                _booleans(raw, "positive"),
            )
            if not (
                len(sample.scores)
                == len(sample.labels)
                == len(sample.weights)
                == len(sample.positive)
            ):
                raise ValueError("the sample's columns differ in length")
            stored_raw = data.get("key")
            if not isinstance(stored_raw, dict) or not all(
                isinstance(v, str) for v in stored_raw.values()
            ):
                raise ValueError("'key' must be an object of strings")
        except (OSError, ValueError, KeyError, TypeError, RecursionError, OverflowError) as exc:
            what = f"no field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ValueError(f"cannot read cascade thresholds {p}: {what}") from None
        stored = dict(stored_raw)
        if key is not None:
            missing = sorted(k for k in key if k not in stored)
            if missing:
                raise ValueError(
                    f"cascade thresholds {p} do not say which {', '.join(missing)} they were "
                    f"fitted for; fit them again with `logic-rag fit-cascade`"
                )
            differ = sorted(k for k in key if stored[k] != key[k])
            if differ:
                raise ValueError(
                    f"cascade thresholds {p} were fitted for another {', '.join(differ)} "
                    f"({'; '.join(f'{k}: {stored[k][:40]}' for k in differ)}); fit them again "
                    f"for this set-up with `logic-rag fit-cascade` or pass a matching file"
                )
        return cls(sample, stored)


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


def _numbers(
    raw: dict[str, Any], name: str, low: float, high: float, *, open_low: bool = False
) -> list[float]:
    values = raw[name]
    if not isinstance(values, list):
        raise ValueError(f"'{name}' is not a list")
    out: list[float] = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ValueError(f"{name}[{i}] is not a number: {v!r:.40}")
        try:
            x = float(v)
        except OverflowError:
            raise ValueError(f"{name}[{i}] is too large: {str(v)[:20]}...") from None
        if not math.isfinite(x) or x < low or x > high or (open_low and x <= low):
            side = "(" if open_low else "["
            raise ValueError(f"{name}[{i}] = {v!r:.40} is outside {side}{low}, {high}]")
        out.append(x)
    return out


def _booleans(raw: dict[str, Any], name: str) -> list[bool]:
    values = raw[name]
    if not isinstance(values, list):
        raise ValueError(f"'{name}' is not a list")
    for i, v in enumerate(values):
        if not isinstance(v, bool):
            raise ValueError(f"{name}[{i}] is not true or false: {v!r:.40}")
    return list(values)


def thresholds_key(expensive: Verifier, ctx: SearchContext, polarity: str) -> dict[str, str]:
    """What a labelled sample is valid for: the costly verifier, the encoder whose
    evidence it was compared with, the atom polarity, and the corpus (a fingerprint of
    its documents). A file fitted for anything else is refused on load.

    Here, beside the file format, so that both stages that read a sample
    (:class:`~logic_rag.verifiers.cascade.CascadeVerify` and
    :class:`~logic_rag.verifiers.certified.CertifiedTopK`) import it from below.
    """
    fingerprint = getattr(expensive, "fingerprint", None)
    name = fingerprint() if callable(fingerprint) else expensive.describe()
    encoder = getattr(ctx.resources.dense.encoder, "name", "encoder")
    return {
        "expensive": str(name),
        "encoder": str(encoder),
        "polarity": str(polarity),
        "corpus": ctx.resources.corpus_fingerprint(),
    }
