"""Sentence vectors: splitting, MaxSim against brute force, persistence checks."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.errors import IndexCorruptError, IndexMismatchError
from logic_rag.index.passages import PassageVectors, split_sentences


def test_split_sentences():
    text = "It is a film. It was shot in Rome! Is it Italian? Yes. 3 sequels followed."
    assert split_sentences(text) == [
        "It is a film.",
        "It was shot in Rome!",
        "Is it Italian?",
        "Yes.",
        "3 sequels followed.",
    ]
    assert split_sentences("no end punctuation") == ["no end punctuation"]
    assert split_sentences("") == [" "]
    assert len(split_sentences(" ".join(f"S{i}." for i in range(50)), max_sentences=4)) == 4


def test_max_sim_matches_brute_force():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 6, size=30)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    vectors = rng.standard_normal((offsets[-1], 8)).astype(np.float16)
    passages = PassageVectors(vectors, offsets)
    queries = rng.standard_normal((3, 8)).astype(np.float32)
    ids = np.array([5, 0, 29, 5, 17])
    got = passages.max_sim(queries, ids)
    v = vectors.astype(np.float32)
    expected = np.array(
        [[max(q @ v[j] for j in range(offsets[d], offsets[d + 1])) for d in ids] for q in queries]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert passages.max_sim(queries, np.array([], dtype=np.int64)).shape == (3, 0)
    with pytest.raises(IndexMismatchError):
        passages.max_sim(np.ones((1, 4), dtype=np.float32), ids)


def test_offsets_must_cover_every_document():
    with pytest.raises(IndexCorruptError):
        PassageVectors(np.zeros((3, 2), np.float16), np.array([0, 1, 4]))
    with pytest.raises(IndexCorruptError, match="at least one"):
        PassageVectors(np.zeros((3, 2), np.float16), np.array([0, 1, 1, 3]))


def test_round_trip_and_document_count_check(tmp_path):
    passages = PassageVectors(np.ones((3, 2), np.float16), np.array([0, 1, 3]))
    for name, write in passages.writers().items():
        write(tmp_path / name)
    loaded = PassageVectors.load(tmp_path, 2)
    np.testing.assert_array_equal(loaded.offsets, passages.offsets)
    with pytest.raises(IndexCorruptError, match="cover 2 documents"):
        PassageVectors.load(tmp_path, 5)
    (tmp_path / PassageVectors.VECTORS_FILE).write_bytes(b"not numpy")
    with pytest.raises(IndexCorruptError):
        PassageVectors.load(tmp_path, 2)


# ------------------------------------------------------------------ compact storage
def _unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _corpus(seed: int = 0, n_docs: int = 200, d: int = 64):
    """Unit sentence vectors of ``n_docs`` documents with 1-12 sentences each, and queries
    that lie near some sentences (so the top documents are well separated from chance)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 13, size=n_docs)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    vectors = _unit_rows(rng, int(offsets[-1]), d)
    picks = rng.choice(len(vectors), size=8, replace=False)
    queries = vectors[picks] + 0.3 * _unit_rows(rng, 8, d)
    return vectors, offsets, queries / np.linalg.norm(queries, axis=1, keepdims=True)


def _brute_max_sim(vectors, offsets, queries):
    sims = queries @ vectors.T
    return np.stack(
        [sims[:, offsets[i] : offsets[i + 1]].max(1) for i in range(len(offsets) - 1)], axis=1
    )


#: Largest |max-sim - float32 brute force| allowed per stored dtype (unit vectors, 64-d).
TOLERANCE = {"float32": 1e-6, "float16": 2e-3, "int8": 1e-2}


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_compact_max_sim_matches_float32_brute_force(dtype):
    vectors, offsets, queries = _corpus()
    passages = PassageVectors.from_vectors(vectors, offsets, dtype=dtype)
    assert passages.dtype == dtype
    assert (passages.scales is not None) == (dtype == "int8")
    ids = np.arange(passages.n_documents)
    got = passages.max_sim(queries, ids)
    truth = _brute_max_sim(vectors, offsets, queries)
    assert np.abs(got - truth).max() <= TOLERANCE[dtype]
    for g, t in zip(got, truth, strict=True):  # the same top 10 documents for every query
        assert set(np.argsort(-g)[:10]) == set(np.argsort(-t)[:10])


