"""Dense orthogonal negation: the query vector projected away from each negated atom.

The embedding-space analogue of "A but not B": remove from the whole-query vector its
component along B's vector, then search. A baseline from the set-compositional
retrieval literature; it cannot express "not" for documents that are both A and B.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import SearchBatch

__all__ = ["OrthogonalCandidates"]


@dataclass(frozen=True)
class OrthogonalCandidates(Stage):
    """Search with the negation-projected query vector (source ``orthogonal``)."""

    depth: int | None = None

    fills: ClassVar[frozenset[str]] = frozenset({"candidates", "sources", "signals.orthogonal"})

    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        ctx.want([t for q in batch for t in (q.plan.text, *(a.text for a in q.plan.atoms))])

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        from logic_rag.compose.sparse_ops import orthogonal_negation

        composed = []
        for state in batch:
            v = ctx.vectors([state.plan.text])[0].astype(np.float64)
            for atom in state.plan.atoms:
                if atom in state.plan.negated:
                    v = orthogonal_negation(v, ctx.vectors([atom.text])[0])
            composed.append(v / max(np.linalg.norm(v), 1e-12))
        depth = min(self.depth if self.depth is not None else batch.k, len(ctx.resources))
        scores, ids = ctx.resources.dense.index.search(np.asarray(composed, np.float32), depth)
        for state, s, i in zip(batch, scores, ids, strict=True):
            state.add_candidates("orthogonal", i, s)
