"""Sentence-level evidence: each document's sentences embedded, for checking constraints.

A document embedding averages every fact the document states, so one constraint
("Films set in Naples") is diluted by the others, and the whole-document similarity is a
weak membership signal. Checking each constraint against the document's best-matching
sentence (MaxSim, as in multi-vector retrieval) recovers it. Measured on the generated
world's validation split with MiniLM, single-atom R@20 rose from 0.39 (document vector)
to 0.50 (mean of document and best-sentence similarity), and ``setops`` rose from 0.39 to
0.51 R@20 overall.

Vectors are stored as ``.npy`` (no pickle) with CSR-style offsets: the sentences of
document ``i`` are rows ``offsets[i]:offsets[i+1]``; every document has at least one.
They are the largest part of an index (about ten sentences per page), so they are kept
compact and out of memory:

- ``sentence_dtype`` ``float16`` (the default, 2 bytes a value), ``int8`` (1 byte a value
  plus one float32 scale per sentence in ``passage_scales.npy``: symmetric, per-vector,
  ``v ~ q * scale`` with ``q`` in [-127, 127]) or ``float32`` (what indexes may hold that
  were written by other tools; twice float16's size, no better rankings measured);
- a loaded index maps the files (:func:`~logic_rag.index.npy.map_npy`) instead of reading
  them, and :meth:`PassageVectors.max_sim` decodes only the candidate documents' rows.

No float copy is kept beside int8 vectors, so there is nothing to rescore against: no
search runs over sentences (their similarity only re-weighs candidates found by the
document index), and the per-vector error (at most half a quantisation step, ``scale/2``
per value) moves a unit-vector cosine by about 1e-3 (tests bound it at 0.01).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from logic_rag.atomic import atomic_open
from logic_rag.errors import IndexCorruptError, IndexMismatchError

__all__ = [
    "SENTENCE_DTYPES",
    "SentenceDtype",
    "split_sentences",
    "split_corpus",
    "check_sentence_dtype",
    "quantize",
    "PassageVectors",
]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
SentenceDtype = Literal["float16", "int8", "float32"]
#: How sentence vectors may be stored; the first is the default.
SENTENCE_DTYPES: tuple[str, ...] = get_args(SentenceDtype)
DEFAULT_SENTENCE_DTYPE: SentenceDtype = "float16"
#: Sentences beyond this many per document are merged into the last one.
MAX_SENTENCES = 32


#: Characters of a text the splitter reads: 32 sentences (the last one merged) never need
#: more, and one huge text must not cost a list of a million sentences first.
MAX_SPLIT_CHARS = 100_000


def split_sentences(
    text: str, max_sentences: int = MAX_SENTENCES, max_chars: int = MAX_SPLIT_CHARS
) -> list[str]:
    """Split prose into sentences (a light rule: end punctuation, then a capital).

    Only the first ``max_chars`` characters are read (callers that index report their own
    cut; see :class:`~logic_rag.corpus.TextBudget`)."""
    text = text[:max_chars]
    parts = [p.strip() for p in _SENTENCE_END.split(text) if p.strip()]
    if not parts:
        return [text.strip() or " "]
    if len(parts) > max_sentences:
        parts = parts[: max_sentences - 1] + [" ".join(parts[max_sentences - 1 :])]
    return parts


def document_bodies(documents: Sequence[Any], max_chars: int) -> list[str]:
    """Each document's body (or its title when it has none) cut to ``max_chars``: the
    texts whose sentences are embedded (the document vector already reported the cut)."""
    return [(d.text or d.title)[:max_chars] for d in documents]


def split_corpus(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Every text's sentences in one list, and CSR offsets (document ``i`` owns
    ``sentences[offsets[i]:offsets[i+1]]``)."""
    sentences: list[str] = []
    offsets = [0]
    for text in texts:
        sentences.extend(split_sentences(text))
        offsets.append(len(sentences))
    return sentences, np.asarray(offsets, dtype=np.int64)


