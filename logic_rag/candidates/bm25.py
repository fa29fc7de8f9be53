"""Lexical candidates: BM25 (bm25s) over the documents' titles and texts.

Catches documents that name a rare constraint literally ("Seventh Doctor", "Weidenfeld &
Nicolson") where an embedding blurs it. The BM25 index is built from the documents on
first use (no extra files in the index folder).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from logic_rag.candidates.dense import query_side_text
from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import SearchBatch

__all__ = ["BM25Candidates"]


@dataclass(frozen=True)
class BM25Candidates(Stage):
    """The ``depth`` best BM25 documents of each query (source ``bm25``)."""

    depth: int = 100
    text: Literal["query", "positive"] = "positive"

    fills: ClassVar[frozenset[str]] = frozenset({"candidates", "sources", "signals.bm25"})

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        texts = [query_side_text(q.plan, self.text) for q in batch]
        scores, ids = ctx.resources.bm25().search(texts, self.depth)
        for state, s, i in zip(batch, scores, ids, strict=True):
            state.add_candidates("bm25", i, s)
