"""Named search strategies: each is one composition of pipeline stages.

``LogicRetriever(strategy="rerank")`` looks the name up here and runs the pipeline it
builds from that strategy's settings (:mod:`logic_rag.strategy_settings`: one small typed
set per strategy, e.g. :class:`~logic_rag.strategy_settings.VerifySettings`, the one
place of defaults). A new strategy is one entry::

    "vanilla":  DenseCandidates() >> Combine(dense) >> TopK()
    "rerank":   DenseCandidates(100) >> Verify(embedding) >> SoftLogic() >> Combine(prior + ½ truth)
                >> TopK() >> Backfill()
    "setops":   DenseCandidates(100) >> AtomCandidates(300) >> Verify(embedding) >> SoftLogic()
                >> Combine(truth + 0.1 cosine) >> TopK() >> Backfill()
    "verify":   DenseCandidates(100) >> AtomCandidates(30) >> Verify(embedding)
                [>> Verify(cross-encoder | llm, positive atoms)] >> SoftLogic()
                >> Combine(prior + 0.75 truth) >> TopK() >> Backfill()
                (with verifier_top=N the second verifier runs after a first SoftLogic >>
                Combine >> Cutoff(N): it re-ranks the best N, the rest follow)

``prior`` is the whole-query cosine; for a query that negates an atom it is blended half
and half with the positive atoms' mean cosine (``positive_prior`` of the settings).
``logic-rag search --help`` lists every strategy; :data:`STRATEGIES` holds them with their
descriptions and settings classes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any, Literal

from logic_rag.candidates.atoms import AtomCandidates
from logic_rag.candidates.dense import DenseCandidates
from logic_rag.candidates.given import GivenCandidates
from logic_rag.candidates.orthogonal import OrthogonalCandidates
from logic_rag.candidates.splade import SpladeCandidates
from logic_rag.compose.logic import ScoreFusion, SoftLogic
from logic_rag.pipeline.ranking import Backfill, Combine, Cutoff, TopK
from logic_rag.pipeline.stage import Pipeline, Stage
from logic_rag.strategy_settings import (
    QUALITY_VERIFIER,
    CheckedPoolSettings,
    CheckedSettings,
    FusionSettings,
    LLMRerankSettings,
    LogicSettings,
    OrthogonalSettings,
    PoolSettings,
    QualitySettings,
    RerankSettings,
    SetopsSettings,
    SpladeSettings,
    StrategySettings,
    VanillaSettings,
    VerifySettings,
)
from logic_rag.verifiers.base import Verifier, Verify
from logic_rag.verifiers.embedding import CandidateEmbeddingVerifier, EmbeddingVerifier

__all__ = [
    "Strategy",
    "STRATEGIES",
    "DENSE_STRATEGIES",
    "SPARSE_STRATEGIES",
    "QUALITY_VERIFIER",
    "Calibration",
    "pipeline_of",
    "pipeline_over_candidates",
    "settings_of",
    "unknown_strategy",
]

Calibration = Literal["candidates", "corpus"]
"""How a pipeline over given candidates calibrates embedding evidence (see
:func:`pipeline_over_candidates`)."""


@dataclass(frozen=True)
class Strategy:
    """A named composition: ``build(settings)`` returns its pipeline.

    ``settings`` is the strategy's settings class (its defaults are the strategy's);
    ``decompose`` is False for strategies that ignore the logic (``vanilla``), so they
    skip the decomposer; ``needs_sparse`` marks the SPLADE ones.
    """

    name: str
    description: str
    build: Callable[[Any], Stage]
    settings: type[StrategySettings]
    decompose: bool = True
    needs_sparse: bool = False


def _prior_and(s: RerankSettings | PoolSettings, *, truth: float) -> Combine:
    """Cosine prior (whole query, blended with the positive part under a negation) + truth."""
    a = s.positive_prior
    return Combine.of(cosine=1.0 - a, positive_cosine=a, truth=truth)


def _candidates_with_evidence(s: PoolSettings) -> Stage:
    """The whole query's candidates and each positive atom's, with embedding evidence:
    where ``verify``, ``quality`` and ``llm-rerank`` start."""
    pipeline: Stage = DenseCandidates(s.candidates)
    if s.atom_candidates:
        pipeline = pipeline >> AtomCandidates(s.atom_candidates)
    return pipeline >> Verify(s.evidence.verifier())


def _verify(s: VerifySettings) -> Stage:
    pipeline = _candidates_with_evidence(s)
    if s.verifier is not None:
        second = s.spec_verifier(s.verifier)
        if s.verifier_top is not None:
            # A cascade: the embedding evidence ranks, the second verifier re-ranks the best
            # verifier_top; the rest keep their order below (Backfill).
            pipeline = (
                pipeline
                >> SoftLogic(s.tnorm)
                >> _prior_and(s, truth=s.truth_weight)
                >> Cutoff(s.verifier_top)
            )
        pipeline = pipeline >> Verify(second, polarity=s.verifier_atoms, weight=s.verifier_weight)
    return (
        pipeline
        >> SoftLogic(s.tnorm)
        >> _prior_and(s, truth=s.truth_weight)
        >> TopK()
        >> Backfill()
    )


def _checked_pool(s: CheckedPoolSettings) -> Stage:
    """``verify``'s candidates with their embedding evidence (and the optional extra cheap
    verifier), ranked by cosine + soft truth, cut to ``pool``: the pool that ``quality``
    certifies and ``llm-rerank`` checks."""
    pipeline = _candidates_with_evidence(s)
    if s.cheap is not None:
        pipeline = pipeline >> Verify(s.spec_verifier(s.cheap), polarity=s.verifier_atoms)
    pipeline = pipeline >> SoftLogic(s.tnorm) >> _prior_and(s, truth=s.truth_weight)
    if s.pool is not None:
        pipeline = pipeline >> Cutoff(s.pool)
    return pipeline


def _quality(s: QualitySettings) -> Stage:
    """The checked pool, then certified top-k verification by the LLM (with
    ``whole_query``: the whole query first, its kept verdicts as the pages' truth). One
    :class:`~logic_rag.compose.score.Score` is what the certificate bounds and what the
    final ranking ranks by."""
    from logic_rag.compose.score import Score
    from logic_rag.verifiers.certified import CertifiedTopK
    from logic_rag.verifiers.whole_query import WholeQueryTruth

    score = Score.of(SoftLogic(s.tnorm), _prior_and(s, truth=s.truth_weight))
    logic: Stage = score.logic()
    if s.whole_query:
        logic = logic >> WholeQueryTruth()
    return (
        _checked_pool(s)
        >> CertifiedTopK(
            s.costly(),
            score=score,
            polarity=s.verifier_atoms,
            bounds=s.bounds,
            thresholds=s.thresholds,
            delta=s.delta,
            max_llm_calls=s.max_calls,
            whole_query=s.whole_query,
        )
        >> logic
        >> score.combine()
        >> TopK()
        >> Backfill()
    )


def _llm_rerank(s: LLMRerankSettings) -> Stage:
    """The peer: the same pool's best ``top`` pages, each checked once by the same LLM
    with the whole query as the question, ranked by prior + that verdict."""
    from logic_rag.verifiers.whole_query import QUERY_VERDICT, WholeQueryVerify

    a = s.positive_prior
    return (
        _checked_pool(s)
        >> Cutoff(s.top)
        >> WholeQueryVerify(s.costly())
        >> Combine.of(cosine=1.0 - a, positive_cosine=a, **{QUERY_VERDICT: s.truth_weight})
        >> TopK()
        >> Backfill()
    )


def _vanilla(s: VanillaSettings) -> Stage:
    return DenseCandidates() >> Combine.of(dense=1.0) >> TopK()


def _rerank(s: RerankSettings) -> Stage:
    return (
        DenseCandidates(s.candidates)
        >> Verify(s.evidence.verifier())
        >> SoftLogic(s.tnorm)
        >> _prior_and(s, truth=s.truth_weight)
        >> TopK()
        >> Backfill()
    )


def _atom_pool(s: SetopsSettings | FusionSettings) -> Stage:
    return DenseCandidates(s.candidates) >> AtomCandidates(s.evidence.atom_depth)


def _setops(s: SetopsSettings) -> Stage:
    return (
        _atom_pool(s)
        >> Verify(s.evidence.verifier())
        >> SoftLogic(s.tnorm)
        >> Combine.of(truth=1.0, cosine=s.cosine_weight)
        >> TopK()
        >> Backfill()
    )


def _fusion(op: str) -> Callable[[FusionSettings], Stage]:
    def build(s: FusionSettings) -> Stage:
        return (
            _atom_pool(s)
            >> Verify(s.evidence.verifier())
            >> ScoreFusion(op, s.negation_weight)  # type: ignore[arg-type]
            >> Combine.of(fusion=1.0)
            >> TopK()
            >> Backfill()
        )

    return build


def _explained(source: Stage, signal: str, s: CheckedSettings) -> Stage:
    """A strategy whose own ranking is final; the embedding verifier only explains it."""
    return source >> Verify(s.evidence.verifier()) >> Combine.of(**{signal: 1.0}) >> TopK()


def _orthogonal(s: OrthogonalSettings) -> Stage:
    return _explained(OrthogonalCandidates(), "orthogonal", s)


def _splade(mode: str) -> Callable[[SpladeSettings], Stage]:
    def build(s: SpladeSettings) -> Stage:
        source = SpladeCandidates(mode, negation_weight=s.negation_weight)  # type: ignore[arg-type]
        return _explained(source, "splade", s)

    return build


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy(
            "vanilla",
            "whole-query dense retrieval, no logic",
            _vanilla,
            VanillaSettings,
            decompose=False,
        ),
        Strategy(
            "rerank",
            "whole-query candidates re-scored with the soft truth of the decomposed query",
            _rerank,
            RerankSettings,
        ),
        Strategy(
            "setops",
            "soft set algebra over calibrated atom evidence; candidates from the whole query "
            "and each positive atom",
            _setops,
            SetopsSettings,
        ),
        Strategy(
            "verify",
            "whole-query and per-atom candidates; every constraint checked by the embedding "
            "verifier (and optionally a cross-encoder or LLM), ranked by cosine + soft truth",
            _verify,
            VerifySettings,
        ),
        Strategy(
            "quality",
            "verify's candidates; an LLM checks the constraints that decide the top k "
            "(certified top-k verification: its work scales with k, not the pool)",
            _quality,
            QualitySettings,
        ),
        Strategy(
            "llm-rerank",
            "the whole-query LLM peer: the same LLM asked once per page with the whole "
            "query as the question, over the same pool",
            _llm_rerank,
            LLMRerankSettings,
        ),
        Strategy(
            "fusion",
            "score fusion of atom evidence: AND +, OR max, NOT −",
            _fusion("sum"),
            FusionSettings,
        ),
        Strategy(
            "fusion-product",
            "score fusion with AND as a product",
            _fusion("product"),
            FusionSettings,
        ),
        Strategy(
            "orthogonal",
            "the query vector projected away from negated atoms",
            _orthogonal,
            OrthogonalSettings,
        ),
        Strategy(
            "splade", "whole-query SPLADE", _splade("query"), SpladeSettings, needs_sparse=True
        ),
        Strategy(
            "splade-compose",
            "Krasakis et al.: AND -> combined pseudo-terms, OR -> MaxPool, NOT -> "
            "disentangled negation",
            _splade("compose"),
            SpladeSettings,
            needs_sparse=True,
        ),
        Strategy(
            "splade-nrf",
            "SPLADE: AND -> sum, OR -> MaxPool, NOT -> A − λB",
            _splade("nrf"),
            SpladeSettings,
            needs_sparse=True,
        ),
    )
}

DENSE_STRATEGIES = tuple(n for n, s in STRATEGIES.items() if not s.needs_sparse)
SPARSE_STRATEGIES = tuple(n for n, s in STRATEGIES.items() if s.needs_sparse)


def _strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except (KeyError, TypeError):
        raise unknown_strategy(name) from None


def unknown_strategy(name: object) -> ValueError:
    """The error for a name that is not in :data:`STRATEGIES`, with the closest name when
    there is one (``unknown strategy 'rernak' (did you mean 'rerank'?); choose one of ...``),
    the same from Python and the command line."""
    import difflib

    close = difflib.get_close_matches(name, list(STRATEGIES), n=1) if isinstance(name, str) else []
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ValueError(f"unknown strategy {name!r}{hint}; choose one of {', '.join(STRATEGIES)}")


def settings_of(name: str, settings: StrategySettings | None = None) -> StrategySettings:
    """Strategy ``name``'s settings: ``settings`` itself (which must be of the strategy's
    settings class) or the defaults."""
    cls = _strategy(name).settings
    if settings is None:
        return cls()
    if type(settings) is not cls:
        raise TypeError(
            f"strategy {name!r} takes {cls.__name__}, got {type(settings).__name__} "
            f"(see logic_rag.strategy_settings)"
        )
    return settings


def logic_of(settings: StrategySettings) -> LogicSettings:
    """The ``logic`` group of ``settings`` (the defaults for a strategy without one)."""
    logic = getattr(settings, "logic", None)
    return logic if isinstance(logic, LogicSettings) else LogicSettings()


def pipeline_of(name: str, settings: StrategySettings | None = None) -> Pipeline:
    """The pipeline of strategy ``name`` built from ``settings`` (its settings class;
    ``None``: the defaults). A clear error for unknown names and for settings of another
    strategy.

    With ``logic.exclude_violations`` set, :class:`ExcludeViolations` goes before the
    first ``TopK`` of every strategy that checks constraints.
    """
    strategy = _strategy(name)
    own = settings_of(name, settings)
    built = strategy.build(own)
    pipeline = built if isinstance(built, Pipeline) else Pipeline((built,))
    exclusion = logic_of(own).exclusion()
    if exclusion is None or not strategy.decompose:
        return pipeline
    stages = list(pipeline)
    at = next((i for i, s in enumerate(stages) if isinstance(s, TopK)), None)
    if at is None:
        return pipeline
    stages.insert(at, exclusion)
    return Pipeline(stages)


#: Candidate sources that search the index with the query or its atoms. Over given
#: candidates the index *is* the candidates, so the given source stands in for them.
_QUERY_SOURCES = (DenseCandidates, AtomCandidates)


def pipeline_over_candidates(
    name: str,
    settings: StrategySettings | None,
    given: GivenCandidates,
    *,
    calibration: Calibration = "candidates",
) -> Pipeline:
    """Strategy ``name``'s pipeline run over candidates another retriever chose.

    A reranker's index holds only its candidates, so the strategy's own stages run
    unchanged (every value of its settings applies as in a retriever) except:

    * the query-side candidate sources (:class:`DenseCandidates`, :class:`AtomCandidates`)
      are replaced by ``given`` at the first one's place and dropped after it. Standing
      where ``DenseCandidates`` stood, ``given`` takes its source name ``dense``, so a
      stage that reads the first stage's score (``vanilla``'s ``Combine(dense)``) reads
      the incoming scores. Other sources (``orthogonal``) search the candidates' index
      and are kept;
    * with ``calibration="candidates"`` (default) every exact :class:`EmbeddingVerifier`
      found in a stage's fields, or inside a verifier's fields at any depth (a cascade's
      cheap verifier), becomes a :class:`CandidateEmbeddingVerifier` with the same
      settings: the boundary between two candidates, so that a handful of candidates
      still separate. ``"corpus"`` keeps the corpus rule; over a whole corpus the result
      is then exactly the strategy's own pipeline.

    Strategies that need an index the candidates lack (``splade*``) raise ValueError
    naming the ones that can run.
    """
    strategy = _strategy(name)
    if strategy.needs_sparse:
        raise ValueError(
            f"strategy {name!r} needs a SPLADE index and cannot re-rank given candidates; "
            f"choose one of {', '.join(DENSE_STRATEGIES)}"
        )
    if calibration not in ("candidates", "corpus"):
        raise ValueError(f"calibration must be 'candidates' or 'corpus', got {calibration!r}")
    if not isinstance(given, GivenCandidates):
        raise TypeError(f"given must be a GivenCandidates stage, got {type(given).__name__}")
    stages: list[Stage] = []
    placed = False
    for stage in pipeline_of(name, settings):
        if isinstance(stage, _QUERY_SOURCES):
            if not placed:
                named = "dense" if isinstance(stage, DenseCandidates) else given.name
                stages.append(replace(given, name=named))
                placed = True
            continue
        stages.append(_on_candidates(stage) if calibration == "candidates" else stage)
    return Pipeline(stages)


def _on_candidates(value: Any) -> Any:
    """``value`` with every exact EmbeddingVerifier inside it candidate-calibrated.

    Walks frozen-dataclass stages and verifiers (and tuples of them) field by field and
    rebuilds only what changed, so verifiers without one (an LLM, with its model and
    pair cache) are kept as the same object.
    """
    if type(value) is EmbeddingVerifier:
        settings = {f.name: getattr(value, f.name) for f in fields(value) if f.init}
        return CandidateEmbeddingVerifier(**settings)
    if isinstance(value, tuple):
        converted = tuple(_on_candidates(v) for v in value)
        changed = any(a is not b for a, b in zip(converted, value, strict=True))
        return converted if changed else value
    if isinstance(value, Stage | Verifier) and is_dataclass(value):
        changes = {}
        for f in fields(value):
            if f.init:
                old = getattr(value, f.name)
                new = _on_candidates(old)
                if new is not old:
                    changes[f.name] = new
        return replace(value, **changes) if changes else value
    return value
