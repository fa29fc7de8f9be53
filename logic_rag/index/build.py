"""Building an index: embed a corpus (documents, then sentences) and index the vectors, or
move built vectors into a Milvus store.

This is the storage side of :meth:`LogicRetriever.build
<logic_rag.logic_retriever.LogicRetriever.build>` and :meth:`~logic_rag.logic_retriever.
LogicRetriever.to_store`, kept out of the retriever so the retriever only assembles the
parts and searches. It imports nothing of the search engine (queries, verifiers,
pipelines, retrievers): what it returns are vectors, indexes and the text budget.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from logic_rag.corpus import DEFAULT_MAX_DOCUMENT_CHARS, Document, TextBudget
from logic_rag.encoders.dense import DenseEncoder
from logic_rag.errors import IndexMismatchError
from logic_rag.index.faiss_index import DenseIndex, IndexKind
from logic_rag.index.passages import (
    DEFAULT_SENTENCE_DTYPE,
    PassageVectors,
    SentenceDtype,
    document_bodies,
    split_corpus,
)

if TYPE_CHECKING:
    from logic_rag.encoders.ray_encoding import RayEncoding

__all__ = [
    "Embedded",
    "check_new_store",
    "embed_corpus",
    "index_vectors",
    "move_to_store",
    "open_store",
]


@dataclass
class Embedded:
    """A corpus embedded and indexed: the encoder, its document index, the text budget
    the encoder saw, and the sentence vectors (None without passages)."""

    encoder: DenseEncoder
    index: DenseIndex
    budget: TextBudget
    passages: PassageVectors | None


def embed_corpus(
    docs: list[Document],
    *,
    model: str | os.PathLike[str] | DenseEncoder | None = None,
    passages: bool = True,
    index: IndexKind = "flat",
    index_options: dict[str, Any] | None = None,
    show_progress_bar: bool | None = None,
    encode_with: RayEncoding | None = None,
    max_document_chars: int = DEFAULT_MAX_DOCUMENT_CHARS,
    sentence_dtype: SentenceDtype = DEFAULT_SENTENCE_DTYPE,
) -> Embedded:
    """Embed ``docs`` (each cut to ``max_document_chars`` for the encoder) into a FAISS
    index of kind ``index``, and with ``passages`` every sentence too.

    ``encode_with`` embeds documents and sentences in one Ray pass (one pool of actors
    that load the model, not two); the vectors are the same as in this process.
    """
    if not docs:
        raise ValueError("cannot build an index over zero documents")
    encoder = model if isinstance(model, DenseEncoder) else DenseEncoder(model)
    budget = TextBudget(max_document_chars)
    options = index_options or {}
    sentence_vectors = None
    if encode_with is not None:
        texts = budget.apply([d.content for d in docs])
        sentences: list[str] = []
        offsets = None
        if passages:
            sentences, offsets = split_corpus(document_bodies(docs, max_document_chars))
        vectors = encode_with.encode(
            encoder, itertools.chain(texts, sentences), total=len(texts) + len(sentences)
        )
        del texts, sentences
        embeddings = vectors[: len(docs)]
        if offsets is not None:
            sentence_vectors = PassageVectors.from_vectors(
                vectors[len(docs) :], offsets, dtype=sentence_dtype
            )
    else:
        embeddings = encoder.encode_documents(
            budget.apply([d.content for d in docs]), show_progress_bar=show_progress_bar
        )
    built = index_vectors(embeddings, len(docs), index, options)
    if passages and sentence_vectors is None:
        sentence_vectors = PassageVectors.build(
            encoder,
            document_bodies(docs, max_document_chars),
            show_progress_bar=show_progress_bar,
            dtype=sentence_dtype,
        )
    return Embedded(encoder, built, budget, sentence_vectors)


def index_vectors(
    embeddings: np.ndarray, n_documents: int, index: IndexKind, options: dict[str, Any]
) -> DenseIndex:
    """A FAISS index of kind ``index`` over ``embeddings`` (one row per document)."""
    if embeddings.ndim != 2 or len(embeddings) != n_documents:
        raise IndexMismatchError(f"got {embeddings.shape} embeddings for {n_documents} documents")
    built = DenseIndex(embeddings.shape[1], index, **options)
    built.add(np.ascontiguousarray(embeddings, dtype=np.float32))
    return built


def open_store(store: str, *, collection: str = "logic_rag", token: str | None = None) -> Any:
    """The Milvus store ``store`` names (``milvus://file.db`` for Milvus Lite,
    ``http(s)://host:port`` for a server), for ``collection``."""
    from logic_rag.index.milvus_store import MilvusStore, parse_store_uri

    return MilvusStore(parse_store_uri(store, collection), token=token)


def check_new_store(milvus: Any, *, overwrite: bool, index: IndexKind) -> None:
    """Before minutes of embedding, not after: an existing collection is refused unless
    ``overwrite``, and Milvus keeps its own exact FLAT index (``index`` must be ``flat``)."""
    if not overwrite:
        milvus.refuse_existing()
    if index != "flat":
        raise ValueError(
            f"index={index!r}: a Milvus store uses Milvus's exact FLAT index; leave index='flat'"
        )


def move_to_store(
    milvus: Any,
    encoder: DenseEncoder,
    index: Any,
    passages: PassageVectors | None,
    *,
    overwrite: bool,
) -> tuple[Any, Any]:
    """Write a built FAISS index's document vectors (and the sentence vectors) to
    ``milvus`` in bounded batches, and open them there: ``(index, passages)`` backed by
    the store."""
    if getattr(index, "store", None) is not None:
        raise ValueError("this retriever's vectors already live in a vector store")
    model = {"name": encoder.name, "weights_sha256": encoder.fingerprint}
    sentences = None
    if passages is not None:
        sentences = (passages.float_rows(), passages.offsets)
    stored = milvus.write(
        np.asarray(index.vectors()), sentences, {"model": model}, overwrite=overwrite
    )
    return milvus.open(
        {k: stored[k] for k in ("build_id", "document_count", "sentence_count", "model")}
    )
