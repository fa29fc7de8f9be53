"""FAISS index kinds against brute-force inner product."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.errors import IndexCorruptError, IndexMismatchError
from logic_rag.index.faiss_index import DenseIndex


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_flat_is_exact():
    rng = np.random.default_rng(0)
    docs, queries = _unit(rng, 500, 32), _unit(rng, 7, 32)
    index = DenseIndex(32)
    index.add(docs)
    scores, ids = index.search(queries, 10)
    brute = queries @ docs.T
    expected = np.argsort(-brute, axis=1)[:, :10]
    np.testing.assert_array_equal(ids, expected)
    np.testing.assert_allclose(scores, np.take_along_axis(brute, expected, 1), rtol=1e-5)


@pytest.mark.parametrize("kind", ["hnsw", "ivfpq"])
def test_approximate_kinds_find_most_true_neighbours(kind):
    rng = np.random.default_rng(1)
    docs = _unit(rng, 4000, 32)
    queries = docs[:50] + 0.05 * _unit(rng, 50, 32)
    index = DenseIndex(32, kind, nprobe=32)
    index.add(docs)
    _scores, ids = index.search(queries, 10)
    truth = np.argsort(-(queries @ docs.T), axis=1)[:, :10]
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, truth, strict=True)])
    assert recall > (0.9 if kind == "hnsw" else 0.5)
    assert (ids[:, 0] == np.arange(50)).mean() > 0.8


def test_dimension_mismatch_is_refused():
    index = DenseIndex(8)
    with pytest.raises(IndexMismatchError, match="dimension 4"):
        index.add(np.ones((2, 4), dtype=np.float32))
    index.add(np.ones((2, 8), dtype=np.float32))
    with pytest.raises(IndexMismatchError, match="dimension 16"):
        index.search(np.ones((1, 16), dtype=np.float32), 1)


def test_k_larger_than_the_index_and_empty_index():
    index = DenseIndex(4)
    scores, ids = index.search(np.ones((1, 4), dtype=np.float32), 3)
    assert (ids == -1).all()
    index.add(np.eye(4, dtype=np.float32)[:2])
    scores, ids = index.search(np.ones((1, 4), dtype=np.float32), 10)
    assert ids.shape == (1, 2)


def test_save_load_round_trip_and_corrupt_file(tmp_path):
    rng = np.random.default_rng(2)
    index = DenseIndex(16)
    index.add(_unit(rng, 20, 16))
    index.save(tmp_path / "x.faiss")
    loaded = DenseIndex.load(tmp_path / "x.faiss")
    assert (loaded.ntotal, loaded.dim) == (20, 16)
    (tmp_path / "bad.faiss").write_bytes(b"garbage" * 10)
    with pytest.raises(IndexCorruptError, match="rebuild the index"):
        DenseIndex.load(tmp_path / "bad.faiss")


def test_ivfpq_rescoring_with_exact_vectors_recovers_the_flat_top_10():
    rng = np.random.default_rng(5)
    docs = _unit(rng, 4000, 32)
    queries = _unit(rng, 30, 32)
    truth = np.argsort(-(queries @ docs.T), axis=1)[:, :10]
    # Every list probed (nprobe is capped at nlist), 8 coarse codes: PQ error alone.
    codes_only = DenseIndex(32, "ivfpq", refine=0, nprobe=10_000, pq_m=8)
    codes_only.add(docs)
    assert codes_only.exact is None
    refined = DenseIndex(32, "ivfpq", nprobe=10_000, pq_m=8, refine=10)
    refined.add(docs[:1000])
    refined.add(docs[1000:])
    assert refined.exact.dtype == np.float16 and refined.exact.shape == (4000, 32)

    def recall(ids):
        return np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, truth, strict=True)])

    scores, ids = refined.search(queries, 10)
    assert recall(ids) >= 0.95 and recall(codes_only.search(queries, 10)[1]) < 0.7
    exact = queries @ docs.T
    np.testing.assert_allclose(scores, np.take_along_axis(exact, ids, 1), atol=2e-3)
    assert np.all(np.diff(scores, axis=1) <= 0)
    np.testing.assert_array_equal(refined.vectors(), refined.exact)
    with pytest.raises(ValueError, match="refine"):
        DenseIndex(32, "ivfpq", refine=-1)


def test_write_flat_index_writes_faiss_s_own_bytes(tmp_path):
    from logic_rag.index.faiss_index import write_flat_index

    rng = np.random.default_rng(6)
    docs = _unit(rng, 300, 16)
    index = DenseIndex(16)
    index.add(docs)
    index.save(tmp_path / "whole.faiss")
    write_flat_index(tmp_path / "parts.faiss", 16, 300, [docs[:7], docs[7:200], docs[200:]])
    assert (tmp_path / "parts.faiss").read_bytes() == (tmp_path / "whole.faiss").read_bytes()
    loaded = DenseIndex.load(tmp_path / "parts.faiss")
    np.testing.assert_array_equal(loaded.vectors(), docs)
    with pytest.raises(ValueError, match="200 vectors were given"):
        write_flat_index(tmp_path / "short.faiss", 16, 300, [docs[:200]])
    assert not (tmp_path / "short.faiss").exists()
