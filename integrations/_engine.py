"""What both framework adapters share: the engine protocol, building it, locking it.

The adapters are thin: they turn framework objects into :class:`logic_rag.corpus.Document`
rows, call an engine's ``search`` / ``search_batch``, and turn :class:`logic_rag.retriever.Hit`
objects back into framework objects. This module imports neither LlamaIndex nor LangChain,
and nothing heavy at import time.

Why a lock: one sentence-transformers model called from many threads at once is not
something to rely on. The fast tokenizer's padding / truncation state is set per call
(HF tokenizers can raise "Already borrowed" when shared across threads), and torch's
intra-op threads oversubscribe the cores: measured here, 300 one-query encodes from 16
threads did not finish in 170 s, while sequentially they take a few seconds (4 threads x
40 queries gave correct results, so it is a stall, not wrong numbers). Every call into an
engine or encoder therefore holds a lock keyed on the underlying encoder, so a retriever
and an embedding model that share one encoder also share one lock. Async paths run the
locked call in a worker thread, so the event loop keeps serving while a query is encoded.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from logic_rag.corpus import Document
    from logic_rag.encoders.dense import DenseEncoder
    from logic_rag.retriever import Hit

__all__ = [
    "SearchEngine",
    "build_engine",
    "load_engine",
    "check_engine",
    "check_k",
    "cap_k",
    "engine_lock",
    "run_locked",
    "arun_locked",
    "search",
    "asearch",
    "hit_metadata",
    "logic_metadata",
    "resolve_encoder",
    "unique_documents",
    "LOGIC_METADATA_KEYS",
    "missing_framework",
    "LLM_STRATEGIES",
    "check_llm_strategy",
    "llm_verifier",
    "with_llm",
]

T = TypeVar("T")

#: Metadata keys the adapters add to each result. They are long or numeric and mean
#: nothing to an LLM or an embedding model, so the LlamaIndex adapter hides them there.
LOGIC_METADATA_KEYS = (
    "rank",
    "score",
    "constraints",
    "constraint_scores",
    "constraint_sources",
    "decomposition",
    "llm_cost",
    "certificate",
)

#: The strategies whose costly verifier an ``llm=`` given to an adapter becomes.
LLM_STRATEGIES = ("quality", "llm-rerank", "verify")


@runtime_checkable
class SearchEngine(Protocol):
    """Anything the adapters can wrap: :class:`logic_rag.retriever.DenseRetriever`,
    :class:`logic_rag.logic_retriever.LogicRetriever`, or your own."""

    def search(self, query: str, k: int = ...) -> list[Hit]: ...

    def search_batch(self, queries: Sequence[str], k: int = ...) -> list[list[Hit]]: ...


def missing_framework(extra: str, module: str, exc: ImportError) -> ImportError:
    """The ImportError raised when an adapter's framework is not installed."""
    return ImportError(
        f"logic_rag.integrations.{module} needs the {extra} extra, which is not installed "
        f"({exc}). Install it with: pip install 'logic-rag[{extra}]'"
    )


def check_engine(engine: object) -> SearchEngine:
    """``engine`` itself, or a TypeError saying what an engine must provide."""
    if not isinstance(engine, SearchEngine):
        raise TypeError(
            f"engine must have search(query, k) and search_batch(queries, k) methods (for "
            f"example logic_rag.LogicRetriever); got {type(engine).__name__}"
        )
    return engine


def check_k(k: object) -> int:
    """A positive int ``k`` (numpy integers too); booleans and non-integers are refused."""
    from logic_rag.retriever import check_k as check

    return check(k)


def resolve_encoder(model: Any) -> DenseEncoder:
    """A :class:`DenseEncoder` from a short name, a model folder, an encoder, or one of
    our embedding adapters (``LogicEmbedding``, ``LogicEmbeddings``): the adapter's loaded
    encoder is shared, so a pipeline that embeds and reranks loads the model once."""
    from logic_rag.encoders.dense import DenseEncoder

    if isinstance(model, DenseEncoder):
        return model
    shared = getattr(model, "encoder", None)
    if isinstance(shared, DenseEncoder):
        return shared
    if not isinstance(model, str | os.PathLike):
        raise TypeError(
            f"model must be a model name, a folder, a DenseEncoder or a LogicEmbedding / "
            f"LogicEmbeddings, got {type(model).__name__}"
        )
    return DenseEncoder(model)


