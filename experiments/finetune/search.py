"""Encode, index and search for the experiments: one exact FAISS index per document encoder.

Why not the full :class:`logic_rag.DenseRetriever`: the experiments compare *encoders* under the
plain dense strategy, and LORE must show that an index built with the base document encoder
serves a tuned query encoder unchanged; so documents and queries are encoded separately
here and searched in a flat (exact) :class:`logic_rag.index.faiss_index.DenseIndex`.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.index.faiss_index import DenseIndex

__all__ = [
    "DocumentIndex",
    "document_encoder_of",
    "document_cache_path",
    "document_embeddings",
    "load_encoder",
    "search_queries",
]


def load_encoder(model: str, *, batch_size: int = 64) -> DenseEncoder:
    """A :class:`DenseEncoder` for a registry name (``minilm``) or a trained model folder.

    The model's own ``query`` / ``document`` prompts apply (EmbeddingGemma's; MiniLM has
    none), as in :class:`logic_rag.DenseRetriever` and in training (``training_prompts``).
    """
    from logic_rag.encoders.dense import DenseEncoder

    return DenseEncoder(model, batch_size=batch_size)


def document_encoder_of(encoder: DenseEncoder) -> DenseEncoder:
    """The encoder that embeds documents for ``encoder``: itself, or for a query-only model
    (LORE, ``--query-only``) the base named in its ``logic_rag_encoder.json``, whose weights
    must match the hash recorded there."""
    from logic_rag.encoders.query_only import ENCODER_JSON, document_encoder_meta

    path = Path(encoder.resolved.path) / ENCODER_JSON
    doc = document_encoder_meta(path.parent)
    if doc is None:
        return encoder
    if not doc.get("name"):
        raise ValueError(f"{path}: expected a query encoder naming its document_encoder")
    base = load_encoder(str(doc["name"]), batch_size=encoder.batch_size)
    if doc.get("weights_sha256") and base.fingerprint != doc["weights_sha256"]:
        raise ValueError(
            f"{path} was trained against {doc['name']} with weights {doc['weights_sha256'][:12]}, "
            f"but {doc['name']} resolves to weights {base.fingerprint[:12]} here"
        )
    return base


def document_cache_path(
    encoder: DenseEncoder, texts: Sequence[str], cache_dir: str | os.PathLike[str]
) -> Path:
    """Where :func:`document_embeddings` keeps ``encoder``'s embeddings of ``texts``."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(hashlib.sha256(text.encode("utf-8")).digest())
    key = hashlib.sha256(
        json.dumps(
            {
                "weights": encoder.fingerprint,
                "config": encoder.config_fingerprint,
                "dtype": encoder.dtype,
                "texts": digest.hexdigest(),
            },
            sort_keys=True,
        ).encode("utf-8")
    ).hexdigest()[:24]
    return Path(cache_dir) / f"documents-{key}.npy"


def document_embeddings(
    encoder: DenseEncoder,
    texts: Sequence[str],
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    show_progress_bar: bool = True,
) -> np.ndarray:
    """``encoder``'s document embeddings of ``texts``, cached in ``cache_dir`` when given.

    Why: every condition of an experiment whose documents stay on the base (zero-shot, LORE,
    ``--query-only``) needs the same corpus embeddings, which take ~50 min for EmbeddingGemma
    on 2 cores. The file is keyed by the weights hash, the encoder's settings (prompts,
    length, pooling), its dtype and the SHA-256 of the texts, so a changed model or corpus
    never reuses a stale file; it is written atomically and read without pickle.
    """
    if cache_dir is None:
        return encoder.encode_documents(list(texts), show_progress_bar=show_progress_bar)
    path = document_cache_path(encoder, texts, cache_dir)
    root = path.parent
    if path.is_file():
        vectors = np.load(path, allow_pickle=False)
        if vectors.ndim == 2 and vectors.shape[0] == len(texts):
            return vectors.astype(np.float32, copy=False)
    vectors = encoder.encode_documents(list(texts), show_progress_bar=show_progress_bar)
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{path.name}.tmp-{uuid.uuid4().hex[:8]}.npy"
    try:
        np.save(tmp, np.asarray(vectors, dtype=np.float32), allow_pickle=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return vectors


class DocumentIndex:
    """Documents (ids and texts) embedded once by ``encoder`` into an exact index.

    ``cache_dir``: keep the embeddings there (see :func:`document_embeddings`).
    """

    def __init__(
        self,
        doc_ids: Sequence[str],
        texts: Sequence[str],
        encoder: DenseEncoder,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
    ):
        from logic_rag.index.faiss_index import DenseIndex

        if len(doc_ids) != len(texts):
            raise ValueError(f"{len(doc_ids)} document ids for {len(texts)} texts")
        self.doc_ids = list(doc_ids)
        self.encoder_name = encoder.name
        # A progress bar only for the (long, cached) encodings of a shared base.
        vectors = document_embeddings(
            encoder, texts, cache_dir, show_progress_bar=cache_dir is not None
        )
        self.index: DenseIndex = DenseIndex(vectors.shape[1])
        self.index.add(vectors)

    def search(self, query_vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """Top ``k`` ``(doc_id, score)`` per query embedding, best first."""
        scores, ids = self.index.search(query_vectors, k)
        return [
            [(self.doc_ids[int(i)], float(s)) for s, i in zip(row_s, row_i, strict=True) if i >= 0]
            for row_s, row_i in zip(scores, ids, strict=True)
        ]


def search_queries(
    encoder: DenseEncoder, index: DocumentIndex, queries: Sequence[Any], depth: int
) -> tuple[np.ndarray, dict[str, list[tuple[str, float]]]]:
    """Query embeddings and the run ``{qid: [(doc_id, score), ...]}`` of QUEST ``queries``."""
    vectors = encoder.encode_queries([q.query for q in queries], show_progress_bar=False)
    hits = index.search(vectors, min(depth, len(index.doc_ids)))
    return vectors, {q.qid: h for q, h in zip(queries, hits, strict=True)}
