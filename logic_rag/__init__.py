"""logic-rag: retrieval for RAG that respects AND / OR / NOT in a query.

The public API is re-exported here flat, so a guide needs one import line
(``from logic_rag import LogicRetriever, VerifySettings, Document``). Names resolve lazily
(PEP 562), so importing ``logic_rag`` does not import torch, FAISS or sentence-transformers
until a name that needs them is used. The framework adapters stay in
``logic_rag.integrations.llama_index`` and ``logic_rag.integrations.langchain``: importing
them here would make every user install both frameworks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logic_rag.lazy import lazy_exports
from logic_rag.threads import prefer_passive_waits

# Before torch loads: OpenMP threads that sleep at barriers keep indexing near a fair share
# beside other busy processes (see logic_rag.threads); a user's OMP_WAIT_POLICY is kept.
prefer_passive_waits()

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # retrievers
    "LogicRetriever": "logic_retriever",
    "Strategy": "strategies",
    "STRATEGIES": "strategies",
    # each named strategy's settings (the one place of defaults)
    "StrategySettings": "strategy_settings",
    "EvidenceSettings": "strategy_settings",
    "LogicSettings": "strategy_settings",
    "VanillaSettings": "strategy_settings",
    "RerankSettings": "strategy_settings",
    "SetopsSettings": "strategy_settings",
    "FusionSettings": "strategy_settings",
    "OrthogonalSettings": "strategy_settings",
    "SpladeSettings": "strategy_settings",
    "VerifySettings": "strategy_settings",
    "QualitySettings": "strategy_settings",
    "LLMRerankSettings": "strategy_settings",
    "DenseRetriever": "retriever",
    "Hit": "retriever",
    # engine parts
    "DenseEncoder": "encoders.dense",
    "DenseIndex": "index.faiss_index",
    "BM25Index": "index.bm25",
    # logical queries and decomposers
    "LogicalQuery": "query.algebra",
    "Atom": "query.algebra",
    "And": "query.algebra",
    "Or": "query.algebra",
    "Not": "query.algebra",
    "Decomposition": "query.decompose",
    "RuleDecomposer": "query.rules",
    "LLMDecomposer": "query.llm",
    "AutoDecomposer": "query.auto",
    # pipeline stages: candidates >> verifiers >> logic >> ranking
    "Stage": "pipeline.stage",
    "Pipeline": "pipeline.stage",
    "DenseCandidates": "candidates.dense",
    "AtomCandidates": "candidates.atoms",
    "BM25Candidates": "candidates.bm25",
    "Verify": "verifiers.base",
    "EmbeddingVerifier": "verifiers.embedding",
    "CrossEncoderVerifier": "verifiers.cross_encoder",
    "LLMVerifier": "verifiers.llm",
    "FrameworkLLM": "generators.framework",
    "make_verifier": "verifiers.spec",
    "verifier_spec": "verifiers.spec",
    "CertifiedTopK": "verifiers.certified",
    "WholeQueryVerify": "verifiers.whole_query",
    "VerdictRule": "verifiers.verdicts",
    "SoftLogic": "compose.logic",
    "Combine": "pipeline.ranking",
    "Cutoff": "pipeline.ranking",
    "TopK": "pipeline.ranking",
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
    from logic_rag.candidates.atoms import AtomCandidates
    from logic_rag.candidates.bm25 import BM25Candidates
    from logic_rag.candidates.dense import DenseCandidates
    from logic_rag.compose.logic import SoftLogic
    from logic_rag.corpus import BeirDataset, Document, iter_documents, load_beir, load_documents
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.errors import (
        CorpusFormatError,
        IndexCorruptError,
        IndexMismatchError,
        LogicRagError,
        ModelNotFoundError,
    )
    from logic_rag.generators.framework import FrameworkLLM
    from logic_rag.index.bm25 import BM25Index
    from logic_rag.index.faiss_index import DenseIndex
    from logic_rag.logic_retriever import LogicRetriever
    from logic_rag.models import MODELS, ResolvedModel, resolve_model
    from logic_rag.pipeline.ranking import Combine, Cutoff, TopK
    from logic_rag.pipeline.stage import Pipeline, Stage
    from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or
    from logic_rag.query.auto import AutoDecomposer
    from logic_rag.query.decompose import Decomposition
    from logic_rag.query.llm import LLMDecomposer
    from logic_rag.query.rules import RuleDecomposer
    from logic_rag.retriever import DenseRetriever, Hit
    from logic_rag.strategies import STRATEGIES, Strategy
    from logic_rag.strategy_settings import (
        EvidenceSettings,
        FusionSettings,
        LLMRerankSettings,
        LogicSettings,
        OrthogonalSettings,
        QualitySettings,
        RerankSettings,
        SetopsSettings,
        SpladeSettings,
        StrategySettings,
        VanillaSettings,
        VerifySettings,
    )
    from logic_rag.verifiers.base import Verify
    from logic_rag.verifiers.certified import CertifiedTopK
    from logic_rag.verifiers.cross_encoder import CrossEncoderVerifier
    from logic_rag.verifiers.embedding import EmbeddingVerifier
    from logic_rag.verifiers.llm import LLMVerifier
    from logic_rag.verifiers.spec import make_verifier, verifier_spec
    from logic_rag.verifiers.verdicts import VerdictRule
    from logic_rag.verifiers.whole_query import WholeQueryVerify


#: Names renamed since the last release: old name -> module that resolves it (and warns).
_RENAMED = {"Retriever": "retriever"}

_lazy_getattr, __dir__ = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    """The lazy exports and, for one release, the renamed names (they warn, and are not
    cached here, so that every use is told; they are not in ``__all__``)."""
    if name in _RENAMED:
        import importlib

        module = importlib.import_module(f".{_RENAMED[name]}", __name__)
        return module.renamed(name, __name__)
    return _lazy_getattr(name)
