"""BM25 baseline over bm25s (English stop words, no stemming by default)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from logic_rag.encoders.dense import check_texts

__all__ = ["BM25Index"]


class BM25Index:
    """Lexical BM25 over document texts; ids are row numbers in the given order."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        self._bm25s = bm25s
        self.size = len(texts)
        self._retriever: Any = bm25s.BM25(k1=k1, b=b)
        tokens = bm25s.tokenize(list(texts), stopwords="en", show_progress=False)
        self._retriever.index(tokens, show_progress=False)

    def search(self, queries: Sequence[str] | str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` BM25 scores and row ids for a batch of queries."""
        texts = check_texts(queries, "query")
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        k = min(k, self.size)
        tokens = self._bm25s.tokenize(texts, stopwords="en", show_progress=False)
        ids, scores = self._retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return np.asarray(scores, dtype=np.float32), np.asarray(ids, dtype=np.int64)
