"""What flows through a search pipeline: one :class:`QueryState` per query of a batch.

Data flows one way: text -> :class:`QueryPlan` (the logic) -> candidates -> constraint
probabilities -> truth -> score -> hits. Each stage reads the fields earlier stages
filled and fills its own; nothing is passed around as untyped columns. Candidates are
fixed once the first scoring stage has run (``freeze``), so every per-candidate array of a
query has the same length and order as ``candidates``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from logic_rag.query.algebra import Atom, LogicalQuery, negated_atoms
from logic_rag.query.decompose import Decomposition

__all__ = ["QueryPlan", "Ranked", "QueryState", "SearchBatch"]


@dataclass(frozen=True)
class QueryPlan:
    """A query's text, its logic and the atoms whose constraints are checked."""

    text: str
    logic: LogicalQuery
    decomposition: Decomposition | None = None

    @cached_property
    def atoms(self) -> tuple[Atom, ...]:
        """The query's atoms, in order (computed once: stages read it per candidate)."""
        from logic_rag.query.algebra import atoms

        return tuple(atoms(self.logic))

    @cached_property
    def negated(self) -> frozenset[Atom]:
        return frozenset(negated_atoms(self.logic))

    @property
    def has_logic(self) -> bool:
        """True when the query has more than one atom (a single atom is plain retrieval)."""
        return len(self.atoms) > 1


@dataclass(frozen=True)
class Ranked:
    """One candidate source's ranking for a query: document rows and their scores."""

    ids: np.ndarray
    scores: np.ndarray


