"""Each query's logic before a search: given, decomposed, or the whole text.

The retriever and the rerankers plan their queries the same way, so a query reads the
same whether a corpus or a reranker's candidates are searched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from logic_rag.pipeline.state import QueryPlan
from logic_rag.query.algebra import Atom, LogicalQuery
from logic_rag.query.decompose import Decomposition

__all__ = ["plan_queries"]


def plan_queries(
    texts: Sequence[str],
    logical_queries: Sequence[LogicalQuery | None] | None,
    decompose: Callable[[str], Decomposition] | None,
    *,
    min_confidence: float = 0.0,
) -> list[QueryPlan]:
    """A :class:`QueryPlan` per text: its given logical query, else ``decompose(text)``'s
    reading (the whole text when less confident than ``min_confidence``), else (with
    ``decompose=None``: a strategy that ignores the logic) the whole text as one atom."""
    if logical_queries is not None and len(logical_queries) != len(texts):
        raise ValueError(f"got {len(logical_queries)} logical queries for {len(texts)} query texts")
    plans = []
    for i, text in enumerate(texts):
        given = logical_queries[i] if logical_queries is not None else None
        if given is not None:
            plans.append(QueryPlan(text, given))
        elif decompose is None:
            plans.append(QueryPlan(text, Atom(text)))
        else:
            decomposition = decompose(text)
            logic: LogicalQuery = decomposition.query
            if decomposition.confidence < min_confidence:
                logic = Atom(text)
            plans.append(QueryPlan(text, logic, decomposition))
    return plans
