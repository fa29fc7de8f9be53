"""benchmarks/bench_quality.py on ten real pages (MiniLM, a test-double LLM): the rows it
times are the pipelines it names, at each k, with the calls each one asked."""

from __future__ import annotations

from benchmarks.bench_quality import time_pipelines
from tests.verifiers.test_llm import FakeGenerator

QUERY = "novels that are not science fiction novels"


def test_time_pipelines_rows_and_calls(quest_novel_pages, minilm):
    from logic_rag import Document
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.verifiers.llm import LLMVerifier

    docs = [Document(id=p["title"], title=p["title"], text=p["text"]) for p in quest_novel_pages]
    retriever = LogicRetriever.build(docs, model=minilm)
    verifier = LLMVerifier(generator=FakeGenerator())
    out = time_pipelines(
        retriever, verifier, [QUERY], ks=(2, 5), pool=8, budget=None, log=lambda _: None
    )
    assert set(out["by_k"]) == {2, 5}
    for row in out["by_k"].values():
        assert set(row) == {"vanilla", "quality", "llm_rerank"}
        assert row["vanilla"]["llm_calls_mean"] == 0
        assert row["vanilla"]["seconds_per_call"] is None  # no calls: no cost per call
        q = row["quality"]
        # the pool's 8 pages x two atoms: quality puts the NOT atom to the LLM too
        assert q["all_pairs_calls_mean"] == 16
        assert 0 < q["llm_calls_mean"] <= 16 and q["p50_s"] > 0
        r = row["llm_rerank"]
        assert r["llm_rerank_top"] == max(1, round(q["llm_calls_mean"]))
        # one whole-query check per page, at most the pool's 8 pages
        assert r["llm_calls_mean"] == min(r["llm_rerank_top"], 8)
    every = out["all_pairs_verify"]
    assert every["queries"] == 1 and every["llm_calls_mean"] == 8


def test_a_pool_no_deeper_than_k_is_refused():
    import pytest

    with pytest.raises(ValueError, match="larger than every k"):
        time_pipelines(None, None, ["q"], ks=(5, 20), pool=20)
