"""Stages and their composition: ``a >> b >> c`` is a :class:`Pipeline`.

A stage is a small frozen dataclass (its fields are its whole configuration, so two
stages with the same settings compare equal and hash alike, and a pipeline can be
described, compared and recorded in reports). It works on a whole batch of queries:

* :meth:`Stage.prepare` declares which query-side texts it will encode or search, so the
  pipeline encodes everything in one encoder call and searches it in one index call;
* :meth:`Stage.run` reads and fills the batch's :class:`~logic_rag.pipeline.state.QueryState`.

Every stage declares the state fields it reads (``needs``) and writes (``fills``): names
of :class:`~logic_rag.pipeline.state.QueryState` fields, or ``signals.NAME`` for one
signal (a candidate source makes its ranking readable as the signal of its name). A
:class:`Pipeline` that starts a search checks the order when it is built (Haystack's
``Pipeline.connect``, PyTerrier's ``validate``), so a wrong order fails there, naming the
stage and the field, instead of in the middle of a search.

Adding a stage (a candidate source, a verifier) is one new class in one file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.state import SearchBatch

__all__ = ["Stage", "Pipeline", "GIVEN", "check_order", "signal_needs"]

#: What a fresh :class:`~logic_rag.pipeline.state.QueryState` already holds: the query's
#: plan (and its empty ``info`` / ``trace`` notes). Everything else some stage fills.
GIVEN: frozenset[str] = frozenset({"plan", "info", "trace"})

#: Signals :func:`~logic_rag.pipeline.ranking.signal` computes from the candidates alone.
_COMPUTED_SIGNALS = frozenset({"cosine", "positive_cosine"})

#: What to put before a stage that needs a field nothing fills (the error's advice).
_FILLED_BY = {
    "candidates": "a candidate source (DenseCandidates, GivenCandidates, ...)",
    "sources": "a candidate source (DenseCandidates, GivenCandidates, ...)",
    "probs": "a Verify stage",
    "evidence": "a Verify stage",
    "score": "a Combine stage",
    "ranked": "a TopK stage",
    "signals.truth": "a SoftLogic stage",
    "signals.fusion": "a ScoreFusion stage",
    "signals.query_verdict": "a WholeQueryVerify stage",
    "signals.query_truth": "CertifiedTopK(whole_query=True)",
}


def _filler(need: str) -> str:
    """What fills ``need``, in words (the error's advice)."""
    if need in _FILLED_BY:
        return _FILLED_BY[need]
    head, _, name = need.partition(".")
    if head == "signals":
        return f"a candidate source named {name!r} or the stage that computes signal {name!r}"
    return "a stage that fills it"


def signal_needs(names: Iterable[str]) -> frozenset[str]:
    """The fields that reading signals ``names`` needs: the candidates for the cosines,
    the sources for ``rrf``, else the signal itself (``signals.NAME``)."""
    needs = {"candidates"}
    for name in names:
        if name == "rrf":
            needs.add("sources")
        elif name not in _COMPUTED_SIGNALS:
            needs.add(f"signals.{name}")
    return frozenset(needs)


class Stage:
    """Base class of every pipeline stage (subclasses are frozen dataclasses)."""

    #: A configuration file may name this class (with its module on the allow-list of
    #: :func:`component_from_dict`). Stages and verifiers say so by inheritance, so the
    #: loader needs no import of the verifier interface, which itself builds on stages.
    json_loadable: ClassVar[bool] = True

    #: The state fields this stage reads (``signals.NAME``: one signal); a stage whose
    #: needs depend on its settings says so in :meth:`needed`.
    needs: ClassVar[frozenset[str]] = frozenset()
    #: The state fields this stage writes (see :meth:`filled`).
    fills: ClassVar[frozenset[str]] = frozenset()

    def needed(self) -> frozenset[str]:
        """The fields this stage, as configured, reads: an earlier stage must fill them."""
        return self.needs

    def filled(self) -> frozenset[str]:
        """The fields this stage, as configured, writes for the stages after it."""
        return self.fills

    def check_place(self, after: tuple[Stage, ...]) -> None:
        """Raise ValueError when the stages ``after`` this one cannot follow it; default:
        any can (the fields are checked by :class:`Pipeline` itself)."""

    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        """Declare the texts to encode / search (``ctx.want``); default: nothing."""

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        """Do the stage's work on every query of ``batch``."""
        raise NotImplementedError

    def config(self) -> dict[str, Any]:
        """The stage's settings (its dataclass fields), for reports and comparisons."""
        if dataclasses.is_dataclass(self):
            return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return {}

    def describe(self) -> str:
        """``Name(setting=value, …)``: one line that identifies the stage."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"{type(self).__name__}({args})"

    def to_dict(self) -> dict[str, Any]:
        """The stage as plain JSON, in Haystack's shape: ``{"type": "module.Class",
        "init_parameters": {...}}``; nested stages and verifiers the same way, tuples as
        lists. Fields that hold no configuration (caches) are left out."""
        return component_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Stage:
        """The stage (or pipeline) :meth:`to_dict` described; only logic-rag types load."""
        built = component_from_dict(data)
        if not isinstance(built, Stage):
            raise TypeError(f"{data.get('type')!r} is not a pipeline Stage")
        return built

    def __rshift__(self, other: Stage) -> Pipeline:
        return Pipeline((*_flatten(self), *_flatten(other)))

    def __call__(self, batch: SearchBatch, ctx: SearchContext) -> SearchBatch:
        Pipeline((self,))(batch, ctx)
        return batch


def _stage_name(stage: Stage, at: int) -> str:
    return f"{type(stage).__name__} (stage {at + 1})"


def check_order(stages: tuple[Stage, ...], given: frozenset[str] = GIVEN) -> None:
    """Raise ValueError naming the first stage that needs a field which neither ``given``
    nor an earlier stage fills (and the later stage that fills it, if one does), or whose
    place :meth:`Stage.check_place` refuses."""
    have = set(given)
    for at, stage in enumerate(stages):
        for need in sorted(stage.needed() - have):
            later = next(
                (j for j in range(at + 1, len(stages)) if need in stages[j].filled()), None
            )
            if later is not None:
                where = _stage_name(stages[later], later)
                advice = f"{where} fills it, but after it: move that stage before it"
            else:
                advice = f"put {_filler(need)} before it"
            raise ValueError(
                f"{_stage_name(stage, at)} needs {need!r}, which no earlier stage fills: {advice}"
            )
        stage.check_place(stages[at + 1 :])
        have |= stage.filled()


def _plain(value: Any) -> Any:
    if isinstance(value, Stage):
        return value.describe()
    if hasattr(value, "describe") and callable(value.describe):
        return value.describe()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def _flatten(stage: Stage) -> tuple[Stage, ...]:
    return stage.stages if isinstance(stage, Pipeline) else (stage,)


class Pipeline(Stage):
    """Stages run in order over one batch; built with ``>>``.

    A pipeline that starts a search (its first stage needs only what a fresh state
    holds: a candidate source) is checked when it is built: every stage's needs must be
    filled by an earlier stage (:func:`check_order`). A pipeline that starts further on
    (``SoftLogic() >> WholeQueryTruth()``) is a part to put after others: its unmet needs
    are its own :meth:`needed`, checked once it is composed after a start.
    """

    def __init__(self, stages: Iterable[Stage]) -> None:
        self.stages: tuple[Stage, ...] = tuple(s for stage in stages for s in _flatten(stage))
        if not self.stages:
            raise ValueError("a pipeline needs at least one stage")
        from logic_rag.field_checks import check_field_values

        for stage in self.stages:
            if not isinstance(stage, Stage):
                raise TypeError(f"{stage!r} is not a pipeline Stage")
            check_field_values(stage)  # NaN weights, "100" depths, unknown t-norms
        if self.starts_search:
            check_order(self.stages)

    @property
    def starts_search(self) -> bool:
        """Whether the first stage needs only what a fresh query state holds."""
        return self.stages[0].needed() <= GIVEN

    def needed(self) -> frozenset[str]:
        have, need = set(GIVEN), set()
        for stage in self.stages:
            need |= stage.needed() - have
            have |= stage.filled()
        return frozenset(need)

    def filled(self) -> frozenset[str]:
        return frozenset().union(*(s.filled() for s in self.stages))

    def __iter__(self) -> Iterator[Stage]:
        return iter(self.stages)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pipeline) and self.stages == other.stages

    def __hash__(self) -> int:
        return hash(self.stages)

    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for stage in self.stages:
            stage.prepare(batch, ctx)

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for stage in self.stages:
            stage.run(batch, ctx)

    def __call__(self, batch: SearchBatch, ctx: SearchContext) -> SearchBatch:
        self.prepare(batch, ctx)
        ctx.run_wanted()
        self.run(batch, ctx)
        return batch

    def until(self, kind: type[Stage] | tuple[type[Stage], ...]) -> tuple[Pipeline, Stage]:
        """The stages before the first of type ``kind``, and that stage: what a fit runs
        to reach the stage it fits (PyTerrier's ``fit`` shape)."""
        for at, stage in enumerate(self.stages):
            if isinstance(stage, kind):
                if at == 0:
                    raise ValueError(
                        f"{type(stage).__name__} is the first stage: nothing before it"
                    )
                return Pipeline(self.stages[:at]), stage
        names = kind.__name__ if isinstance(kind, type) else ", ".join(k.__name__ for k in kind)
        raise ValueError(f"no {names} stage in {self.describe()}")

    def config(self) -> dict[str, Any]:
        return {"stages": [s.describe() for s in self.stages]}

    def to_dict(self) -> dict[str, Any]:
        return {"type": _type_name(Pipeline), "stages": [s.to_dict() for s in self.stages]}

    def describe(self) -> str:
        return " >> ".join(s.describe() for s in self.stages)

    def __repr__(self) -> str:
        return f"Pipeline({self.describe()})"


#: The only modules :func:`component_from_dict` imports: those that define the pipeline's
#: stages and verifiers. A configuration file names code to run, so a type is resolved
#: against this list (and checked to be a stage or verifier dataclass defined there)
#: before any module outside it is imported or anything is constructed; a JSON file that
#: names ``logic_rag.atomic.atomic_write_text`` or ``logic_rag.__main__`` is refused
#: without importing it (issue 51 item 1).
_LOADABLE_MODULES = frozenset(
    {
        "logic_rag.pipeline.stage",
        "logic_rag.pipeline.ranking",
        "logic_rag.pipeline.exclusion",
        "logic_rag.compose.logic",
        "logic_rag.compose.score",
        "logic_rag.candidates.atoms",
        "logic_rag.candidates.bm25",
        "logic_rag.candidates.dense",
        "logic_rag.candidates.given",
        "logic_rag.candidates.orthogonal",
        "logic_rag.candidates.splade",
        "logic_rag.verifiers.base",
        "logic_rag.verifiers.embedding",
        "logic_rag.verifiers.llm",
        "logic_rag.verifiers.cross_encoder",
        "logic_rag.verifiers.cascade",
        "logic_rag.verifiers.certified",
        "logic_rag.verifiers.whole_query",
    }
)

#: How deep components may nest inside one another in a configuration file.
_MAX_COMPONENT_DEPTH = 32


def _type_name(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


def component_to_dict(value: Any) -> dict[str, Any]:
    """A stage or verifier (a dataclass) as ``{"type", "init_parameters"}`` plain JSON."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        raise TypeError(f"{type(value).__name__} is not a dataclass stage or verifier")
    params = {
        f.name: _plain_value(getattr(value, f.name), f"{type(value).__name__}.{f.name}")
        for f in dataclasses.fields(value)
        if f.init and f.compare
    }
    return {"type": _type_name(type(value)), "init_parameters": params}


def _plain_value(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):
        return [_plain_value(v, where) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain_value(v, where) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return component_to_dict(value)
    raise TypeError(
        f"{where} holds a {type(value).__name__}, which has no plain-JSON form; give it as a "
        f"spec string (a model name, 'llm:GENERATOR') to serialise the pipeline"
    )


def component_from_dict(data: Any) -> Any:
    """Rebuild what :func:`component_to_dict` (or ``Pipeline.to_dict``) wrote.

    Every ``type`` in ``data``, however deeply nested, is resolved and checked against
    the allow-list (:data:`_LOADABLE_MODULES`: a stage or verifier dataclass defined
    there, with only its own init fields given) before anything is constructed; a type
    outside it is refused without importing its module.
    """
    _check_components(data, 0)
    return _build(data)


def _allowed_type(name: Any) -> type:
    """The stage or verifier class ``name`` names, if the allow-list admits it."""
    if not isinstance(name, str):
        raise ValueError("a component is an object with a 'type' string")
    module_name, _, class_name = name.rpartition(".")
    if module_name not in _LOADABLE_MODULES or not class_name.isidentifier():
        raise ValueError(
            f"refusing to load {name[:120]!r}: only logic_rag stages and verifiers load "
            f"(the classes of logic_rag.pipeline, .candidates, .compose.logic, .compose.score and "
            f".verifiers)"
        )
    import importlib

    kind = vars(importlib.import_module(module_name)).get(class_name)
    if (
        not isinstance(kind, type)
        or class_name.startswith("_")
        or kind.__module__ != module_name
        or not (
            kind is Pipeline
            or (dataclasses.is_dataclass(kind) and getattr(kind, "json_loadable", False) is True)
        )
    ):
        raise ValueError(f"unknown component type {name[:120]!r}")
    return kind


def _check_components(data: Any, depth: int) -> None:
    """Resolve every component type in ``data`` (and check its parameter names) without
    constructing anything; iterative over lists and plain dicts, bounded in depth."""
    if depth > _MAX_COMPONENT_DEPTH:
        raise ValueError(f"components nested more than {_MAX_COMPONENT_DEPTH} levels deep")
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ValueError("a component is an object with a 'type' string")
    name = data["type"]
    kind = _allowed_type(name)
    if kind is Pipeline:
        stages = data.get("stages")
        if not isinstance(stages, list):
            raise ValueError("a Pipeline needs a 'stages' list")
        for stage in stages:
            _check_components(stage, depth + 1)
        return
    params = data.get("init_parameters", {})
    if not isinstance(params, dict):
        raise ValueError(f"{name}: 'init_parameters' must be an object")
    known = {f.name for f in dataclasses.fields(kind) if f.init}
    unknown = sorted(str(k)[:40] for k in params if k not in known)
    if unknown:
        raise ValueError(
            f"{name}: unknown parameter(s) {', '.join(unknown)}; known: "
            f"{', '.join(sorted(known)) or 'none'}"
        )
    stack = [(v, depth + 1) for v in params.values()]
    while stack:
        value, level = stack.pop()
        if level > _MAX_COMPONENT_DEPTH:
            raise ValueError(f"{name}: a value nests more than {_MAX_COMPONENT_DEPTH} levels deep")
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            _check_components(value, level)
        elif isinstance(value, dict):
            stack.extend((v, level + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, level + 1) for v in value)


def _build(data: dict[str, Any]) -> Any:
    """Construct what :func:`_check_components` admitted."""
    name = data["type"]
    kind = _allowed_type(name)
    if kind is Pipeline:
        return Pipeline(_build(s) for s in data["stages"])
    params = data.get("init_parameters", {})
    try:
        return kind(**{k: _from_plain(v) for k, v in params.items()})
    except TypeError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _from_plain(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_from_plain(v) for v in value)
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return _build(value)
    if isinstance(value, dict):
        return {k: _from_plain(v) for k, v in value.items()}
    return value
