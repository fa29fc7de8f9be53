"""FAISS vector index: exact inner product by default, HNSW or IVF-PQ for large corpora.

Vectors are expected L2-normalised, so inner product is cosine similarity. Files are
written with FAISS's own binary format (never pickle) through a temporary file and an
atomic rename.

Memory per document at ``d`` dimensions: flat and HNSW hold ``4 d`` bytes of float32 in
memory (HNSW adds its graph, ~``8 hnsw_m`` bytes); IVF-PQ holds ``pq_m + 8`` bytes of code
and id. PQ codes alone rank loosely (top-10 overlap with exact search ~0.88 on MiniLM
vectors of a small corpus), so an IVF-PQ index also keeps the exact vectors as float16
(:attr:`DenseIndex.exact`, ``2 d`` bytes per document, memory-mapped from the index
folder once saved): each search takes ``refine`` times ``k`` candidates from the codes and
ranks them by their exact inner product, and :meth:`DenseIndex.vectors` hands out the
exact rows, which are read from disk only for the candidates a search rescores.
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO, Literal

import numpy as np

from logic_rag.errors import IndexCorruptError, IndexMismatchError

__all__ = ["IndexKind", "DenseIndex", "capped_k", "write_flat_index"]

IndexKind = Literal["flat", "hnsw", "ivfpq"]


def _faiss() -> Any:
    import faiss

    return faiss


def _kind_of(faiss: Any, raw: Any) -> str | None:
    """The :data:`IndexKind` of a FAISS index object, or ``None`` for other types."""
    if isinstance(raw, faiss.IndexFlat):
        return "flat"
    if isinstance(raw, faiss.IndexHNSWFlat):
        return "hnsw"
    if isinstance(raw, faiss.IndexIVFPQ):
        return "ivfpq"
    return None


def capped_k(
    k: int, ntotal: int, n_queries: int
) -> tuple[int, tuple[np.ndarray, np.ndarray] | None]:
    """``k`` checked and capped at the index size (before anything of size ``k`` is
    allocated), and, for an empty index, the result FAISS gives: every slot -inf / -1."""
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    k = int(min(k, max(ntotal, 1)))
    if ntotal:
        return k, None
    return k, (
        np.full((n_queries, k), -np.inf, dtype=np.float32),
        np.full((n_queries, k), -1, dtype=np.int64),
    )


class DenseIndex:
    """A FAISS index over document embeddings; ids are row numbers in insertion order.

    Args:
        dim: embedding dimension.
        kind: ``flat`` (exact, default), ``hnsw`` (graph, approximate, no training) or
            ``ivfpq`` (inverted lists with product quantisation; trained on the first
            ``add``, needs at least ``39 * nlist`` vectors to train well).
        hnsw_m / ef_search / ef_construction: HNSW graph degree and search breadth.
        nlist / pq_m / nprobe: IVF-PQ lists (default ~4 sqrt(n)), sub-quantisers (must
            divide ``dim``) and lists visited per query (default 16, or ``nlist / 32``
            when that is more).
        refine: IVF-PQ only: candidates taken per result and rescored with the exact
            (float16) vectors; 0 keeps PQ scores and no exact copy.
    """

    def __init__(
        self,
        dim: int,
        kind: IndexKind = "flat",
        *,
        hnsw_m: int = 32,
        ef_search: int = 128,
        ef_construction: int = 80,
        nlist: int | None = None,
        pq_m: int | None = None,
        nprobe: int | None = None,
        refine: int = 4,
    ) -> None:
        if dim <= 0:
            raise ValueError(f"dimension must be positive, got {dim}")
        if kind not in ("flat", "hnsw", "ivfpq"):
            raise ValueError(f"unknown index kind {kind!r}; use flat, hnsw or ivfpq")
        if isinstance(refine, bool) or not isinstance(refine, int) or refine < 0:
            raise ValueError(f"refine must be a non-negative integer, got {refine!r}")
        self.dim = dim
        self.kind: IndexKind = kind
        self.options = {
            "hnsw_m": hnsw_m,
            "ef_search": ef_search,
            "ef_construction": ef_construction,
            "nlist": nlist,
            "pq_m": pq_m,
            "nprobe": nprobe,
        }
        #: IVF-PQ candidates per result rescored exactly (0: none, no exact copy).
        self.refine = refine if kind == "ivfpq" else 0
        self._exact_parts: list[np.ndarray] = []
        self._exact: np.ndarray | None = None
        self._index: Any = None
        if kind != "ivfpq":  # IVF-PQ is created at the first add, once n is known
            self._index = self._create(0)

    def _create(self, n: int) -> Any:
        faiss = _faiss()
        if self.kind == "flat":
            return faiss.IndexFlatIP(self.dim)
        if self.kind == "hnsw":
            index = faiss.IndexHNSWFlat(
                self.dim, self.options["hnsw_m"], faiss.METRIC_INNER_PRODUCT
            )
            index.hnsw.efConstruction = self.options["ef_construction"]
            index.hnsw.efSearch = self.options["ef_search"]
            return index
        nlist = self.lists_for(n)
        pq_m = self.options["pq_m"] or next(
            m for m in (48, 32, 24, 16, 12, 8, 6, 4, 2, 1) if self.dim % m == 0
        )
        if self.dim % pq_m:
            raise ValueError(f"pq_m={pq_m} must divide the dimension {self.dim}")
        quantizer = faiss.IndexFlatIP(self.dim)
        index = faiss.IndexIVFPQ(quantizer, self.dim, nlist, pq_m, 8, faiss.METRIC_INNER_PRODUCT)
        nprobe = self.options["nprobe"] or max(16, nlist // 32)
        index.nprobe = min(nprobe, nlist)
        return index

    def lists_for(self, n: int) -> int:
        """IVF lists for ``n`` vectors: the ``nlist`` option, else ~4 sqrt(n) with at least
        39 training vectors per list."""
        return self.options["nlist"] or max(1, min(int(4 * np.sqrt(max(n, 1))), n // 39 or 1))

    @property
    def ntotal(self) -> int:
        """Number of vectors in the index."""
        return 0 if self._index is None else int(self._index.ntotal)

    def _check(self, vectors: np.ndarray, what: str) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise IndexMismatchError(
                f"{what} have dimension {vectors.shape[-1]} but the index holds {self.dim}-d "
                f"vectors; encode with the model the index was built with"
            )
        return np.ascontiguousarray(vectors)

    def add(self, vectors: np.ndarray) -> None:
        """Append vectors (rows); IVF-PQ trains on the first batch it sees."""
        vectors = self._check(vectors, "document embeddings")
        if self._index is None:
            self._index = self._create(len(vectors))
            if len(vectors) < self._index.nlist:
                raise ValueError(
                    f"IVF-PQ needs at least nlist={self._index.nlist} vectors to train, got "
                    f"{len(vectors)}; use kind='flat' for small corpora"
                )
            self._index.train(vectors)
        self.add_trained(vectors)

    def train(self, sample: np.ndarray, n: int) -> None:
        """IVF-PQ: create the index for ``n`` vectors in all and train it on ``sample``
        (a streaming build adds the vectors afterwards, in chunks, with :meth:`add`)."""
        if self.kind != "ivfpq" or self._index is not None:
            raise ValueError("train() is for an IVF-PQ index before its first add")
        sample = self._check(sample, "training vectors")
        self._index = self._create(n)
        if len(sample) < self._index.nlist:
            raise ValueError(
                f"IVF-PQ needs at least nlist={self._index.nlist} vectors to train, got "
                f"{len(sample)}; use kind='flat' for small corpora"
            )
        self._index.train(sample)

    def add_trained(self, vectors: np.ndarray) -> None:
        """Append vectors to a created (and, for IVF-PQ, trained) index."""
        vectors = self._check(vectors, "document embeddings")
        self._index.add(vectors)
        if self.refine:
            self._exact_parts.append(vectors.astype(np.float16))
            self._exact = None

    @property
    def exact(self) -> np.ndarray | None:
        """IVF-PQ's exact vectors (float16, or a memory map once loaded), else ``None``."""
        if self._exact is None and self._exact_parts:
            self._exact = np.concatenate(self._exact_parts)
            self._exact_parts = [self._exact]
        return self._exact

    def attach_exact(self, vectors: np.ndarray, refine: int) -> None:
        """Give a loaded IVF-PQ index its exact vectors (``(ntotal, dim)``) to rescore with."""
        if self.kind != "ivfpq" or vectors.shape != (self.ntotal, self.dim):
            raise IndexMismatchError(
                f"exact vectors of shape {vectors.shape} do not fit a {self.kind} index of "
                f"{self.ntotal} x {self.dim}"
            )
        self._exact_parts, self._exact, self.refine = [], vectors, max(int(refine), 1)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` inner-product search for a batch; ids of missing slots are -1."""
        queries = self._check(queries, "query embeddings")
        k, empty = capped_k(k, self.ntotal, len(queries))
        if empty is not None:
            return empty
        exact = self.exact if self.refine else None
        if exact is None:
            return self._index.search(queries, k)
        _, pool = self._index.search(queries, int(min(k * self.refine, self.ntotal)))
        return _rescore(queries, pool, exact, k)

    def vectors(self) -> np.ndarray:
        """All stored vectors as an ``(ntotal, dim)`` array, for re-scoring candidates.

        Flat and HNSW indexes store raw vectors: this is a zero-copy view of FAISS's
        memory. IVF-PQ stores codes only: the vectors are decoded (approximate) once.
        """
        if self.ntotal == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        faiss = _faiss()
        if self.kind == "ivfpq" and self.exact is not None:
            return self.exact
        if self.kind == "ivfpq":
            self._index.make_direct_map()
            return self._index.reconstruct_n(0, self.ntotal)
        flat = self._index if self.kind == "flat" else faiss.downcast_index(self._index.storage)
        raw = faiss.rev_swig_ptr(flat.get_xb(), self.ntotal * self.dim)
        return np.asarray(raw).reshape(self.ntotal, self.dim)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to ``path`` atomically (FAISS binary format)."""
        if self._index is None:
            raise ValueError("cannot save an empty IVF-PQ index; add vectors first")
        target = Path(path)
        tmp = target.with_name(f".{target.name}.tmp")
        _faiss().write_index(self._index, str(tmp))
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)

    @classmethod
    def load(
        cls,
        source: str | os.PathLike[str] | BinaryIO,
        kind: IndexKind = "flat",
        *,
        name: str | os.PathLike[str] | None = None,
    ) -> DenseIndex:
        """Read an index written by :meth:`save`; unreadable files raise IndexCorruptError.

        ``source`` is a path or a seekable binary file (an index snapshot's reader; then
        ``name`` is the path shown in messages). Every size the file claims is checked
        against its length before FAISS allocates anything
        (:func:`~logic_rag.index.faiss_layout.check_faiss_layout`). The file must hold the
        index ``kind`` says and use the inner-product metric: an L2 index would rank
        distances as similarities (smallest first would be best).
        """
        faiss = _faiss()
        if isinstance(source, str | os.PathLike):
            path: Any = source if name is None else name
            try:
                handle = open(source, "rb")  # noqa: SIM115 - closed just below
            except OSError as exc:
                raise IndexCorruptError(f"{path}: cannot open the FAISS file ({exc})") from None
            with handle:
                raw = _read_checked(faiss, handle, path)
        else:
            path = name if name is not None else getattr(source, "name", "<index file>")
            raw = _read_checked(faiss, source, path)
        found = _kind_of(faiss, raw)
        if found != kind:
            raise IndexCorruptError(
                f"{path} holds a FAISS {type(raw).__name__} ({found or 'unsupported'}) but the "
                f"manifest says index kind {kind!r}; rebuild the index with `logic-rag index`"
            )
        if raw.metric_type != faiss.METRIC_INNER_PRODUCT:
            metric = "L2" if raw.metric_type == faiss.METRIC_L2 else str(raw.metric_type)
            raise IndexCorruptError(
                f"{path} uses the {metric} metric; logic-rag indexes rank by inner product "
                f"(cosine), so distances would be read as similarities. Rebuild the index "
                f"with `logic-rag index`"
            )
        index = cls.__new__(cls)
        index.dim = int(raw.d)
        index.kind = kind
        index.options = {}
        index.refine = 0
        index._exact_parts, index._exact = [], None
        index._index = raw
        _check_finite(faiss, index, path)
        return index


def _check_finite(faiss: Any, index: DenseIndex, path: Any) -> None:
    """Refuse stored vectors holding NaN or an infinity (flat and HNSW: the document
    vectors; IVF-PQ: its coarse and product-quantiser centroids). Every similarity with
    such a vector is NaN, and a ranking that stops at the first non-finite score returns
    nothing, exit 0 (issue 42 item 9). The arrays are FAISS's own memory: no copy."""
    from logic_rag.index.npy import first_non_finite

    if index.kind != "ivfpq":
        bad = first_non_finite(index.vectors())
        if bad is not None:
            raise IndexCorruptError(
                f"{path}: document vector {bad} holds NaN or an infinity; the file is damaged, "
                f"rebuild the index with `logic-rag index`"
            )
        return
    raw = index._index
    tables = []
    with contextlib.suppress(AttributeError, RuntimeError):
        tables.append(faiss.vector_to_array(raw.pq.centroids))
    with contextlib.suppress(AttributeError, RuntimeError):
        coarse = faiss.downcast_index(raw.quantizer)
        tables.append(faiss.rev_swig_ptr(coarse.get_xb(), coarse.ntotal * coarse.d))
    for table in tables:
        if first_non_finite(np.asarray(table)) is not None:
            raise IndexCorruptError(
                f"{path}: the IVF-PQ centroids hold NaN or an infinity; the file is damaged, "
                f"rebuild the index with `logic-rag index`"
            )


def _rescore(
    queries: np.ndarray, pool: np.ndarray, exact: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The top ``k`` of each query's candidate ``pool`` (ids, -1 = none) by exact inner
    product; only the pooled rows of ``exact`` are read."""
    scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    ids = np.full((len(queries), k), -1, dtype=np.int64)
    for i, (query, row) in enumerate(zip(queries, pool, strict=True)):
        row = row[row >= 0]
        if not len(row):
            continue
        sims = np.asarray(exact[np.sort(row)], dtype=np.float32) @ query
        order = np.argsort(-sims, kind="stable")[:k]
        scores[i, : len(order)] = sims[order]
        ids[i, : len(order)] = np.sort(row)[order]
    return scores, ids


def _read_checked(faiss: Any, handle: BinaryIO, path: Any) -> Any:
    """FAISS's reader over ``handle`` after the layout walk has bounded every claimed size."""
    from logic_rag.index.faiss_layout import FaissLayoutError, check_faiss_layout

    handle.seek(0, io.SEEK_END)
    size = handle.tell()
    handle.seek(0)
    try:
        check_faiss_layout(handle, size)
    except FaissLayoutError as exc:
        raise IndexCorruptError(
            f"{path}: not a FAISS index logic-rag can read ({exc}); rebuild the index with "
            f"`logic-rag index`"
        ) from None
    handle.seek(0)

    def read(n: int) -> bytes:
        return handle.read(n)

    try:
        return faiss.read_index(faiss.PyCallbackIOReader(read))
    except RuntimeError as exc:
        raise IndexCorruptError(
            f"{path}: FAISS cannot read this file ({str(exc).splitlines()[0][:200]}); "
            f"rebuild the index with `logic-rag index`"
        ) from None


def write_flat_index(
    path: str | os.PathLike[str], dim: int, total: int, parts: Iterable[np.ndarray]
) -> None:
    """Write a flat inner-product index file of ``total`` vectors given in ``parts``.

    The same bytes as :meth:`DenseIndex.save` of a flat index holding their concatenation
    (a test compares them), written part by part so the vectors are never all in memory:
    the header of FAISS's ``IndexFlatIP`` (the layout
    :mod:`~logic_rag.index.faiss_layout` checks), then the float32 table.
    """
    from logic_rag.atomic import atomic_open

    header = b"IxFI" + struct.pack("<iqqqBi", dim, total, 1 << 20, 1 << 20, 1, 0)
    written = 0
    with atomic_open(path, "wb") as handle:
        handle.write(header + struct.pack("<Q", total * dim))
        for part in parts:
            block = np.ascontiguousarray(part, dtype=np.float32)
            if block.ndim != 2 or block.shape[1] != dim:
                raise IndexMismatchError(f"vectors of shape {block.shape} in a {dim}-d index")
            handle.write(block.tobytes())
            written += len(block)
        if written != total:
            raise ValueError(f"{written} vectors were given for a flat index of {total}")
