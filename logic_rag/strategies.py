"""Named search strategies: each is one composition of pipeline stages.

``LogicRetriever(strategy="rerank")`` looks the name up here and runs the pipeline it
builds from the retriever's :class:`LogicConfig`. A new strategy is one entry::

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
and half with the positive atoms' mean cosine (``LogicConfig.positive_prior``).
``logic-rag search --help`` lists every strategy; :data:`STRATEGIES` holds them with their
descriptions.
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
from logic_rag.compose.soft_logic import TNorm
from logic_rag.generators.base import check_deadline
from logic_rag.pipeline.exclusion import ExcludeViolations, ExclusionMode
from logic_rag.pipeline.ranking import Backfill, Combine, Cutoff, TopK
from logic_rag.pipeline.stage import Pipeline, Stage
from logic_rag.verifiers.base import Polarity, Verifier, Verify
from logic_rag.verifiers.embedding import CandidateEmbeddingVerifier, EmbeddingVerifier
from logic_rag.verifiers.spec import make_verifier

__all__ = [
    "LogicConfig",
    "Strategy",
    "STRATEGIES",
    "DENSE_STRATEGIES",
    "SPARSE_STRATEGIES",
    "Calibration",
    "pipeline_of",
    "pipeline_over_candidates",
]

Calibration = Literal["candidates", "corpus"]
"""How a pipeline over given candidates calibrates embedding evidence (see
:func:`pipeline_over_candidates`)."""


class _CheckOnly(Verifier):
    """A verifier that is never run: it lets LogicConfig build a stage to check values."""

    name = "check-only"

    def check(self, requests: Any, ctx: Any) -> list[Any]:  # pragma: no cover - never run
        raise RuntimeError("a check-only verifier does not verify")


_CHECK_ONLY = _CheckOnly()


@dataclass(frozen=True)
class LogicConfig:
    """Knobs of the logical strategies; defaults were chosen by measurement (see README).

    Attributes:
        candidates: whole-query candidates that ``rerank`` re-scores (and that ``setops``
            and ``fusion`` add to the atoms' candidates).
        atom_depth: neighbours retrieved per atom; they calibrate the atom and, for
            ``setops``/``fusion``, are candidates.
        threshold_rank: the atom's neighbour at this rank marks p = 0.5.
        temperature: width of the calibration sigmoid, in cosine units.
        passage_weight: share of the best-sentence similarity in an atom's evidence (the
            rest is the whole-document similarity); used when passage vectors exist.
        rerank_weight: weight of the soft truth added to the whole-query score.
        positive_prior: for a query that negates an atom, the share of the ranking prior
            (``rerank`` and ``verify``) taken from the positive atoms' mean cosine instead
            of the whole query's: the whole-query embedding of "X that are not Y" also sits
            near Y. 0 keeps the whole-query cosine alone; queries without a negation are
            unaffected. 0.5 was chosen on the QUEST-attr train split (see README).
        setops_query_weight: weight of the whole-query score inside ``setops``.
        tnorm: ``product`` or ``godel`` (min/max) fuzzy connectives.
        negation_weight: how much ``fusion`` subtracts for a negated atom.
        min_confidence: decompositions less confident than this fall back to ``vanilla``.
        verify_atom_candidates: neighbours per positive atom that ``verify`` adds to the
            whole query's candidates.
        verify_weight: weight of the soft truth added to the whole-query score in
            ``verify``.
        verifier: a second verifier for ``verify`` on top of the embedding evidence: a
            spec (``cross-encoder:FOLDER``, ``llm:qwen2.5-1.5b``) or a :class:`Verifier`;
            ``None`` (default) keeps the embedding evidence alone.
        verifier_atoms: which atoms the second verifier re-checks: ``positive`` (default;
            relatedness-trained models misjudge negated atoms), ``negated`` or ``all``.
        verifier_top: a cascade for costly verifiers: the embedding evidence ranks the
            candidates, the second verifier re-checks and re-ranks only the best
            ``verifier_top`` of them, and the rest follow in their order (``Cutoff``).
            ``None`` re-checks every candidate. On QUEST-attr 40 keeps almost all of the
            LLM's gain (see README).
        verifier_weight: share of the second verifier's verdict in each re-checked atom's
            probability, the rest staying the embedding evidence (1 replaces it). The
            QUEST-trained cross-encoder of the README's table was blended at 0.5.
        quality_bounds: how ``quality`` bounds a constraint check the LLM has not made:
            ``hard`` (default: [0, 1]; the top k is exactly what checking every pair of the
            pool gives) or ``calibrated`` (from ``quality_thresholds``; the same with
            probability at least ``1 - quality_delta``). See
            :mod:`logic_rag.verifiers.certified`.
        quality_max_calls: the most LLM checks ``quality`` makes per query (``None``: until
            the top k is certified).
        quality_pool: ``quality`` and ``llm-rerank`` consider only the best this many
            candidates by the embedding evidence (``None``: every candidate). The
            certificate's target is the all-pairs top k of this pool; on QUEST-attr the
            best 40 were a better target than every candidate at k = 5 (deep pages the
            LLM wrongly confirms) and a better spend of a budget at k = 20
            (docs/experiments/2026-11-28-certified-top-k-dev.md).
        quality_delta: the failure probability stated with calibrated bounds.
        quality_thresholds: a labelled sample from ``logic-rag fit-cascade`` (JSON, for
            this corpus, encoder and LLM); required for calibrated bounds.
        quality_cheap: an extra cheap verifier between the embedding evidence and the
            costly one (e.g. ``cross-encoder:FOLDER``); ``None``: the embedding evidence.
        llm_rerank_top: the pages ``llm-rerank`` asks the LLM about (one whole-query check
            each), the best by the same ranking ``quality`` starts from.
        exclude_violations: hard exclusion: a candidate whose negated atom holds with
            p >= this never outranks one that does not (``None``: soft logic only; see
            :mod:`logic_rag.pipeline.exclusion`). Applies to every strategy that checks
            constraints.
        exclusion_mode: ``sink`` (violators go below, still listed) or ``drop``.
        verdict_calibration: a file that maps the embedding evidence to P(holds) for those
            verdicts (``DIR/calibration.json`` of ``logic-rag adapt``, or a ``fit-cascade``
            sample; :class:`~logic_rag.verifiers.verdicts.EvidenceCalibration`); ``None``
            shows the embedding probability itself. The ranking ignores it.
        llm_deadline_s: overall time limit, in seconds, of each request that an LLM
            verifier named here by spec (``verifier``, ``quality_cheap``, ``quality``'s
            default) sends to a generator server (``llm:openai:URL#MODEL``): every try,
            server and byte together. ``None`` keeps the process default
            (:func:`~logic_rag.generators.base.default_deadline`, 300 s, which ``logic-rag
            --deadline`` sets). In-process generators send no requests; it does not apply
            to them, nor to a verifier given as an object (give its generator a
            ``deadline`` instead).
    """

    candidates: int = 100
    atom_depth: int = 300
    threshold_rank: int = 20
    temperature: float = 0.1
    passage_weight: float = 0.5
    rerank_weight: float = 0.5
    positive_prior: float = 0.5
    setops_query_weight: float = 0.1
    tnorm: TNorm = "product"
    negation_weight: float = 1.0
    min_confidence: float = 0.0
    verify_atom_candidates: int = 30
    verify_weight: float = 0.75
    verifier: str | Verifier | None = None
    verifier_atoms: Polarity = "positive"
    verifier_top: int | None = None
    verifier_weight: float = 1.0
    quality_bounds: Literal["hard", "calibrated"] = "hard"
    quality_max_calls: int | None = 60
    quality_pool: int | None = 40
    quality_delta: float = 0.1
    quality_thresholds: str | None = None
    quality_cheap: str | Verifier | None = None
    llm_rerank_top: int = 40
    exclude_violations: float | None = None
    exclusion_mode: ExclusionMode = "sink"
    llm_deadline_s: float | None = None
    verdict_calibration: str | None = None

    def __post_init__(self) -> None:
        if self.llm_deadline_s is not None:
            try:
                check_deadline(self.llm_deadline_s)
            except ValueError:
                raise ValueError(
                    f"llm_deadline_s must be a positive number of seconds (or None for the "
                    f"default deadline), got {self.llm_deadline_s!r}"
                ) from None
        if self.exclude_violations is not None and not 0.0 < self.exclude_violations <= 1.0:
            raise ValueError("exclude_violations must be in (0, 1] (or None to keep soft logic)")
        if self.exclusion_mode not in ("sink", "drop"):
            raise ValueError("exclusion_mode must be 'sink' or 'drop'")
        if self.quality_pool is not None and self.quality_pool < 1:
            raise ValueError("quality_pool must be >= 1 (or None for every candidate)")
        if self.llm_rerank_top < 1:
            raise ValueError("llm_rerank_top must be >= 1")
        if self.candidates < 1:
            raise ValueError("candidates must be >= 1")
        if self.verify_atom_candidates < 0:
            raise ValueError("verify_atom_candidates must be >= 0")
        if not 0.0 <= self.positive_prior <= 1.0:
            raise ValueError("positive_prior must be in [0, 1]")
        if isinstance(self.verifier, str):
            self.spec_verifier(self.verifier)  # a bad spec fails here, not at the first search
        # The other values are checked once, by the stages that own them, built here
        # without loading anything (the LLM stage gets a stand-in verifier).
        self.embedding_verifier()
        Verify(
            _CHECK_ONLY,
            top=self.verifier_top,
            weight=self.verifier_weight,
            polarity=self.verifier_atoms,
        )
        from logic_rag.verifiers.certified import CertifiedTopK

        try:
            CertifiedTopK(
                _CHECK_ONLY,
                bounds=self.quality_bounds,
                thresholds=self.quality_thresholds,
                delta=self.quality_delta,
                max_llm_calls=self.quality_max_calls,
            )
        except ValueError as exc:
            raise ValueError(f"quality settings: {exc}") from None

    def spec_verifier(self, spec: str | Verifier) -> Verifier:
        """The verifier ``spec`` names, built anew (a retriever builds each strategy's
        pipeline once and keeps it, so the verifier's model and pair cache live as long
        as the retriever); an ``llm:openai:`` spec gets :attr:`llm_deadline_s`. A verifier
        object is returned as it is."""
        if not isinstance(spec, str):
            return spec
        if self.llm_deadline_s is not None and _served_llm(spec):
            return make_verifier(spec, generator_options={"deadline": self.llm_deadline_s})
        return make_verifier(spec)

    def embedding_verifier(self) -> EmbeddingVerifier:
        return EmbeddingVerifier(
            atom_depth=self.atom_depth,
            threshold_rank=self.threshold_rank,
            temperature=self.temperature,
            passage_weight=self.passage_weight,
        )


@dataclass(frozen=True)
class Strategy:
    """A named composition: ``build(config)`` returns its pipeline.

    ``decompose`` is False for strategies that ignore the logic (``vanilla``), so they
    skip the decomposer; ``needs_sparse`` marks the SPLADE ones.
    """

    name: str
    description: str
    build: Callable[[LogicConfig], Stage]
    decompose: bool = True
    needs_sparse: bool = False


def _served_llm(spec: str) -> bool:
    """Whether verifier ``spec`` is an LLM behind a generator server (``llm:openai:...``),
    the generators that take a ``deadline``."""
    kind, _, generator = spec.strip().partition(":")
    backend = generator.strip().partition(":")[0].strip().lower()
    return kind.strip().lower() == "llm" and backend == "openai"


def _prior_and(cfg: LogicConfig, *, truth: float) -> Combine:
    """Cosine prior (whole query, blended with the positive part under a negation) + truth."""
    a = cfg.positive_prior
    return Combine.of(cosine=1.0 - a, positive_cosine=a, truth=truth)


def _candidates_with_evidence(cfg: LogicConfig) -> Stage:
    """The whole query's candidates and each positive atom's, with embedding evidence:
    where ``verify``, ``quality`` and ``llm-rerank`` start."""
    pipeline: Stage = DenseCandidates(cfg.candidates)
    if cfg.verify_atom_candidates:
        pipeline = pipeline >> AtomCandidates(cfg.verify_atom_candidates)
    return pipeline >> Verify(cfg.embedding_verifier())


def _verify(cfg: LogicConfig) -> Stage:
    pipeline = _candidates_with_evidence(cfg)
    if cfg.verifier is not None:
        second = cfg.spec_verifier(cfg.verifier)
        if cfg.verifier_top is not None:
            # A cascade: the embedding evidence ranks, the second verifier re-ranks the best
            # verifier_top; the rest keep their order below (Backfill).
            pipeline = (
                pipeline
                >> SoftLogic(cfg.tnorm)
                >> _prior_and(cfg, truth=cfg.verify_weight)
                >> Cutoff(cfg.verifier_top)
            )
        pipeline = pipeline >> Verify(
            second, polarity=cfg.verifier_atoms, weight=cfg.verifier_weight
        )
    return (
        pipeline
        >> SoftLogic(cfg.tnorm)
        >> _prior_and(cfg, truth=cfg.verify_weight)
        >> TopK()
        >> Backfill()
    )


#: The costly verifier of ``quality`` and ``llm-rerank`` when ``LogicConfig.verifier``
#: names none.
QUALITY_VERIFIER = "llm:qwen2.5-1.5b"


def _checked_pool(cfg: LogicConfig) -> Stage:
    """``verify``'s candidates with their embedding evidence (and the optional extra cheap
    verifier), ranked by cosine + soft truth, cut to ``quality_pool``: the pool that
    ``quality`` certifies and ``llm-rerank`` checks."""
    pipeline = _candidates_with_evidence(cfg)
    if cfg.quality_cheap is not None:
        cheap = cfg.spec_verifier(cfg.quality_cheap)
        pipeline = pipeline >> Verify(cheap, polarity=cfg.verifier_atoms)
    pipeline = pipeline >> SoftLogic(cfg.tnorm) >> _prior_and(cfg, truth=cfg.verify_weight)
    if cfg.quality_pool is not None:
        pipeline = pipeline >> Cutoff(cfg.quality_pool)
    return pipeline


def _costly(cfg: LogicConfig) -> Verifier:
    return cfg.spec_verifier(cfg.verifier if cfg.verifier is not None else QUALITY_VERIFIER)


def _quality(cfg: LogicConfig) -> Stage:
    """The checked pool, then certified top-k verification by the LLM."""
    from logic_rag.verifiers.certified import CertifiedTopK

    prior = _prior_and(cfg, truth=cfg.verify_weight)
    return (
        _checked_pool(cfg)
        >> CertifiedTopK(
            _costly(cfg),
            prior=tuple((n, w) for n, w in prior.weights if n != "truth"),
            truth_weight=cfg.verify_weight,
            tnorm=cfg.tnorm,
            polarity=cfg.verifier_atoms,
            bounds=cfg.quality_bounds,
            thresholds=cfg.quality_thresholds,
            delta=cfg.quality_delta,
            max_llm_calls=cfg.quality_max_calls,
        )
        >> SoftLogic(cfg.tnorm)
        >> prior
        >> TopK()
        >> Backfill()
    )


def _llm_rerank(cfg: LogicConfig) -> Stage:
    """The peer: the same pool's best ``llm_rerank_top`` pages, each checked once by the
    same LLM with the whole query as the question, ranked by prior + that verdict."""
    from logic_rag.verifiers.whole_query import QUERY_VERDICT, WholeQueryVerify

    a = cfg.positive_prior
    return (
        _checked_pool(cfg)
        >> Cutoff(cfg.llm_rerank_top)
        >> WholeQueryVerify(_costly(cfg))
        >> Combine.of(cosine=1.0 - a, positive_cosine=a, **{QUERY_VERDICT: cfg.verify_weight})
        >> TopK()
        >> Backfill()
    )


def _vanilla(cfg: LogicConfig) -> Stage:
    return DenseCandidates() >> Combine.of(dense=1.0) >> TopK()


def _rerank(cfg: LogicConfig) -> Stage:
    return (
        DenseCandidates(cfg.candidates)
        >> Verify(cfg.embedding_verifier())
        >> SoftLogic(cfg.tnorm)
        >> _prior_and(cfg, truth=cfg.rerank_weight)
        >> TopK()
        >> Backfill()
    )


def _atom_pool(cfg: LogicConfig) -> Stage:
    return DenseCandidates(cfg.candidates) >> AtomCandidates(cfg.atom_depth)


def _setops(cfg: LogicConfig) -> Stage:
    return (
        _atom_pool(cfg)
        >> Verify(cfg.embedding_verifier())
        >> SoftLogic(cfg.tnorm)
        >> Combine.of(truth=1.0, cosine=cfg.setops_query_weight)
        >> TopK()
        >> Backfill()
    )


def _fusion(op: str) -> Callable[[LogicConfig], Stage]:
    def build(cfg: LogicConfig) -> Stage:
        return (
            _atom_pool(cfg)
            >> Verify(cfg.embedding_verifier())
            >> ScoreFusion(op, cfg.negation_weight)  # type: ignore[arg-type]
            >> Combine.of(fusion=1.0)
            >> TopK()
            >> Backfill()
        )

    return build


def _explained(source: Stage, signal: str) -> Callable[[LogicConfig], Stage]:
    """A strategy whose own ranking is final; the embedding verifier only explains it."""

    def build(cfg: LogicConfig) -> Stage:
        return source >> Verify(cfg.embedding_verifier()) >> Combine.of(**{signal: 1.0}) >> TopK()

    return build


def _splade(mode: str) -> Callable[[LogicConfig], Stage]:
    def build(cfg: LogicConfig) -> Stage:
        source = SpladeCandidates(mode, negation_weight=cfg.negation_weight)  # type: ignore[arg-type]
        return _explained(source, "splade")(cfg)

    return build


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("vanilla", "whole-query dense retrieval, no logic", _vanilla, decompose=False),
        Strategy(
            "rerank",
            "whole-query candidates re-scored with the soft truth of the decomposed query",
            _rerank,
        ),
        Strategy(
            "setops",
            "soft set algebra over calibrated atom evidence; candidates from the whole query "
            "and each positive atom",
            _setops,
        ),
        Strategy(
            "verify",
            "whole-query and per-atom candidates; every constraint checked by the embedding "
            "verifier (and optionally a cross-encoder or LLM), ranked by cosine + soft truth",
            _verify,
        ),
        Strategy(
            "quality",
            "verify's candidates; an LLM checks the constraints that decide the top k "
            "(certified top-k verification: its work scales with k, not the pool)",
            _quality,
        ),
        Strategy(
            "llm-rerank",
            "the whole-query LLM peer: the same LLM asked once per page with the whole "
            "query as the question, over the same pool",
            _llm_rerank,
        ),
        Strategy("fusion", "score fusion of atom evidence: AND +, OR max, NOT −", _fusion("sum")),
        Strategy("fusion-product", "score fusion with AND as a product", _fusion("product")),
        Strategy(
            "orthogonal",
            "the query vector projected away from negated atoms",
            _explained(OrthogonalCandidates(), "orthogonal"),
        ),
        Strategy("splade", "whole-query SPLADE", _splade("query"), needs_sparse=True),
        Strategy(
            "splade-compose",
            "Krasakis et al.: AND -> combined pseudo-terms, OR -> MaxPool, NOT -> "
            "disentangled negation",
            _splade("compose"),
            needs_sparse=True,
        ),
        Strategy(
            "splade-nrf",
            "SPLADE: AND -> sum, OR -> MaxPool, NOT -> A − λB",
            _splade("nrf"),
            needs_sparse=True,
        ),
    )
}

DENSE_STRATEGIES = tuple(n for n, s in STRATEGIES.items() if not s.needs_sparse)
SPARSE_STRATEGIES = tuple(n for n, s in STRATEGIES.items() if s.needs_sparse)


def _strategy(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(
            f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}"
        ) from None


def pipeline_of(name: str, config: LogicConfig) -> Pipeline:
    """The pipeline of strategy ``name`` (a clear error for unknown names).

    With ``config.exclude_violations`` set, :class:`ExcludeViolations` goes before the
    first ``TopK`` of every strategy that checks constraints.
    """
    strategy = _strategy(name)
    built = strategy.build(config)
    pipeline = built if isinstance(built, Pipeline) else Pipeline((built,))
    if config.exclude_violations is None or not strategy.decompose:
        return pipeline
    stages = list(pipeline)
    at = next((i for i, s in enumerate(stages) if isinstance(s, TopK)), None)
    if at is None:
        return pipeline
    stages.insert(at, ExcludeViolations(config.exclude_violations, config.exclusion_mode))
    return Pipeline(stages)


#: Candidate sources that search the index with the query or its atoms. Over given
#: candidates the index *is* the candidates, so the given source stands in for them.
_QUERY_SOURCES = (DenseCandidates, AtomCandidates)


def pipeline_over_candidates(
    name: str,
    config: LogicConfig,
    given: GivenCandidates,
    *,
    calibration: Calibration = "candidates",
) -> Pipeline:
    """Strategy ``name``'s pipeline run over candidates another retriever chose.

    A reranker's index holds only its candidates, so the strategy's own stages run
    unchanged (every :class:`LogicConfig` knob applies as in a retriever) except:

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
    for stage in pipeline_of(name, config):
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
