"""logic-rag: retrieval for RAG that respects AND / OR / NOT in a query.

The public API is re-exported here flat. Names resolve lazily (PEP 562), so importing
``logic_rag`` does not import torch, FAISS or sentence-transformers until a name that
needs them is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logic_rag.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # engine
    "Retriever": "retriever",
    "Hit": "retriever",
    "DenseEncoder": "encoders.dense",
    "DenseIndex": "index.faiss_index",
    "BM25Index": "index.bm25",
    # corpora
    "Document": "corpus",
    "iter_documents": "corpus",
    "load_documents": "corpus",
    "load_beir": "corpus",
    "BeirDataset": "corpus",
    # models
    "resolve_model": "models",
    "ResolvedModel": "models",
    "MODELS": "models",
    # errors
    "LogicRagError": "errors",
    "ModelNotFoundError": "errors",
    "CorpusFormatError": "errors",
    "IndexCorruptError": "errors",
    "IndexMismatchError": "errors",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:  # pragma: no cover
    from logic_rag.corpus import BeirDataset, Document, iter_documents, load_beir, load_documents
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.errors import (
        CorpusFormatError,
        IndexCorruptError,
        IndexMismatchError,
        LogicRagError,
        ModelNotFoundError,
    )
    from logic_rag.index.bm25 import BM25Index
    from logic_rag.index.faiss_index import DenseIndex
    from logic_rag.models import MODELS, ResolvedModel, resolve_model
    from logic_rag.retriever import Hit, Retriever


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
