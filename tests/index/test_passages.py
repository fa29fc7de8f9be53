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
