"""P@1 and R@k: against pytrec_eval directly and against a hand computation.

pytrec_eval ranks by score and breaks ties by document id, descending. A run already in
that order must give identical numbers from pytrec_eval on the raw scores and from us;
a run with ties in another order must follow OUR order (checked by hand counting).
"""

from __future__ import annotations

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_rag.evals.quest import QuestQuery, evaluate_run, ranked_doc_ids
from logic_rag.evals.quest.ranking import rank_measures

KS = (1, 2, 5, 20)
DOCS = [f"d{i:02d}" for i in range(30)]


@st.composite
def runs_and_gold(draw):
    """Random queries: non-empty gold sets, rankings with many score ties, some empty."""
    n_queries = draw(st.integers(1, 6))
    gold, run = {}, {}
    for qi in range(n_queries):
        qid = f"q{qi}"
        gold[qid] = set(draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8)))
        kind = draw(st.sampled_from(["normal", "normal", "empty", "absent"]))
        if kind == "absent":
            continue
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=25))
        if kind == "empty":
            docs = []
        scores = draw(st.lists(st.integers(0, 3), min_size=len(docs), max_size=len(docs)))
        run[qid] = list(zip(docs, [float(s) for s in scores], strict=True))
    return gold, run


def _pytrec(gold, scored, ks):
    measures = {"P_1"} | {f"recall_{k}" for k in ks}
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: {d: 1 for d in g} for q, g in gold.items()}, measures
    )
    return evaluator.evaluate({q: dict(r) for q, r in scored.items() if r})


@settings(max_examples=80, deadline=None)
@given(runs_and_gold())
def test_matches_pytrec_eval_when_order_is_trec_order(data) -> None:
    gold, run = data
    # trec_eval order: score descending, then doc id descending
    trec_sorted = {
        q: sorted(sorted(r, key=lambda p: p[0], reverse=True), key=lambda p: -p[1])
        for q, r in run.items()
    }
    ours = rank_measures(
        {q: ranked_doc_ids(trec_sorted.get(q, []), qid=q) for q in gold}, gold, ks=KS
    )
    ref = _pytrec(gold, trec_sorted, KS)
    for qid in gold:
        expected = ref.get(qid, {})  # pytrec_eval omits queries with nothing retrieved
        assert ours[qid]["P@1"] == pytest.approx(expected.get("P_1", 0.0), abs=1e-12)
        for k in KS:
            assert ours[qid][f"R@{k}"] == pytest.approx(expected.get(f"recall_{k}", 0.0), abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(runs_and_gold())
def test_follows_our_order_with_ties(data) -> None:
    gold, run = data
    # our order: by score descending, ties kept in the (random) given order
    ordered = {q: sorted(r, key=lambda p: -p[1]) for q, r in run.items()}
    ours = rank_measures({q: ranked_doc_ids(ordered.get(q, []), qid=q) for q in gold}, gold, ks=KS)
    for qid, g in gold.items():
        docs = [d for d, _ in ordered.get(qid, [])]
        p1 = 1.0 if docs and docs[0] in g else 0.0
        assert ours[qid]["P@1"] == p1
        for k in KS:
            hits = 0
            for d in docs[:k]:
                if d in g:
                    hits += 1
            assert ours[qid][f"R@{k}"] == pytest.approx(hits / len(g), abs=1e-12)


def test_raw_scores_would_reorder_ties_but_we_do_not() -> None:
    gold = {"q": {"a"}}
    run = {"q": [("a", 1.0), ("b", 1.0)]}
    raw = _pytrec(gold, run, (1,))
    assert raw["q"]["P_1"] == 0.0  # pytrec_eval puts "b" first (ties by id, descending)
    queries = [QuestQuery(qid="q", query="x", docs=frozenset({"a"}))]
    result = evaluate_run(run, queries, ks=(1,))
    assert result["per_query"]["q"]["P@1"] == 1.0
    assert result["per_query"]["q"]["R@1"] == 1.0


def test_hand_worked_example() -> None:
    docs = [f"x{i}" for i in range(30)]
    gold = {"x0", "x3", "x6", "x25", "nowhere"}
    ranking = [(d, 30.0 - i) for i, d in enumerate(docs)]
    out = rank_measures({"q": ranked_doc_ids(ranking)}, {"q": gold}, ks=(5, 20, 100))
    assert out["q"] == {"P@1": 1.0, "R@5": 2 / 5, "R@20": 3 / 5, "R@100": 4 / 5}


@pytest.mark.parametrize(
    ("ranking", "error", "fragment"),
    [
        ([("a", 1.0), ("b", 2.0)], ValueError, "not sorted by descending score"),
        ([("a", 1.0), ("a", 0.5)], ValueError, "appears twice"),
        ([(1, 1.0)], TypeError, "must be strings"),
        ([("a", float("nan"))], ValueError, "real number"),
        ([("a",)], ValueError, "pair"),
    ],
)
def test_ranked_doc_ids_rejects_bad_rankings(ranking, error, fragment) -> None:
    with pytest.raises(error, match=fragment):
        ranked_doc_ids(ranking, qid="q7")
