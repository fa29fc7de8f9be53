"""LogiCoL's negation violation (Shen et al. 2025, "LogiCoL: Logically-Informed Contrastive
Learning for Set-based Dense Retrieval").

For a query with negation the documents it must exclude are known from the atoms' gold
sets: for "A that are not B" they are ``gold(A) ∩ gold(B)``, for "A that are also B but
not C" ``gold(A) ∩ gold(B) ∩ gold(C)`` (the documents that satisfy everything except the
negation). A ranking *violates* the negation when the excluded documents rank, on
average, above the gold documents: ``AvgRank(excluded) < AvgRank(gold)`` (rank 1 = top).
The violation rate is the share of applicable queries that violate.

Being a yes/no on two averages, the violation hides how far a ranking is from respecting
the negation, so :func:`pairwise_order` gives the graded view: the share of (gold,
excluded) document pairs the ranking puts in the right order (0.5 = the negation is
ignored, 1 = every gold document above every excluded one; a ROC AUC with ties as 1/2).

Conventions we chose (the paper does not spell them out):

- ranks are 1-based positions in our ranking; a document the run did not retrieve gets
  rank ``depth + 1`` where ``depth`` is the length of that query's ranking, i.e. all
  unretrieved documents tie just below the last retrieved one;
- a tie of the two averages (e.g. nothing relevant retrieved at all) is not a violation;
- excluded documents that are also in the query's gold set (an annotation inconsistency
  in real data) are dropped from the excluded set;
- a query is not applicable (``None``) when its template has no negation, its atoms are
  unknown, an atom has no gold set, or the excluded set is empty.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence, Set

from logic_rag.evals.quest.data import NEGATION_TEMPLATES, QuestQuery

__all__ = ["excluded_docs", "average_rank", "negation_violation", "pairwise_order"]


def excluded_docs(query: QuestQuery, atom_sets: Mapping[str, Set[str]] | None) -> set[str] | None:
    """Documents the negation in ``query`` must push down, or ``None`` if not applicable."""
    if atom_sets is None or query.template not in NEGATION_TEMPLATES:
        return None
    atoms = query.atoms
    if atoms is None or len(atoms) != NEGATION_TEMPLATES[query.template]:
        return None
    if any(atom not in atom_sets for atom in atoms):
        return None
    excluded = set(atom_sets[atoms[0]])
    for atom in atoms[1:]:
        excluded &= set(atom_sets[atom])
    excluded -= query.docs
    return excluded or None


def average_rank(ranked: Sequence[str], docs: Set[str]) -> float:
    """Mean 1-based rank of ``docs`` in ``ranked``; unretrieved documents rank ``len+1``."""
    (ranks,) = _ranks(ranked, docs)
    return _mean_rank(ranks)


def _mean_rank(ranks: list[int]) -> float:
    if not ranks:
        raise ValueError("average rank of an empty document set is undefined")
    return sum(ranks) / len(ranks)


def _ranks(ranked: Sequence[str], *doc_sets: Set[str]) -> list[list[int]]:
    """1-based ranks of each set's documents (unretrieved: ``len + 1``), one position map."""
    position = {doc: i + 1 for i, doc in enumerate(ranked)}
    missing_rank = len(ranked) + 1
    return [[position.get(doc, missing_rank) for doc in docs] for docs in doc_sets]


def pairwise_order(ranked: Sequence[str], gold: Set[str], excluded: Set[str]) -> float:
    """Share of (gold, excluded) pairs ranked gold first; ties (both unretrieved) count 1/2.

    Uses the ranks of :func:`average_rank` (unretrieved documents tie at ``len + 1``).
    """
    if not gold or not excluded:
        raise ValueError("pairwise order needs non-empty gold and excluded sets")
    gold_ranks, excluded_ranks = _ranks(ranked, gold, excluded)
    excluded_ranks.sort()
    score = 0.0
    for rank in gold_ranks:
        not_above = bisect.bisect_right(excluded_ranks, rank)
        tied = not_above - bisect.bisect_left(excluded_ranks, rank)
        score += len(excluded_ranks) - not_above + 0.5 * tied
    return score / (len(gold) * len(excluded_ranks))


def negation_violation(
    ranked: Sequence[str], gold: Set[str], excluded: Set[str]
) -> tuple[bool, float, float]:
    """``(violated, avg_rank_gold, avg_rank_excluded)`` for one ranked list."""
    gold_ranks, excluded_ranks = _ranks(ranked, gold, excluded)
    avg_gold, avg_excluded = _mean_rank(gold_ranks), _mean_rank(excluded_ranks)
    return avg_excluded < avg_gold, avg_gold, avg_excluded
