"""Retrieval quality on a BEIR-format dataset (nDCG@10, R@100, RR@10 through ir-measures)."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["DEFAULT_MEASURES", "evaluate_beir"]

DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10")


def evaluate_beir(
    folder: str | os.PathLike[str],
    *,
    model: str = "minilm",
    split: str = "test",
    depth: int = 100,
    measures: tuple[str, ...] = DEFAULT_MEASURES,
) -> dict[str, Any]:
    """Index a BEIR corpus with ``model``, search its judged queries, score with ir-measures.

    Only queries that have judgements are searched (MS MARCO subsets list more queries
    than they judge). Returns ``{"model", "queries", "documents", "metrics": {...}}``.
    """
    import ir_measures

    from logic_rag.corpus import load_beir
    from logic_rag.retriever import Retriever

    data = load_beir(folder, split)
    qids = [q for q in data.queries if q in data.qrels]
    if not qids:
        raise ValueError(f"{folder}: no query in queries.jsonl has judgements in qrels/{split}.tsv")
    retriever = Retriever.build(data.corpus, model=model)
    results = retriever.search_batch([data.queries[q] for q in qids], k=depth)
    run = {
        qid: {hit.id: float(hit.score) for hit in hits}
        for qid, hits in zip(qids, results, strict=True)
    }
    parsed = [ir_measures.parse_measure(m) for m in measures]
    scores = ir_measures.calc_aggregate(parsed, data.qrels, run)
    return {
        "model": retriever.encoder.name,
        "queries": len(qids),
        "documents": len(data.corpus),
        "metrics": {str(m): float(scores[m]) for m in parsed},
    }
