"""QUEST's set metrics: precision/recall/F1 of a predicted set, and MRecall@K.

Set P/R/F1 follow the official ``language/quest/eval/run_eval.py``: with
``tp = |pred ∩ gold|``, P = tp/|pred|, R = tp/|gold|, F1 their harmonic mean, and all three
are 0 when ``tp == 0`` (so an empty prediction scores 0, not undefined). For a ranked run
the predicted set is the top ``cutoff`` documents.

MRecall@K follows the QUEST paper (after Min et al. 2021): a query counts 1 when the top-K
holds every gold document (``|gold| <= K``), or, when ``|gold| > K``, when all K top
documents are gold; otherwise 0. Both cases say ``|top-K ∩ gold| == min(|gold|, K)``.
The official ``analyze_retriever.py`` only checks ``gold ⊆ top-K``, which gives 0 for
every query with more than K gold documents; the two agree whenever ``|gold| <= K``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Set

__all__ = ["set_prf", "mrecall_at_k"]


def set_prf(predicted: Iterable[str], gold: Set[str]) -> tuple[float, float, float]:
    """``(precision, recall, F1)`` of a predicted document set against the gold set."""
    pred = set(predicted)
    tp = len(pred & gold)
    if tp == 0:
        return 0.0, 0.0, 0.0
    precision = tp / len(pred)
    recall = tp / len(gold)
    return precision, recall, 2 * precision * recall / (precision + recall)


def mrecall_at_k(ranked: Sequence[str], gold: Set[str], k: int) -> float:
    """QUEST MRecall@k of one ranked list: 1.0 if the top-k is as complete as it can be."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if not gold:
        raise ValueError("MRecall is undefined for an empty gold set")
    hits = len(set(ranked[:k]) & gold)
    return 1.0 if hits == min(len(gold), k) else 0.0
