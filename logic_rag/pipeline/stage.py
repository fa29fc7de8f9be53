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

    def describe(self) -> str:
        return " >> ".join(s.describe() for s in self.stages)

    def __repr__(self) -> str:
        return f"Pipeline({self.describe()})"
