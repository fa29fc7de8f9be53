"""Interval soft logic: bounds on a query's truth when some atom probabilities are unknown.

Certified top-k verification (:mod:`logic_rag.verifiers.certified`) knows each (atom, page)
probability only as an interval until the costly verifier has answered: ``[0, 1]`` for an
unchecked pair under hard bounds, a narrower one under calibrated bounds, a point once
checked. Both t-norms of :mod:`.soft_logic` are monotone in every argument (AND and OR
increase with each child, NOT decreases), so evaluating the logic tree on interval ends
gives bounds that always hold, and they are exact (attained) when each atom occurs once.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from logic_rag.compose.soft_logic import TNorm
from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or

__all__ = ["truth_bounds"]


def truth_bounds(
    q: LogicalQuery,
    lo: Mapping[str, np.ndarray],
    hi: Mapping[str, np.ndarray],
    tnorm: TNorm = "product",
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of :func:`~logic_rag.compose.soft_logic.soft_truth` per
    candidate, when atom ``a``'s probability lies in ``[lo[a], hi[a]]``."""
    if isinstance(q, Atom):
        try:
            return np.asarray(lo[q.text], np.float64), np.asarray(hi[q.text], np.float64)
        except KeyError:
            raise KeyError(f"no probability bounds for atom {q.text!r}") from None
    if isinstance(q, Not):
        low, high = truth_bounds(q.arg, lo, hi, tnorm)
        return 1.0 - high, 1.0 - low
    parts = [truth_bounds(a, lo, hi, tnorm) for a in q.args]
    lows = np.stack([p[0] for p in parts])
    highs = np.stack([p[1] for p in parts])
    if isinstance(q, And):
        if tnorm == "product":
            return lows.prod(axis=0), highs.prod(axis=0)
        return lows.min(axis=0), highs.min(axis=0)
    if isinstance(q, Or):
        if tnorm == "product":
            return 1.0 - (1.0 - lows).prod(axis=0), 1.0 - (1.0 - highs).prod(axis=0)
        return lows.max(axis=0), highs.max(axis=0)
    raise TypeError(f"not a LogicalQuery node: {q!r}")
