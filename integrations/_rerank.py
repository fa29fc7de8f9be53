"""What both rerankers share: a named strategy of the registry run over given candidates.

:class:`CandidateReranker` takes a query and the candidate texts another retriever
returned, and runs strategy ``strategy`` of :mod:`logic_rag.strategies` with its settings
(:mod:`logic_rag.strategy_settings`) over an in-memory index that holds only those
candidates' vectors (:class:`~logic_rag.index.exact.ExactIndex`: no FAISS index per call;
the few searches a strategy still runs over them are one exact matrix product). :func:`~logic_rag.strategies.pipeline_over_candidates` builds the strategy's
own pipeline and puts the candidates (with their incoming scores) where its query-side
candidate sources stood, so every knob (``positive_prior``, ``verifier``,
``verifier_weight``, ``verifier_top``, ``tnorm`` …) means in a reranker what it means in
:class:`logic_rag.LogicRetriever`, and a new strategy (a cascade) reaches both rerankers
without a change here. With the default ``verify`` over ten candidates::

    GivenCandidates(incoming scores) >> Verify(embedding, candidate-calibrated)
    [>> Verify(settings.verifier, positive atoms)] >> SoftLogic()
    >> Combine(prior + 0.75 truth) >> TopK() >> Backfill()

Each hit is mapped back to its input position by the row the engine ranked (carried in
the in-memory document's metadata as an int), never by parsing an id. The candidates
(and, with ``passages``, their sentences) are embedded with the dense encoder, except
pages embedded by an earlier call that are still in the reranker's bounded cache
(``cache_size`` pages, :mod:`logic_rag.integrations._embedding_cache`); the query is
decomposed by the decomposer (rules by default); the hits carry ``constraints``,
``constraint_scores`` and the decomposition exactly like the retriever's. This module
imports neither LlamaIndex nor LangChain.

Calibration without a corpus (``calibration="candidates"``, the default). The embedding
verifier normally calibrates an atom against its ``atom_depth`` nearest documents of the
whole corpus: the evidence of the ``threshold_rank``-th neighbour marks p = 0.5. Here the
candidates are the only corpus there is, so
:class:`~logic_rag.verifiers.embedding.CandidateEmbeddingVerifier` takes all ``n``
candidates (at most ``atom_depth``) as the neighbourhood, the rank
``r = min(threshold_rank, max(1, n // 4))`` (never more than the candidates, at most a
quarter of them), and puts p = 0.5 halfway between the ``r``-th and ``(r+1)``-th
candidate's evidence. Consequences, tested for 1, 2 and many candidates:

* one candidate: nothing to compare with, every atom gets p = 0.5 exactly (the flags
  read ``True``: degree 0.5 counts as satisfied); the ranking is trivially that one;
* two to seven candidates: ``r = 1``, so for each atom the best-matching candidate lies
  above p = 0.5 and the others below, by their evidence gap over ``temperature``: the
  page that matches a negated atom most is flagged and pushed down;
* many candidates (``n >= 4 * threshold_rank``): practically the corpus rule.

The probabilities are relative to the candidate set: a flag says how a page compares with
the other candidates, not with a whole corpus. ``calibration="corpus"`` keeps the corpus
rule (the ``r``-th candidate itself at p = 0.5); over a whole corpus the reranker then
ranks exactly as the retriever's strategy does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from logic_rag.integrations import _engine

if TYPE_CHECKING:
    from logic_rag.pipeline.stage import Pipeline
    from logic_rag.query.decompose import Decomposer
    from logic_rag.retriever import Hit
    from logic_rag.strategies import Calibration
    from logic_rag.strategy_settings import CheckedSettings, StrategySettings
    from logic_rag.verifiers.base import Verifier

__all__ = [
    "DEFAULT_STRATEGY",
    "CandidateReranker",
    "Reranked",
    "check_top_n",
    "reranker_fields",
]

#: The rerankers' default strategy. ``verify`` is what the rerankers ran before they used
#: the registry (prior + 0.75 x soft truth, a second verifier on the positive atoms when
#: ``settings.verifier`` is set), now with the registry's positive prior; ``rerank`` has
#: no second verifier. The boolq_not comparison with ``rerank`` is in
#: docs/experiments/2026-11-27-rerankers-one-path.md.
DEFAULT_STRATEGY = "verify"


@dataclass(frozen=True)
class Reranked:
    """One reranked candidate: its position in the input and the annotated hit."""

    position: int
    hit: Hit


def check_top_n(top_n: object) -> int | None:
    """``None`` (keep every candidate) or a positive int."""
    if top_n is None:
        return None
    return _engine.check_k(top_n)


class CandidateReranker:
    """Re-rank candidate texts with a named strategy (framework-free core).

    Args:
        model: dense encoder: a registry name, a model folder or a ``DenseEncoder``
            (default :func:`logic_rag.models.default_dense_model`).
        strategy: a strategy of :data:`logic_rag.strategies.STRATEGIES` that runs over
            given candidates (all but ``splade*``); default :data:`DEFAULT_STRATEGY`.
        settings: the strategy's settings (its class from
            :data:`~logic_rag.strategies.STRATEGIES`, e.g. ``VerifySettings``) or their
            ``to_dict()``, exactly as for ``LogicRetriever``; default: the defaults.
            Every value, the costly ``verifier`` too, is named there.
        llm: a framework's model (a LlamaIndex ``LLM``, a LangChain chat model) or a
            logic-rag generator the caller already holds, as the costly verifier of
            ``verify``, ``quality`` or ``llm-rerank`` in place of ``settings.verifier``
            (it is shared, not written out: :attr:`settings` stay as given).
        decomposer: reads the query's logic: an object or a spec (``rules``, ``llm``,
            ``auto``, ``llm:MODEL``); default rules.
        passages: also embed each candidate's sentences, so an atom is checked against
            the best-matching sentence as well as the whole text (about twice the
            encoding work).
        cache_size: pages whose vectors are kept for later calls (least recently used
            dropped first; keyed by the texts' SHA-256, so an edited page is re-embedded);
            0 turns the cache off. ``.cache.hits`` / ``.cache.misses`` count pages.
        calibration: ``candidates`` (default) calibrates the embedding evidence on the
            candidates (module docstring); ``corpus`` keeps the corpus rule.
    """

    def __init__(
        self,
        model: Any = None,
        *,
        strategy: str = DEFAULT_STRATEGY,
        settings: StrategySettings | dict[str, Any] | None = None,
        llm: Any = None,
        decomposer: Decomposer | str | dict[str, Any] | None = None,
        passages: bool = True,
        cache_size: int = 1024,
        calibration: Calibration = "candidates",
    ) -> None:
        from logic_rag.integrations._embedding_cache import CandidateEmbeddingCache
        from logic_rag.integrations._settings import decomposer_from, settings_from
        from logic_rag.models import default_dense_model

        if not isinstance(strategy, str):
            raise TypeError(f"strategy must be a strategy name, got {type(strategy).__name__}")
        _engine.check_llm_strategy(strategy, llm)
        self.settings = settings_from(strategy, settings)
        self.llm = llm
        self.calibration = calibration
        self.strategy = strategy
        # Built once (an unknown strategy, or one that needs SPLADE, fails here): its
        # verifiers load their models once and keep their pair caches across calls.
        self._template = self._build_template()
        self.cache = CandidateEmbeddingCache(cache_size)
        self.decomposer = decomposer_from(decomposer)
        self.decomposer_spec = decomposer if isinstance(decomposer, str) else None
        self.passages = bool(passages)
        self.encoder = _engine.resolve_encoder(default_dense_model() if model is None else model)

    def _build_template(self) -> Pipeline:
        from logic_rag.candidates.given import GivenCandidates
        from logic_rag.strategies import pipeline_over_candidates

        settings = self.settings
        if self.llm is not None:  # the shared model is the costly verifier
            settings = replace(settings, verifier=_engine.llm_verifier(self.llm))  # type: ignore[type-var]
        return pipeline_over_candidates(
            self.strategy, settings, GivenCandidates(None), calibration=self.calibration
        )

    def pipeline(self, scores: Sequence[float | None] | None = None) -> Pipeline:
        """The stages one call runs (``scores``: the incoming scores, or None): the
        strategy's pipeline, built once, with this call's scores in its given source."""
        from logic_rag.candidates.given import GivenCandidates
        from logic_rag.pipeline.stage import Pipeline

        if scores is None:
            return self._template
        given = tuple(None if s is None else float(s) for s in scores)
        return Pipeline(
            replace(s, scores=given) if isinstance(s, GivenCandidates) else s
            for s in self._template
        )

    @property
    def verifiers(self) -> tuple[Verifier, ...]:
        """The verifiers the pipeline runs, in order (the embedding evidence first)."""
        from logic_rag.verifiers.base import Verify

        return tuple(s.verifier for s in self.pipeline() if isinstance(s, Verify))

    def rerank(
        self,
        query: str,
        texts: Sequence[str],
        *,
        titles: Sequence[str] | None = None,
        scores: Sequence[float | None] | None = None,
        top_n: int | None = None,
    ) -> list[Reranked]:
        """The candidates best first (at most ``top_n``), each with its annotated hit.

        Empty ``texts`` give an empty list; an empty query raises ValueError.
        """
        from logic_rag.encoders.dense import check_texts

        check_texts([query], "query")
        top_n = check_top_n(top_n)
        texts = list(texts)
        for name, values in (("titles", titles), ("scores", scores)):
            if values is not None and len(values) != len(texts):
                raise ValueError(f"got {len(values)} {name} for {len(texts)} candidates")
        if not texts:
            return []
        return _engine.run_locked(
            self.encoder, self._rerank, query, texts, titles, scores, top_n or len(texts)
        )

    async def arerank(
        self,
        query: str,
        texts: Sequence[str],
        *,
        titles: Sequence[str] | None = None,
        scores: Sequence[float | None] | None = None,
        top_n: int | None = None,
    ) -> list[Reranked]:
        """:meth:`rerank` in a worker thread, so the event loop is not blocked."""
        import asyncio

        return await asyncio.to_thread(
            self.rerank, query, texts, titles=titles, scores=scores, top_n=top_n
        )

    def _rerank(
        self,
        query: str,
        texts: list[str],
        titles: Sequence[str] | None,
        scores: Sequence[float | None] | None,
        k: int,
    ) -> list[Reranked]:
        from logic_rag.corpus import Document
        from logic_rag.explain import explained_hits
        from logic_rag.index.exact import ExactIndex
        from logic_rag.pipeline.context import Resources, SearchContext
        from logic_rag.pipeline.state import QueryState, SearchBatch
        from logic_rag.planning import plan_queries
        from logic_rag.query.algebra import Atom
        from logic_rag.retriever import DenseRetriever
        from logic_rag.strategies import STRATEGIES

        # Each candidate's id is its position in the input, so a hit names its candidate
        # without bookkeeping in the metadata.
        docs = [
            Document(
                id=str(i),
                # A framework node can carry text=None (LlamaIndex's model_construct, a
                # custom node class): it is a candidate with nothing to read, not a crash.
                text=text if isinstance(text, str) and text.strip() else " ",
                title=titles[i] if titles is not None else "",
            )
            for i, text in enumerate(texts)
        ]
        vectors, passages = self.cache.vectors(self.encoder, docs, passages=self.passages)
        # The candidates' vectors as they are, searched by one exact matrix product where
        # a stage still searches (orthogonal, backfill): no FAISS index per call.
        resources = Resources(
            DenseRetriever(self.encoder, ExactIndex(vectors), docs), passages=passages
        )
        # A strategy that ignores the logic (vanilla) skips the decomposer, as in search.
        plain = None if STRATEGIES[self.strategy].decompose else [Atom(query)]
        explain = self._explained_by()
        plans = plan_queries(
            [query],
            plain,
            self.decomposer.decompose,
            min_confidence=explain.logic.min_confidence,
        )
        batch = SearchBatch([QueryState(p) for p in plans], min(k, len(docs)))
        self.pipeline(scores)(batch, SearchContext(resources))
        (state,) = batch
        return [Reranked(int(hit.id), hit) for hit in explained_hits(state, resources, explain)]

    def _explained_by(self) -> CheckedSettings:
        """The settings whose ``logic`` and ``evidence`` explain the hits: the strategy's,
        or ``rerank``'s defaults for one that checks no constraints (``vanilla``), as the
        retriever does."""
        from logic_rag.strategy_settings import CheckedSettings, RerankSettings

        return self.settings if isinstance(self.settings, CheckedSettings) else RerankSettings()


def reranker_fields(core: CandidateReranker, top_n: int | None) -> dict[str, Any]:
    """The JSON-shaped constructor arguments both framework adapters declare as fields, so
    that ``to_dict`` / ``dumpd`` rebuild an equal reranker."""
    from logic_rag.integrations._settings import decomposer_spec

    return {
        "model": core.encoder.name,
        "strategy": core.strategy,
        "settings": core.settings.to_dict(),
        "decomposer": core.decomposer_spec or decomposer_spec(core.decomposer),
        "top_n": check_top_n(top_n),
        "passages": core.passages,
        "cache_size": core.cache.capacity,
        "calibration": core.calibration,
    }
