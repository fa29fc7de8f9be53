"""An exact in-memory inner-product index over a few vectors, without FAISS.

A reranker's "corpus" is the candidates of one call (tens to a few hundred vectors) that
exist only for that call. Building a FAISS index for them per call copies the vectors
into FAISS's memory for a search that most strategies never run (their candidates are
given); the stages read the vectors themselves (:meth:`ExactIndex.vectors`) and, where a
search is still needed (``orthogonal``'s projected query, a calibration's neighbours, the
backfill), one matrix product over so few rows is exact and as fast as a flat index.

:class:`ExactIndex` has the read side of :class:`~logic_rag.index.faiss_index.DenseIndex`
that a search uses (``ntotal``, ``dim``, ``kind``, :meth:`~ExactIndex.search`,
:meth:`~ExactIndex.vectors`), so the pipeline's :class:`~logic_rag.pipeline.context.
Resources` take it unchanged. It is not saved: an index folder is always FAISS or Milvus.
"""

from __future__ import annotations

import numpy as np

from logic_rag.errors import IndexMismatchError
from logic_rag.index.faiss_index import capped_k

__all__ = ["ExactIndex"]


class ExactIndex:
    """Exact top-k by inner product over vectors held as they are (float32, row-major).

    Ties keep the lower row first (a stable sort), so equal candidates (the same page
    handed twice) stay in their given order.
    """

    kind = "exact"

    def __init__(self, vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors)
        if vectors.ndim != 2:
            raise IndexMismatchError(f"vectors must be 2-d (n, dim), got shape {vectors.shape}")
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if not np.isfinite(self._vectors).all():
            raise ValueError("vectors hold NaN or infinite values")

    @property
    def ntotal(self) -> int:
        return int(self._vectors.shape[0])

    @property
    def dim(self) -> int:
        return int(self._vectors.shape[1])

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` inner-product search for a batch, best first (``k`` capped at the
        number of vectors; an empty index pads with -inf / -1 as FAISS does)."""
        queries = np.asarray(queries, dtype=np.float32)
        if queries.ndim == 1:
            queries = queries[None, :]
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise IndexMismatchError(
                f"query embeddings of shape {queries.shape} do not fit a {self.dim}-d index"
            )
        k, empty = capped_k(k, self.ntotal, len(queries))
        if empty is not None:
            return empty
        scores = queries @ self._vectors.T
        ids = np.argsort(-scores, axis=1, kind="stable")[:, :k].astype(np.int64)
        return np.take_along_axis(scores, ids, axis=1), ids

    def vectors(self) -> np.ndarray:
        """All vectors as an ``(ntotal, dim)`` array (the stored one, not a copy)."""
        return self._vectors
