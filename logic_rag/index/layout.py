"""What a dense index folder holds: its file names, the manifest entries every such folder
has, and a document's row in ``documents.jsonl``.

Shared by :meth:`DenseRetriever.save <logic_rag.retriever.DenseRetriever.save>` and the
chunked builder (:mod:`logic_rag.index.streaming`), so both write the same folder; here, in
the index layer, so that the builder does not import the retriever above it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from logic_rag.corpus import Document
    from logic_rag.encoders.dense import DenseEncoder

__all__ = ["DOCS_FILE", "EXACT_FILE", "FAISS_FILE", "dense_manifest", "document_row"]

FAISS_FILE = "index.faiss"
DOCS_FILE = "documents.jsonl"
#: IVF-PQ's exact document vectors (float16), read for the candidates a search rescores.
EXACT_FILE = "doc_vectors.npy"


def dense_manifest(
    encoder: DenseEncoder, *, dimension: int, index_kind: str, document_count: int
) -> dict[str, Any]:
    """The manifest entries every index folder has (model record, dimension, metric,
    index kind, document count, documents file); shared by :meth:`DenseRetriever.save` and the
    chunked builder (:mod:`logic_rag.index.streaming`), so both write the same folder."""
    return {
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "model": {
            "name": encoder.name,
            "weights_sha256": encoder.fingerprint,
            "config": encoder.config,
            "config_sha256": encoder.config_fingerprint,
        },
        "dimension": dimension,
        "normalized": encoder.normalize,
        "metric": "inner_product",
        "index_kind": index_kind,
        "document_count": document_count,
        "documents_file": DOCS_FILE,
    }


def document_row(document: Document) -> dict[str, Any]:
    """A document as its ``documents.jsonl`` row (strict JSON: no NaN or infinity)."""
    return _finite_json(document.to_json())


def _finite_json(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by ``None`` (strict JSON has neither)."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_json(v) for v in value]
    return value
