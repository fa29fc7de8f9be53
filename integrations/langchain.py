"""LangChain adapter: logic-rag as a LangChain retriever and embedding model.

- :class:`LogicRetriever` is a ``BaseRetriever`` (a Runnable): use it in LCEL chains,
  ``retriever | format_docs | prompt | llm``. Each ``Document`` carries in its metadata
  which constraints of the query it satisfied.
- :class:`LogicReranker` is a ``BaseDocumentCompressor``: put it on top of any retriever
  with ``ContextualCompressionRetriever(base_compressor=LogicReranker(),
  base_retriever=...)`` to re-rank its documents under the query's AND / OR / NOT.
- :class:`LogicEmbeddings` is an ``Embeddings``: our models (registry names or fine-tuned
  folders) for any LangChain vector store.

Only ``langchain-core`` is needed: ``pip install 'logic-rag[langchain]'``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from logic_rag.integrations import _engine
from logic_rag.models import DEFAULT_DENSE_MODEL

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
        Callbacks,
    )
    from langchain_core.documents import Document as LCDocument
    from langchain_core.documents.compressor import BaseDocumentCompressor
    from langchain_core.embeddings import Embeddings
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, Field, PrivateAttr, field_validator
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise _engine.missing_framework("langchain", "langchain", exc) from None

__all__ = ["LogicRetriever", "LogicReranker", "LogicEmbeddings", "documents_from_langchain"]


def documents_from_langchain(documents: Iterable[LCDocument]) -> list[Any]:
    """LangChain documents -> logic-rag documents.

    The id is ``doc.id``, else ``metadata["id"]``, else the position; a ``title``
    metadata value becomes the document title.
    """
    from logic_rag.corpus import Document

    out = []
    for i, doc in enumerate(documents):
        if not isinstance(doc, LCDocument):
            raise TypeError(f"document {i} is {type(doc).__name__}, expected a LangChain Document")
        meta = dict(doc.metadata or {})
        doc_id = doc.id or meta.get("id") or str(i)
        title = meta.get("title", "")
        out.append(
            Document(
                id=str(doc_id),
                text=doc.page_content,
                title=title if isinstance(title, str) else str(title),
                metadata=meta,
            )
        )
    return out


def _to_document(hit: Any) -> LCDocument:
    return LCDocument(page_content=hit.text, metadata=_engine.hit_metadata(hit), id=hit.id)


class LogicRetriever(BaseRetriever):
    """A LangChain retriever over a logic-rag engine.

    Attributes:
        engine: anything with ``search(query, k)`` / ``search_batch(queries, k)``
            returning logic-rag hits (``logic_rag.LogicRetriever``, ``logic_rag.Retriever``).
        k: results per query; ``invoke(query, k=...)`` overrides it per call.
        strategy: passed to the engine's ``search`` (``None``: the engine's default).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    engine: Any = Field(exclude=True, repr=False)
    k: int = 4
    strategy: str | None = None

    @field_validator("engine")
    @classmethod
    def _check_engine(cls, value: Any) -> Any:
        try:
            return _engine.check_engine(value)
        except TypeError as exc:  # pydantic reports ValueErrors as ValidationErrors
            raise ValueError(str(exc)) from None

    @field_validator("k")
    @classmethod
    def _check_k(cls, value: int) -> int:
        try:
            return _engine.check_k(value)
        except TypeError as exc:
            raise ValueError(str(exc)) from None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_texts(
        cls,
        texts: Sequence[str],
        metadatas: Sequence[dict[str, Any]] | None = None,
        *,
        ids: Sequence[str] | None = None,
        model: Any = DEFAULT_DENSE_MODEL,
        strategy: str = "rerank",
        k: int = 4,
        **build_options: Any,
    ) -> LogicRetriever:
        """Index plain texts (with optional per-text metadata and ids)."""
        if isinstance(texts, str):
            raise TypeError("texts must be a list of strings, not one string")
        texts = list(texts)
        if any(not isinstance(t, str) for t in texts):
            raise TypeError("texts must be a list of strings")
        for name, values in (("metadatas", metadatas), ("ids", ids)):
            if values is not None and len(values) != len(texts):
                raise ValueError(f"got {len(values)} {name} for {len(texts)} texts")
        docs = [
            LCDocument(
                page_content=text,
                metadata=dict(metadatas[i]) if metadatas is not None else {},
                id=ids[i] if ids is not None else None,
            )
            for i, text in enumerate(texts)
        ]
        return cls.from_documents(docs, model=model, strategy=strategy, k=k, **build_options)

    @classmethod
    def from_documents(
        cls,
        documents: Iterable[LCDocument],
        *,
        model: Any = DEFAULT_DENSE_MODEL,
        strategy: str = "rerank",
        k: int = 4,
        **build_options: Any,
    ) -> LogicRetriever:
        """Index LangChain ``Document`` objects."""
        engine = _engine.build_engine(
            documents_from_langchain(documents), model=model, strategy=strategy, **build_options
        )
        return cls(engine=engine, k=k)

    @classmethod
    def from_index(
        cls,
        path: str | os.PathLike[str],
        *,
        model: Any = None,
        strategy: str = "rerank",
        k: int = 4,
        **load_options: Any,
    ) -> LogicRetriever:
        """Open a logic-rag index folder (``logic-rag index`` or ``LogicRetriever.save``)."""
        engine = _engine.load_engine(path, model=model, strategy=strategy, **load_options)
        return cls(engine=engine, k=k)

    # ------------------------------------------------------------------ retrieval
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[LCDocument]:
        hits = _engine.search(self.engine, query, self.k if k is None else k, self.strategy)
        return [_to_document(h) for h in hits]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[LCDocument]:
        hits = await _engine.asearch(self.engine, query, self.k if k is None else k, self.strategy)
        return [_to_document(h) for h in hits]


