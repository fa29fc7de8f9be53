"""Exact inverted index over learned-sparse (SPLADE) document vectors.

Documents are rows of one doc x term CSR matrix; a batch of queries is scored with one
sparse matrix product ``Q @ D.T``. Scoring is exact, not impact-ordered or pruned, because
composed queries (see :mod:`logic_rag.compose.sparse_ops`) carry NEGATIVE term weights:
then a document sharing no term with the query (score 0) outranks one that contains a
negated term, so top-k is taken over every document, not only over the posting lists the
query touches. Ids are row numbers in insertion order; the caller maps them to documents.

On disk an index is a folder with ``inverted.npz`` (CSR arrays, written with ``np.savez``,
read with ``allow_pickle=False``) and ``inverted.json`` (shape, sha256 of the npz, and the
caller's metadata such as the encoder fingerprint). Both are written atomically and the
manifest last, so a crash leaves either the old index or a checksum mismatch that
:meth:`InvertedIndex.load` reports.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from logic_rag.atomic import atomic_open, atomic_write_json
from logic_rag.errors import IndexCorruptError, IndexMismatchError
from logic_rag.json_limits import loads_bounded

__all__ = ["InvertedIndex", "top_k", "as_query_matrix"]

FORMAT_VERSION = 1
MATRIX_FILE = "inverted.npz"
MANIFEST_FILE = "inverted.json"
# Dense score blocks are at most this many floats (64 MiB at float32).
_SCORE_BLOCK = 16_000_000


def as_query_matrix(queries: Any, vocab_size: int) -> sp.csr_matrix:
    """Queries as a float32 CSR ``(n_queries, vocab_size)``.

    Accepts a sparse matrix, a 2-D array, or a 1-D array (one query).
    """
    if sp.issparse(queries):
        matrix = sp.csr_matrix(queries, dtype=np.float32)
    else:
        arr = np.asarray(queries, dtype=np.float32)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2:
            raise ValueError(f"queries must be 1-D or 2-D, got shape {arr.shape}")
        matrix = sp.csr_matrix(arr)
    if matrix.shape[1] != vocab_size:
        raise IndexMismatchError(
            f"query vectors have {matrix.shape[1]} dimensions but the index vocabulary has "
            f"{vocab_size}: encode queries with the model that built the index"
        )
    if matrix.nnz and not np.all(np.isfinite(matrix.data)):
        raise ValueError("query vectors contain NaN or infinite weights")
    return matrix


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise top-``k`` of a dense ``(n_queries, n_docs)`` score array.

    Returns ``(scores, ids)`` of shape ``(n_queries, min(k, n_docs))``, best first; ties go
    to the lower id. ``k`` is capped at ``n_docs`` before anything is allocated, so a huge
    ``k`` costs nothing (it used to be padded with ``-inf`` / ``-1`` up to ``k``).
    """
    if isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    scores = np.asarray(scores, dtype=np.float32)
    if scores.ndim != 2:
        raise ValueError(f"scores must be 2-D (queries x docs), got shape {scores.shape}")
    n_q, n_docs = scores.shape
    kk = int(min(k, n_docs))
    out_scores = np.full((n_q, kk), -np.inf, dtype=np.float32)
    out_ids = np.full((n_q, kk), -1, dtype=np.int64)
    if kk == 0:
        return out_scores, out_ids
    for row in range(n_q):
        s = scores[row]
        if kk < n_docs:
            threshold = s[np.argpartition(-s, kk - 1)[kk - 1]]
            above = np.flatnonzero(s > threshold)
            # flatnonzero is ascending, so equal scores at the boundary go to lower ids.
            tied = np.flatnonzero(s == threshold)[: kk - above.size]
            chosen = np.concatenate([above, tied])
        else:
            chosen = np.arange(n_docs)
        order = np.lexsort((chosen, -s[chosen]))
        chosen = chosen[order]
        out_ids[row, :kk] = chosen
        out_scores[row, :kk] = s[chosen]
    return out_scores, out_ids


