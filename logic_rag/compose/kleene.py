"""Three-valued logic over partly decided constraints, and recall targets split over a query.

A cascade decides some (atom, page) pairs from cheap evidence and leaves the rest open.
:func:`kleene_truth` evaluates the query's logic with Kleene's strong three-valued logic
(true, false, unknown), so a page whose truth is already settled (an AND with one false
conjunct, an OR with one true disjunct) sends none of its open atoms to the costly
verifier: the short-circuit.

:func:`atom_requirements` turns one recall target for the *query's result set* into a
target per atom and polarity. A page in the result set is lost when a decision it depends
on is wrong:

* under AND every conjunct must hold, so each of the ``m`` children gets ``1 - (1 - r)/m``
  (a union bound: the losses of the conjuncts add up, whatever their correlation);
* under OR one true disjunct keeps the page, so each child keeps ``r``;
* NOT swaps the polarity: a negated atom loses a page when the cascade calls a page that
  lacks the atom a member (a false positive), so its requirement is on keeping *false*
  verdicts, and an AND under a NOT behaves as an OR (De Morgan).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or

__all__ = ["TRUE", "FALSE", "UNKNOWN", "kleene_truth", "atom_requirements"]

TRUE, FALSE, UNKNOWN = 1, 0, -1


def kleene_truth(q: LogicalQuery, values: Mapping[str, np.ndarray]) -> np.ndarray:
    """Truth of ``q`` per page: 1 true, 0 false, -1 unknown (``values`` per atom text)."""
    if isinstance(q, Atom):
        try:
            return np.asarray(values[q.text], dtype=np.int8)
        except KeyError:
            raise KeyError(f"no verdicts for atom {q.text!r}") from None
    if isinstance(q, Not):
        inner = kleene_truth(q.arg, values)
        return np.where(inner == UNKNOWN, UNKNOWN, 1 - inner).astype(np.int8)
    parts = np.stack([kleene_truth(a, values) for a in q.args])
    if isinstance(q, And):
        out = np.where((parts == TRUE).all(axis=0), TRUE, UNKNOWN)
        return np.where((parts == FALSE).any(axis=0), FALSE, out).astype(np.int8)
    if isinstance(q, Or):
        out = np.where((parts == FALSE).all(axis=0), FALSE, UNKNOWN)
        return np.where((parts == TRUE).any(axis=0), TRUE, out).astype(np.int8)
    raise TypeError(f"not a LogicalQuery node: {q!r}")


def atom_requirements(q: LogicalQuery, recall: float) -> dict[tuple[str, bool], float]:
    """Per ``(atom text, positive?)``: the rate at which its true verdicts (positive) or
    false verdicts (negated) must be kept so the result set keeps ``recall`` of its pages.

    An atom that occurs several times with the same polarity takes the strictest target.
    """
    if not 0.0 < recall <= 1.0:
        raise ValueError(f"recall must be in (0, 1], got {recall}")
    out: dict[tuple[str, bool], float] = {}

    def walk(node: LogicalQuery, target: float, positive: bool) -> None:
        if isinstance(node, Atom):
            key = (node.text, positive)
            out[key] = max(out.get(key, 0.0), target)
        elif isinstance(node, Not):
            walk(node.arg, target, not positive)
        elif isinstance(node, And | Or):
            # AND under a positive polarity (or OR under a negated one) needs every child.
            every = isinstance(node, And) == positive
            child = 1.0 - (1.0 - target) / len(node.args) if every else target
            for arg in node.args:
                walk(arg, child, positive)
        else:
            raise TypeError(f"not a LogicalQuery node: {node!r}")

    walk(q, recall, True)
    return out
