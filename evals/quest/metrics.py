"""Evaluate a ranked run on QUEST-format queries: one call, every metric, per template.

:func:`evaluate_run` gathers the metric families kept in their own modules:

- ``P@1``, ``R@k`` (default k = 5, 20, 100, 1000): ir-measures over our ranking
  (:mod:`.ranking`, which explains the rank-derived scores used to keep our tie order);
- ``MRecall@100`` as the QUEST paper defines it, and ``set_P``/``set_R``/``set_F1`` of the
  top-``set_cutoff`` documents taken as the predicted set (:mod:`.set_metrics`);
- ``violation_rate``: LogiCoL's negation violation, and ``pairwise_order``, its graded view
  (the share of gold/excluded document pairs ranked gold first; 0.5 = negation ignored)
  (:mod:`.violation`).

Averages are plain means over queries (macro). ``violation_rate`` and ``pairwise_order``
are averaged only over the queries where they apply (negation template, atoms and their
gold sets known, non-empty excluded set); they are ``None`` for a query where they do not
apply and ``None`` in an aggregate with no applicable query, so a missing number is never
shown as 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any

from logic_rag.evals.quest.data import QuestQuery
from logic_rag.evals.quest.ranking import rank_measures, ranked_doc_ids
from logic_rag.evals.quest.set_metrics import mrecall_at_k, set_prf
from logic_rag.evals.quest.violation import excluded_docs, negation_violation, pairwise_order

__all__ = [
    "DEFAULT_KS",
    "DEFAULT_MRECALL_KS",
    "DEFAULT_SET_CUTOFF",
    "UNKNOWN_TEMPLATE",
    "evaluate_run",
    "metric_names",
    "ranked_doc_ids",
    "set_prf",
    "mrecall_at_k",
    "excluded_docs",
    "negation_violation",
    "pairwise_order",
]

#: Recall cut-offs reported by QUEST and LogiCoL.
DEFAULT_KS: tuple[int, ...] = (5, 20, 100, 1000)
#: MRecall cut-offs (QUEST reports MRecall@100 in its main table).
DEFAULT_MRECALL_KS: tuple[int, ...] = (100,)
#: Size of the predicted set taken from a ranking for set P/R/F1. 20 is a compromise:
#: the median QUEST query has about 10 gold documents, and R@20 is the headline recall.
DEFAULT_SET_CUTOFF: int | None = 20
#: by_template key for queries whose metadata has no template.
UNKNOWN_TEMPLATE = "unknown"

Run = Mapping[Any, Sequence[tuple[str, float]]]


def metric_names(
    ks: Iterable[int] = DEFAULT_KS, mrecall_ks: Iterable[int] = DEFAULT_MRECALL_KS
) -> list[str]:
    """The metric keys of one aggregate, in report order (``n`` last)."""
    return (
        ["P@1"]
        + [f"R@{k}" for k in ks]
        + [f"MRecall@{k}" for k in mrecall_ks]
        + ["set_P", "set_R", "set_F1", "violation_rate", "pairwise_order", "n"]
    )


def _normalise_run(run: Run) -> dict[str, Sequence[tuple[str, float]]]:
    out: dict[str, Sequence[tuple[str, float]]] = {}
    for key, ranking in run.items():
        qid = str(key)
        if qid in out:
            raise ValueError(f"run has two entries for query id {qid!r} (e.g. 1 and '1')")
        out[qid] = ranking
    return out


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _aggregate(per_query: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    agg: dict[str, Any] = {}
    for name in names:
        if name == "n":
            agg["n"] = len(per_query)
        else:
            agg[name] = _mean([row[name] for row in per_query])
    return agg


def evaluate_run(
    run: Run,
    queries: Iterable[QuestQuery],
    atom_sets: Mapping[str, Set[str]] | None = None,
    *,
    ks: Sequence[int] = DEFAULT_KS,
    mrecall_ks: Sequence[int] = DEFAULT_MRECALL_KS,
    set_cutoff: int | None = DEFAULT_SET_CUTOFF,
    skip_empty_gold: bool = False,
) -> dict[str, Any]:
    """Score ``run`` (``{qid: [(doc_id, score), ...]}``, best first) on ``queries``.

    Returns ``{"all": {...}, "by_template": {template: {...}}, "per_query": {qid: {...}}}``.
    Aggregates have the keys of :func:`metric_names` (with defaults exactly ``P@1``,
    ``R@5``, ``R@20``, ``R@100``, ``R@1000``, ``MRecall@100``, ``set_P``, ``set_R``,
    ``set_F1``, ``violation_rate``, ``pairwise_order``, ``n``). Per-query rows have the same
    metric keys (no ``n``) plus ``template``, and ``avg_rank_gold``/``avg_rank_excluded``
    where the violation applies.

    Run keys are compared as strings. A query absent from the run is scored as an empty
    ranking (all zeros); run entries for unknown queries are ignored, but a non-empty run
    that matches no query at all is an error (almost always an id mismatch). The predicted
    set for set P/R/F1 is the top ``set_cutoff`` documents (``None``: the whole ranking).
    Queries with an empty gold set make recall undefined: they raise ``ValueError`` unless
    ``skip_empty_gold`` is true, in which case they are left out entirely.
    """
    if set_cutoff is not None and set_cutoff <= 0:
        raise ValueError(f"set_cutoff must be positive or None, got {set_cutoff}")
    for k in (*ks, *mrecall_ks):
        if k <= 0:
            raise ValueError(f"cut-offs must be positive, got {k}")
    names = metric_names(ks, mrecall_ks)
    norm_run = _normalise_run(run)

    selected: list[QuestQuery] = []
    seen: set[str] = set()
    for query in queries:
        if query.qid in seen:
            raise ValueError(f"query id {query.qid!r} appears twice in queries")
        seen.add(query.qid)
        if not query.docs:
            if skip_empty_gold:
                continue
            raise ValueError(
                f"query {query.qid!r} ({query.query!r}) has an empty gold set; recall is "
                "undefined. Remove it or pass skip_empty_gold=True"
            )
        selected.append(query)
    if norm_run and selected and not any(q.qid in norm_run for q in selected):
        raise ValueError(
            "none of the run's query ids matches a query id "
            f"(run has e.g. {next(iter(norm_run))!r}, queries have {selected[0].qid!r})"
        )

    rankings = {q.qid: ranked_doc_ids(norm_run.get(q.qid, ()), qid=q.qid) for q in selected}
    gold = {q.qid: q.docs for q in selected}
    ranked_scores = rank_measures(rankings, gold, ks=ks, precision_ks=(1,)) if selected else {}

    per_query: dict[str, dict[str, Any]] = {}
    for query in selected:
        ranked = rankings[query.qid]
        row: dict[str, Any] = {"template": query.template}
        row.update(ranked_scores[query.qid])
        for k in mrecall_ks:
            row[f"MRecall@{k}"] = mrecall_at_k(ranked, query.docs, k)
        predicted = ranked if set_cutoff is None else ranked[:set_cutoff]
        row["set_P"], row["set_R"], row["set_F1"] = set_prf(predicted, query.docs)
        excluded = excluded_docs(query, atom_sets)
        if excluded is None:
            row["violation_rate"] = row["pairwise_order"] = None
        else:
            violated, avg_gold, avg_excluded = negation_violation(ranked, query.docs, excluded)
            row["violation_rate"] = 1.0 if violated else 0.0
            row["avg_rank_gold"] = avg_gold
            row["avg_rank_excluded"] = avg_excluded
            row["pairwise_order"] = pairwise_order(ranked, query.docs, excluded)
        per_query[query.qid] = row

    rows = list(per_query.values())
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["template"] or UNKNOWN_TEMPLATE, []).append(row)
    return {
        "all": _aggregate(rows, names),
        "by_template": {t: _aggregate(g, names) for t, g in groups.items()},
        "per_query": per_query,
    }
