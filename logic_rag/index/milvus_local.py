"""What a Milvus-backed index keeps on the client: sentence offsets and read vectors.

Why: the best-sentence evidence of a query needs, for every candidate document (a few
hundred to a thousand per query), the similarity of each atom to each of its sentences
(about ten per document). Asking Milvus for it (a grouping search per batch of atoms) or
reading the sentence vectors every query costs a round of per-row work on the server for
each of those ~10,000 sentences: Milvus Lite 3 is a Python server (in this process),
measured at about 40-100 us per returned row, so 0.4-1 s a query, where the FAISS
backend's whole query takes tens of milliseconds. So the client

* knows where each document's sentences are: the sentence collection's primary keys are
  the rows of :class:`~logic_rag.index.passages.PassageVectors`'s CSR layout (document
  ``i`` owns rows ``offsets[i]:offsets[i+1]``), and the per-document counts are stored
  compressed with the collection (:func:`encode_counts`). Stores written before that are
  read once (:func:`offsets_from_owners` over the ``doc`` field) and the cost is logged;
* reads the sentences of the documents it has not seen with one ``get`` by primary key
  per search (never a filter over the ``doc`` field: that scans the whole collection);
* keeps what it read in a :class:`VectorCache` bounded in bytes (least recently used
  first out; ``$LOGIC_RAG_MILVUS_CACHE_MB``, default 512, 0 turns it off), so a document
  seen by an earlier query costs nothing. A store is written once (a rebuild has a new
  build id and must be reopened), so a cached vector never goes stale.

Vectors are cached as float16 when that is exact (sentence vectors of a float16 index
are), else as float32, so the evidence equals the FAISS backend's bit for bit.

**Local copy (Milvus Lite).** Even cached, the first query over unseen documents paid
those per-row reads (measured 22-27x FAISS's p50 at 20k documents). So a Milvus Lite
store also gets a *local copy* of its vectors, written beside the ``.db`` at build time
(:class:`LocalCopy`: ``<file>.db.logic-rag/<collection>.<build id>.{documents,
sentences}.npy``, float16 sentence vectors as the FAISS backend stores them, float32
document vectors), memory-mapped when the store is opened. Then the candidates' document
and sentence vectors are read from the mapping, never from Milvus: Milvus stays the
document search and the vectors' copy of record. Which path a store uses is
``vector_source`` (:data:`VECTOR_SOURCES`; ``$LOGIC_RAG_MILVUS_VECTORS``):

* ``auto`` (default): the local copy when the store has one; else (a Milvus server, a
  store written before local copies, a copy that is missing or damaged: logged) reads by
  primary key through the cache;
* ``local``: the local copy or an error (never silently slower);
* ``milvus``: always reads by primary key (a remote server whose clients have no local
  copy); a write then writes no local copy either.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import threading
import zlib
from collections import OrderedDict
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np

from logic_rag.errors import IndexCorruptError

__all__ = [
    "CACHE_ENV",
    "DEFAULT_CACHE_MB",
    "VECTORS_ENV",
    "VECTOR_SOURCES",
    "LocalCopy",
    "VectorCache",
    "cache_bytes",
    "compact",
    "decode_counts",
    "encode_counts",
    "offsets_from_owners",
    "sentence_rows",
    "vector_source",
]

#: Environment variable with the client cache's budget in MiB (0: no cache).
CACHE_ENV = "LOGIC_RAG_MILVUS_CACHE_MB"
#: Enough for the sentence and document vectors of ~60k documents at 384 dimensions.
DEFAULT_CACHE_MB = 512
#: Python's bookkeeping per cached array, counted against the budget.
_ENTRY_OVERHEAD = 128
#: Environment variable with the default ``vector_source`` (see the module docstring).
VECTORS_ENV = "LOGIC_RAG_MILVUS_VECTORS"
#: Where the candidates' vectors are read from: the local copy if any, only the local
#: copy, only Milvus (by primary key).
VECTOR_SOURCES = ("auto", "local", "milvus")


def vector_source(value: str | None = None) -> str:
    """``value``, else ``$LOGIC_RAG_MILVUS_VECTORS``, else ``auto``; one of
    :data:`VECTOR_SOURCES`."""
    if value is None:
        value = os.environ.get(VECTORS_ENV, "").strip() or "auto"
    if value not in VECTOR_SOURCES:
        raise ValueError(
            f"the Milvus vector source must be one of {', '.join(VECTOR_SOURCES)} (argument "
            f"vector_source= or ${VECTORS_ENV}), got {value!r}"
        )
    return value


def cache_bytes(mb: float | None = None) -> int:
    """The cache budget in bytes: ``mb``, else ``$LOGIC_RAG_MILVUS_CACHE_MB``, else 512 MiB."""
    if mb is None:
        raw = os.environ.get(CACHE_ENV, "").strip()
        try:
            mb = float(raw) if raw else DEFAULT_CACHE_MB
        except ValueError:
            raise ValueError(f"${CACHE_ENV} must be a number of MiB, got {raw!r}") from None
    if isinstance(mb, bool) or not mb >= 0:  # also refuses NaN
        raise ValueError(f"the Milvus cache budget must be >= 0 MiB, got {mb!r}")
    return int(mb * 1024 * 1024)


class VectorCache:
    """Arrays by key, the least recently used dropped once ``max_bytes`` is exceeded.

    One lock around every operation: a retriever may serve several threads.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes held (arrays plus a fixed per-entry overhead)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get_many(self, keys: list[Hashable]) -> list[np.ndarray | None]:
        """The cached array of each key (``None`` where absent); hits become most recent."""
        out: list[np.ndarray | None] = []
        with self._lock:
            for key in keys:
                value = self._items.get(key)
                if value is not None:
                    self._items.move_to_end(key)
                out.append(value)
        return out

    def put_many(self, items: list[tuple[Hashable, np.ndarray]]) -> None:
        """Cache arrays; an array larger than the whole budget is not kept."""
        if self.max_bytes <= 0:
            return
        with self._lock:
            for key, value in items:
                size = value.nbytes + _ENTRY_OVERHEAD
                if size > self.max_bytes:
                    continue
                old = self._items.pop(key, None)
                if old is not None:
                    self._bytes -= old.nbytes + _ENTRY_OVERHEAD
                self._items[key] = value
                self._bytes += size
            while self._bytes > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= dropped.nbytes + _ENTRY_OVERHEAD

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


