"""The rerankers' candidate-embedding cache: same vectors as embedding afresh, fewer encodes."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import TEXTS

NEGATION = "fruits grown in California that are not berries"


@pytest.fixture
def counted(minilm, monkeypatch):
    """The shared MiniLM encoder, counting the texts it embeds per call."""
    calls: list[int] = []
    original = minilm.encode_documents

    def counting(texts, *args, **kwargs):
        calls.append(len(texts))
        return original(texts, *args, **kwargs)

    monkeypatch.setattr(minilm, "encode_documents", counting)
    return minilm, calls


def _docs(texts):
    from logic_rag.corpus import Document

    return [Document(id=str(i), text=t, title="") for i, t in enumerate(texts)]


def test_cached_vectors_equal_a_fresh_encoding(minilm):
    """Against the uncached path (DenseRetriever.build + PassageVectors.build over the call's
    candidates), in any order, with repeats and with pages served from the cache."""
    from logic_rag.index.passages import PassageVectors
    from logic_rag.integrations._embedding_cache import CandidateEmbeddingCache
    from logic_rag.retriever import DenseRetriever

    cache = CandidateEmbeddingCache(64)
    cache.vectors(minilm, _docs(TEXTS[:6]), passages=True)  # warm part of them
    docs = _docs([TEXTS[7], TEXTS[2], TEXTS[7], TEXTS[0], TEXTS[9], TEXTS[5]])
    dense, passages = cache.vectors(minilm, docs, passages=True)
    want_dense = DenseRetriever.build(docs, model=minilm, show_progress_bar=False).index
    want = PassageVectors.build(minilm, [d.text for d in docs], show_progress_bar=False)
    np.testing.assert_allclose(dense, want_dense.vectors(), atol=1e-5)
    assert np.array_equal(passages.offsets, want.offsets)
    np.testing.assert_allclose(
        passages.vectors.astype(np.float32), want.vectors.astype(np.float32), atol=2e-3
    )
    assert passages.vectors.dtype == want.vectors.dtype
    dense_only, none = cache.vectors(minilm, docs, passages=False)
    assert none is None
    np.testing.assert_allclose(dense_only, dense, atol=1e-5)


def test_a_warm_call_embeds_nothing_and_ranks_the_same(counted):
    from logic_rag.integrations._rerank import CandidateReranker

    encoder, calls = counted
    cold = CandidateReranker(encoder, cache_size=0)
    warm = CandidateReranker(encoder)
    reference = cold.rerank(NEGATION, TEXTS)
    first = warm.rerank(NEGATION, TEXTS)
    calls.clear()
    again = warm.rerank(NEGATION, TEXTS)
    assert calls == []  # every page came from the cache
    assert warm.cache.hits == len(TEXTS) and warm.cache.misses == len(TEXTS)
    for got in (first, again):
        assert [r.position for r in got] == [r.position for r in reference]
        np.testing.assert_allclose(
            [r.hit.score for r in got], [r.hit.score for r in reference], atol=1e-5
        )
        assert [r.hit.constraints for r in got] == [r.hit.constraints for r in reference]

    # An edited page is a new key: only it (and its sentences) is embedded.
    edited = [*TEXTS[:3], TEXTS[3] + " Edited.", *TEXTS[4:]]
    calls.clear()
    warm.rerank(NEGATION, edited)
    assert len(calls) == 2 and calls[0] == 1  # one page, then its sentences
    # A page repeated within one call is embedded once.
    calls.clear()
    CandidateReranker(encoder, passages=False).rerank(NEGATION, [TEXTS[0], TEXTS[0], TEXTS[1]])
    assert calls == [2]


def test_the_cache_is_bounded_and_drops_the_least_recently_used(counted):
    from logic_rag.integrations._rerank import CandidateReranker

    encoder, calls = counted
    reranker = CandidateReranker(encoder, cache_size=3, passages=False)
    reranker.rerank(NEGATION, TEXTS[:3])
    reranker.rerank(NEGATION, [TEXTS[0]])  # TEXTS[0] is now the most recent
    reranker.rerank(NEGATION, TEXTS[3:5])  # two new pages push out TEXTS[1] and TEXTS[2]
    assert len(reranker.cache) == 3
    calls.clear()
    reranker.rerank(NEGATION, [TEXTS[0], TEXTS[3], TEXTS[4]])
    assert calls == []
    reranker.rerank(NEGATION, [TEXTS[1]])
    assert calls == [1]


@pytest.mark.parametrize("size", [-1, True, 1.5, "10", None])
def test_cache_size_is_checked(minilm, size):
    from logic_rag.integrations._rerank import CandidateReranker

    with pytest.raises(ValueError, match="cache_size"):
        CandidateReranker(minilm, cache_size=size)


def test_framework_rerankers_pass_the_cache_size_through(minilm):
    pytest.importorskip("llama_index.core")
    pytest.importorskip("langchain_core")
    from logic_rag.integrations.langchain import LogicLangChainReranker as LangChainReranker
    from logic_rag.integrations.llama_index import LogicLlamaIndexReranker as LlamaIndexReranker

    assert LlamaIndexReranker(minilm, cache_size=0).reranker.cache.capacity == 0
    assert LangChainReranker(minilm, cache_size=7).reranker.cache.capacity == 7
    assert LangChainReranker(minilm).reranker.cache.capacity == 1024