class LogicReranker(BaseDocumentCompressor):
    """Re-rank another retriever's documents under the logic of the query.

    The query is decomposed (``RuleDecomposer`` by default), every constraint is scored
    against every document by a verifier, and the documents are re-ranked by whole-query
    cosine plus ``truth_weight`` x the soft truth of the logic. Each returned document is
    a copy whose metadata gains ``relevance_score`` (the new score, as other LangChain
    rerankers write it), ``constraints`` (constraint -> satisfied), ``constraint_scores``
    (constraint -> degree in [0, 1]) and ``decomposition`` (the logical reading of the
    query). Only the given documents are embedded (with ``model``), so calibration is
    relative to them: see :mod:`logic_rag.integrations._rerank`.

    ``LogicReranker(model=None, *, verifier=None, top_n=None, truth_weight=0.75,
    decomposer=None, config=None, passages=True, cache_size=1024)``: ``model`` is a dense
    encoder name, folder or ``DenseEncoder`` (default
    :func:`logic_rag.models.default_dense_model`); ``verifier`` ``None`` (embedding evidence), a spec (``cross-encoder:FOLDER``,
    ``llm:GENERATOR``) or a ``Verifier`` that re-checks the positive atoms; ``top_n``
    the documents kept (``None``: all, re-ordered); ``cache_size`` the pages whose vectors
    are kept for later calls (0: none).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    top_n: int | None = None
    truth_weight: float = 0.75
    model_name: str = ""
    verifier_name: str = "embedding"

    _core: Any = PrivateAttr()

    def __init__(
        self,
        model: Any = None,
        *,
        verifier: Any = None,
        top_n: int | None = None,
        truth_weight: float = 0.75,
        decomposer: Any = None,
        config: Any = None,
        passages: bool = True,
        cache_size: int = 1024,
    ) -> None:
        from logic_rag.integrations._rerank import build_reranker

        core, fields = build_reranker(
            model,
            verifier=verifier,
            top_n=top_n,
            truth_weight=truth_weight,
            decomposer=decomposer,
            config=config,
            passages=passages,
            cache_size=cache_size,
        )
        super().__init__(
            **fields,
        )
        self._core = core

    @property
    def reranker(self) -> Any:
        """The framework-free :class:`~logic_rag.integrations._rerank.CandidateReranker`."""
        return self._core

    def _inputs(self, documents: Sequence[LCDocument], query: str) -> dict[str, Any]:
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        docs = documents_from_langchain(documents)
        return {
            "texts": [d.text for d in docs],
            "titles": [d.title for d in docs],
            "top_n": self.top_n,
        }

    @staticmethod
    def _annotated(documents: Sequence[LCDocument], ranked: list[Any]) -> list[LCDocument]:
        out = []
        for item in ranked:
            doc = documents[item.position]
            meta = {
                **(doc.metadata or {}),
                "relevance_score": float(item.hit.score),
                **_engine.logic_metadata(item.hit),
            }
            out.append(doc.model_copy(update={"metadata": meta}))
        return out

    def compress_documents(
        self, documents: Sequence[LCDocument], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[LCDocument]:
        """The documents re-ranked (best first, at most ``top_n``) and annotated."""
        documents = list(documents)
        inputs = self._inputs(documents, query)
        return self._annotated(documents, self._core.rerank(query, **inputs))

    async def acompress_documents(
        self, documents: Sequence[LCDocument], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[LCDocument]:
        """:meth:`compress_documents` with the model work in a worker thread."""
        documents = list(documents)
        inputs = self._inputs(documents, query)
        return self._annotated(documents, await self._core.arerank(query, **inputs))


class LogicEmbeddings(Embeddings):
    """LangChain embeddings over a logic-rag dense encoder.

    ``model`` is a registry name (``minilm``, ``mpnet``), a fine-tuned model folder, or a
    ``DenseEncoder``. Queries get the model's query prompt, documents its document prompt.
    """

    def __init__(self, model: Any = DEFAULT_DENSE_MODEL) -> None:
        self.encoder = _engine.resolve_encoder(model)

    def __repr__(self) -> str:
        return f"LogicEmbeddings(model={self.encoder.name!r})"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        enc = self.encoder
        return _engine.run_locked(enc, enc.encode_documents, list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        enc = self.encoder
        return _engine.run_locked(enc, enc.encode_queries, [text])[0].tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        import asyncio

        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        import asyncio

        return await asyncio.to_thread(self.embed_query, text)
