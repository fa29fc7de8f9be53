"""Rank-based metrics (P@1, R@k) computed by ir-measures over OUR ranking.

A run gives, per query, a ranked sequence of ``(doc_id, score)``; the sequence order is
the ranking. pytrec_eval (behind ir-measures) re-sorts every query's documents by score
and breaks ties by document id (descending), which would silently re-order ties and so
change R@k whenever scores tie. We therefore hand ir-measures *rank-derived* scores,
``len(ranking) - position`` (distinct integers, exact in float64), so that its order is
exactly ours and the caller's scores only serve to check that the sequence is sorted.

Queries with an empty ranking get 0.0 for every measure (what trec_eval reports for a
query it has judgements for but no retrieved documents).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence, Set
from numbers import Real

__all__ = ["ranked_doc_ids", "rank_measures"]


def ranked_doc_ids(ranking: Sequence[tuple[str, float]], *, qid: str = "?") -> list[str]:
    """Validate one query's ranking and return its document ids in rank order.

    Every entry must be a ``(doc_id: str, score: real number)`` pair, ids must not repeat,
    and scores must not increase along the sequence (ties are allowed and keep the given
    order): an unsorted list is almost always a caller's bug, and evaluating it as given
    would report wrong numbers without a sign.
    """
    docs: list[str] = []
    seen: set[str] = set()
    previous = math.inf
    for position, entry in enumerate(ranking):
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise ValueError(
                f"query {qid!r}, position {position}: expected a (doc_id, score) pair, "
                f"got {entry!r}"
            )
        doc_id, score = entry
        if not isinstance(doc_id, str):
            raise TypeError(
                f"query {qid!r}, position {position}: document ids must be strings "
                f"(as in the gold sets), got {type(doc_id).__name__} {doc_id!r}"
            )
        if isinstance(score, bool) or not isinstance(score, Real) or math.isnan(score):
            raise ValueError(
                f"query {qid!r}, position {position}: score must be a real number, got {score!r}"
            )
        if score > previous:
            raise ValueError(
                f"query {qid!r}: ranking is not sorted by descending score at position "
                f"{position} ({score!r} after {previous!r}); pass the ranked list, best first"
            )
        if doc_id in seen:
            raise ValueError(
                f"query {qid!r}: document {doc_id!r} appears twice in the ranking; "
                "deduplicate the run first"
            )
        seen.add(doc_id)
        docs.append(doc_id)
        previous = float(score)
    return docs


def rank_measures(
    rankings: Mapping[str, Sequence[str]],
    gold: Mapping[str, Set[str]],
    *,
    ks: Iterable[int],
    precision_ks: Iterable[int] = (1,),
) -> dict[str, dict[str, float]]:
    """Per-query ``P@k`` and ``R@k`` from ir-measures (pytrec_eval provider).

    ``rankings`` maps every query id of ``gold`` to its ranked document ids (possibly
    empty); every gold set must be non-empty. Returns ``{qid: {"P@1": ..., "R@5": ...}}``
    with measure names as ir-measures prints them.
    """
    import ir_measures  # lazy: pulls in pytrec_eval

    measures = [ir_measures.P @ k for k in precision_ks] + [ir_measures.R @ k for k in ks]
    names = [str(m) for m in measures]
    missing = [qid for qid in gold if qid not in rankings]
    if missing:
        raise KeyError(f"no ranking given for queries {missing[:5]}")
    for qid, docs in gold.items():
        if not docs:
            raise ValueError(f"query {qid!r} has an empty gold set; recall is undefined")
    qrels = {qid: {doc: 1 for doc in docs} for qid, docs in gold.items()}
    run = {
        qid: {doc: float(len(rankings[qid]) - pos) for pos, doc in enumerate(rankings[qid])}
        for qid in gold
        if rankings[qid]
    }
    out = {qid: dict.fromkeys(names, 0.0) for qid in gold}
    if run:
        evaluator = ir_measures.pytrec_eval.evaluator(measures, qrels)
        for metric in evaluator.iter_calc(run):
            out[metric.query_id][str(metric.measure)] = float(metric.value)
    return out
