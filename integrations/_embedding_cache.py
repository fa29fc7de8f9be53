"""Candidate embeddings kept between rerank calls: a bounded LRU keyed by the texts.

Why: a reranker embeds every candidate, and with ``passages`` every candidate's sentences,
on each call. In a RAG service the same pages come back for many queries (popular pages,
follow-up questions, retries), and with EmbeddingGemma on a CPU embedding a page and its
sentences costs about a second, so most of a warm call's time was spent re-embedding text
it had embedded before. The cache keeps each page's document vector (float32) and sentence
vectors (float16, exactly what :class:`~logic_rag.index.passages.PassageVectors` stores)
under the SHA-256 of the embedded texts, so a changed page is a new key and a stale vector
is never served. The encoder is fixed per reranker, so the key needs no model part.

Memory stays bounded: at most ``capacity`` pages, each with at most
:data:`~logic_rag.index.passages.MAX_SENTENCES` sentence vectors; the least recently used
page is dropped first. Calls run under the encoder's lock (``_engine.run_locked``), so the
cache needs no lock of its own.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from logic_rag.corpus import Document
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.index.passages import PassageVectors

__all__ = ["CandidateEmbeddingCache", "check_cache_size"]


def check_cache_size(size: object) -> int:
    """``size`` as a page count (0 disables the cache); a clear error otherwise."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"cache_size must be a whole number >= 0 (0: no cache), got {size!r}")
    return size


def _passage_text(doc: Document) -> str:
    # The text PassageVectors.build splits into sentences for the uncached path.
    return doc.text or doc.title


class CandidateEmbeddingCache:
    """Document and sentence vectors of recently reranked pages, at most ``capacity``."""

    def __init__(self, capacity: int) -> None:
        self.capacity = check_cache_size(capacity)
        self._entries: OrderedDict[str, tuple[np.ndarray, np.ndarray | None]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def _key(doc: Document, passages: bool) -> str:
        digest = hashlib.sha256(doc.content.encode("utf-8", "surrogatepass"))
        if passages:
            digest.update(b"\0")
            digest.update(_passage_text(doc).encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def vectors(
        self, encoder: DenseEncoder, docs: Sequence[Document], *, passages: bool
    ) -> tuple[np.ndarray, PassageVectors | None]:
        """``docs``' document vectors and (with ``passages``) sentence vectors, embedding
        only the pages not cached (each distinct page once, in one batch per kind)."""
        from logic_rag.index.passages import PassageVectors, split_corpus

        keys = [self._key(d, passages) for d in docs]
        missing: dict[str, Document] = {}
        for key, doc in zip(keys, docs, strict=True):
            if key in self._entries:
                self._entries.move_to_end(key)
                self.hits += 1
            elif key not in missing:
                missing[key] = doc
        self.misses += len(missing)
        fresh: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        if missing:
            new_docs = list(missing.values())
            doc_vectors = encoder.encode_documents(
                [d.content for d in new_docs], show_progress_bar=False
            )
            sentence_vectors: list[np.ndarray | None] = [None] * len(new_docs)
            if passages:
                sentences, offsets = split_corpus([_passage_text(d) for d in new_docs])
                encoded = encoder.encode_documents(sentences, show_progress_bar=False)
                encoded = np.asarray(encoded).astype(np.float16)
                sentence_vectors = [
                    encoded[offsets[i] : offsets[i + 1]] for i in range(len(new_docs))
                ]
            for i, key in enumerate(missing):
                fresh[key] = (
                    np.asarray(doc_vectors[i], dtype=np.float32),
                    sentence_vectors[i],
                )
        rows = [fresh[k] if k in fresh else self._entries[k] for k in keys]
        if self.capacity:
            for key, entry in fresh.items():
                self._entries[key] = entry
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        dense = np.stack([r[0] for r in rows])
        if not passages:
            return dense, None
        parts = [r[1] for r in rows]
        assert all(p is not None for p in parts)
        offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
        return dense, PassageVectors.from_vectors(np.concatenate(parts), offsets)  # type: ignore[arg-type]