def compact(block: np.ndarray) -> np.ndarray:
    """A copy of ``block`` (float32), as float16 when that loses nothing.

    A copy, never a view, so a cached row does not keep the whole batch it was read in.
    """
    half = block.astype(np.float16)
    return half if np.array_equal(half.astype(np.float32), block) else block.copy()


# ------------------------------------------------------------------------------- offsets
def encode_counts(offsets: np.ndarray) -> str:
    """Per-document sentence counts of CSR ``offsets``, zlib-compressed, base64 text.

    One to two characters per document (counts are small), so it fits in a collection
    property: 20k documents with uniformly random counts of 1-32 take 25 KB.
    """
    counts = np.diff(np.asarray(offsets, dtype=np.int64)).astype("<u4")
    return base64.b64encode(zlib.compress(counts.tobytes(), 6)).decode("ascii")


def decode_counts(text: object, n_documents: int, n_sentences: int) -> np.ndarray:
    """CSR offsets from :func:`encode_counts`'s text, checked against the manifest's counts."""
    try:
        raw = zlib.decompress(base64.b64decode(str(text), validate=True))
    except (ValueError, zlib.error):
        raise IndexCorruptError("the stored sentence counts cannot be read") from None
    if len(raw) != 4 * n_documents:
        raise IndexCorruptError(
            f"the stored sentence counts cover {len(raw) // 4} documents, the index holds "
            f"{n_documents}"
        )
    counts = np.frombuffer(raw, dtype="<u4").astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    _check_offsets(offsets, n_sentences)
    return offsets


def offsets_from_owners(owner: np.ndarray, n_documents: int) -> np.ndarray:
    """CSR offsets from the owning document of every sentence row (row order).

    The sentences of a document must be consecutive rows, documents in row order, and
    every document must own at least one: what the writer stores.
    """
    owner = np.asarray(owner, dtype=np.int64)
    if len(owner) and (owner[0] != 0 or owner[-1] != n_documents - 1):
        raise IndexCorruptError("the sentence rows do not start at document 0 and end at the last")
    steps = np.diff(owner)
    if np.any((steps != 0) & (steps != 1)):
        raise IndexCorruptError("the sentences of each document are not consecutive rows")
    counts = np.bincount(owner, minlength=n_documents)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    _check_offsets(offsets, len(owner))
    return offsets


def _check_offsets(offsets: np.ndarray, n_sentences: int) -> None:
    if offsets[-1] != n_sentences or np.any(np.diff(offsets) < 1):
        raise IndexCorruptError(
            f"the sentence offsets cover {int(offsets[-1])} sentences (the store holds "
            f"{n_sentences}) or give a document none"
        )


