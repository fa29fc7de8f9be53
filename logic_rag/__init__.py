"""logic-rag: retrieval for RAG that respects AND / OR / NOT in a query.

The public API is re-exported here flat. Names resolve lazily (PEP 562), so importing
``logic_rag`` does not import torch, FAISS or sentence-transformers until a name that
needs them is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # engine
    "Retriever": "logic_rag.retriever",
    "Hit": "logic_rag.retriever",
    "DenseEncoder": "logic_rag.encoders.dense",
    "DenseIndex": "logic_rag.index.faiss_index",
    "BM25Index": "logic_rag.index.bm25",
    # corpora
    "Document": "logic_rag.corpus",
    "iter_documents": "logic_rag.corpus",
    "load_documents": "logic_rag.corpus",
    "load_beir": "logic_rag.corpus",
    "BeirDataset": "logic_rag.corpus",
    # models
    "resolve_model": "logic_rag.models",
    "ResolvedModel": "logic_rag.models",
    "MODELS": "logic_rag.models",
    # errors
    "LogicRagError": "logic_rag.errors",
    "ModelNotFoundError": "logic_rag.errors",
    "CorpusFormatError": "logic_rag.errors",
    "IndexCorruptError": "logic_rag.errors",
    "IndexMismatchError": "logic_rag.errors",
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'logic_rag' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
