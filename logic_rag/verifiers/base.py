"""Constraint verifiers: P(document satisfies atom), and the stage that applies them.

A verifier answers "is this page a 1990s Italian crime film?" for many (atom, document)
pairs at once. Three kinds ship, one file each: :mod:`.embedding` (calibrated cosine
evidence, free once the index exists), :mod:`.cross_encoder` (a sentence-transformers
``CrossEncoder``), :mod:`.llm` (yes/no log-probabilities from any generator). The pipeline
stage :class:`Verify` hands a verifier every query's atoms and candidates in one call, so
a model sees one big batch; :class:`PairVerifier` adds a bounded cache keyed by
(verifier fingerprint, atom, document hash) for the verifiers whose pairs are
independent of each other.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import SearchBatch
from logic_rag.verifiers.cache import PairCache

Polarity = Literal["all", "positive", "negated"]
"""Which of a query's atoms a :class:`Verify` stage checks."""

__all__ = [
    "Polarity",
    "CheckRequest",
    "Checked",
    "Verifier",
    "PairVerifier",
    "Verify",
    "check_pairs",
]


@dataclass(frozen=True)
class CheckRequest:
    """Check each of ``atoms`` against each document row in ``rows`` (one query)."""

    atoms: tuple[str, ...]
    rows: np.ndarray


@dataclass(frozen=True)
class Checked:
    """``probs``: P(row satisfies atom), shape ``(atoms, rows)``; ``evidence``: the raw
    scores they were calibrated from (same shape), where the verifier has them."""

    probs: np.ndarray
    evidence: np.ndarray | None = None


class Verifier(abc.ABC):
    """Base class: subclasses are frozen dataclasses, so equal settings compare equal."""

    #: Short name, used in explanations and the ``verifier=`` option.
    name: str = "verifier"
    #: What a verdict of this verifier was calibrated against, reported as a query's
    #: ``info["calibration"]`` by :class:`Verify`: ``"corpus"`` or ``"candidates"`` for the
    #: embedding verifiers, None (nothing reported) for the rest. A class attribute, so
    #: that this interface needs no import of its implementations.
    calibration_scope: ClassVar[str | None] = None
    #: A configuration file may name a verifier class (see ``Stage.json_loadable``).
    json_loadable: ClassVar[bool] = True

    def warm_up(self) -> None:
        """Load models now rather than on the first search (optional)."""
        return None

    def prepare(self, atoms: Sequence[str], ctx: SearchContext) -> None:
        """Declare query-side texts to encode or search (``ctx.want``); default: none."""
        return None

    @abc.abstractmethod
    def check(self, requests: Sequence[CheckRequest], ctx: SearchContext) -> list[Checked]:
        """One :class:`Checked` per request, in order."""

    def describe(self) -> str:
        from dataclasses import fields, is_dataclass

        if not is_dataclass(self):
            return type(self).__name__
        shown = [f for f in fields(self) if f.repr]
        return (
            f"{type(self).__name__}("
            + ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in shown)
            + ")"
        )


