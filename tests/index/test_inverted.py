"""InvertedIndex against brute-force dense numpy scoring, plus save/load integrity."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from logic_rag.errors import IndexCorruptError, IndexMismatchError
from logic_rag.index.inverted import InvertedIndex, top_k

VOCAB = 300


def _random_docs(rng: np.random.Generator, n: int, density: float = 0.05) -> sp.csr_matrix:
    """Non-negative integer-valued weights: float32 sums are exact, so ties are real ties."""
    mat = sp.random(n, VOCAB, density=density, format="csr", random_state=rng, dtype=np.float32)
    mat.data = rng.integers(1, 4, size=mat.nnz).astype(np.float32)
    return mat


def _random_queries(rng: np.random.Generator, n: int) -> np.ndarray:
    """Dense queries with positive AND negative integer weights on a few terms."""
    q = np.zeros((n, VOCAB), dtype=np.float32)
    for row in q:
        terms = rng.choice(VOCAB, size=12, replace=False)
        row[terms] = rng.integers(-3, 4, size=12)
    return q


def _brute_force(docs: sp.csr_matrix, queries: np.ndarray, k: int):
    """Reference: full dense scores, stable sort by (-score, id), k capped at n_docs."""
    scores = queries.astype(np.float64) @ docs.toarray().astype(np.float64).T
    n_docs = scores.shape[1]
    k = min(k, n_docs)
    ids = np.full((len(queries), k), -1)
    vals = np.full((len(queries), k), -np.inf)
    for r, s in enumerate(scores):
        order = sorted(range(n_docs), key=lambda d: (-s[d], d))[:k]
        ids[r, : len(order)] = order
        vals[r, : len(order)] = s[order]
    return vals, ids


@pytest.mark.parametrize("k", [1, 7, 60, 250])  # 250 > n_docs: capped at n_docs
def test_search_matches_brute_force_with_negative_weights(k: int) -> None:
    rng = np.random.default_rng(k)
    docs = _random_docs(rng, 200)
    queries = _random_queries(rng, 9)
    assert (queries < 0).any()
    index = InvertedIndex(VOCAB)
    index.add(docs)
    scores, ids = index.search(sp.csr_matrix(queries), k)
    ref_scores, ref_ids = _brute_force(docs, queries, k)
    assert scores.shape == ids.shape == (9, min(k, 200))
    np.testing.assert_array_equal(ids, ref_ids)
    np.testing.assert_allclose(scores, ref_scores)


def test_search_real_valued_weights_scores_match() -> None:
    rng = np.random.default_rng(0)
    docs = sp.random(150, VOCAB, density=0.08, format="csr", random_state=rng, dtype=np.float32)
    queries = rng.normal(size=(5, VOCAB)).astype(np.float32) * (rng.random((5, VOCAB)) < 0.1)
    index = InvertedIndex(VOCAB)
    index.add(docs)
    scores, ids = index.search(queries, 10)
    ref = queries.astype(np.float64) @ docs.toarray().T.astype(np.float64)
    np.testing.assert_allclose(scores, -np.sort(-ref, axis=1)[:, :10], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.take_along_axis(ref, ids, 1), scores, rtol=1e-5, atol=1e-5)


def test_zero_overlap_documents_beat_documents_with_negated_terms() -> None:
    docs = sp.csr_matrix(np.array([[2, 0, 0], [0, 1, 0], [0, 0, 5], [1, 1, 0]], dtype=np.float32))
    index = InvertedIndex(3)
    index.add(docs)
    scores, ids = index.search(np.array([[0, 0, -1]], dtype=np.float32), 4)
    # Docs 0, 1, 3 never mention the negated term: score 0, ascending ids; doc 2 last.
    assert ids.tolist() == [[0, 1, 3, 2]]
    assert scores.tolist() == [[0, 0, 0, -5]]


def test_incremental_add_equals_single_add_and_returns_ids() -> None:
    rng = np.random.default_rng(3)
    docs = _random_docs(rng, 120)
    queries = _random_queries(rng, 4)
    one = InvertedIndex(VOCAB)
    one.add(docs)
    two = InvertedIndex(VOCAB)
    assert two.add(docs[:50]).tolist() == list(range(50))
    assert two.search(queries, 3)[1].max() < 50  # builds the posting lists once...
    assert two.add(docs[50:]).tolist() == list(range(50, 120))
    assert len(two) == 120  # ...and the next add must invalidate them
    for a, b in zip(one.search(queries, 15), two.search(queries, 15), strict=True):
        np.testing.assert_array_equal(a, b)


def test_empty_index_returns_no_columns() -> None:
    index = InvertedIndex(VOCAB)
    scores, ids = index.search(np.ones(VOCAB, dtype=np.float32), 3)
    assert ids.shape == scores.shape == (1, 0)


def test_score_rescoring_matches_brute_force() -> None:
    rng = np.random.default_rng(5)
    docs = _random_docs(rng, 80)
    queries = _random_queries(rng, 3)
    index = InvertedIndex(VOCAB)
    index.add(docs)
    cand = rng.integers(0, 80, size=(3, 10))
    cand[1, 4] = -1
    got = index.score(queries, cand)
    dense = docs.toarray()
    for r in range(3):
        for c in range(10):
            want = -np.inf if cand[r, c] < 0 else float(queries[r] @ dense[cand[r, c]])
            assert got[r, c] == pytest.approx(want)
    shared = index.score(queries, np.array([0, 79]))
    np.testing.assert_allclose(shared, queries @ dense[[0, 79]].T)
    with pytest.raises(IndexError, match="outside"):
        index.score(queries, np.array([80]))


def test_dimension_mismatch_is_refused() -> None:
    index = InvertedIndex(VOCAB)
    with pytest.raises(IndexMismatchError, match="same encoder"):
        index.add(sp.csr_matrix((2, VOCAB + 1), dtype=np.float32))
    index.add(sp.csr_matrix((2, VOCAB), dtype=np.float32))
    with pytest.raises(IndexMismatchError, match="model that built the index"):
        index.search(np.ones((1, VOCAB - 1), dtype=np.float32), 1)
    with pytest.raises(ValueError, match="NaN"):
        index.search(np.full(VOCAB, np.nan, dtype=np.float32), 1)
    with pytest.raises(TypeError, match="scipy.sparse"):
        index.add(np.ones((1, VOCAB)))


def test_save_load_round_trip(tmp_path) -> None:
    rng = np.random.default_rng(7)
    docs = _random_docs(rng, 90)
    queries = _random_queries(rng, 4)
    index = InvertedIndex(VOCAB, metadata={"model": "splade-tiny", "fingerprint": "abc"})
    index.add(docs)
    index.save(tmp_path / "idx")
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == [
        "inverted.json",
        "inverted.npz",
    ]
    loaded = InvertedIndex.load(tmp_path / "idx", expected_vocab_size=VOCAB)
    assert len(loaded) == 90 and loaded.metadata == index.metadata
    assert (loaded.matrix != index.matrix).nnz == 0
    for a, b in zip(index.search(queries, 12), loaded.search(queries, 12), strict=True):
        np.testing.assert_array_equal(a, b)
    # the npz holds plain arrays: it loads without pickle
    with np.load(tmp_path / "idx" / "inverted.npz", allow_pickle=False) as npz:
        assert set(npz.files) == {"data", "indices", "indptr", "shape"}


@pytest.fixture()
def saved(tmp_path):
    index = InvertedIndex(VOCAB)
    index.add(_random_docs(np.random.default_rng(11), 40))
    return index.save(tmp_path / "idx")


def test_load_missing_file(saved) -> None:
    (saved / "inverted.npz").unlink()
    with pytest.raises(IndexCorruptError, match="missing.*rebuild"):
        InvertedIndex.load(saved)


def test_load_corrupt_matrix(saved) -> None:
    path = saved / "inverted.npz"
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(IndexCorruptError, match="checksum"):
        InvertedIndex.load(saved)


def test_load_garbage_matrix_with_matching_checksum(saved) -> None:
    """A file that passes the checksum but is not an npz still gets a clear error."""
    import hashlib

    (saved / "inverted.npz").write_bytes(b"not an npz file")
    manifest = json.loads((saved / "inverted.json").read_text())
    manifest["sha256"] = hashlib.sha256(b"not an npz file").hexdigest()
    (saved / "inverted.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexCorruptError, match="unreadable"):
        InvertedIndex.load(saved)


def test_load_corrupt_manifest(saved) -> None:
    (saved / "inverted.json").write_text('{"vocab_size": 3')
    with pytest.raises(IndexCorruptError, match="unreadable"):
        InvertedIndex.load(saved)


def test_load_vocab_mismatch(saved) -> None:
    with pytest.raises(IndexMismatchError, match="300-term vocabulary.*30522"):
        InvertedIndex.load(saved, expected_vocab_size=30522)


@settings(max_examples=60, deadline=None)
@given(
    scores=arrays(
        np.float32,
        st.tuples(st.integers(1, 3), st.integers(0, 12)),
        elements=st.integers(-3, 3).map(float),
    ),
    k=st.integers(1, 15),
)
def test_top_k_matches_stable_sort(scores: np.ndarray, k: int) -> None:
    got_scores, got_ids = top_k(scores, k)
    for r, row in enumerate(scores):
        order = sorted(range(len(row)), key=lambda d: (-row[d], d))[:k]
        assert got_ids[r].tolist() == order  # k is capped at n_docs: no padding
        assert got_scores[r].tolist() == [row[d] for d in order]
    assert got_ids.shape == (scores.shape[0], min(k, scores.shape[1]))
