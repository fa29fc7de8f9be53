"""Paired bootstrap for comparing two systems scored on the same items.

Resampling items (not scores) keeps each item's pair together, so the between-item
variance that both systems share cancels: this is the test to use when a base and a
fine-tuned retriever answer the same questions (Efron & Tibshirani 1993; Koehn 2004).
Items where either system has no score (a judge output that could not be parsed) are
dropped from both sides and counted, never scored as 0.

The interval is the percentile interval of the resampled mean differences. The p-value
is two-sided and read off the same distribution: twice the smaller share of resampled
differences on either side of 0 (with the usual +1 correction so it is never exactly 0),
so p < 1 - confidence exactly when the interval excludes 0, up to that correction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PairedDifference", "paired_bootstrap"]

#: Resampled means are computed in blocks of at most this many indices, to bound memory.
_BLOCK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class PairedDifference:
    """Result of :func:`paired_bootstrap`; ``diff = mean_b - mean_a`` over kept pairs.

    ``low``/``high`` bound the percentile interval of ``diff``; ``n`` pairs were kept and
    ``n_dropped`` dropped because a side was missing.
    """

    mean_a: float
    mean_b: float
    diff: float
    low: float
    high: float
    p_value: float
    n: int
    n_boot: int
    n_dropped: int = 0


def _value(x: float | None, side: str, i: int) -> float | None:
    if x is None:
        return None
    value = float(x)
    if math.isnan(value):
        return None
    if math.isinf(value):
        raise ValueError(f"{side}[{i}] is infinite; scores must be finite numbers or None")
    return value


def paired_bootstrap(
    a: Sequence[float | None],
    b: Sequence[float | None],
    *,
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Bootstrap the mean paired difference ``b - a``.

    ``a[i]`` and ``b[i]`` are the two systems' scores on item ``i``; ``None`` (or NaN)
    marks a missing score and drops the pair. Raises :class:`ValueError` when the lengths
    differ or no pair is left.
    """
    import numpy as np

    if len(a) != len(b):
        raise ValueError(f"paired scores need equal lengths, got {len(a)} and {len(b)}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    kept_a: list[float] = []
    kept_b: list[float] = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        va, vb = _value(x, "a", i), _value(y, "b", i)
        if va is not None and vb is not None:
            kept_a.append(va)
            kept_b.append(vb)
    n = len(kept_a)
    if n == 0:
        raise ValueError(
            f"no pair has scores on both sides (all {len(a)} dropped); nothing to compare"
        )
    arr_a = np.asarray(kept_a, dtype=np.float64)
    arr_b = np.asarray(kept_b, dtype=np.float64)
    d = arr_b - arr_a
    rng = np.random.default_rng(seed)
    boot = np.empty(n_boot, dtype=np.float64)
    block = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, n_boot, block):
        stop = min(n_boot, start + block)
        idx = rng.integers(0, n, size=(stop - start, n))
        boot[start:stop] = d[idx].mean(axis=1)
    alpha = 1.0 - confidence
    low, high = np.percentile(boot, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    below = int(np.count_nonzero(boot <= 0.0))
    above = int(np.count_nonzero(boot >= 0.0))
    p_value = min(1.0, 2.0 * (min(below, above) + 1) / (n_boot + 1))
    return PairedDifference(
        mean_a=float(arr_a.mean()),
        mean_b=float(arr_b.mean()),
        diff=float(d.mean()),
        low=float(low),
        high=float(high),
        p_value=float(p_value),
        n=n,
        n_boot=n_boot,
        n_dropped=len(a) - n,
    )
