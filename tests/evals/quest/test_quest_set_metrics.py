"""QUEST set P/R/F1 and MRecall@K against slow loops written from the definitions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_rag.evals.quest import mrecall_at_k, set_prf

DOCS = [f"d{i}" for i in range(15)]


def ref_mrecall(ranked: list[str], gold: set[str], k: int) -> float:
    """QUEST paper: all gold in top-K if |gold| <= K, else all top-K documents are gold."""
    top = ranked[:k]
    if len(gold) <= k:
        for g in gold:
            if g not in top:
                return 0.0
        return 1.0
    if len(top) < k:
        return 0.0
    for d in top:
        if d not in gold:
            return 0.0
    return 1.0


def ref_prf(predicted: list[str], gold: set[str]) -> tuple[float, float, float]:
    """run_eval.py of QUEST, written out with loops."""
    pred = []
    for d in predicted:
        if d not in pred:
            pred.append(d)
    tp = 0
    for d in pred:
        if d in gold:
            tp += 1
    if tp == 0:
        return 0.0, 0.0, 0.0
    p = tp / len(pred)
    r = tp / len(gold)
    return p, r, 2 * p * r / (p + r)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(DOCS), unique=True, max_size=15),
    st.sets(st.sampled_from(DOCS), min_size=1),
    st.integers(1, 16),
)
def test_mrecall_matches_reference(ranked, gold, k) -> None:
    assert mrecall_at_k(ranked, gold, k) == ref_mrecall(ranked, gold, k)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(DOCS), max_size=15), st.sets(st.sampled_from(DOCS), min_size=1))
def test_set_prf_matches_reference(predicted, gold) -> None:
    assert set_prf(predicted, gold) == pytest.approx(ref_prf(predicted, gold), abs=1e-12)


def test_hand_worked_cases() -> None:
    # |gold| <= K: need every gold document in the top K
    assert mrecall_at_k(["a", "x", "b"], {"a", "b"}, 3) == 1.0
    assert mrecall_at_k(["a", "x", "b"], {"a", "b"}, 2) == 0.0
    # |gold| > K: the top K must be all gold
    assert mrecall_at_k(["a", "b"], {"a", "b", "c"}, 2) == 1.0
    assert mrecall_at_k(["a", "x"], {"a", "b", "c"}, 2) == 0.0
    assert mrecall_at_k(["a"], {"a", "b", "c"}, 2) == 0.0  # fewer than K retrieved
    # set P/R/F1: 2 of 4 predicted are gold, 2 of 3 gold found
    p, r, f1 = set_prf(["a", "b", "x", "y"], {"a", "b", "c"})
    assert (p, r) == (0.5, 2 / 3) and f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert set_prf([], {"a"}) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        mrecall_at_k(["a"], set(), 5)
    with pytest.raises(ValueError):
        mrecall_at_k(["a"], {"a"}, 0)