@dataclass
class QueryState:
    """Everything the pipeline knows about one query so far.

    Attributes:
        plan: the query's logic.
        candidates: document rows (unique) the later stages score.
        sources: each candidate source's own ranking, by source name (for fusion,
            backfill and explanations).
        signals: per-candidate scores by name (``dense``, ``truth``, ``rrf`` …), each
            aligned with ``candidates``.
        probs: P(candidate satisfies atom), shape ``(atoms, candidates)``, from the last
            verifier; ``evidence`` the verifier's raw scores (same shape).
        checked_by: the last verifier that checked each candidate (for explanations).
        pair_source: the verifier whose verdict each entry of ``probs`` is (same shape as
            ``probs``), so a hit can say which constraint verdicts an LLM gave.
        score: the final ranking score, aligned with ``candidates``.
        ranked: the final order, as positions into ``candidates`` (best first).
        tail: documents (rows, scores) appended below the ranked candidates (backfill).
        set_aside: candidates a :class:`~logic_rag.pipeline.ranking.Cutoff` removed, best
            first, with their constraint probabilities then (or ``None``); backfill
            appends them first, in that order.
        info: notes that end up in every hit's ``logic`` (e.g. a capped composition).
        calibration: what the embedding evidence in ``probs`` was calibrated against
            (``corpus`` or ``candidates``; None: not said), which decides how wide a hit's
            band of "unsure" verdicts is (:mod:`logic_rag.explain`).
        trace: what a stage records for analysis only (never copied into hits), e.g. a
            cascade's three-valued verdicts for checking its guarantee.
    """

    plan: QueryPlan
    candidates: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    sources: dict[str, Ranked] = field(default_factory=dict)
    signals: dict[str, np.ndarray] = field(default_factory=dict)
    probs: np.ndarray | None = None
    evidence: np.ndarray | None = None
    checked_by: list[str] = field(default_factory=list)
    pair_source: np.ndarray | None = None
    score: np.ndarray | None = None
    ranked: np.ndarray | None = None
    tail: tuple[np.ndarray, np.ndarray] | None = None
    set_aside: tuple[np.ndarray, np.ndarray | None] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    calibration: str | None = None
    trace: dict[str, Any] = field(default_factory=dict)
    frozen: bool = False

    def add_candidates(self, source: str, ids: np.ndarray, scores: np.ndarray) -> None:
        """Record ``source``'s ranking and add its documents to the candidates (union)."""
        if self.frozen:
            raise RuntimeError(
                f"candidate source {source!r} runs after scoring began; put candidate "
                f"stages first in the pipeline"
            )
        ids = np.asarray(ids, dtype=np.int64)
        scores = np.asarray(scores, dtype=np.float64)
        keep = (ids >= 0) & np.isfinite(scores)
        self.sources[source] = Ranked(ids[keep], scores[keep])
        new = ids[keep]
        if len(self.candidates) == 0:
            # Keep the first source's order: a stable tie-break for equal scores later.
            _, first = np.unique(new, return_index=True)
            self.candidates = new[np.sort(first)]
        else:
            seen = set(self.candidates.tolist())
            extra = [d for d in dict.fromkeys(new.tolist()) if d not in seen]
            if extra:
                self.candidates = np.concatenate([self.candidates, np.array(extra, np.int64)])

    def freeze(self) -> None:
        """Fix the candidate set; called by the first stage that scores candidates."""
        self.frozen = True

    def cut(self, keep: int) -> None:
        """Keep the ``keep`` best candidates by ``score`` and set the rest aside, in order.

        Every per-candidate array (signals, probabilities, evidence, verifier names, score)
        is cut the same way, so later stages see a smaller, consistent candidate set.
        """
        if self.score is None:
            raise ValueError("cut needs a score: put a Combine stage before it")
        order = np.argsort(-self.score, kind="stable")
        head, rest = order[:keep], order[keep:]
        if not len(rest):
            return
        aside_probs = None if self.probs is None else self.probs[:, rest]
        self.set_aside = (self.candidates[rest], aside_probs)
        self.candidates = self.candidates[head]
        self.signals = {name: values[head] for name, values in self.signals.items()}
        if self.probs is not None:
            self.probs = self.probs[:, head]
        if self.evidence is not None:
            self.evidence = self.evidence[:, head]
        if self.checked_by:
            self.checked_by = [self.checked_by[i] for i in head.tolist()]
        if self.pair_source is not None:
            self.pair_source = self.pair_source[:, head]
        self.score = self.score[head]
        self.ranked = None
        self.freeze()

    def set_signal(self, name: str, values: np.ndarray) -> None:
        values = np.asarray(values, dtype=np.float64)
        if values.shape != self.candidates.shape:
            raise ValueError(
                f"signal {name!r} has shape {values.shape}, the candidates {self.candidates.shape}"
            )
        self.freeze()
        self.signals[name] = values

    def set_probs(self, probs: np.ndarray, evidence: np.ndarray | None, verifier: str) -> None:
        shape = (len(self.plan.atoms), len(self.candidates))
        if probs.shape != shape:
            raise ValueError(f"probabilities have shape {probs.shape}, expected {shape}")
        self.freeze()
        self.probs = np.asarray(probs, dtype=np.float64)
        self.evidence = None if evidence is None else np.asarray(evidence, dtype=np.float64)
        self.checked_by = [verifier] * len(self.candidates)
        self.pair_source = np.full(shape, verifier, dtype=object)

    def mark_checked(self, atom_rows: np.ndarray, positions: np.ndarray, verifier: str) -> None:
        """Record that ``verifier`` answered the pairs ``(atom_rows[i], positions[i])``."""
        if self.pair_source is None:
            shape = (len(self.plan.atoms), len(self.candidates))
            self.pair_source = np.full(shape, "", dtype=object)
        self.pair_source[atom_rows, positions] = verifier
        for p in set(np.asarray(positions).ravel().tolist()):
            self.checked_by[p] = verifier


@dataclass
class SearchBatch:
    """The queries of one ``search_batch`` call and the number of hits wanted."""

    queries: list[QueryState]
    k: int

    def __iter__(self):
        return iter(self.queries)

    def __len__(self) -> int:
        return len(self.queries)
