"""Encode, index and search for the experiments: one exact FAISS index per document encoder.

Why not the full :class:`logic_rag.Retriever`: the experiments compare *encoders* under the
plain dense strategy, and LORE must show that an index built with the base document encoder
serves a tuned query encoder unchanged; so documents and queries are encoded separately
here and searched in a flat (exact) :class:`logic_rag.index.faiss_index.DenseIndex`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.index.faiss_index import DenseIndex

__all__ = ["DocumentIndex", "load_encoder", "search_queries"]


def load_encoder(model: str, *, batch_size: int = 64) -> DenseEncoder:
    """A :class:`DenseEncoder` for a registry name (``minilm``) or a trained model folder."""
    from logic_rag.encoders.dense import DenseEncoder

    return DenseEncoder(model, batch_size=batch_size, query_prompt="", document_prompt="")


class DocumentIndex:
    """Documents (ids and texts) embedded once by ``encoder`` into an exact index."""

    def __init__(self, doc_ids: Sequence[str], texts: Sequence[str], encoder: DenseEncoder):
        from logic_rag.index.faiss_index import DenseIndex

        if len(doc_ids) != len(texts):
            raise ValueError(f"{len(doc_ids)} document ids for {len(texts)} texts")
        self.doc_ids = list(doc_ids)
        self.encoder_name = encoder.name
        vectors = encoder.encode_documents(list(texts), show_progress_bar=False)
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