def check_sentence_dtype(dtype: object) -> SentenceDtype:
    """``dtype`` if it is one of :data:`SENTENCE_DTYPES`, else a ``ValueError`` listing them."""
    if dtype not in SENTENCE_DTYPES:
        raise ValueError(
            f"sentence_dtype must be one of {', '.join(SENTENCE_DTYPES)}, got {dtype!r}"
        )
    return dtype  # type: ignore[return-value]


def quantize(vectors: np.ndarray, dtype: SentenceDtype) -> tuple[np.ndarray, np.ndarray | None]:
    """``vectors`` in the storage ``dtype``, and the per-row scales when it is ``int8``.

    int8 is symmetric per vector: ``scale = max|v| / 127`` (1 for an all-zero row), so
    each row uses the whole code range whatever its norm.
    """
    check_sentence_dtype(dtype)
    vectors = np.asarray(vectors)
    if dtype != "int8":
        return vectors.astype(dtype, copy=False), None
    values = vectors.astype(np.float32, copy=False)
    peak = np.abs(values).max(axis=1) if len(values) else np.zeros(0, np.float32)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(values / scales[:, None]), -127, 127).astype(np.int8)
    return codes, scales


class PassageVectors:
    """Sentence embeddings of every document, with per-document offsets.

    ``vectors`` may be a memory map (a loaded index): rows are decoded to float32 only
    when a search reads them. ``scales`` (one float32 per row) is given exactly when the
    vectors are ``int8``.
    """

    VECTORS_FILE = "passages.npy"
    OFFSETS_FILE = "passage_offsets.npy"
    SCALES_FILE = "passage_scales.npy"

    def __init__(
        self, vectors: np.ndarray, offsets: np.ndarray, scales: np.ndarray | None = None
    ) -> None:
        if offsets.ndim != 1 or offsets[0] != 0 or offsets[-1] != len(vectors):
            raise IndexCorruptError("passage offsets do not match the passage vectors")
        if np.any(np.diff(offsets) < 1):
            raise IndexCorruptError("every document needs at least one passage vector")
        kind = str(vectors.dtype)
        if kind not in SENTENCE_DTYPES:
            raise IndexCorruptError(
                f"passage vectors are {kind}; logic-rag stores {', '.join(SENTENCE_DTYPES)}"
            )
        if (kind == "int8") != (scales is not None):
            raise IndexCorruptError(
                "int8 passage vectors need one scale per row (passage_scales.npy), and "
                "only int8 vectors have scales"
            )
        if scales is not None and (scales.shape != (len(vectors),) or scales.dtype != np.float32):
            raise IndexCorruptError(
                f"passage scales have shape {scales.shape} ({scales.dtype}); expected "
                f"({len(vectors)},) float32"
            )
        self.vectors = vectors
        self.scales = scales
        self.offsets = offsets if offsets.dtype == np.int64 else offsets.astype(np.int64)

    @classmethod
    def build(
        cls,
        encoder: object,
        texts: Sequence[str],
        *,
        show_progress_bar: bool | None = None,
        dtype: SentenceDtype = DEFAULT_SENTENCE_DTYPE,
    ) -> PassageVectors:
        """Split each text into sentences and embed them with ``encoder`` (document side)."""
        from logic_rag.encoders.dense import DenseEncoder

        sentences, offsets = split_corpus(texts)
        # The progress bar says which indexing phase it is (other encoders: no label).
        named = {"progress_label": "sentences"} if isinstance(encoder, DenseEncoder) else {}
        vectors = encoder.encode_documents(  # type: ignore[attr-defined]
            sentences, show_progress_bar=show_progress_bar, **named
        )
        return cls.from_vectors(vectors, offsets, dtype=dtype)

    @classmethod
    def from_vectors(
        cls,
        vectors: np.ndarray,
        offsets: np.ndarray,
        *,
        dtype: SentenceDtype = DEFAULT_SENTENCE_DTYPE,
    ) -> PassageVectors:
        """Sentence vectors computed elsewhere (in :func:`split_corpus` order), stored as
        ``dtype``."""
        stored, scales = quantize(vectors, dtype)
        return cls(stored, np.asarray(offsets, dtype=np.int64), scales)

    @property
    def n_documents(self) -> int:
        return len(self.offsets) - 1

    @property
    def dtype(self) -> SentenceDtype:
        """How the vectors are stored (one of :data:`SENTENCE_DTYPES`)."""
        return str(self.vectors.dtype)  # type: ignore[return-value]

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """Sentence rows ``rows`` decoded to float32 (only those rows are read)."""
        block = np.asarray(self.vectors[rows], dtype=np.float32)
        if self.scales is not None:
            block *= self.scales[rows][:, None]
        return block

    def decode(self, start: int, end: int) -> np.ndarray:
        """Sentence rows ``start:end`` decoded to float32."""
        return self.rows(np.arange(start, end))

    def float_rows(self) -> Any:
        """The vectors as something whose row slices are floats: the array itself, or for
        int8 a view that decodes each slice it is asked for (writers that copy the vectors
        elsewhere in batches never hold the whole table decoded)."""
        return self.vectors if self.scales is None else _DecodedRows(self)

    def max_sim(self, queries: np.ndarray, doc_ids: np.ndarray) -> np.ndarray:
        """Best sentence similarity of each query to each document, ``(len(q), len(ids))``.

        Only the sentences of ``doc_ids`` are read (and decoded), whatever the corpus size.
        """
        if queries.shape[-1] != self.vectors.shape[1]:
            raise IndexMismatchError(
                f"query vectors are {queries.shape[-1]}-d, passage vectors "
                f"{self.vectors.shape[1]}-d"
            )
        doc_ids = np.asarray(doc_ids, dtype=np.int64)
        if len(doc_ids) == 0:
            return np.zeros((len(queries), 0), dtype=np.float32)
        starts, ends = self.offsets[doc_ids], self.offsets[doc_ids + 1]
        lengths = ends - starts
        rows = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        sims = queries.astype(np.float32) @ self.rows(rows).T
        bounds = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        return np.maximum.reduceat(sims, bounds, axis=1)

    def manifest(self) -> dict[str, Any]:
        """The index manifest's record of how the sentence vectors are stored."""
        return {"sentence_dtype": self.dtype}

    def writers(self) -> dict[str, object]:
        """File writers for :func:`logic_rag.index.store.write_folder`."""

        def save(array: np.ndarray):
            def write(path: Path) -> None:
                with atomic_open(path, "wb") as handle:
                    np.save(handle, array, allow_pickle=False)

            return write

        files = {self.VECTORS_FILE: save(self.vectors), self.OFFSETS_FILE: save(self.offsets)}
        if self.scales is not None:
            files[self.SCALES_FILE] = save(self.scales)
        return files

    @classmethod
    def files(cls, dtype: object) -> list[str]:
        """The files an index whose manifest records ``sentence_dtype=dtype`` holds."""
        names = [cls.VECTORS_FILE, cls.OFFSETS_FILE]
        return names + [cls.SCALES_FILE] if dtype == "int8" else names

    @classmethod
    def load(
        cls, folder: Any, n_documents: int, *, dtype: object = None, mmap: bool = True
    ) -> PassageVectors:
        """Read the arrays from a folder or an index snapshot (whose checksums were
        verified through the descriptors the arrays are read from).

        With ``mmap`` (the default) the vectors and scales are memory-mapped, not read:
        see :func:`~logic_rag.index.npy.map_npy`. ``dtype`` is the manifest's
        ``sentence_dtype`` (``None`` for indexes written before it was recorded: their
        vectors are float16 or float32); the file must hold what it says.
        """
        from logic_rag.index.npy import check_finite_npy, map_npy, read_npy
        from logic_rag.index.snapshot import as_files

        files = as_files(folder)
        # Messages name the folder the user gave, never a snapshot object's repr.
        where = _folder_name(folder)

        def read(name: str, mapped: bool) -> np.ndarray:
            try:
                if mapped:
                    return map_npy(files.descriptor(name), files.display(name))
                with files.open(name) as handle:
                    return read_npy(handle, files.size(name), files.display(name))
            except OSError as exc:
                raise IndexCorruptError(
                    f"{files.display(name)}: cannot read passage vectors ({exc})"
                ) from None

        def finite(name: str) -> None:
            try:
                with files.open(name) as handle:
                    check_finite_npy(handle, files.size(name), files.display(name))
            except OSError as exc:
                raise IndexCorruptError(
                    f"{files.display(name)}: cannot read passage vectors ({exc})"
                ) from None

        if dtype is not None and dtype not in SENTENCE_DTYPES:
            raise IndexCorruptError(
                f"{where}: unknown sentence_dtype {dtype!r} (expected one of "
                f"{', '.join(SENTENCE_DTYPES)}); rebuild the index"
            )
        vectors = read(cls.VECTORS_FILE, mmap)
        offsets = read(cls.OFFSETS_FILE, False)
        if vectors.ndim != 2 or offsets.ndim != 1 or len(offsets) == 0:
            raise IndexCorruptError(
                f"{where}: passage arrays have the wrong shapes (vectors {vectors.shape}, "
                f"offsets {offsets.shape}); rebuild the index"
            )
        if offsets.dtype.kind not in "iu":
            raise IndexCorruptError(
                f"{files.display(cls.OFFSETS_FILE)} holds {offsets.dtype} values; passage "
                f"offsets are integers, rebuild the index"
            )
        if dtype is not None and str(vectors.dtype) != dtype:
            raise IndexCorruptError(
                f"{files.display(cls.VECTORS_FILE)} holds {vectors.dtype} vectors, the manifest "
                f"says {dtype}; rebuild the index"
            )
        scales = read(cls.SCALES_FILE, mmap) if str(vectors.dtype) == "int8" else None
        try:
            passages = cls(vectors, offsets.astype(np.int64, copy=False), scales)
        except IndexCorruptError as exc:
            raise IndexCorruptError(f"{where}: {exc}; rebuild the index") from None
        if passages.n_documents != n_documents:
            raise IndexCorruptError(
                f"{where}: passage offsets cover {passages.n_documents} documents, the index "
                f"holds {n_documents}"
            )
        # NaN or an infinity in the vectors (or int8 scales) turns every similarity with
        # them into NaN: rerank, verify and setops then return no hits, exit 0. Scanned
        # when the files were hashed at open (about the cost of the hash again); a folder
        # opened with verify=False (trusted, huge) is not read whole here either.
        if getattr(files, "verified", True):
            finite(cls.VECTORS_FILE)
            if scales is not None:
                finite(cls.SCALES_FILE)
        return passages


def _folder_name(folder: Any) -> str:
    """The folder as the user named it: a snapshot's path, not its object repr."""
    from logic_rag.index.snapshot import IndexSnapshot

    if isinstance(folder, IndexSnapshot):
        return str(folder.folder)
    inner = getattr(folder, "folder", None)
    return str(inner) if inner is not None and not isinstance(folder, os.PathLike) else str(folder)


class _DecodedRows:
    """Row slices of int8 :class:`PassageVectors`, decoded to float32 when sliced."""

    def __init__(self, passages: PassageVectors) -> None:
        self._passages = passages
        self.shape = passages.vectors.shape
        self.dtype = np.dtype(np.float32)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: Any) -> np.ndarray:
        if isinstance(rows, slice):
            rows = np.arange(*rows.indices(self.shape[0]))
        return self._passages.rows(np.asarray(rows, dtype=np.int64))
