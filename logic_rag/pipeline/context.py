"""The indexes a pipeline searches, and batched, memoised access to them.

Stages are small configuration objects; the heavy resources (documents, the dense
encoder and vector index (FAISS, Milvus, or a reranker's in-memory
:class:`~logic_rag.index.exact.ExactIndex`), sentence vectors, the SPLADE and BM25 indexes) live in one
:class:`SearchContext` per ``search_batch`` call. It encodes every query-side text of the
batch in one encoder call and searches them in one index call: stages first declare the
texts and depths they will need (:meth:`want`), then read the results (:meth:`search`,
:meth:`vectors`) from memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from logic_rag.corpus import DEFAULT_MAX_DOCUMENT_CHARS, Document, TextBudget

if TYPE_CHECKING:
    from logic_rag.index.passages import PassageVectors
    from logic_rag.retriever import DenseRetriever

__all__ = ["SearchContext", "Resources"]


class Resources:
    """The long-lived indexes of one retriever (shared by every search)."""

    def __init__(
        self,
        dense: DenseRetriever,
        *,
        passages: PassageVectors | None = None,
        sparse: Any | None = None,
    ) -> None:
        self.dense = dense
        self.passages = passages
        self.sparse = sparse
        self._vectors: np.ndarray | None = None
        self._bm25: Any | None = None
        #: How the BM25 index bounded the documents (set when it is built).
        self.bm25_budget: TextBudget | None = None
        self._rows: dict[str, int] | None = None
        self._hashes: list[str | None] | None = None
        self._corpus_fingerprint: str | None = None
        self._loaded: dict[tuple[str, ...], Any] = {}

    @property
    def documents(self) -> list[Document]:
        return self.dense.documents

    def __len__(self) -> int:
        return len(self.dense)

    def doc_vectors(self) -> np.ndarray:
        """All document vectors (a zero-copy view for flat/HNSW indexes)."""
        if self._vectors is None:
            self._vectors = self.dense.index.vectors()
        return self._vectors

    def bm25(self) -> Any:
        """A BM25 index over the documents, built on first use (seconds per 100k).

        Each document is cut to the character budget its dense side was embedded with
        (:attr:`bm25_budget`), so one huge document cannot set the memory and time of the
        tokenizer; a cut is logged as the dense side logs it.
        """
        if self._bm25 is None:
            from logic_rag.index.bm25 import BM25Index

            budget = self.bm25_budget = TextBudget(self._max_document_chars())
            # A generator: at most one whole document is held beside the cut ones.
            texts = budget.apply((d.content for d in self.documents), before="BM25 indexing")
            self._bm25 = BM25Index(texts)
        return self._bm25

    def _max_document_chars(self) -> int:
        """The per-document budget of the dense side: the one the index was built with,
        else the default (an index loaded from a folder keeps no budget in memory)."""
        built = getattr(self.dense, "text_budget", None)
        return built.max_chars if built is not None else DEFAULT_MAX_DOCUMENT_CHARS

    def rows_by_id(self) -> dict[str, int]:
        if self._rows is None:
            self._rows = {d.id: i for i, d in enumerate(self.documents)}
        return self._rows

    def doc_hash(self, row: int) -> str:
        """SHA-1 of a document's content: the document part of verifier cache keys."""
        if self._hashes is None:
            self._hashes = [None] * len(self.documents)
        cached = self._hashes[row]
        if cached is None:
            text = self.documents[row].content.encode("utf-8", "surrogatepass")
            cached = self._hashes[row] = hashlib.sha1(text).hexdigest()
        return cached

    def corpus_fingerprint(self) -> str:
        """SHA-256 over the documents' content hashes, in order: what fitted thresholds and
        calibrations are keyed by, so one corpus's fit is never used for another."""
        if self._corpus_fingerprint is None:
            digest = hashlib.sha256()
            for row in range(len(self.documents)):
                digest.update(self.doc_hash(row).encode("ascii"))
            self._corpus_fingerprint = digest.hexdigest()
        return self._corpus_fingerprint

    def loaded(self, key: tuple[str, ...], load: Callable[[], Any]) -> Any:
        """``load()`` once per ``key`` for this retriever (a verifier's model, a fitted
        file): long-lived things belong to the retriever that uses them, not to the
        process, so two retrievers over different corpora never share a fit."""
        if key not in self._loaded:
            self._loaded[key] = load()
        return self._loaded[key]


class SearchContext:
    """Per-batch view of :class:`Resources` with one encoder call and one index call."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources
        self._wanted: dict[str, int] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._results: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}

    # ---------------------------------------------------------------- declared needs
    def want(self, texts: Sequence[str], depth: int = 0) -> None:
        """Declare query-side texts to encode and, with ``depth``, to search that deep."""
        for text in texts:
            self._wanted[text] = max(self._wanted.get(text, 0), depth)

    def run_wanted(self) -> None:
        """Encode every declared text in one call and search them in one index call."""
        # Sorted: the same texts are encoded in the same batches whatever order the stages
        # declared them in (bf16 results depend slightly on a batch's padding).
        todo = sorted(t for t in self._wanted if t not in self._vectors)
        if todo:
            encoded = self.resources.dense.encoder.encode_queries(todo)
            self._vectors.update(zip(todo, encoded, strict=True))
        search = sorted(
            t
            for t, d in self._wanted.items()
            if d > 0 and (t not in self._results or self._results[t][2] < d)
        )
        if search:
            depth = min(max(self._wanted[t] for t in search), len(self.resources))
            scores, ids = self.resources.dense.index.search(
                np.stack([self._vectors[t] for t in search]), depth
            )
            for t, s, i in zip(search, scores, ids, strict=True):
                self._results[t] = (s, i, depth)
        self._wanted.clear()

    # ---------------------------------------------------------------- reads
    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Query-side embeddings of ``texts`` (encoded now if not declared before)."""
        missing = [t for t in texts if t not in self._vectors]
        if missing:
            self.want(missing)
            self.run_wanted()
        return np.stack([self._vectors[t] for t in texts])

    def search(self, text: str, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``depth`` nearest documents of ``text`` (scores, rows; no -1 padding)."""
        depth = min(depth, len(self.resources))
        cached = self._results.get(text)
        if cached is None or cached[2] < depth:
            self.want([text], depth)
            self.run_wanted()
            cached = self._results[text]
        scores, ids, _ = cached
        keep = ids[:depth] >= 0
        return scores[:depth][keep], ids[:depth][keep]
