"""Retrieval quality on a BEIR-format dataset (nDCG@10, R@100, RR@10 through ir-measures)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logic_rag.strategy_settings import StrategySettings

__all__ = ["DEFAULT_MEASURES", "evaluate_beir"]

DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10")


def evaluate_beir(
    folder: str | os.PathLike[str],
    *,
    model: str | None = None,
    split: str = "test",
    depth: int = 100,
    measures: tuple[str, ...] = DEFAULT_MEASURES,
    strategies: Sequence[str] | None = None,
    index: str | os.PathLike[str] | None = None,
    store_uri: str | None = None,
    settings: Sequence[StrategySettings] = (),
) -> dict[str, Any]:
    """Index a BEIR corpus with ``model``, search its judged queries, score with ir-measures.

    Only queries that have judgements are searched (MS MARCO subsets list more queries
    than they judge). Returns ``{"model", "queries", "documents", "metrics": {...}}``.

    With ``strategies`` (e.g. ``["vanilla", "rerank"]``) the corpus goes into a
    :class:`~logic_rag.logic_retriever.LogicRetriever` (sentence vectors included) and
    ``"strategies": {name: metrics}`` is added; ``metrics`` then holds the first one's.
    This is the no-regression check for queries without logic. ``index`` reuses (or
    writes) an index folder, so a slow encoder embeds the corpus once; ``store_uri`` names
    the Milvus store of an index built with ``--store``; ``settings`` are strategies'
    settings (:mod:`logic_rag.strategy_settings`: the verifier of ``verify`` and
    ``quality``, the cascade's targets), each for the strategies of its class.
    """
    import ir_measures

    from logic_rag.corpus import load_beir

    data = load_beir(folder, split)
    qids = [q for q in data.queries if q in data.qrels]
    if not qids:
        raise ValueError(f"{folder}: no query in queries.jsonl has judgements in qrels/{split}.tsv")
    parsed = [ir_measures.parse_measure(m) for m in measures]
    texts = [data.queries[q] for q in qids]

    def score(results: list[list[Any]]) -> dict[str, float]:
        run = {
            qid: {hit.id: float(hit.score) for hit in hits}
            for qid, hits in zip(qids, results, strict=True)
        }
        scores = ir_measures.calc_aggregate(parsed, data.qrels, run)
        return {str(m): float(scores[m]) for m in parsed}

    if not strategies:
        from logic_rag.retriever import DenseRetriever

        retriever = DenseRetriever.build(data.corpus, model=model)
        name, metrics = retriever.encoder.name, score(retriever.search_batch(texts, k=depth))
        by_strategy = None
    else:
        from logic_rag.logic_retriever import LogicRetriever

        if index is not None and Path(index, "manifest.json").is_file():
            logic = LogicRetriever.load(index, model=model, store_uri=store_uri)
        else:
            logic = LogicRetriever.build(data.corpus, model=model, show_progress_bar=True)
            if index is not None:
                logic.save(index)
        if settings:
            logic = logic.with_settings(*settings)
        name = logic.dense.encoder.name
        by_strategy = {s: score(logic.search_batch(texts, k=depth, strategy=s)) for s in strategies}
        metrics = by_strategy[strategies[0]]
    out: dict[str, Any] = {
        "model": name,
        "queries": len(qids),
        "documents": len(data.corpus),
        "metrics": metrics,
    }
    if by_strategy is not None:
        out["strategies"] = by_strategy
    return out