def sentence_rows(offsets: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sentence rows of ``docs`` (concatenated, in ``docs`` order) and their counts."""
    docs = np.asarray(docs, dtype=np.int64)
    starts, lengths = offsets[docs], offsets[docs + 1] - offsets[docs]
    firsts = np.cumsum(lengths) - lengths
    rows = np.repeat(starts - firsts, lengths) + np.arange(int(lengths.sum()))
    return rows.astype(np.int64), lengths


# ---------------------------------------------------------------------------- local copy
#: Rows per block when a local copy is written (bounds the memory of a float32 block).
_COPY_BATCH = 16384
_PARTS = ("documents", "sentences")
_COPY_FILE = re.compile(
    r"(?P<collection>.+)\.(?P<build>[0-9a-f]{32})\.(?:documents|sentences)\.npy"
)


class LocalCopy:
    """The local copy of one build's vectors, in a folder beside the Milvus Lite file.

    ``<folder>/<collection>.<build id>.documents.npy`` and ``….sentences.npy``: plain
    ``.npy`` arrays in the sentence collection's row order (the CSR layout), so a row's
    primary key in Milvus is its row here. Each file is written to a temporary file and
    renamed into place (:func:`logic_rag.atomic.atomic_open`), and its name carries the
    build id, so a reader sees a whole file of the build it opened or none.
    """

    def __init__(self, folder: str | os.PathLike[str], collection: str, build_id: str) -> None:
        self.folder = Path(folder)
        self.collection = collection
        self.build_id = build_id

    @staticmethod
    def folder_of(lite_uri: str) -> Path:
        """The folder of a Milvus Lite store's local copies: ``<file>.db.logic-rag``."""
        path = Path(lite_uri)
        return path.with_name(path.name + ".logic-rag")

    def path(self, part: str) -> Path:
        """The file of ``part`` (``documents`` or ``sentences``)."""
        if part not in _PARTS:
            raise ValueError(f"a local copy holds {' and '.join(_PARTS)}, not {part!r}")
        return self.folder / f"{self.collection}.{self.build_id}.{part}.npy"

    @staticmethod
    def storage_dtype(vectors: Any) -> np.dtype:
        """How ``vectors`` are copied: float16 stays float16 (what the FAISS backend maps),
        anything else float32 (what Milvus holds): the copy equals Milvus's rows exactly."""
        dtype = getattr(vectors, "dtype", None)
        return np.dtype(np.float16) if dtype == np.float16 else np.dtype(np.float32)

    def write(self, part: str, vectors: Any, batch: int = _COPY_BATCH) -> str:
        """Write ``vectors`` (an array, or rows that can be sliced into blocks) as ``part``.

        Blocks of ``batch`` rows at a time, so a decoded (int8) table is never held whole.
        Returns the stored dtype's name.
        """
        from logic_rag.index.npy import write_npy_blocks

        n, dim = int(len(vectors)), int(vectors.shape[1])
        dtype = self.storage_dtype(vectors)
        blocks = (vectors[start : start + batch] for start in range(0, n, batch))
        write_npy_blocks(self.path(part), (n, dim), dtype, blocks)
        return str(dtype)

    def open(self, part: str, shape: tuple[int, int], dtype: object) -> np.ndarray:
        """``part`` memory-mapped read-only, checked against ``shape`` and ``dtype``.

        :class:`FileNotFoundError` when it is absent; :class:`IndexCorruptError` naming the
        file when it is damaged (truncated, another shape or dtype).
        """
        from logic_rag.index.npy import map_npy

        path = self.path(part)
        fd = os.open(path, os.O_RDONLY)
        array = map_npy(fd, path)
        if array.shape != tuple(shape) or str(array.dtype) != str(dtype):
            raise IndexCorruptError(
                f"{path}: holds {array.dtype} vectors of shape {array.shape}, the store "
                f"{tuple(shape)} {dtype}"
            )
        return array

    def remove(self) -> None:
        """Delete this build's files (a write that failed)."""
        for part in _PARTS:
            with contextlib.suppress(FileNotFoundError):
                self.path(part).unlink()

    def remove_others(self) -> list[Path]:
        """Delete the files of this collection's other builds (replaced or never swapped
        in); a process that still maps one keeps reading it. Returns what was deleted."""
        gone: list[Path] = []
        if not self.folder.is_dir():
            return gone
        for path in self.folder.iterdir():
            match = _COPY_FILE.fullmatch(path.name)
            if match and match["collection"] == self.collection and match["build"] != self.build_id:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    gone.append(path)
        return gone