def _engine_class() -> Any:
    from logic_rag.logic_retriever import LogicRetriever

    return LogicRetriever


def build_engine(
    documents: Sequence[Document], *, model: Any, strategy: str = "rerank", **kwargs: Any
) -> SearchEngine:
    """Index ``documents`` with the logic-aware engine."""
    docs = unique_documents(documents)
    return _engine_class().build(docs, model=model, strategy=strategy, **kwargs)


def load_engine(
    path: str | os.PathLike[str], *, model: Any = None, strategy: str = "rerank", **kwargs: Any
) -> SearchEngine:
    """Open an index folder written by ``logic-rag index`` or ``LogicRetriever.save``."""
    return _engine_class().load(path, model=model, strategy=strategy, **kwargs)


def unique_documents(documents: Iterable[Document]) -> list[Document]:
    """The documents as a list; empty input or a repeated id raises ValueError.

    A repeated id would make two different texts indistinguishable in the results.
    """
    docs = list(documents)
    if not docs:
        raise ValueError("cannot build a retriever over zero documents; pass at least one")
    seen: dict[str, int] = {}
    for i, doc in enumerate(docs):
        if doc.id in seen:
            raise ValueError(
                f"document id {doc.id!r} is used by documents {seen[doc.id]} and {i}; "
                f"ids must be unique (omit them to number the documents)"
            )
        seen[doc.id] = i
    return docs


# ---------------------------------------------------------------------- locking
_LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_STRONG_LOCKS: dict[int, tuple[Any, threading.Lock]] = {}
_REGISTRY_LOCK = threading.Lock()


def _lock_owner(engine: object) -> object:
    """The object whose calls must not overlap: the engine's encoder when it has one."""
    for path in (("encoder",), ("dense", "encoder")):
        obj: Any = engine
        for name in path:
            obj = getattr(obj, name, None)
            if obj is None:
                break
        if obj is not None:
            return obj
    return engine


def engine_lock(engine: object) -> threading.Lock:
    """The one lock shared by every adapter that calls ``engine`` (or its encoder)."""
    owner = _lock_owner(engine)
    with _REGISTRY_LOCK:
        try:
            lock = _LOCKS.get(owner)
            if lock is None:
                lock = _LOCKS[owner] = threading.Lock()
        except TypeError:  # not weak-referenceable: keep it alive with its lock
            entry = _STRONG_LOCKS.setdefault(id(owner), (owner, threading.Lock()))
            lock = entry[1]
        return lock