def test_int8_rows_decode_with_their_scale():
    rng = np.random.default_rng(4)
    raw = rng.standard_normal((5, 16)).astype(np.float32) * np.array([[1e-3], [1], [10], [0], [3]])
    raw[3] = 0.0
    passages = PassageVectors.from_vectors(raw, np.array([0, 2, 5]), dtype="int8")
    assert passages.vectors.dtype == np.int8 and np.abs(passages.vectors).max() <= 127
    decoded = passages.decode(0, 5)
    step = np.abs(raw).max(1, keepdims=True) / 127
    assert np.all(np.abs(decoded - raw) <= step / 2 + 1e-7)
    assert np.all(decoded[3] == 0)


@pytest.mark.parametrize("dtype", ["float16", "int8"])
def test_loaded_vectors_are_memory_mapped_not_read(tmp_path, dtype):
    vectors, offsets, queries = _corpus(seed=2)
    passages = PassageVectors.from_vectors(vectors, offsets, dtype=dtype)
    for name, write in passages.writers().items():
        write(tmp_path / name)
    loaded = PassageVectors.load(tmp_path, passages.n_documents, dtype=dtype)
    assert isinstance(loaded.vectors, np.memmap) and loaded.vectors.mode == "r"
    assert loaded.dtype == dtype
    assert (dtype == "int8") == isinstance(loaded.scales, np.memmap)
    ids = np.array([3, 150, 7])
    np.testing.assert_array_equal(loaded.max_sim(queries, ids), passages.max_sim(queries, ids))
    with pytest.raises(ValueError, match="read-only"):
        loaded.vectors[0, 0] = 1
    eager = PassageVectors.load(tmp_path, passages.n_documents, mmap=False)
    assert not isinstance(eager.vectors, np.memmap)
    with pytest.raises(IndexCorruptError, match="the manifest says float32"):
        PassageVectors.load(tmp_path, passages.n_documents, dtype="float32")


def test_float32_passages_of_an_older_index_still_load(tmp_path):
    """Indexes written before sentence_dtype existed: two files, no manifest entry, any
    float dtype (float32 here) - they load and score as they did."""
    vectors, offsets, queries = _corpus(seed=3)
    np.save(tmp_path / PassageVectors.VECTORS_FILE, vectors, allow_pickle=False)
    np.save(tmp_path / PassageVectors.OFFSETS_FILE, offsets, allow_pickle=False)
    loaded = PassageVectors.load(tmp_path, len(offsets) - 1, dtype=None)
    assert loaded.dtype == "float32" and loaded.scales is None
    ids = np.arange(len(offsets) - 1)
    np.testing.assert_allclose(
        loaded.max_sim(queries, ids), _brute_max_sim(vectors, offsets, queries), atol=1e-6
    )


def test_int8_needs_its_scales(tmp_path):
    codes = np.zeros((3, 2), np.int8)
    with pytest.raises(IndexCorruptError, match="one scale per row"):
        PassageVectors(codes, np.array([0, 1, 3]))
    with pytest.raises(IndexCorruptError, match="shape"):
        PassageVectors(codes, np.array([0, 1, 3]), np.ones(2, np.float32))
    with pytest.raises(IndexCorruptError, match="int64"):
        PassageVectors(np.zeros((3, 2), np.int64), np.array([0, 1, 3]))
    with pytest.raises(ValueError, match="sentence_dtype must be one of"):
        PassageVectors.from_vectors(np.zeros((3, 2)), np.array([0, 1, 3]), dtype="bfloat16")
    np.save(tmp_path / PassageVectors.VECTORS_FILE, codes, allow_pickle=False)
    np.save(tmp_path / PassageVectors.OFFSETS_FILE, np.array([0, 1, 3]), allow_pickle=False)
    with pytest.raises(IndexCorruptError, match="passage_scales.npy"):
        PassageVectors.load(tmp_path, 2)
