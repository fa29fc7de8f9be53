"""LangChain adapter: logic-rag as a LangChain retriever and embedding model.

- :class:`LogicLangChainRetriever` is a ``BaseRetriever`` (a Runnable): use it in LCEL
  chains, ``retriever | format_docs | prompt | llm``. Each ``Document`` carries in its
  metadata which constraints of the query it satisfied.
- :class:`LogicLangChainReranker` is a ``BaseDocumentCompressor``: put it on top of any
  retriever with ``ContextualCompressionRetriever(base_compressor=
  LogicLangChainReranker(), base_retriever=...)`` to re-rank its documents with a named
  strategy of the registry (default ``verify``), keeping the best ``top_n`` (3).
- :class:`LogicEmbeddings` is an ``Embeddings``: our models (registry names or fine-tuned
  folders) for any LangChain vector store.
- :func:`langchain_milvus_class` is ``langchain_milvus.Milvus`` made to work with
  pymilvus >= 2.6.10 (the connection bug of langchain-milvus 0.3.3).

The reranker is serialisable: ``dumpd(reranker)`` / ``dumps(reranker)`` write its
fields, and ``loads(text, allowed_objects=[LogicLangChainReranker],
valid_namespaces=["logic_rag"])`` rebuilds it (LangChain loads only the namespaces and
classes it is told to trust). ``LogicRetriever`` and ``LogicReranker`` are deprecated
aliases of the first two (the names clashed with ``logic_rag.LogicRetriever`` and the
LlamaIndex adapter's classes). Every default model is
:func:`logic_rag.models.default_dense_model`. Only ``langchain-core`` is needed:
``pip install 'logic-rag[langchain]'``.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from logic_rag.integrations import _engine
from logic_rag.integrations._rerank import DEFAULT_STRATEGY

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
        Callbacks,
    )
    from langchain_core.documents import Document as LCDocument
    from langchain_core.documents.compressor import BaseDocumentCompressor
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import BaseChatModel
    from langchain_core.load.serializable import Serializable
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, Field, PrivateAttr, field_validator
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise _engine.missing_framework("langchain", "langchain", exc) from None

__all__ = [
    "LogicLangChainRetriever",
    "LogicLangChainReranker",
    "LogicEmbeddings",
    "GeneratorChatModel",
    "documents_from_langchain",
    "langchain_milvus_class",
]

#: Top documents a reranker keeps by default, as LangChain's peers do (FlashrankRerank
#: keeps 3, CohereRerank 3).
DEFAULT_TOP_N = 3

_DEPRECATED = {
    "LogicRetriever": "LogicLangChainRetriever",
    "LogicReranker": "LogicLangChainReranker",
}


def __getattr__(name: str) -> Any:
    """The old class names, kept for one release with a DeprecationWarning."""
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(
            f"logic_rag.integrations.langchain.{name} is deprecated; use {new} (the old "
            f"name clashed with logic_rag.{name} and the LlamaIndex adapter's class)",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


class LogicLangChainRetriever(BaseRetriever):
    """A LangChain retriever over a logic-rag engine.

    Attributes:
        engine: anything with ``search(query, k)`` / ``search_batch(queries, k)``
            returning logic-rag hits (``logic_rag.LogicRetriever``, ``logic_rag.DenseRetriever``).
        k: results per query; ``invoke(query, k=...)`` overrides it per call.
        strategy: passed to the engine's ``search`` (``None``: the engine's default).
        llm: the chat model (or LLM) the chain already holds, as the costly verifier of
            ``strategy`` (``quality``, ``llm-rerank`` or ``verify``; a ``LogicRetriever``
            engine): log-probabilities of Yes / No where it returns them, else a strict
            one-word answer whose parse failures are counted, never read as Yes. Each
            document's metadata then has ``llm_cost`` and (``quality``) ``certificate``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    engine: Any = Field(exclude=True, repr=False)
    k: int = 4
    strategy: str | None = None
    llm: Any = Field(default=None, exclude=True, repr=False)

    _search_strategy: Any = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        # Built once: the LLM verifier keeps its pair cache across queries.
        self._search_strategy = _engine.with_llm(self.engine, self.strategy, self.llm)

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
        model: Any = None,
        strategy: str = "rerank",
        k: int = 4,
        **build_options: Any,
    ) -> LogicLangChainRetriever:
        """Index plain texts (with optional per-text metadata and ids); ``model``
        defaults to :func:`logic_rag.models.default_dense_model`."""
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
        model: Any = None,
        strategy: str = "rerank",
        k: int = 4,
        **build_options: Any,
    ) -> LogicLangChainRetriever:
        """Index LangChain ``Document`` objects (``model`` as in :meth:`from_texts`)."""
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
    ) -> LogicLangChainRetriever:
        """Open a logic-rag index folder (``logic-rag index`` or ``LogicRetriever.save``)."""
        engine = _engine.load_engine(path, model=model, strategy=strategy, **load_options)
        return cls(engine=engine, k=k)

    # ------------------------------------------------------------------ retrieval
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[LCDocument]:
        hits = _engine.search(self.engine, query, self.k if k is None else k, self._search_strategy)
        return [_to_document(h) for h in hits]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[LCDocument]:
        hits = await _engine.asearch(
            self.engine, query, self.k if k is None else k, self._search_strategy
        )
        return [_to_document(h) for h in hits]