def run_locked(engine: object, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call ``fn(*args, **kwargs)`` holding ``engine``'s lock."""
    with engine_lock(engine):
        return fn(*args, **kwargs)


async def arun_locked(engine: object, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """:func:`run_locked` in a worker thread, so the event loop is never blocked."""
    return await asyncio.to_thread(run_locked, engine, fn, *args, **kwargs)


def cap_k(engine: object, k: object) -> int:
    """:func:`check_k`, then capped at the engine's corpus size when it has one.

    Done before the engine is called, so a huge ``k`` (``10**8``) never reaches code that
    allocates in proportion to it.
    """
    k = check_k(k)
    try:
        size = len(engine)  # type: ignore[arg-type]
    except TypeError:
        return k
    return min(k, max(int(size), 1))


def _search_kwargs(strategy: str | None) -> dict[str, Any]:
    return {} if strategy is None else {"strategy": strategy}


def search(engine: SearchEngine, query: str, k: int, strategy: str | None = None) -> list[Hit]:
    """``engine.search`` under the lock; ``strategy`` is passed only when set."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    return run_locked(engine, engine.search, query, cap_k(engine, k), **_search_kwargs(strategy))


async def asearch(
    engine: SearchEngine, query: str, k: int, strategy: str | None = None
) -> list[Hit]:
    """:func:`search` off the event loop."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    return await arun_locked(
        engine, engine.search, query, cap_k(engine, k), **_search_kwargs(strategy)
    )


# ---------------------------------------------------------------------- results
def _plain(value: Any) -> Any:
    """A JSON-shaped deep copy, so results never alias the engine's documents."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    return value


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """Metadata for a result: the document's own metadata, then the hit's explanation.

    Keys: the document's metadata, ``title``, ``rank``, ``score``, and when the engine
    applied logic ``constraints`` (constraint -> satisfied), ``constraint_scores``
    (constraint -> degree in [0, 1]) and ``decomposition`` (the logical reading of the
    query: ``query``, ``json``, ``confidence``, ``source``).
    """
    meta = _plain(hit.metadata or {})
    meta["title"] = hit.title
    meta["rank"] = int(hit.rank)
    meta["score"] = float(hit.score)
    meta.update(logic_metadata(hit))
    return meta


def logic_metadata(hit: Hit) -> dict[str, Any]:
    """Only the logic keys of :func:`hit_metadata`: ``constraints``, ``constraint_scores``,
    ``constraint_sources`` (which verifier gave each verdict: ``llm`` or ``embedding``)
    and ``decomposition``, where the hit has them (what a reranker adds to a result).
    After an LLM stage also ``llm_cost`` (the query's LLM calls, prompt tokens, seconds
    and, for ``quality``, whether its top k is certified) and ``certificate`` (this hit's:
    which constraints the LLM decided, which rest on embeddings only)."""
    meta: dict[str, Any] = {}
    logic = dict(getattr(hit, "logic", None) or {})
    cost = logic.pop("llm", None)
    for key, value in (
        ("constraints", hit.constraints),
        ("constraint_scores", getattr(hit, "constraint_scores", None)),
        ("constraint_sources", getattr(hit, "constraint_sources", None)),
        ("decomposition", logic),
    ):
        if value:
            meta[key] = _plain(value)
    if isinstance(cost, Mapping):
        per_hit = cost.get("hits") or {}
        meta["llm_cost"] = _plain({k: v for k, v in cost.items() if k != "hits"})
        if hit.id in per_hit:
            meta["certificate"] = _plain(per_hit[hit.id])
    return meta


def check_llm_strategy(strategy: str | None, llm: object) -> None:
    """With ``llm`` given, ``strategy`` must be one that asks an LLM."""
    if llm is not None and strategy not in LLM_STRATEGIES:
        raise ValueError(
            f"llm= is the costly verifier of the strategies {', '.join(LLM_STRATEGIES)}; "
            f"strategy {strategy!r} asks no LLM (pass strategy='quality')"
        )


def llm_verifier(llm: Any) -> Any:
    """The verifier an adapter's ``llm=`` becomes: an :class:`~logic_rag.verifiers.llm.
    LLMVerifier` asking that object (a LlamaIndex ``LLM``, a LangChain chat model / LLM,
    or a logic-rag generator), or ``None`` for ``None``."""
    if llm is None:
        return None
    from logic_rag.generators.framework import as_choice_scorer
    from logic_rag.verifiers.llm import LLMVerifier

    return LLMVerifier(generator=as_choice_scorer(llm))


def with_llm(engine: Any, strategy: str | None, llm: Any) -> Any:
    """What a retriever adapter passes as the engine's ``strategy`` when given ``llm``:
    the named strategy's pipeline built from the engine's settings for it with ``llm`` as
    the costly verifier (built once by the adapter, so the verifier keeps its pair cache).
    Without ``llm``, ``strategy`` as it is."""
    if llm is None:
        return strategy
    name = strategy if strategy is not None else getattr(engine, "strategy", None)
    check_llm_strategy(name, llm)
    settings_for = getattr(engine, "settings_for", None)
    if not callable(settings_for):
        raise TypeError(
            f"llm= needs a logic_rag.LogicRetriever engine (strategies and settings), "
            f"got {type(engine).__name__}"
        )
    from dataclasses import replace

    from logic_rag.strategies import pipeline_of

    return pipeline_of(name, replace(settings_for(name), verifier=llm_verifier(llm)))
