"""The verifier cache: bounded, keyed by model, atom and document content."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.verifiers.base import PairVerifier
from logic_rag.verifiers.cache import PairCache


class CountingVerifier(PairVerifier):
    """Scores a pair by the length of its text; counts how many pairs it really scored."""

    def __init__(self, version: str = "v1", cache: PairCache | None = None) -> None:
        object.__setattr__(
            self, "cache", cache if cache is not None else PairCache(max_entries=100)
        )
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "scored", [])

    def fingerprint(self) -> str:
        return self.version

    def score_texts(self, pairs):
        self.scored.extend(pairs)
        return np.array([len(a) - len(t) / 10 for a, t in pairs], dtype=float)


def test_repeated_pairs_are_scored_once():
    v = CountingVerifier()
    first = v.verify_pairs([("films", "a page"), ("films", "a page"), ("books", "a page")])
    assert len(v.scored) == 2
    again = v.verify_pairs([("books", "a page"), ("films", "a page")])
    assert len(v.scored) == 2
    assert again.tolist() == [first[2], first[0]]
    assert v.cache.hits == 2


def test_a_changed_document_or_model_misses_the_cache():
    cache = PairCache()
    v1 = CountingVerifier("v1", cache)
    v1.verify_pairs([("films", "old text")])
    v1.verify_pairs([("films", "new text")])  # the document changed: scored again
    assert len(v1.scored) == 2
    v2 = CountingVerifier("v2", cache)  # another model, same cache
    v2.verify_pairs([("films", "new text")])
    assert len(v2.scored) == 1


def test_the_cache_is_bounded():
    cache = PairCache(max_entries=3)
    v = CountingVerifier(cache=cache)
    v.verify_pairs([(f"atom {i}", "page") for i in range(10)])
    assert len(cache) == 3
    v.verify_pairs([("atom 9", "page")])
    assert len(v.scored) == 10  # the newest entry survived


def test_wrong_shape_from_a_verifier_is_an_error():
    cache = PairCache()
    with pytest.raises(ValueError, match="scores for 2 pairs"):
        cache.get_or_compute("f", [("a", "x"), ("b", "y")], lambda missing: np.zeros(3))
