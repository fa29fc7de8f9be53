"""Whole-query dense candidates: the query's nearest documents in the FAISS index."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import QueryPlan, SearchBatch
from logic_rag.query.algebra import Not, positive_part, render

__all__ = ["DenseCandidates", "query_side_text"]


def query_side_text(plan: QueryPlan, text: Literal["query", "positive"]) -> str:
    """The text a candidate source searches with.

    ``query`` is the user's text. ``positive`` drops the negated constraints (the
    rendered positive part of the logic), because an embedding of "A that are not B"
    sits close to B's documents: negation words barely move it.
    """
    if text == "query" or not plan.negated:
        return plan.text
    positive = positive_part(plan.logic)
    return plan.text if positive is None or isinstance(positive, Not) else render(positive)


@dataclass(frozen=True)
class DenseCandidates(Stage):
    """The ``depth`` nearest documents of each query (``None``: the batch's ``k``).

    Source name ``dense``; its score is the cosine similarity.
    """

    depth: int | None = None
    text: Literal["query", "positive"] = "query"

    fills: ClassVar[frozenset[str]] = frozenset({"candidates", "sources", "signals.dense"})

    def _depth(self, batch: SearchBatch) -> int:
        return self.depth if self.depth is not None else batch.k

    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        ctx.want([query_side_text(q.plan, self.text) for q in batch], self._depth(batch))

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for state in batch:
            scores, ids = ctx.search(query_side_text(state.plan, self.text), self._depth(batch))
            state.add_candidates("dense", ids, scores)
