"""Hard exclusion: a page that plainly has an excluded property never outranks one without it.

Soft logic lets a page that violates a NOT still rank high when its other evidence is
strong (the product t-norm only scales its truth down). A user who writes "other than X"
usually means it. :class:`ExcludeViolations` (the settings' ``logic.exclude_violations``:
``LogicSettings(exclude_violations=tau)``) marks a candidate as a violator when any negated atom holds for it with probability at
least ``tau``, then either

* ``sink`` (default): moves every violator below every non-violator, each group keeping
  its order, so nothing is lost from the list and recall at large depths is unchanged; or
* ``drop``: removes violators from the results (they are not backfilled either).

``info["excluded"]`` on every hit counts the violators of its query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import SearchBatch

__all__ = ["ExcludeViolations", "ExclusionMode"]

ExclusionMode = Literal["sink", "drop"]


@dataclass(frozen=True)
class ExcludeViolations(Stage):
    """Sink (or drop) candidates whose negated atoms hold with p >= ``tau``."""

    tau: float = 0.5
    mode: ExclusionMode = "sink"

    needs: ClassVar[frozenset[str]] = frozenset({"probs", "score"})
    fills: ClassVar[frozenset[str]] = frozenset({"score"})

    def __post_init__(self) -> None:
        if not 0.0 < self.tau <= 1.0:
            raise ValueError(f"tau must be in (0, 1], got {self.tau}")
        if self.mode not in ("sink", "drop"):
            raise ValueError(f"mode must be 'sink' or 'drop', got {self.mode!r}")

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for state in batch:
            if state.probs is None or state.score is None or not len(state.candidates):
                continue
            rows = [i for i, a in enumerate(state.plan.atoms) if a in state.plan.negated]
            if not rows:
                continue
            violates = (state.probs[rows] >= self.tau).any(axis=0)
            state.info["excluded"] = int(violates.sum())
            if not violates.any():
                continue
            score = state.score.copy()
            if self.mode == "drop":
                score[violates] = -np.inf
            else:
                finite = score[np.isfinite(score)]
                span = float(finite.max() - finite.min()) if len(finite) else 0.0
                score[violates] -= span + 1.0
            state.score = score
