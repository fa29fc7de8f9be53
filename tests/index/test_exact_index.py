"""The in-memory exact index a reranker searches its candidates with (no FAISS)."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.errors import IndexMismatchError
from logic_rag.index.exact import ExactIndex
from logic_rag.index.faiss_index import DenseIndex


def _unit(rng, n, dim=16):
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("n", [1, 7, 120])
def test_search_equals_a_faiss_flat_index(n):
    rng = np.random.default_rng(n)
    docs, queries = _unit(rng, n), _unit(rng, 5)
    flat = DenseIndex(docs.shape[1], "flat")
    flat.add(docs)
    exact = ExactIndex(docs)
    for k in (1, 3, n, n + 10):
        want_s, want_i = flat.search(queries, k)
        got_s, got_i = exact.search(queries, k)
        assert got_i.tolist() == want_i.tolist()
        np.testing.assert_allclose(got_s, want_s, atol=1e-6)
        assert got_s.dtype == np.float32 and got_i.dtype == np.int64
    assert (exact.ntotal, exact.dim, exact.kind) == (n, 16, "exact")
    np.testing.assert_array_equal(exact.vectors(), docs)


def test_ties_keep_the_given_order_and_an_empty_index_pads():
    same = np.ones((4, 3), np.float32) / np.sqrt(3)
    _scores, ids = ExactIndex(same).search(same[:1], 4)
    assert ids.tolist() == [[0, 1, 2, 3]]
    scores, ids = ExactIndex(np.zeros((0, 3), np.float32)).search(same[:2], 5)
    assert ids.tolist() == [[-1], [-1]] and np.isneginf(scores).all()


def test_bad_input_is_refused():
    index = ExactIndex(np.eye(3, dtype=np.float32))
    with pytest.raises(IndexMismatchError, match="3-d index"):
        index.search(np.ones((1, 4), np.float32), 1)
    with pytest.raises(ValueError, match="k must be positive"):
        index.search(np.ones((1, 3), np.float32), 0)
    with pytest.raises(IndexMismatchError, match="2-d"):
        ExactIndex(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="NaN or infinite"):
        ExactIndex(np.array([[np.nan, 0.0]], np.float32))


def test_a_retriever_over_it_searches_but_is_not_saved(minilm, tmp_path):
    from logic_rag.corpus import Document
    from logic_rag.retriever import DenseRetriever

    docs = [Document(id=str(i), text=t) for i, t in enumerate(["apples", "pears", "cars"])]
    vectors = minilm.encode_documents([d.text for d in docs])
    dense = DenseRetriever(minilm, ExactIndex(vectors), docs)
    assert [h.id for h in dense.search("a fruit", k=2)] == [
        h.id for h in DenseRetriever.from_embeddings(minilm, vectors, docs).search("a fruit", k=2)
    ]
    with pytest.raises(TypeError, match="not saved"):
        dense.save(tmp_path / "index")
