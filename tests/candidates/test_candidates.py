"""Candidate sources against the indexes they read."""

from __future__ import annotations

import numpy as np

from logic_rag.candidates import (
    AtomCandidates,
    BM25Candidates,
    DenseCandidates,
    OrthogonalCandidates,
    SpladeCandidates,
)
from logic_rag.candidates.dense import query_side_text
from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.state import QueryPlan, QueryState, SearchBatch
from logic_rag.query.algebra import And, Atom, Not, Or


def _run(retriever, stage, plans, k=10):
    batch = SearchBatch([QueryState(p) for p in plans], k)
    ctx = SearchContext(retriever.resources)
    stage(batch, ctx)
    return batch


def test_positive_text_drops_the_negated_part():
    plan = QueryPlan("rivers that are not in Spain", And((Atom("rivers"), Not(Atom("Spain")))))
    assert query_side_text(plan, "positive") == "rivers"
    assert query_side_text(plan, "query") == plan.text
    union = QueryPlan("a or b", Or((Atom("a"), Atom("b"))))
    assert query_side_text(union, "positive") == "a or b"


def test_dense_candidates_equal_plain_retrieval(small_logic_retriever):
    plan = QueryPlan("lakes", Atom("lakes"))
    batch = _run(small_logic_retriever, DenseCandidates(7), [plan])
    plain = small_logic_retriever.dense.search("lakes", 7)
    rows = small_logic_retriever.resources.rows_by_id()
    assert batch.queries[0].candidates.tolist() == [rows[h.id] for h in plain]
    np.testing.assert_allclose(
        batch.queries[0].sources["dense"].scores, [h.score for h in plain], rtol=1e-5
    )


def test_atom_candidates_pool_every_positive_atom(small_logic_retriever):
    logic = And((Atom("rivers"), Atom("mountains"), Not(Atom("lakes"))))
    batch = _run(small_logic_retriever, AtomCandidates(6), [QueryPlan("q", logic)])
    state = batch.queries[0]
    assert set(state.sources) == {"atom:rivers", "atom:mountains"}  # not the negated one
    rows = small_logic_retriever.resources.rows_by_id()
    expected = {
        rows[h.id]
        for a in ("rivers", "mountains")
        for h in small_logic_retriever.dense.search(a, 6)
    }
    assert set(state.candidates.tolist()) == expected


def test_bm25_candidates_match_bm25s(small_logic_retriever):
    plan = QueryPlan("rivers not lakes", And((Atom("rivers"), Not(Atom("lakes")))))
    batch = _run(small_logic_retriever, BM25Candidates(5), [plan])
    scores, ids = small_logic_retriever.resources.bm25().search(["rivers"], 5)
    assert batch.queries[0].sources["bm25"].ids.tolist() == [i for i in ids[0].tolist()]


def test_splade_and_orthogonal_fill_their_sources(small_logic_retriever):
    logic = And((Atom("rivers"), Not(Atom("lakes"))))
    plans = [QueryPlan("rivers not lakes", logic)]
    for stage, name in (
        (SpladeCandidates("compose"), "splade"),
        (OrthogonalCandidates(), "orthogonal"),
    ):
        state = _run(small_logic_retriever, stage, plans, k=9).queries[0]
        assert len(state.sources[name].ids) == 9
        assert np.all(np.diff(state.sources[name].scores) <= 1e-6)
