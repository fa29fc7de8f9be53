"""The Milvus client's local side: sentence offsets (stored, derived) and the vector cache.

No Milvus here: these are the pure functions the store uses to know which primary keys
hold a document's sentences, and the cache that keeps what it read.
"""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.errors import IndexCorruptError
from logic_rag.index.milvus_local import (
    CACHE_ENV,
    DEFAULT_CACHE_MB,
    VectorCache,
    cache_bytes,
    compact,
    decode_counts,
    encode_counts,
    offsets_from_owners,
    sentence_rows,
)


def _offsets(counts) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def test_counts_round_trip_to_the_same_offsets():
    rng = np.random.default_rng(0)
    offsets = _offsets(rng.integers(1, 33, 20_000))
    text = encode_counts(offsets)
    assert text.isascii() and len(text) < 1.5 * 20_000  # 1-2 characters per document
    np.testing.assert_array_equal(decode_counts(text, 20_000, int(offsets[-1])), offsets)


@pytest.mark.parametrize(
    ("text", "documents", "sentences"),
    [
        ("not base64!", 3, 6),
        (encode_counts(_offsets([2, 2, 2])), 4, 6),  # another document count
        (encode_counts(_offsets([2, 2, 2])), 3, 7),  # another sentence count
        (encode_counts(_offsets([2, 0, 4])), 3, 6),  # a document without sentences
    ],
)
def test_bad_counts_are_refused(text, documents, sentences):
    with pytest.raises(IndexCorruptError):
        decode_counts(text, documents, sentences)


def test_offsets_from_the_owner_of_every_row():
    owner = np.array([0, 0, 1, 2, 2, 2, 3])
    np.testing.assert_array_equal(offsets_from_owners(owner, 4), [0, 2, 3, 6, 7])


@pytest.mark.parametrize(
    ("owner", "documents"),
    [
        ([0, 1, 0, 1], 2),  # a document's rows are not consecutive
        ([0, 0, 2, 2], 3),  # document 1 has no sentence
        ([0, 1, 1], 3),  # the last document has none
        ([1, 1, 2], 3),  # the first has none
    ],
)
def test_owners_that_are_not_csr_are_refused(owner, documents):
    with pytest.raises(IndexCorruptError):
        offsets_from_owners(np.array(owner), documents)


def test_sentence_rows_of_documents_in_their_order():
    offsets = _offsets([2, 1, 3, 1])
    rows, lengths = sentence_rows(offsets, np.array([2, 0, 3, 2]))
    np.testing.assert_array_equal(rows, [3, 4, 5, 0, 1, 6, 3, 4, 5])
    np.testing.assert_array_equal(lengths, [3, 2, 1, 3])
    rows, lengths = sentence_rows(offsets, np.array([], dtype=np.int64))
    assert rows.shape == (0,) and lengths.shape == (0,)


def test_cache_drops_the_least_recently_used_within_its_budget():
    block = np.zeros((4, 8), dtype=np.float32)  # 128 bytes + overhead each
    cache = VectorCache(3 * (block.nbytes + 128))
    cache.put_many([(k, block.copy()) for k in "abc"])
    assert cache.get_many(["a"])[0] is not None  # "a" is now the most recent
    cache.put_many([("d", block.copy())])
    assert [v is not None for v in cache.get_many(list("abcd"))] == [True, False, True, True]
    assert cache.nbytes <= cache.max_bytes and len(cache) == 3
    cache.put_many([("a", block.copy())])  # replacing an entry does not count it twice
    assert len(cache) == 3 and cache.nbytes == 3 * (block.nbytes + 128)
    cache.put_many([("huge", np.zeros((100, 8), dtype=np.float32))])  # above the budget
    assert cache.get_many(["huge"]) == [None] and len(cache) == 3
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0


def test_a_zero_budget_keeps_nothing():
    cache = VectorCache(0)
    cache.put_many([("a", np.ones(3, dtype=np.float32))])
    assert cache.get_many(["a"]) == [None]


def test_cache_budget_from_argument_environment_or_default(monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    assert cache_bytes() == DEFAULT_CACHE_MB * 1024 * 1024
    assert cache_bytes(0) == 0 and cache_bytes(1.5) == 1536 * 1024
    monkeypatch.setenv(CACHE_ENV, "2")
    assert cache_bytes() == 2 * 1024 * 1024
    for bad in ("lots", "-1", "nan"):
        monkeypatch.setenv(CACHE_ENV, bad)
        with pytest.raises(ValueError):
            cache_bytes()
    with pytest.raises(ValueError):
        cache_bytes(-1)


def test_compact_keeps_values_exactly():
    rng = np.random.default_rng(1)
    halves = rng.standard_normal((3, 8)).astype(np.float16).astype(np.float32)
    kept = compact(halves)
    assert kept.dtype == np.float16
    np.testing.assert_array_equal(kept.astype(np.float32), halves)
    full = rng.standard_normal((3, 8)).astype(np.float32)
    kept = compact(full)
    assert kept.dtype == np.float32 and np.array_equal(kept, full)
    assert not np.shares_memory(kept, full)  # a copy: the cache never pins a batch
