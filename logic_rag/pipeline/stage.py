"""Stages and their composition: ``a >> b >> c`` is a :class:`Pipeline`.

A stage is a small frozen dataclass (its fields are its whole configuration, so two
stages with the same settings compare equal and hash alike, and a pipeline can be
described, compared and recorded in reports). It works on a whole batch of queries:

* :meth:`Stage.prepare` declares which query-side texts it will encode or search, so the
  pipeline encodes everything in one encoder call and searches it in one index call;
* :meth:`Stage.run` reads and fills the batch's :class:`~logic_rag.pipeline.state.QueryState`.

Adding a stage (a candidate source, a verifier) is one new class in one file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.state import SearchBatch

__all__ = ["Stage", "Pipeline"]


class Stage:
    """Base class of every pipeline stage (subclasses are frozen dataclasses)."""

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
    """Stages run in order over one batch; built with ``>>``."""

    def __init__(self, stages: Iterable[Stage]) -> None:
        self.stages: tuple[Stage, ...] = tuple(s for stage in stages for s in _flatten(stage))
        if not self.stages:
            raise ValueError("a pipeline needs at least one stage")
        for stage in self.stages:
            if not isinstance(stage, Stage):
                raise TypeError(f"{stage!r} is not a pipeline Stage")

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


#: Only classes from these packages are rebuilt by :func:`component_from_dict`: a
#: configuration file names code to run, so it may name only ours.
_LOADABLE = ("logic_rag.",)


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
    """Rebuild what :func:`component_to_dict` (or ``Pipeline.to_dict``) wrote."""
    import importlib

    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ValueError("a component is an object with a 'type' string")
    name = data["type"]
    module_name, _, class_name = name.rpartition(".")
    if not name.startswith(_LOADABLE) or not module_name:
        raise ValueError(f"refusing to load {name!r}: only logic_rag stages and verifiers load")
    try:
        kind = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError):
        raise ValueError(f"unknown component type {name!r}") from None
    if kind is Pipeline:
        stages = data.get("stages")
        if not isinstance(stages, list):
            raise ValueError("a Pipeline needs a 'stages' list")
        return Pipeline(component_from_dict(s) for s in stages)
    params = data.get("init_parameters", {})
    if not isinstance(params, dict):
        raise ValueError(f"{name}: 'init_parameters' must be an object")
    return kind(**{k: _from_plain(v) for k, v in params.items()})


def _from_plain(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_from_plain(v) for v in value)
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return component_from_dict(value)
    if isinstance(value, dict):
        return {k: _from_plain(v) for k, v in value.items()}
    return value
