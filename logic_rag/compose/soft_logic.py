"""Soft set algebra: evaluate a LogicalQuery over per-atom membership probabilities.

Each atom contributes an array of probabilities (one per candidate document) that the
document belongs to the atom's set. Connectives become fuzzy-logic operators:

- ``product`` t-norm (default): AND = ∏ p, OR = 1 − ∏ (1 − p), NOT = 1 − p. Treats the
  atoms as independent events; one weak constraint pulls a conjunction down smoothly.
- ``godel`` (min/max): AND = min p, OR = max p, NOT = 1 − p. Scores by the weakest
  constraint only.

With 0/1 inputs both reduce to exact set algebra, which the tests check against
:func:`logic_rag.query.evaluate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np

from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or

__all__ = ["TNorm", "soft_truth", "fuse_scores"]

TNorm = Literal["product", "godel"]


def soft_truth(
    q: LogicalQuery, probs: Mapping[str, np.ndarray], tnorm: TNorm = "product"
) -> np.ndarray:
    """Degree to which each candidate satisfies ``q``, in [0, 1]."""
    if isinstance(q, Atom):
        try:
            return np.asarray(probs[q.text], dtype=np.float64)
        except KeyError:
            raise KeyError(f"no probabilities for atom {q.text!r}") from None
    if isinstance(q, Not):
        return 1.0 - soft_truth(q.arg, probs, tnorm)
    parts = np.stack([soft_truth(a, probs, tnorm) for a in q.args])
    if isinstance(q, And):
        return parts.prod(axis=0) if tnorm == "product" else parts.min(axis=0)
    if isinstance(q, Or):
        return 1.0 - (1.0 - parts).prod(axis=0) if tnorm == "product" else parts.max(axis=0)
    raise TypeError(f"not a LogicalQuery node: {q!r}")


def fuse_scores(
    q: LogicalQuery,
    scores: Mapping[str, np.ndarray],
    *,
    op: Literal["sum", "product"] = "sum",
    negation_weight: float = 1.0,
) -> np.ndarray:
    """Score fusion of raw atom similarities (the ``fusion`` strategy's baseline).

    AND adds (``sum``) or multiplies (``product``, on similarities shifted to [0, 1]) the
    children, OR takes the maximum, NOT subtracts ``negation_weight`` times the child.
    Unlike :func:`soft_truth` the inputs are uncalibrated similarities, so this is the
    simple "+, ×, −" family that set-compositional retrieval papers compare against.
    """
    if isinstance(q, Atom):
        s = np.asarray(scores[q.text], dtype=np.float64)
        return (s + 1.0) / 2.0 if op == "product" else s
    if isinstance(q, Not):
        return -negation_weight * fuse_scores(q.arg, scores, op=op, negation_weight=negation_weight)
    positives = (
        [a for a in q.args if not isinstance(a, Not)] if isinstance(q, And) else list(q.args)
    )
    negatives = [a for a in q.args if isinstance(a, Not)] if isinstance(q, And) else []
    parts = [fuse_scores(a, scores, op=op, negation_weight=negation_weight) for a in positives]
    if isinstance(q, Or):
        combined = np.max(np.stack(parts), axis=0)
    elif op == "product":
        combined = np.prod(np.stack(parts), axis=0)
    else:
        combined = np.sum(np.stack(parts), axis=0)
    for neg in negatives:
        combined = combined + fuse_scores(neg, scores, op=op, negation_weight=negation_weight)
    return combined