@dataclass(frozen=True, eq=False)
class PairVerifier(Verifier):
    """A verifier whose score of a pair depends on the atom and the document text alone.

    Subclasses implement :meth:`score_texts` (raw scores for ``(atom, document text)``
    pairs, batched) and :meth:`probability` (raw score -> P). Scores are cached by
    (:meth:`fingerprint`, atom, document hash).
    """

    cache: PairCache = field(default_factory=PairCache, compare=False, repr=False)

    @abc.abstractmethod
    def fingerprint(self) -> str:
        """Identifies the model and prompt: part of every cache key."""

    @abc.abstractmethod
    def score_texts(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Raw scores of ``(atom, document text)`` pairs, shape ``(len(pairs),)``."""

    def probability(self, raw: np.ndarray) -> np.ndarray:
        """Map raw scores to probabilities; default: a logistic sigmoid of logits."""
        return 1.0 / (1.0 + np.exp(-np.clip(raw, -60.0, 60.0)))

    def _raw(self, pairs: Sequence[tuple[str, str]], hashes: Sequence[str]) -> np.ndarray:
        keys = [(atom, h) for (atom, _), h in zip(pairs, hashes, strict=True)]
        return self.cache.get_or_compute(
            self.fingerprint(), keys, lambda missing: self.score_texts([pairs[i] for i in missing])
        )

    def cached_scores(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Raw scores of ``(atom, shown text)`` pairs, cached by the text's SHA-1."""
        import hashlib

        hashes = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest() for _, t in pairs]
        return self._raw(pairs, hashes)

    def verify_pairs(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(document satisfies atom) for ``(atom, document text)`` pairs (cached)."""
        return self.probability(self.cached_scores(pairs))

    def check(self, requests: Sequence[CheckRequest], ctx: SearchContext) -> list[Checked]:
        docs = ctx.resources.documents
        pairs: list[tuple[str, str]] = []
        hashes: list[str] = []
        for request in requests:
            for atom in request.atoms:
                for row in request.rows.tolist():
                    pairs.append((atom, docs[row].content))
                    hashes.append(ctx.resources.doc_hash(row))
        raw = self._raw(pairs, hashes) if pairs else np.zeros(0)
        return self.blocks(raw, requests)

    def blocks(self, raw: np.ndarray, requests: Sequence[CheckRequest]) -> list[Checked]:
        """Split raw scores of every request's pairs (atom-major, in order) back into one
        :class:`Checked` per request."""
        out, start = [], 0
        for request in requests:
            n = len(request.atoms) * len(request.rows)
            block = raw[start : start + n].reshape(len(request.atoms), len(request.rows))
            out.append(Checked(self.probability(block), block))
            start += n
        return out


def check_pairs(
    verifier: Verifier, pairs: Sequence[tuple[Any, int, int]], ctx: SearchContext
) -> list[tuple[Any, int, np.ndarray, np.ndarray]]:
    """Ask ``verifier`` about ``(query state, atom row, candidate position)`` pairs in one
    call, grouped by query and atom; one ``(state, atom row, positions, P(yes))`` per
    group, positions in the order asked."""
    grouped: dict[tuple[int, int], list[int]] = {}
    states: dict[int, Any] = {}
    for state, row, pos in pairs:
        states[id(state)] = state
        grouped.setdefault((id(state), row), []).append(pos)
    keys = list(grouped)
    requests = [
        CheckRequest(
            (states[sid].plan.atoms[row].text,),
            states[sid].candidates[np.asarray(grouped[(sid, row)])],
        )
        for sid, row in keys
    ]
    checked = verifier.check(requests, ctx) if requests else []
    return [
        (states[sid], row, np.asarray(grouped[(sid, row)]), np.asarray(r.probs, np.float64)[0])
        for (sid, row), r in zip(keys, checked, strict=True)
    ]


@dataclass(frozen=True)
class Verify(Stage):
    """Fill every query's constraint probabilities with ``verifier``.

    With ``top``, only each query's ``top`` best candidates by the current score are
    checked; all candidates are still ranked together afterwards. To re-rank only the best
    candidates and keep the rest below (a cascade), put a ``Cutoff`` before this stage.
    With ``polarity`` ``positive`` (or ``negated``), only the atoms the query asks for (or
    excludes) are checked: a verifier can be good at confirming membership and poor at
    refuting it. Entries not checked keep what an earlier verifier gave them. ``weight``
    blends the new probabilities with the earlier ones (1: replace them).

    Such a partial check (``top``, ``polarity`` other than ``all``, ``weight`` below 1)
    needs an earlier verifier's probabilities for the pairs it leaves: it declares
    ``probs`` among its needs, so a pipeline without one is refused when it is built.
    """

    verifier: Verifier
    top: int | None = None
    weight: float = 1.0
    polarity: Polarity = "all"

    needs: ClassVar[frozenset[str]] = frozenset({"candidates"})
    fills: ClassVar[frozenset[str]] = frozenset({"probs", "evidence", "checked_by", "pair_source"})

    def needed(self) -> frozenset[str]:
        partial = self.top is not None or self.weight != 1.0 or self.polarity != "all"
        return self.needs | {"probs"} if partial else self.needs

    def filled(self) -> frozenset[str]:
        """Also ``calibration`` when the verifier says what its evidence is relative to."""
        scope = getattr(self.verifier, "calibration_scope", None)
        return self.fills | {"calibration"} if scope is not None else self.fills

    def __post_init__(self) -> None:
        if self.top is not None and self.top < 1:
            raise ValueError("top (verifier_top) must be >= 1 (or None for every candidate)")
        if not 0.0 < self.weight <= 1.0:
            raise ValueError("weight (verifier_weight) must be in (0, 1]")
        if self.polarity not in ("all", "positive", "negated"):
            raise ValueError("polarity (verifier_atoms) must be 'all', 'positive' or 'negated'")

    def _atoms(self, state: Any) -> list[int]:
        negated = state.plan.negated
        return [
            i
            for i, a in enumerate(state.plan.atoms)
            if self.polarity == "all" or (a in negated) == (self.polarity == "negated")
        ]

    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        texts = [q.plan.atoms[i].text for q in batch for i in self._atoms(q)]
        self.verifier.prepare(texts, ctx)

    def _positions(self, state: Any) -> np.ndarray:
        n = len(state.candidates)
        if self.top is None or self.top >= n:
            return np.arange(n)
        if state.score is None:
            return np.arange(self.top)  # source order: the first source's best first
        return np.argsort(-state.score, kind="stable")[: self.top]

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        work = []
        for state in batch:
            atoms = self._atoms(state)
            if len(state.candidates) and atoms:
                work.append((state, atoms, self._positions(state)))
        requests = [
            CheckRequest(tuple(s.plan.atoms[i].text for i in atoms), s.candidates[pos])
            for s, atoms, pos in work
        ]
        checked = self.verifier.check(requests, ctx) if requests else []
        # Whether a ✓ / ✗ compares a page with a corpus or only with its fellow candidates.
        scope = getattr(self.verifier, "calibration_scope", None)
        if scope is not None:
            for state, _, _ in work:
                state.calibration = scope
                state.info["calibration"] = scope  # the note older readers look for
        for (state, atoms, pos), result in zip(work, checked, strict=True):
            n_atoms, n = len(state.plan.atoms), len(state.candidates)
            full = len(pos) == n and len(atoms) == n_atoms and self.weight == 1.0
            answered = np.isfinite(result.probs)  # NaN: an unusable answer, not a verdict
            if full and (answered.all() or state.probs is None):
                probs = np.where(answered, result.probs, 0.5)
                state.set_probs(probs, result.evidence, self.verifier.name)
                continue
            # A partial check declares ``probs`` among its needs: Pipeline checked it.
            assert state.probs is not None
            probs = state.probs.copy()
            rows = np.asarray(atoms)[:, None]
            before = probs[rows, pos]
            blended = self.weight * result.probs + (1.0 - self.weight) * before
            probs[rows, pos] = np.where(answered, blended, before)
            state.probs = probs
            grid_rows, grid_pos = np.broadcast_arrays(rows, pos[None, :])
            state.mark_checked(grid_rows[answered], grid_pos[answered], self.verifier.name)
