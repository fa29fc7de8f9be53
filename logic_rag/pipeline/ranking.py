"""The last stages: combine signals into a score, keep the top k, continue the ranking.

* :class:`Combine` scores every candidate as a weighted sum of named signals: ``cosine``
  (whole-query cosine, computed for every candidate), ``positive_cosine`` (the mean cosine
  of the query's positive atoms when the query negates one, else ``cosine``), ``truth``
  (soft logic), ``fusion``,
  ``rrf`` (reciprocal-rank fusion of the candidate sources), or any source's own score by
  its name (``dense``, ``bm25``, ``splade`` …; documents it did not return score below
  its lowest).
* :class:`TopK` orders the candidates by score and keeps the batch's ``k``.
* :class:`Cutoff` keeps the best ``n`` candidates by the current score for the stages after
  it (PyTerrier's ``%``), so a costly verifier re-ranks only what cheaper evidence ranked
  high; the rest keep their order below.
* :class:`Backfill` continues below the scored candidates when fewer than ``k`` remain
  (PyTerrier's ``^``): first what a :class:`Cutoff` set aside, then the whole-query dense
  ranking, so a query never returns fewer hits than plain retrieval would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage, signal_needs
from logic_rag.pipeline.state import QueryState, SearchBatch
from logic_rag.query.algebra import positive_atoms

__all__ = ["Combine", "TopK", "Cutoff", "Backfill", "signal", "positive_texts"]

#: Reciprocal-rank-fusion constant (Cormack et al.).
RRF_K = 60


def positive_texts(state: QueryState) -> list[str]:
    """The texts whose mean cosine is ``positive_cosine``: the positive atoms of a query
    that negates something, else (no negation, or nothing positive) the whole query.

    Why: a whole-query embedding of "crime films that are not set in England" sits near
    the films set in England too, so as a ranking prior it pulls towards what the query
    excludes. The positive atoms' embeddings do not carry the negated words.
    """
    if not state.plan.negated:
        return [state.plan.text]
    texts = list(dict.fromkeys(a.text for a in positive_atoms(state.plan.logic)))
    return texts or [state.plan.text]


def signal(state: QueryState, name: str, ctx: SearchContext) -> np.ndarray:
    """The per-candidate values of signal ``name`` (computed and stored on first use)."""
    if name in state.signals:
        return state.signals[name]
    if name == "cosine":
        query = ctx.vectors([state.plan.text])[0]
        values = ctx.resources.doc_vectors()[state.candidates] @ query
    elif name == "positive_cosine":
        texts = positive_texts(state)
        if texts == [state.plan.text]:
            values = signal(state, "cosine", ctx).copy()
        else:
            values = (ctx.resources.doc_vectors()[state.candidates] @ ctx.vectors(texts).T).mean(1)
    elif name == "rrf":
        values = np.zeros(len(state.candidates))
        position = {d: i for i, d in enumerate(state.candidates.tolist())}
        for ranked in state.sources.values():
            for rank, doc in enumerate(ranked.ids.tolist(), 1):
                values[position[doc]] += 1.0 / (RRF_K + rank)
    elif name in state.sources:
        ranked = state.sources[name]
        by_doc = dict(zip(ranked.ids.tolist(), ranked.scores.tolist(), strict=True))
        floor = (min(by_doc.values()) if by_doc else 0.0) - 1.0
        values = np.array([by_doc.get(d, floor) for d in state.candidates.tolist()])
    else:
        known = ["cosine", "positive_cosine", "rrf", *state.signals, *state.sources]
        raise KeyError(
            f"no signal {name!r} for this query; known here: {', '.join(known)}. A signal "
            f"like 'truth' needs its stage (SoftLogic) earlier in the pipeline"
        )
    state.set_signal(name, values)
    return state.signals[name]


@dataclass(frozen=True)
class Combine(Stage):
    """``score = Σ weight × signal``; ``weights`` is a tuple of ``(signal, weight)``.

    Build it as ``Combine.of(cosine=1.0, truth=0.5)``. With ``single`` set, a query whose
    logic has a single atom (nothing to combine) is scored by that signal alone, so plain
    queries are not changed by the logic stages.
    """

    weights: tuple[tuple[str, float], ...]
    single: str | None = None

    needs: ClassVar[frozenset[str]] = frozenset({"candidates"})
    fills: ClassVar[frozenset[str]] = frozenset({"score"})

    @classmethod
    def of(cls, single: str | None = None, **weights: float) -> Combine:
        return cls(tuple(weights.items()), single)

    def needed(self) -> frozenset[str]:
        """The candidates and every signal it weighs (a zero weight reads nothing)."""
        names = [name for name, weight in self.weights if weight]
        return signal_needs([*names, *([self.single] if self.single is not None else [])])

    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        weights = dict(self.weights)
        if "cosine" in weights or self.single == "cosine":
            ctx.want([q.plan.text for q in batch])
        if weights.get("positive_cosine") or self.single == "positive_cosine":
            ctx.want([t for q in batch for t in positive_texts(q)])

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for state in batch:
            if not len(state.candidates):
                state.score = np.zeros(0)
                continue
            if self.single is not None and not state.plan.has_logic:
                state.score = signal(state, self.single, ctx).copy()
                continue
            score = np.zeros(len(state.candidates))
            for name, weight in self.weights:
                if weight:
                    score += weight * signal(state, name, ctx)
            state.score = score


@dataclass(frozen=True)
class TopK(Stage):
    """Order the candidates by score (stable: ties keep candidate order), keep ``k``.

    Candidates scored ``-inf`` (dropped by :class:`~logic_rag.pipeline.exclusion.
    ExcludeViolations`) are left out.
    """

    needs: ClassVar[frozenset[str]] = frozenset({"score"})
    fills: ClassVar[frozenset[str]] = frozenset({"ranked"})

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for state in batch:
            assert state.score is not None  # a Combine comes first: Pipeline checks it
            order = np.argsort(-state.score, kind="stable")
            if np.isneginf(state.score).any():
                order = order[~np.isneginf(state.score[order])]
            state.ranked = order[: batch.k]


@dataclass(frozen=True)
class Cutoff(Stage):
    """Keep each query's ``n`` best candidates by the current score (a cascade's cut).

    Put it between a cheap ranking (``… >> Combine``) and a costly one (``>> Verify(llm)
    >> SoftLogic() >> Combine``): the stages after it score ``n`` candidates instead of all
    of them, and :class:`Backfill` puts the rest back below, in the cheap ranking's order.
    """

    n: int

    needs: ClassVar[frozenset[str]] = frozenset({"score"})
    fills: ClassVar[frozenset[str]] = frozenset({"set_aside"})

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"Cutoff keeps n >= 1 candidates, got {self.n}")

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for state in batch:
            if len(state.candidates) > self.n:
                state.cut(self.n)  # raises without a score: a Combine must come first


@dataclass(frozen=True)
class Backfill(Stage):
    """Below the ranked candidates, continue up to ``k`` with what a :class:`Cutoff` set
    aside (in its order), then with the whole-query dense ranking."""

    needs: ClassVar[frozenset[str]] = frozenset({"ranked"})
    fills: ClassVar[frozenset[str]] = frozenset({"tail"})

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        for state in batch:
            order = state.ranked if state.ranked is not None else np.zeros(0, np.int64)
            missing = batch.k - len(order)
            if missing <= 0:
                continue
            aside = state.set_aside[0] if state.set_aside is not None else np.zeros(0, np.int64)
            tail = aside[:missing]
            if len(tail) < missing:
                depth = min(len(state.candidates) + len(aside) + batch.k, len(ctx.resources))
                _scores, ids = ctx.search(state.plan.text, depth)
                seen = set(state.candidates.tolist()) | set(aside.tolist())
                more = [d for d in ids.tolist() if d not in seen][: missing - len(tail)]
                tail = np.concatenate([tail, np.array(more, dtype=np.int64)])
            if len(tail):
                scores = state.score[order] if state.score is not None else np.zeros(0)
                floor = (scores.min() if len(scores) else 0.0) - 1.0
                state.tail = (tail, floor - np.arange(len(tail), dtype=np.float64) * 1e-6)
