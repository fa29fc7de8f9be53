"""Given candidates: every document of the (small) index, in the order a caller gave them.

The source of a reranker: another retriever already chose the candidates, so the index
holds exactly those documents, and each query's candidates are all of its rows. The
caller's scores are recorded as source ``input`` (a signal that :class:`Combine` can
weigh, and the tie-break order of the later stages).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import SearchBatch

__all__ = ["GivenCandidates"]


@dataclass(frozen=True)
class GivenCandidates(Stage):
    """All rows of the index as every query's candidates (source ``name``).

    ``scores`` are the incoming scores, one per row; ``None`` (or any missing,
    non-finite score) ranks the rows in the given order (row 0 best), so no candidate is
    dropped for lacking a score.
    """

    scores: tuple[float | None, ...] | None = None
    name: str = "input"

    fills: ClassVar[frozenset[str]] = frozenset({"candidates", "sources"})

    def filled(self) -> frozenset[str]:
        """The candidates, and the incoming scores as the signal of its ``name``."""
        return self.fills | {f"signals.{self.name}"}

    def _scores(self, n: int) -> np.ndarray:
        if self.scores is not None and len(self.scores) != n:
            raise ValueError(f"got {len(self.scores)} scores for {n} candidates")
        values = [s for s in self.scores or ()]
        if self.scores is None or any(
            v is None or isinstance(v, bool) or not np.isfinite(float(v)) for v in values
        ):
            return -np.arange(n, dtype=np.float64)
        return np.asarray(values, dtype=np.float64)

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        n = len(ctx.resources)
        scores = self._scores(n)
        for state in batch:
            state.add_candidates(self.name, np.arange(n, dtype=np.int64), scores)
