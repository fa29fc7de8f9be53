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
"""

from __future__ import annotations

import base64
import os
import threading
import zlib
from collections import OrderedDict
from collections.abc import Hashable

import numpy as np

from logic_rag.errors import IndexCorruptError

__all__ = [
    "CACHE_ENV",
    "DEFAULT_CACHE_MB",
    "VectorCache",
    "cache_bytes",
    "compact",
    "decode_counts",
    "encode_counts",
    "offsets_from_owners",
    "sentence_rows",
]

#: Environment variable with the client cache's budget in MiB (0: no cache).
CACHE_ENV = "LOGIC_RAG_MILVUS_CACHE_MB"
#: Enough for the sentence and document vectors of ~60k documents at 384 dimensions.
DEFAULT_CACHE_MB = 512
#: Python's bookkeeping per cached array, counted against the budget.
_ENTRY_OVERHEAD = 128


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