class InvertedIndex:
    """Exact dot-product search over SPLADE document vectors.

    Args:
        vocab_size: number of term dimensions; every added matrix and query must match.
        metadata: JSON-serialisable facts saved with the index (e.g. model name and
            ``SpladeEncoder.weights_fingerprint``) so a loader can refuse another encoder.
    """

    def __init__(self, vocab_size: int, *, metadata: Mapping[str, Any] | None = None) -> None:
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be >= 1, got {vocab_size}")
        self.vocab_size = int(vocab_size)
        self.metadata: dict[str, Any] = dict(metadata or {})
        self._blocks: list[sp.csr_matrix] = []
        self._docs: sp.csr_matrix = sp.csr_matrix((0, self.vocab_size), dtype=np.float32)
        self._postings: sp.csr_matrix | None = None

    # -- building ------------------------------------------------------------------------
    def add(self, doc_matrix: Any) -> np.ndarray:
        """Append documents (rows of a doc x term sparse matrix); returns their new ids."""
        if not sp.issparse(doc_matrix):
            raise TypeError("add() takes a scipy.sparse doc x term matrix (SpladeEncoder output)")
        block = sp.csr_matrix(doc_matrix, dtype=np.float32)
        if block.shape[1] != self.vocab_size:
            raise IndexMismatchError(
                f"documents have {block.shape[1]} term dimensions but the index was built for "
                f"{self.vocab_size}: use the same encoder for every batch"
            )
        if block.nnz and not np.all(np.isfinite(block.data)):
            raise ValueError("document vectors contain NaN or infinite weights")
        block.sum_duplicates()
        block.eliminate_zeros()
        start = len(self)
        self._blocks.append(block)
        return np.arange(start, start + block.shape[0], dtype=np.int64)

    @property
    def matrix(self) -> sp.csr_matrix:
        """All documents as one CSR ``(n_docs, vocab_size)``; do not modify it in place."""
        if self._blocks:
            self._docs = sp.vstack([self._docs, *self._blocks], format="csr", dtype=np.float32)
            self._blocks = []
            self._postings = None
        return self._docs

    @property
    def postings(self) -> sp.csr_matrix:
        """The inverted lists: CSR ``(vocab_size, n_docs)``, row ``t`` = documents with term ``t``.

        Built once per batch of additions; a query touches only the rows of its terms.
        """
        docs = self.matrix
        if self._postings is None:
            self._postings = sp.csr_matrix(docs.T, dtype=np.float32)
            self._postings.sort_indices()
        return self._postings

    def __len__(self) -> int:
        return self._docs.shape[0] + sum(b.shape[0] for b in self._blocks)

    # -- searching -----------------------------------------------------------------------
    def search(self, query_matrix: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-``k`` documents by dot product for each query row.

        Query weights may be negative. Returns ``(scores, ids)``, each
        ``(n_queries, min(k, len(self)))``, best first, ties to the lower id. ``k`` is
        capped at the corpus size before anything is allocated.
        """
        queries = as_query_matrix(query_matrix, self.vocab_size)
        if isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        k = int(min(k, len(self)))
        if k == 0:
            n_q = queries.shape[0]
            return np.zeros((n_q, 0), np.float32), np.zeros((n_q, 0), np.int64)
        postings = self.postings  # (vocab, n_docs)
        n_docs = postings.shape[1]
        step = max(1, _SCORE_BLOCK // max(n_docs, 1))
        all_scores, all_ids = [], []
        for start in range(0, queries.shape[0], step):
            block = queries[start : start + step]
            # Sparse x sparse: reads only the posting lists of the query's terms. The result
            # is densified because with negative weights the untouched docs (score 0) count.
            dense = (block @ postings).toarray()
            s, i = top_k(dense.astype(np.float32, copy=False), k)
            all_scores.append(s)
            all_ids.append(i)
        if not all_scores:
            return np.zeros((0, k), np.float32), np.zeros((0, k), np.int64)
        return np.vstack(all_scores), np.vstack(all_ids)

    def score(self, query_matrix: Any, doc_ids: Any) -> np.ndarray:
        """Dot products of each query with given candidate documents (for rescoring).

        ``doc_ids`` is ``(n_queries, m)``, or ``(m,)`` shared by every query. Id ``-1``
        (padding from :meth:`search`) scores ``-inf``; other out-of-range ids raise.
        """
        queries = as_query_matrix(query_matrix, self.vocab_size)
        ids = np.asarray(doc_ids)
        if ids.size and not np.issubdtype(ids.dtype, np.integer):
            raise TypeError(f"doc_ids must be integers, got {ids.dtype}")
        ids = ids.astype(np.int64, copy=False)
        if ids.ndim == 1:
            ids = np.broadcast_to(ids, (queries.shape[0], ids.shape[0]))
        if ids.ndim != 2 or ids.shape[0] != queries.shape[0]:
            raise ValueError(
                f"doc_ids must be (n_queries, m) or (m,); got {ids.shape} for "
                f"{queries.shape[0]} queries"
            )
        n_docs = len(self)
        bad = (ids < -1) | (ids >= n_docs)
        if bad.any():
            raise IndexError(f"doc id {int(ids[bad][0])} is outside 0..{n_docs - 1}")
        docs = self.matrix
        out = np.full(ids.shape, -np.inf, dtype=np.float32)
        for row in range(ids.shape[0]):
            valid = ids[row] >= 0
            if valid.any():
                cand = docs[ids[row][valid]]
                out[row, valid] = (cand @ queries[row].T).toarray().ravel()
        return out

    # -- persistence ---------------------------------------------------------------------
    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the index to ``directory`` (created if needed); returns the folder."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        docs = self.matrix
        docs.sort_indices()
        with atomic_open(folder / MATRIX_FILE, "wb") as handle:
            np.savez(
                handle,
                data=docs.data.astype(np.float32, copy=False),
                indices=docs.indices.astype(np.int32, copy=False),
                indptr=docs.indptr.astype(np.int64, copy=False),
                shape=np.asarray(docs.shape, dtype=np.int64),
            )
        manifest = {
            "format": "logic-rag/inverted-index",
            "format_version": FORMAT_VERSION,
            "n_docs": int(docs.shape[0]),
            "vocab_size": self.vocab_size,
            "nnz": int(docs.nnz),
            "sha256": _sha256(folder / MATRIX_FILE),
            "metadata": self.metadata,
        }
        atomic_write_json(folder / MANIFEST_FILE, manifest)
        return folder

    @classmethod
    def load(
        cls, directory: str | os.PathLike[str], *, expected_vocab_size: int | None = None
    ) -> InvertedIndex:
        """Read an index saved by :meth:`save`.

        Raises:
            IndexCorruptError: a file is missing, unreadable, fails its checksum, or holds
                an inconsistent matrix. Rebuild the index from the corpus.
            IndexMismatchError: ``expected_vocab_size`` differs from the index's.
        """
        from logic_rag.index.snapshot import as_files

        files = as_files(directory)
        folder = directory
        manifest_path, matrix_path = files.display(MANIFEST_FILE), files.display(MATRIX_FILE)
        try:
            with files.open(MANIFEST_FILE) as handle:
                manifest_text = handle.read(_MAX_MANIFEST + 1)
            matrix_handle = files.open(MATRIX_FILE)
        except OSError:
            raise IndexCorruptError(
                f"{manifest_path} or {matrix_path} is missing: {folder} is not a complete "
                "inverted index; rebuild it with InvertedIndex.add(...).save(...)"
            ) from None
        with matrix_handle:
            try:
                if len(manifest_text) > _MAX_MANIFEST:
                    raise ValueError("manifest too large")
                manifest = loads_bounded(manifest_text.decode("utf-8"))
                vocab_size = int(manifest["vocab_size"])
                n_docs = int(manifest["n_docs"])
                version = int(manifest["format_version"])
                expected_sha = str(manifest["sha256"])
                metadata = manifest.get("metadata") or {}
            except (ValueError, KeyError, TypeError) as exc:
                raise IndexCorruptError(
                    f"{manifest_path} is unreadable ({exc}); rebuild the index"
                ) from exc
            if version != FORMAT_VERSION:
                raise IndexCorruptError(
                    f"{manifest_path} has format version {version}; this logic-rag reads "
                    f"version {FORMAT_VERSION}: rebuild the index"
                )
            if expected_vocab_size is not None and expected_vocab_size != vocab_size:
                raise IndexMismatchError(
                    f"index at {folder} has a {vocab_size}-term vocabulary but the encoder has "
                    f"{expected_vocab_size}: load it with the encoder that built it, or rebuild it"
                )
            digest = hashlib.sha256()
            for block in iter(lambda: matrix_handle.read(1 << 20), b""):
                digest.update(block)
            if digest.hexdigest() != expected_sha:
                raise IndexCorruptError(
                    f"{matrix_path} does not match the checksum in {manifest_path} (file damaged "
                    "or written by an interrupted save); rebuild the index"
                )
            matrix_handle.seek(0)
            try:
                arrays = _read_npz(matrix_handle, matrix_path)
                data, indices = arrays["data"], arrays["indices"]
                indptr, shape = arrays["indptr"], tuple(int(x) for x in arrays["shape"])
                docs = sp.csr_matrix((data, indices, indptr), shape=shape, dtype=np.float32)
                docs.check_format(full_check=True)
            except (ValueError, KeyError, OSError, EOFError, zipfile.BadZipFile) as exc:
                raise IndexCorruptError(
                    f"{matrix_path} is unreadable ({exc}); rebuild the index"
                ) from exc
        if shape != (n_docs, vocab_size):
            raise IndexCorruptError(
                f"{matrix_path} holds a {shape} matrix but {manifest_path} says "
                f"({n_docs}, {vocab_size}); rebuild the index"
            )
        index = cls(vocab_size, metadata=metadata)
        index._docs = docs
        index._postings = None
        return index

    def __repr__(self) -> str:
        return f"InvertedIndex(n_docs={len(self)}, vocab_size={self.vocab_size})"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_MAX_MANIFEST = 16 * 2**20
_NPZ_KEYS = ("data", "indices", "indptr", "shape")


def _read_npz(handle: Any, path: Any) -> dict[str, np.ndarray]:
    """The four arrays of a saved matrix; every member's header is checked against the
    member's stored length before its array is allocated (see :func:`read_npy`)."""
    from logic_rag.index.npy import read_npy

    out: dict[str, np.ndarray] = {}
    total = handle.seek(0, os.SEEK_END)
    handle.seek(0)
    with zipfile.ZipFile(handle) as archive:
        for key in _NPZ_KEYS:
            info = archive.getinfo(f"{key}.npy")
            if info.compress_type != zipfile.ZIP_STORED:
                raise ValueError(f"{key}.npy is compressed; logic-rag stores arrays uncompressed")
            if info.file_size > total:
                raise ValueError(f"{key}.npy claims {info.file_size} bytes in a {total}-byte file")
            with archive.open(info) as member:
                out[key] = read_npy(member, info.file_size, f"{path}:{key}.npy")
    return out
