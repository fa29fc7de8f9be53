"""The typed settings of each named strategy, and their defaults: the one place of defaults.

A named strategy (:data:`logic_rag.strategies.STRATEGIES`) is a pipeline built from a
small settings object that holds only what that strategy reads::

    LogicRetriever.build(docs, strategy="verify",
                         settings=VerifySettings(verifier="llm:qwen2.5-coder-1.5b", verifier_top=40))

=====================  ==========================  ====================================
strategy               settings                    its own values (beside the groups)
=====================  ==========================  ====================================
``vanilla``            :class:`VanillaSettings`    none
``rerank``             :class:`RerankSettings`     candidates, truth_weight, positive_prior, tnorm
``setops``             :class:`SetopsSettings`     candidates, cosine_weight, tnorm
``fusion[-product]``   :class:`FusionSettings`     candidates, negation_weight
``orthogonal``         :class:`OrthogonalSettings` none
``splade*``            :class:`SpladeSettings`     negation_weight
``verify``             :class:`VerifySettings`     the pool's values + verifier_top, verifier_weight
``quality``            :class:`QualitySettings`    the checked pool's + bounds, max_calls, delta,
                                                   thresholds
``llm-rerank``         :class:`LLMRerankSettings`  the checked pool's + top
=====================  ==========================  ====================================

Shared groups are composed, not copied: every strategy that checks constraints holds an
``evidence`` (:class:`EvidenceSettings`: the calibrated embedding evidence, which builds
the :class:`~logic_rag.verifiers.embedding.EmbeddingVerifier`) and a ``logic``
(:class:`LogicSettings`: low-confidence fallback, hard exclusion, verdict calibration).
``verify``, ``quality`` and ``llm-rerank`` start from the same candidates and first
ranking, so their settings share one base (the pool's values: candidates, atom
candidates, truth weight, prior, t-norm, the costly verifier and its deadline).

Each object checks its values once, at construction, by building the stages that own
them where a stage does (with a stand-in verifier that never runs), so a bad value fails
when the settings are made, not at the first search. ``to_dict()`` / ``from_dict()``
write and read plain JSON by the one rule of every component (Haystack's
``default_to_dict``: ``{"type": "module.Class", "init_parameters": {...}}``; groups
nested the same way; a verifier as :func:`~logic_rag.verifiers.spec.verifier_spec`
writes it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

from logic_rag.compose.soft_logic import TNorm
from logic_rag.field_checks import check_field_values
from logic_rag.generators.base import check_deadline
from logic_rag.pipeline.exclusion import ExcludeViolations, ExclusionMode
from logic_rag.verifiers.base import Polarity, Verifier, Verify
from logic_rag.verifiers.embedding import EmbeddingVerifier
from logic_rag.verifiers.spec import make_verifier, verifier_spec

__all__ = [
    "QUALITY_VERIFIER",
    "StrategySettings",
    "CheckedSettings",
    "PoolSettings",
    "CheckedPoolSettings",
    "EvidenceSettings",
    "LogicSettings",
    "VanillaSettings",
    "RerankSettings",
    "SetopsSettings",
    "FusionSettings",
    "OrthogonalSettings",
    "SpladeSettings",
    "VerifySettings",
    "QualitySettings",
    "LLMRerankSettings",
    "spec_verifier",
]

#: The costly verifier of ``quality`` and ``llm-rerank`` when their ``verifier`` is None.
QUALITY_VERIFIER = "llm:qwen2.5-coder-1.5b"


class _CheckOnly(Verifier):
    """A verifier that is never run: it lets settings build a stage to check values."""

    name = "check-only"

    def check(self, requests: Any, ctx: Any) -> list[Any]:  # pragma: no cover - never run
        raise RuntimeError("a check-only verifier does not verify")


_CHECK_ONLY = _CheckOnly()


def _served_llm(spec: str) -> bool:
    """Whether verifier ``spec`` is an LLM behind a generator server (``llm:openai:...``),
    the generators that take a ``deadline``."""
    kind, _, generator = spec.strip().partition(":")
    backend = generator.strip().partition(":")[0].strip().lower()
    return kind.strip().lower() == "llm" and backend == "openai"


def spec_verifier(spec: str | Verifier, deadline_s: float | None = None) -> Verifier:
    """The verifier ``spec`` names, built anew (a retriever builds each strategy's pipeline
    once and keeps it, so the verifier's model and pair cache live as long as the
    retriever); an ``llm:openai:`` spec gets ``deadline_s`` when one is given. A verifier
    object is returned as it is."""
    if not isinstance(spec, str):
        return spec
    if deadline_s is not None and _served_llm(spec):
        return make_verifier(spec, generator_options={"deadline": deadline_s})
    return make_verifier(spec)


@dataclass(frozen=True, kw_only=True)
class StrategySettings:
    """Base of every settings class: plain-JSON ``to_dict`` / ``from_dict``."""

    #: Nested settings groups, by field name, that ``from_dict`` rebuilds from dicts.
    _groups: ClassVar[dict[str, type[StrategySettings]]] = {}
    #: Fields that hold a verifier, which ``from_dict`` rebuilds from a spec dict.
    _verifiers: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        # Every value against its annotation first: a NaN weight, "100" as a depth or an
        # unknown t-norm is one clear error here, not zero hits or a KeyError later.
        check_field_values(self)

    def to_dict(self) -> dict[str, Any]:
        """``{"type": "logic_rag.strategy_settings.Class", "init_parameters": {...}}``:
        every field as plain JSON, groups the same way, a verifier as
        :func:`~logic_rag.verifiers.spec.verifier_spec` writes it (its spec string, or
        its own type and parameters). Raises TypeError for a verifier whose values have
        no JSON form."""
        params: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, StrategySettings):
                value = value.to_dict()
            elif isinstance(value, Verifier):
                try:
                    value = verifier_spec(value)
                except TypeError as exc:
                    raise TypeError(
                        f"{type(self).__name__}.{f.name} is the Python object "
                        f"{type(value).__name__}, which has no JSON form ({exc}): give a "
                        f"verifier spec string ('cross-encoder:FOLDER', 'llm:GENERATOR') to "
                        f"write settings out"
                    ) from None
            params[f.name] = value
        return {"type": _type_name(type(self)), "init_parameters": params}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """Settings from :meth:`to_dict`'s dict, or from the plain dict of their fields
        (missing fields keep their defaults). The ``type`` must name this class: it is
        compared, never imported."""
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}.from_dict takes a dict, got {type(data).__name__}")
        if "type" in data:
            if data["type"] != _type_name(cls):
                raise ValueError(f"{cls.__name__}.from_dict got a {str(data['type'])[:120]!r}")
            params = data.get("init_parameters", {})
            if not isinstance(params, dict):
                raise TypeError(f"{cls.__name__}: 'init_parameters' must be an object")
            data = params
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"unknown {cls.__name__} field(s): {', '.join(unknown)}; "
                f"known: {', '.join(sorted(known))}"
            )
        values = dict(data)
        for name, group in cls._groups.items():
            if isinstance(values.get(name), dict):
                values[name] = group.from_dict(values[name])
        for name in cls._verifiers:
            if isinstance(values.get(name), dict):
                values[name] = make_verifier(values[name])
        return cls(**values)


def _type_name(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


@dataclass(frozen=True, kw_only=True)
class EvidenceSettings(StrategySettings):
    """The calibrated embedding evidence every logical strategy starts from.

    Attributes:
        atom_depth: neighbours retrieved per atom; they calibrate the atom and, for
            ``setops``/``fusion``, are candidates.
        threshold_rank: the atom's neighbour at this rank marks p = 0.5.
        temperature: width of the calibration sigmoid, in cosine units.
        passage_weight: share of the best-sentence similarity in an atom's evidence (the
            rest is the whole-document similarity); used when passage vectors exist.
    """

    atom_depth: int = 300
    threshold_rank: int = 20
    temperature: float = 0.1
    passage_weight: float = 0.5

    def __post_init__(self) -> None:
        super().__post_init__()
        self.verifier()  # the verifier owns these values and checks them

    def verifier(self) -> EmbeddingVerifier:
        """The embedding verifier these settings describe."""
        return EmbeddingVerifier(
            atom_depth=self.atom_depth,
            threshold_rank=self.threshold_rank,
            temperature=self.temperature,
            passage_weight=self.passage_weight,
        )


@dataclass(frozen=True, kw_only=True)
class LogicSettings(StrategySettings):
    """How the retriever treats the decomposed logic around a strategy's scoring.

    Attributes:
        min_confidence: decompositions less confident than this fall back to the whole
            query as one atom.
        exclude_violations: hard exclusion: a candidate whose negated atom holds with
            p >= this never outranks one that does not (``None``: soft logic only; see
            :mod:`logic_rag.pipeline.exclusion`).
        exclusion_mode: ``sink`` (violators go below, still listed) or ``drop``.
        verdict_calibration: a file that maps the embedding evidence to P(holds) for the
            ✓ / ✗ / ? verdicts (``DIR/calibration.json`` of ``logic-rag adapt``, or a
            ``fit-cascade`` sample); ``None`` shows the embedding probability itself. The
            ranking ignores it.
    """

    min_confidence: float = 0.0
    exclude_violations: float | None = None
    exclusion_mode: ExclusionMode = "sink"
    verdict_calibration: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.exclude_violations is not None and not 0.0 < self.exclude_violations <= 1.0:
            raise ValueError("exclude_violations must be in (0, 1] (or None to keep soft logic)")
        if self.exclusion_mode not in ("sink", "drop"):
            raise ValueError("exclusion_mode must be 'sink' or 'drop'")

    def exclusion(self) -> ExcludeViolations | None:
        """The hard-exclusion stage these settings ask for (None: soft logic only)."""
        if self.exclude_violations is None:
            return None
        return ExcludeViolations(self.exclude_violations, self.exclusion_mode)


@dataclass(frozen=True, kw_only=True)
class VanillaSettings(StrategySettings):
    """``vanilla`` reads no settings: whole-query dense retrieval, no logic."""


@dataclass(frozen=True, kw_only=True)
class CheckedSettings(StrategySettings):
    """Settings of a strategy that checks constraints: the two shared groups."""

    _groups: ClassVar[dict[str, type[StrategySettings]]] = {
        "evidence": EvidenceSettings,
        "logic": LogicSettings,
    }

    evidence: EvidenceSettings = field(default_factory=EvidenceSettings)
    logic: LogicSettings = field(default_factory=LogicSettings)

    def __post_init__(self) -> None:
        for name, group in self._groups.items():  # before the values: they name the group
            if not isinstance(getattr(self, name), group):
                raise TypeError(
                    f"{type(self).__name__}.{name} must be a {group.__name__}, "
                    f"got {type(getattr(self, name)).__name__}"
                )
        super().__post_init__()
        if getattr(self, "candidates", 1) < 1:
            raise ValueError("candidates must be >= 1")
        if not 0.0 <= getattr(self, "positive_prior", 0.0) <= 1.0:
            raise ValueError("positive_prior must be in [0, 1]")


@dataclass(frozen=True, kw_only=True)
class RerankSettings(CheckedSettings):
    """``rerank``: whole-query candidates re-scored with the soft truth.

    Attributes:
        candidates: whole-query candidates that are re-scored.
        truth_weight: weight of the soft truth added to the cosine prior.
        positive_prior: for a query that negates an atom, the share of the ranking prior
            taken from the positive atoms' mean cosine instead of the whole query's (the
            whole-query embedding of "X that are not Y" also sits near Y); 0 keeps the
            whole-query cosine alone. 0.5 was chosen on the QUEST-attr train split.
        tnorm: ``product`` or ``godel`` (min/max) fuzzy connectives.
    """

    candidates: int = 100
    truth_weight: float = 0.5
    positive_prior: float = 0.5
    tnorm: TNorm = "product"


@dataclass(frozen=True, kw_only=True)
class SetopsSettings(CheckedSettings):
    """``setops``: soft set algebra over the whole query's and each atom's candidates
    (``evidence.atom_depth`` per atom).

    Attributes:
        candidates: whole-query candidates added to the atoms'.
        cosine_weight: weight of the whole-query cosine beside the soft truth.
        tnorm: ``product`` or ``godel`` fuzzy connectives.
    """

    candidates: int = 100
    cosine_weight: float = 0.1
    tnorm: TNorm = "product"


@dataclass(frozen=True, kw_only=True)
class FusionSettings(CheckedSettings):
    """``fusion`` and ``fusion-product``: score fusion of atom evidence.

    Attributes:
        candidates: whole-query candidates added to the atoms' (``evidence.atom_depth``).
        negation_weight: how much a negated atom subtracts.
    """

    candidates: int = 100
    negation_weight: float = 1.0


@dataclass(frozen=True, kw_only=True)
class OrthogonalSettings(CheckedSettings):
    """``orthogonal``: its own ranking is final; the evidence only explains the hits."""


@dataclass(frozen=True, kw_only=True)
class SpladeSettings(CheckedSettings):
    """``splade``, ``splade-compose``, ``splade-nrf``.

    Attributes:
        negation_weight: λ of a negated atom's sparse vector.
    """

    negation_weight: float = 1.0


@dataclass(frozen=True, kw_only=True)
class PoolSettings(CheckedSettings):
    """What ``verify``, ``quality`` and ``llm-rerank`` share: the whole query's and each
    positive atom's candidates with embedding evidence, ranked by prior + soft truth, and
    the costly verifier named by spec.

    Attributes:
        candidates: whole-query candidates.
        atom_candidates: neighbours per positive atom added to them (0: none).
        truth_weight: weight of the soft truth added to the cosine prior.
        positive_prior: as in :class:`RerankSettings`.
        tnorm: ``product`` or ``godel`` fuzzy connectives.
        verifier: the costly verifier: a spec (``cross-encoder:FOLDER``,
            ``llm:qwen2.5-coder-1.5b``) or a :class:`~logic_rag.verifiers.base.Verifier`.
        verifier_atoms: which atoms it checks: ``positive`` (default; relatedness-trained
            models misjudge negated atoms), ``negated`` or ``all``.
        llm_deadline_s: overall time limit, in seconds, of each request an LLM verifier
            named here by spec sends to a generator server (``llm:openai:URL#MODEL``);
            ``None`` keeps the process default
            (:func:`~logic_rag.generators.base.default_deadline`). It does not apply to
            in-process generators, nor to a verifier given as an object.
    """

    _verifiers: ClassVar[tuple[str, ...]] = ("verifier", "cheap")

    candidates: int = 100
    atom_candidates: int = 30
    truth_weight: float = 0.75
    positive_prior: float = 0.5
    tnorm: TNorm = "product"
    verifier: str | Verifier | None = None
    verifier_atoms: Polarity = "positive"
    llm_deadline_s: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.atom_candidates < 0:
            raise ValueError("atom_candidates must be >= 0")
        if self.llm_deadline_s is not None:
            try:
                check_deadline(self.llm_deadline_s)
            except ValueError:
                raise ValueError(
                    f"llm_deadline_s must be a positive number of seconds (or None for the "
                    f"default deadline), got {self.llm_deadline_s!r}"
                ) from None
        if isinstance(self.verifier, str):
            self.spec_verifier(self.verifier)  # a bad spec fails here, not at the first search
        Verify(_CHECK_ONLY, polarity=self.verifier_atoms)

    def spec_verifier(self, spec: str | Verifier) -> Verifier:
        """:func:`spec_verifier` with these settings' ``llm_deadline_s``."""
        return spec_verifier(spec, self.llm_deadline_s)


@dataclass(frozen=True, kw_only=True)
class VerifySettings(PoolSettings):
    """``verify``: every constraint checked by the embedding evidence and, with
    ``verifier``, a second verifier on ``verifier_atoms``.

    Attributes:
        verifier_top: a cascade for costly verifiers: the embedding evidence ranks, the
            second verifier re-checks and re-ranks only the best ``verifier_top``; the
            rest follow in their order (``Cutoff``). ``None`` re-checks every candidate.
        verifier_weight: share of the second verifier's verdict in each re-checked atom's
            probability, the rest staying the embedding evidence (1 replaces it).
    """

    verifier_top: int | None = None
    verifier_weight: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        Verify(
            _CHECK_ONLY,
            top=self.verifier_top,
            weight=self.verifier_weight,
            polarity=self.verifier_atoms,
        )


@dataclass(frozen=True, kw_only=True)
class CheckedPoolSettings(PoolSettings):
    """The pool ``quality`` certifies and ``llm-rerank`` checks.

    Attributes:
        pool: only the best this many candidates by the embedding evidence are
            considered (``None``: every candidate). On QUEST-attr the best 40 were a
            better target than every candidate at k = 5 and a better spend of a budget at
            k = 20 (docs/experiments/2026-11-28-certified-top-k-dev.md).
        cheap: an extra cheap verifier between the embedding evidence and the costly one
            (e.g. ``cross-encoder:FOLDER``); ``None``: the embedding evidence alone.
    """

    pool: int | None = 40
    cheap: str | Verifier | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.pool is not None and self.pool < 1:
            raise ValueError("pool must be >= 1 (or None for every candidate)")
        if isinstance(self.cheap, str):
            self.spec_verifier(self.cheap)

    def costly(self) -> Verifier:
        """The costly verifier: ``verifier``, or :data:`QUALITY_VERIFIER` when None."""
        return self.spec_verifier(self.verifier if self.verifier is not None else QUALITY_VERIFIER)


@dataclass(frozen=True, kw_only=True)
class QualitySettings(CheckedPoolSettings):
    """``quality``: certified top-k verification by the costly verifier
    (:mod:`logic_rag.verifiers.certified`).

    Attributes:
        bounds: how a constraint check the LLM has not made is bounded: ``hard`` ([0, 1];
            the top k is exactly what checking every pair of the pool gives) or
            ``calibrated`` (from ``thresholds``; the same with probability at least
            ``1 - delta``).
        max_calls: the most LLM checks per query (``None``: until the top k is certified).
        delta: the failure probability stated with calibrated bounds.
        thresholds: a labelled sample from ``logic-rag fit-cascade`` (JSON, for this
            corpus, encoder and LLM); required for calibrated bounds.
        verifier_atoms: ``all`` here (NOT atoms too): a certificate covers every
            constraint that decides the top k, and a hit whose NOT was left to the
            embeddings is not certified (``positive`` keeps the older, cheaper reading).
        whole_query: ask the whole query about each page first and the constraints only
            where that verdict is unsure or disagrees with the cheap logic.
    """

    verifier_atoms: Polarity = "all"
    bounds: Literal["hard", "calibrated"] = "hard"
    max_calls: int | None = 60
    delta: float = 0.1
    thresholds: str | None = None
    whole_query: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        from logic_rag.verifiers.certified import CertifiedTopK

        try:
            CertifiedTopK(
                _CHECK_ONLY,
                bounds=self.bounds,
                thresholds=self.thresholds,
                delta=self.delta,
                max_llm_calls=self.max_calls,
            )
        except ValueError as exc:
            raise ValueError(f"quality settings: {exc}") from None


@dataclass(frozen=True, kw_only=True)
class LLMRerankSettings(CheckedPoolSettings):
    """``llm-rerank``: the whole-query LLM peer over the same pool.

    Attributes:
        top: the pages the LLM is asked about (one whole-query check each), the best by
            the same ranking ``quality`` starts from.
    """

    top: int = 40

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.top < 1:
            raise ValueError("top must be >= 1")
