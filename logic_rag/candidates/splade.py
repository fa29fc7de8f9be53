"""Learned-sparse candidates: SPLADE over the inverted index, whole query or composed.

``mode`` picks how a query's SPLADE vector is formed (see
:mod:`logic_rag.sparse_retriever`): ``query`` (the whole query), ``compose`` (Krasakis et
al.: AND -> Combined Pseudo-Terms, OR -> MaxPool, NOT -> Disentangled Negation) or
``nrf`` (AND -> sum, OR -> MaxPool, NOT -> A - λB).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import SearchBatch

__all__ = ["SpladeCandidates"]


@dataclass(frozen=True)
class SpladeCandidates(Stage):
    """The ``depth`` best SPLADE documents of each query (source ``splade``)."""

    mode: Literal["query", "compose", "nrf"] = "query"
    depth: int | None = None
    negation_weight: float = 1.0

    fills: ClassVar[frozenset[str]] = frozenset({"candidates", "sources", "signals.splade"})

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        sparse = ctx.resources.sparse
        if sparse is None:
            raise ValueError(
                "this pipeline needs a SPLADE index: build with sparse_model='splade-tiny' "
                "(CLI: logic-rag index --sparse-model splade-tiny)"
            )
        depth = self.depth if self.depth is not None else batch.k
        found = sparse.search([q.plan for q in batch], depth, self.mode, self.negation_weight)
        for state, (scores, ids, info) in zip(batch, found, strict=True):
            state.add_candidates("splade", ids, scores)
            if info is not None:  # say how the intersection was bounded
                state.info["pseudo_terms"] = info