class LogicLangChainReranker(BaseDocumentCompressor, Serializable):
    """Re-rank another retriever's documents with a named strategy of the registry.

    The query is decomposed (rules by default), and ``strategy`` (default ``verify``) runs
    over the given documents with ``settings``, exactly as :class:`logic_rag.LogicRetriever`
    runs it over a corpus (see :mod:`logic_rag.integrations._rerank`). Each returned
    document is a copy whose metadata gains ``relevance_score`` (the new score, as other
    LangChain rerankers write it), ``constraints`` (constraint -> satisfied),
    ``constraint_scores`` (constraint -> degree in [0, 1]) and ``decomposition`` (the
    logical reading of the query). Only the given documents are embedded (with
    ``model``), so calibration is relative to them by default.

    ``LogicLangChainReranker(model=None, *, strategy="verify", settings=None, top_n=3,
    decomposer=None, passages=True, cache_size=1024, calibration="candidates",
    llm=None)``: ``model`` is a dense encoder name, folder or
    ``DenseEncoder`` (default :func:`logic_rag.models.default_dense_model`); ``settings``
    the strategy's settings (``logic_rag.VerifySettings`` for ``verify``, ...) or their
    dict (every value applies as in the retriever); ``top_n`` the documents kept
    (``None``: all, re-ordered); ``decomposer`` an object or a spec (``rules``, ``llm``, ``auto``, ``llm:MODEL``);
    ``cache_size`` the pages whose vectors are kept for later calls (0: none);
    ``calibration`` ``candidates`` or ``corpus``; ``llm`` the chat model (or LLM) the
    chain already holds, as the costly verifier of ``quality``, ``llm-rerank`` or
    ``verify`` (logprobs of Yes / No where it returns them, else a strict one-word
    answer; each document's metadata gains ``llm_cost`` and, for ``quality``,
    ``certificate``; not serialised: pass it again).

    Serialisable: the fields are plain values the constructor takes, so
    ``loads(dumps(r), allowed_objects=[LogicLangChainReranker],
    valid_namespaces=["logic_rag"])`` rebuilds an equal reranker (the settings by the
    library's one rule, ``{"type", "init_parameters"}``). A verifier or decomposer object
    that no file may rebuild is named there by its type and refused on loading: pass it
    again.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str = ""
    strategy: str = DEFAULT_STRATEGY
    settings: dict[str, Any] = Field(default_factory=dict)
    decomposer: str | dict[str, Any] = "rules"
    top_n: int | None = DEFAULT_TOP_N
    passages: bool = True
    cache_size: int = 1024
    calibration: str = "candidates"

    _core: Any = PrivateAttr()

    def __init__(
        self,
        model: Any = None,
        *,
        strategy: str = DEFAULT_STRATEGY,
        settings: Any = None,
        top_n: int | None = DEFAULT_TOP_N,
        decomposer: Any = None,
        passages: bool = True,
        cache_size: int = 1024,
        calibration: str = "candidates",
        llm: Any = None,
    ) -> None:
        from logic_rag.integrations._rerank import CandidateReranker, reranker_fields

        core = CandidateReranker(
            model or None,
            strategy=strategy,
            settings=settings,
            llm=llm,
            decomposer=decomposer,
            passages=passages,
            cache_size=cache_size,
            calibration=calibration,  # type: ignore[arg-type]
        )
        super().__init__(**reranker_fields(core, top_n))
        self._core = core

    @classmethod
    def is_lc_serializable(cls) -> bool:
        return True

    @classmethod
    def get_lc_namespace(cls) -> list[str]:
        """``["logic_rag", "integrations", "langchain"]``: the module ``loads`` imports."""
        return ["logic_rag", "integrations", "langchain"]

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


@functools.cache
def langchain_milvus_class() -> type:
    """``langchain_milvus.Milvus``, made to work with pymilvus >= 2.6.10.

    langchain-milvus 0.3.3 opens ORM ``Collection(using=client._using)`` objects, but
    pymilvus 2.6.10 and later no longer register a ``MilvusClient``'s alias with the ORM's
    connections, so every call fails with "should create connection first"
    (langchain-ai/langchain-milvus#130, fixed upstream in PR #132, not released). The
    subclass registers the client's own handler under that alias before the ORM looks it
    up, which is what the fix does; where the alias is already registered (an older
    pymilvus, a fixed langchain-milvus) it changes nothing. Use it wherever you would use
    ``Milvus``::

        Milvus = langchain_milvus_class()
        store = Milvus.from_documents(docs, embedding=LogicEmbeddings("minilm"),
                                      connection_args={"uri": "./milvus.db"})

    Needs ``pip install 'logic-rag[milvus]'`` (langchain-milvus, pymilvus).
    """
    from langchain_milvus import Milvus
    from pymilvus import connections

    class RegisteredMilvus(Milvus):
        @property
        def col(self) -> Any:
            handlers = connections._alias_handlers
            if self.alias not in handlers:
                handlers[self.alias] = self.client._handler
            return Milvus.col.fget(self)

        @col.setter
        def col(self, value: Any) -> None:
            Milvus.col.fset(self, value)

    return RegisteredMilvus


class LogicEmbeddings(Embeddings):
    """LangChain embeddings over a logic-rag dense encoder.

    ``model`` is a registry name (``minilm``, ``mpnet``), a fine-tuned model folder, or a
    ``DenseEncoder`` (default :func:`logic_rag.models.default_dense_model`). Queries get
    the model's query prompt, documents its document prompt.
    """

    def __init__(self, model: Any = None) -> None:
        from logic_rag.models import default_dense_model

        self.encoder = _engine.resolve_encoder(default_dense_model() if model is None else model)

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


class GeneratorChatModel(BaseChatModel):
    """A logic-rag generator (``make_generator("smollm2-135m")``, ``llamacpp:…``,
    ``openai:…``) as a LangChain chat model: an offline LLM for LCEL chains and tests.

    System messages become the generator's system prompt; one human message is the
    prompt as is, a longer conversation is rendered as ``Role: text`` lines. Greedy;
    ``max_tokens`` bounds each answer (a call's ``max_tokens=`` overrides it). Given as
    ``llm=`` to a logic-rag adapter it is unwrapped to its generator, whose Yes / No
    log-probabilities are exact.
    """

    generator: Any = Field(exclude=True)
    max_tokens: int = 256

    @property
    def _llm_type(self) -> str:
        return "logic-rag-generator"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"generator": str(getattr(self.generator, "name", type(self.generator).__name__))}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        system = [str(m.content) for m in messages if m.type == "system"]
        rest = [m for m in messages if m.type != "system"]
        if len(rest) == 1 and rest[0].type == "human":
            prompt = str(rest[0].content)
        else:
            prompt = "\n\n".join(f"{m.type.capitalize()}: {m.content}" for m in rest)
        max_tokens = int(kwargs.get("max_tokens") or self.max_tokens)
        [text] = self.generator.generate(
            [prompt],
            max_tokens=max_tokens,
            temperature=0.0,
            system="\n\n".join(system) if system else None,
        )
        for cut in stop or []:
            text = text.split(cut)[0]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        import asyncio

        # The generators block (forward passes, HTTP): off the event loop.
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)
