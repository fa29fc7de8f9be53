"""Differential: a reranker given the whole corpus ranks exactly as the retriever does.

The candidate set is every document of the ten-document corpus, in the order and with
the scores of the retriever's plain dense ranking (what a vector store would hand a
reranker). With ``calibration="corpus"`` the reranker's pipeline is the strategy's own,
so ids, scores and constraint degrees must match ``LogicRetriever.search`` for every
strategy that runs over given candidates, and every query of the shared set.
"""

from __future__ import annotations

from dataclasses import fields

import pytest

from logic_rag.strategies import DENSE_STRATEGIES
from logic_rag.strategies import STRATEGIES as REGISTRY

from .conftest import QUERIES

#: ``quality`` and ``llm-rerank`` need the LLM of the registry (quality's reranker run is in
#: test_reranker_quality.py); the others run on MiniLM alone.
STRATEGIES = [s for s in DENSE_STRATEGIES if s not in ("quality", "llm-rerank")]
#: Non-default values: the prior's positive share, the truth's weight (0.4 for ``rerank``,
#: 0.6 for the pool strategies), where a strategy's settings have them.
CHANGES = {"positive_prior": 0.3, "truth_weight": 0.6}


def settings(strategy: str):
    cls = REGISTRY[strategy].settings
    own = {f.name for f in fields(cls)}
    values = {k: v for k, v in CHANGES.items() if k in own}
    if strategy == "rerank":
        values["truth_weight"] = 0.4
    return cls(**values)


@pytest.fixture(scope="module")
def retriever(engine):
    return engine.with_settings(*{type(settings(s)): settings(s) for s in STRATEGIES}.values())


def _given(engine, query):
    """The whole corpus in dense order, with the dense scores: the reranker's input."""
    plain = engine.search(query, len(engine), strategy="vanilla")
    rows = engine.resources.rows_by_id()
    docs = [engine.documents[rows[h.id]] for h in plain]
    return docs, [h.score for h in plain]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_reranker_over_the_whole_corpus_equals_the_retriever(retriever, minilm, strategy):
    from logic_rag.integrations._rerank import CandidateReranker

    reranker = CandidateReranker(
        minilm, strategy=strategy, settings=settings(strategy), calibration="corpus"
    )
    for query in QUERIES:
        want = retriever.search(query, len(retriever), strategy=strategy)
        docs, scores = _given(retriever, query)
        got = reranker.rerank(
            query,
            [d.text for d in docs],
            titles=[d.title for d in docs],
            scores=scores,
        )
        assert [docs[r.position].id for r in got] == [h.id for h in want], (strategy, query)
        assert [r.hit.score for r in got] == pytest.approx([h.score for h in want], abs=1e-4)
        for r, h in zip(got, want, strict=True):
            assert r.hit.constraints.keys() == h.constraints.keys()
            for name, degree in h.constraint_scores.items():
                assert r.hit.constraint_scores[name] == pytest.approx(degree, abs=1e-3)
            assert r.hit.logic.get("query") == h.logic.get("query")


def test_candidate_calibration_changes_only_the_boundary(retriever, minilm):
    """With the default calibration the degrees move (the boundary sits between two
    candidates) but the decomposition and the candidates are the same."""
    from logic_rag.integrations._rerank import CandidateReranker

    query = QUERIES[0]
    docs, scores = _given(retriever, query)
    texts, titles = [d.text for d in docs], [d.title for d in docs]
    corpus = CandidateReranker(minilm, settings=settings("verify"), calibration="corpus")
    relative = CandidateReranker(minilm, settings=settings("verify"))
    a = corpus.rerank(query, texts, titles=titles, scores=scores)
    b = relative.rerank(query, texts, titles=titles, scores=scores)
    assert sorted(r.position for r in a) == sorted(r.position for r in b)
    assert a[0].hit.logic["query"] == b[0].hit.logic["query"]
    degrees = [r.hit.constraint_scores for r in sorted(a, key=lambda r: r.position)]
    others = [r.hit.constraint_scores for r in sorted(b, key=lambda r: r.position)]
    assert degrees != others
