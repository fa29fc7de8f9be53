"""The pipeline's data and composition: union of candidates, freezing, equality, batching."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.candidates import AtomCandidates, DenseCandidates
from logic_rag.compose.logic import SoftLogic
from logic_rag.pipeline.ranking import Backfill, Combine, TopK
from logic_rag.pipeline.stage import Pipeline
from logic_rag.pipeline.state import QueryPlan, QueryState
from logic_rag.query.algebra import And, Atom, Not
from logic_rag.verifiers import EmbeddingVerifier, Verify


def _state() -> QueryState:
    return QueryState(QueryPlan("a not b", And((Atom("a"), Not(Atom("b"))))))


def test_candidates_are_a_union_in_first_seen_order():
    state = _state()
    state.add_candidates("one", np.array([5, 3, 3, -1]), np.array([0.9, 0.8, 0.8, 0.1]))
    state.add_candidates("two", np.array([7, 5, 1]), np.array([3.0, 2.0, 1.0]))
    assert state.candidates.tolist() == [5, 3, 7, 1]
    assert state.sources["one"].ids.tolist() == [5, 3, 3]  # -1 padding dropped
    assert state.sources["two"].scores.tolist() == [3.0, 2.0, 1.0]


def test_no_candidates_after_scoring_began():
    state = _state()
    state.add_candidates("one", np.array([1, 2]), np.array([1.0, 0.5]))
    state.set_signal("x", np.array([0.1, 0.2]))
    with pytest.raises(RuntimeError, match="candidate stages first"):
        state.add_candidates("two", np.array([3]), np.array([1.0]))
    with pytest.raises(ValueError, match="shape"):
        state.set_signal("y", np.array([1.0]))


def test_plan_knows_its_atoms_and_negations():
    plan = _state().plan
    assert [a.text for a in plan.atoms] == ["a", "b"]
    assert plan.negated == {Atom("b")}
    assert plan.has_logic
    assert not QueryPlan("x", Atom("x")).has_logic


def test_pipelines_flatten_and_compare_by_settings():
    a = DenseCandidates(50) >> AtomCandidates(100)
    b = a >> Verify(EmbeddingVerifier()) >> SoftLogic()
    assert isinstance(b, Pipeline) and len(b.stages) == 4
    same = DenseCandidates(50) >> AtomCandidates(100) >> Verify(EmbeddingVerifier()) >> SoftLogic()
    assert b == same and hash(b) == hash(same)
    assert b != (
        DenseCandidates(60) >> AtomCandidates(100) >> Verify(EmbeddingVerifier()) >> SoftLogic()
    )
    assert "DenseCandidates(depth=50" in b.describe()
    assert b.config()["stages"][2].startswith('Verify(verifier="EmbeddingVerifier(atom_depth=300')
    with pytest.raises(TypeError):
        Pipeline([DenseCandidates(), "not a stage"])  # type: ignore[list-item]


def test_a_pipeline_encodes_once_and_searches_once(small_logic_retriever, monkeypatch):
    """All query-side texts of a batch: one encoder call, one FAISS call."""
    retriever = small_logic_retriever
    calls = {"encode": 0, "search": 0}
    encoder, index = retriever.dense.encoder, retriever.dense.index
    real_encode, real_search = encoder.encode_queries, index.search

    def encode(texts, **kw):
        calls["encode"] += 1
        return real_encode(texts, **kw)

    def search(vectors, k):
        calls["search"] += 1
        return real_search(vectors, k)

    monkeypatch.setattr(encoder, "encode_queries", encode)
    monkeypatch.setattr(index, "search", search)
    pipeline = (
        DenseCandidates(30, text="positive")
        >> AtomCandidates(40)
        >> Verify(EmbeddingVerifier(atom_depth=60))
        >> SoftLogic()
        >> Combine.of(cosine=1.0, truth=0.5)
        >> TopK()
        >> Backfill()
    )
    queries = ["entities that are not rivers", "mountains or lakes", "towns"]
    hits = retriever.search_batch(queries, 5, strategy=pipeline)
    assert [len(h) for h in hits] == [5, 5, 5]
    assert calls == {"encode": 1, "search": 1}
