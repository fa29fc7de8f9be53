"""What both rerankers share: logic on top of candidates another retriever returned.

:class:`CandidateReranker` takes a query and a list of candidate texts, and runs the same
pipeline stages as :class:`logic_rag.LogicRetriever` over an in-memory index that holds
only those candidates::

    GivenCandidates(input scores) >> Verify(embedding) [>> Verify(second, positive atoms)]
    >> SoftLogic() >> Combine.of(cosine=1.0, truth=truth_weight) >> TopK()

The candidates (and, with ``passages``, their sentences) are embedded with the dense
encoder, except pages embedded by an earlier call that are still in the reranker's
bounded cache (``cache_size`` pages, :mod:`logic_rag.integrations._embedding_cache`);
the query is decomposed by the decomposer (rules by default); the
hits carry ``constraints``, ``constraint_scores`` and the decomposition exactly like the
retriever's. This module imports neither LlamaIndex nor LangChain.

Calibration without a corpus. The embedding verifier normally calibrates an atom against
its ``atom_depth`` nearest documents of the whole corpus: the evidence of the
``threshold_rank``-th neighbour marks p = 0.5. Here the candidates are the only corpus
there is, so :class:`~logic_rag.verifiers.embedding.CandidateEmbeddingVerifier` takes all
``n`` candidates (at most ``atom_depth``) as the neighbourhood, the rank
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
the other candidates, not with a whole corpus. Pass ``verifier=EmbeddingVerifier(...)``
for the corpus rule (the ``r``-th candidate itself at p = 0.5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from logic_rag.integrations import _engine

if TYPE_CHECKING:
    from logic_rag.pipeline.stage import Pipeline
    from logic_rag.query.decompose import Decomposer
    from logic_rag.retriever import Hit
    from logic_rag.strategies import LogicConfig
    from logic_rag.verifiers.base import Verifier

__all__ = ["CandidateReranker", "Reranked", "build_reranker", "check_top_n", "check_truth_weight"]


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


def check_truth_weight(weight: object) -> float:
    """A finite, non-negative weight of the soft truth."""
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise TypeError(f"truth_weight must be a number, got {type(weight).__name__}")
    if not 0.0 <= float(weight) < float("inf"):
        raise ValueError(f"truth_weight must be finite and >= 0, got {weight}")
    return float(weight)


class CandidateReranker:
    """Re-rank candidate texts under the logic of a query (framework-free core).

    Args:
        model: dense encoder: a registry name, a model folder or a ``DenseEncoder``
            (default :func:`logic_rag.models.default_dense_model`).
        verifier: ``None`` or ``"embedding"``: the candidate-calibrated embedding verifier
            alone. A spec (``cross-encoder:FOLDER``, ``llm:GENERATOR``) or a
            ``Verifier``: re-checks the query's positive atoms (``config.verifier_atoms``)
            after the embedding evidence, as the ``verify`` strategy does; an
            ``EmbeddingVerifier`` instance replaces the default one instead.
        truth_weight: weight of the soft truth added to the whole-query cosine.
        decomposer: reads the query's logic (default ``RuleDecomposer``).
        config: calibration and logic knobs (``threshold_rank``, ``temperature``,
            ``passage_weight``, ``tnorm``, ``min_confidence``, ``verifier_atoms``,
            ``verifier_top``); default ``LogicConfig()``.
        passages: also embed each candidate's sentences, so an atom is checked against
            the best-matching sentence as well as the whole text (about twice the
            encoding work).
        cache_size: pages whose vectors are kept for later calls (least recently used
            dropped first; keyed by the texts' SHA-256, so an edited page is re-embedded);
            0 turns the cache off. ``.cache.hits`` / ``.cache.misses`` count pages.
    """

    def __init__(
        self,
        model: Any = None,
        *,
        verifier: str | Verifier | None = None,
        truth_weight: float = 0.75,
        decomposer: Decomposer | None = None,
        config: LogicConfig | None = None,
        passages: bool = True,
        cache_size: int = 1024,
    ) -> None:
        from logic_rag.integrations._embedding_cache import CandidateEmbeddingCache
        from logic_rag.models import default_dense_model
        from logic_rag.query.rules import RuleDecomposer
        from logic_rag.strategies import LogicConfig
        from logic_rag.verifiers.embedding import CandidateEmbeddingVerifier, EmbeddingVerifier
        from logic_rag.verifiers.spec import make_verifier

        self.encoder = _engine.resolve_encoder(default_dense_model() if model is None else model)
        self.config = config or LogicConfig()
        self.truth_weight = check_truth_weight(truth_weight)
        self.decomposer = decomposer or RuleDecomposer()
        self.passages = bool(passages)
        self.cache = CandidateEmbeddingCache(cache_size)
        cfg = self.config
        default = CandidateEmbeddingVerifier(
            atom_depth=cfg.atom_depth,
            threshold_rank=cfg.threshold_rank,
            temperature=cfg.temperature,
            passage_weight=cfg.passage_weight,
        )
        chosen = verifier if verifier is not None else cfg.verifier
        if isinstance(chosen, str) and chosen.strip().lower() == "embedding":
            chosen = None
        second = None if chosen is None else make_verifier(chosen)
        if isinstance(second, EmbeddingVerifier):
            self.embedding, self.verifier = second, None
        else:
            self.embedding, self.verifier = default, second

    def pipeline(self, scores: Sequence[float | None] | None = None) -> Pipeline:
        """The stages one call runs (``scores``: the incoming scores, or None)."""
        from logic_rag.candidates.given import GivenCandidates
        from logic_rag.compose.logic import SoftLogic
        from logic_rag.pipeline.ranking import Combine, TopK
        from logic_rag.verifiers.base import Verify

        given = None if scores is None else tuple(None if s is None else float(s) for s in scores)
        stages = GivenCandidates(given) >> Verify(self.embedding)
        if self.verifier is not None:
            cfg = self.config
            stages = stages >> Verify(
                self.verifier, top=cfg.verifier_top, polarity=cfg.verifier_atoms
            )
        return (
            stages
            >> SoftLogic(self.config.tnorm)
            >> Combine.of(cosine=1.0, truth=self.truth_weight)
            >> TopK()
        )

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
        from logic_rag.logic_retriever import LogicRetriever
        from logic_rag.retriever import Retriever

        docs = [
            Document(
                id=str(i),
                text=text if text.strip() else " ",
                title=titles[i] if titles is not None else "",
            )
            for i, text in enumerate(texts)
        ]
        vectors, passages = self.cache.vectors(self.encoder, docs, passages=self.passages)
        dense = Retriever.from_embeddings(self.encoder, vectors, docs)
        pipeline = self.pipeline(scores)
        engine = LogicRetriever(
            dense,
            passages=passages,
            decomposer=self.decomposer,
            strategy=pipeline,
            config=self.config,
        )
        hits = engine.search(query, k)
        return [Reranked(int(h.id), h) for h in hits]


def build_reranker(
    model: Any = None,
    *,
    verifier: Any = None,
    top_n: int | None = None,
    truth_weight: float = 0.75,
    decomposer: Any = None,
    config: Any = None,
    passages: bool = True,
    cache_size: int = 1024,
) -> tuple[CandidateReranker, dict[str, Any]]:
    """The core reranker and the public fields both framework adapters declare."""
    core = CandidateReranker(
        model,
        verifier=verifier,
        truth_weight=truth_weight,
        decomposer=decomposer,
        config=config,
        passages=passages,
        cache_size=cache_size,
    )
    second = core.verifier if core.verifier is not None else core.embedding
    fields = {
        "top_n": check_top_n(top_n),
        "truth_weight": core.truth_weight,
        "model_name": core.encoder.name,
        "verifier_name": second.name,
    }
    return core, fields
