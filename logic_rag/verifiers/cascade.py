"""Cascaded verification: the costly verifier checks only the pairs the cheap one is unsure of.

Put :class:`CascadeVerify` after a cheap ``Verify`` (the embedding evidence, or a trained
cross-encoder): every (atom, page) pair already has a cheap probability ``s``. For each
query the stage

1. splits the query's recall target over its logic (:func:`atom_requirements`: AND
   children share the loss budget, OR children keep the target, NOT swaps polarity);
2. looks up each atom's band (:class:`~logic_rag.verifiers.thresholds.CascadeThresholds`,
   fitted on pairs the costly verifier labelled): below the band the pair is false, above
   it true, inside it open;
3. evaluates the logic in three-valued (Kleene) logic and asks the costly verifier about
   open pairs only for pages whose truth is still unknown, one atom per page per round,
   the atom most likely to settle the page first (the short-circuit), all pages of all
   queries of a round in one batched call;
4. gives decided pairs the costly verifier's expected verdict for their cheap score (the
   isotonic fit of the same sample), asked pairs the costly verdict itself.

Relative to the costly verifier checking every pair of the same atoms (the all-pairs
pipeline), the result set keeps at least ``recall`` of its pages with probability at least
``1 - delta`` for pairs like the fitted sample's (see :mod:`.thresholds`). Atoms outside
``polarity`` keep their cheap probabilities, as in the all-pairs pipeline.

The thresholds come from ``thresholds`` (a saved sample: reusable for a corpus and model
pair), else from an earlier batch of this process with the same verifiers, else they are
fitted on this batch: ``sample_size`` of its pairs, importance-sampled, are labelled
first, and those labels also answer their pairs. Every query's ``info["cascade"]`` reports
the costly calls, what the all-pairs verifier would have made, prompt tokens and seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from logic_rag.compose.kleene import FALSE, TRUE, UNKNOWN, atom_requirements, kleene_truth
from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.stage import Stage
from logic_rag.pipeline.state import QueryState, SearchBatch
from logic_rag.verifiers.base import Polarity, Verifier, check_pairs
from logic_rag.verifiers.thresholds import (
    Band,
    CascadeSample,
    CascadeThresholds,
    importance_sample,
    thresholds_key,
)

__all__ = ["CascadeVerify", "fit_cascade", "thresholds_key"]


@dataclass
class _Work:
    """One query's cascade bookkeeping."""

    state: QueryState
    rows: list[int]  # atom rows the costly verifier may check
    positive: dict[int, bool]
    bands: dict[int, Band]
    values: np.ndarray  # (atoms, candidates) int8: 1 / 0 / -1
    costly: np.ndarray  # (atoms, candidates) float: the costly verdicts asked (nan: not asked)
    failed: np.ndarray  # (atoms, candidates) bool: asked, but the answer was unusable
    expected: dict[int, np.ndarray] = field(default_factory=dict)
    unusable: int = 0
    asked: int = 0
    rounds: int = 0


@dataclass(frozen=True)
class CascadeVerify(Stage):
    """Send only uncertain (atom, page) pairs to ``expensive`` (see the module doc).

    Attributes:
        expensive: the costly verifier (an LLM yes/no, any backend).
        recall: the share of the all-pairs result set the cascade must keep.
        precision: per decided pair, the share of cheap verdicts that must agree with the
            costly verifier (accepted members of a positive atom, rejected pages of a
            negated one).
        delta: failure probability of the guarantee, split over the query's atoms.
        polarity: which atoms the costly verifier may check (``positive`` matches the
            all-pairs ``verify`` pipeline measured in the README).
        thresholds: a saved sample (JSON) to load, or where to save one fitted here.
        sample_size: pairs labelled when the thresholds are fitted on a batch.
        seed: seed of that sample.
        short_circuit: skip open pairs of pages whose truth is already decided; off,
            every open pair is asked (with a band that covers everything, that is the
            all-pairs verifier).
    """

    expensive: Verifier
    recall: float = 0.9
    precision: float = 0.9
    delta: float = 0.1
    polarity: Polarity = "positive"
    thresholds: str | None = None
    sample_size: int = 300
    seed: int = 0
    short_circuit: bool = True

    needs: ClassVar[frozenset[str]] = frozenset({"candidates", "probs"})
    fills: ClassVar[frozenset[str]] = frozenset({"probs", "checked_by", "pair_source"})

    def __post_init__(self) -> None:
        if not 0.0 < self.recall <= 1.0 or not 0.0 <= self.precision <= 1.0:
            raise ValueError("recall must be in (0, 1] and precision in [0, 1]")
        if not 0.0 < self.delta < 1.0:
            raise ValueError("delta must be in (0, 1)")
        if self.polarity not in ("all", "positive", "negated"):
            raise ValueError("polarity must be all, positive or negated")
        if self.sample_size < 1:
            raise ValueError("sample_size must be >= 1")

    # ------------------------------------------------------------------ set-up
    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        texts = [a.text for q in batch for a in q.plan.atoms]
        self.expensive.prepare(texts, ctx)

    def _key_dict(self, ctx: SearchContext) -> dict[str, str]:
        return thresholds_key(self.expensive, ctx, self.polarity)

    def _eligible(self, state: QueryState) -> list[int]:
        negated = state.plan.negated
        return [
            i
            for i, a in enumerate(state.plan.atoms)
            if self.polarity == "all" or (a in negated) == (self.polarity == "negated")
        ]

    # ------------------------------------------------------------------ thresholds
    def _thresholds(
        self, work: list[_Work], ctx: SearchContext
    ) -> tuple[CascadeThresholds, int, float]:
        """Loaded from ``thresholds`` (once per retriever), else fitted on this batch and
        kept by the retriever (then also: calls and seconds spent)."""
        key = self._key_dict(ctx)
        if self.thresholds is not None and Path(self.thresholds).is_file():
            path = Path(self.thresholds)
            memo = ("cascade-file", str(path.resolve()), str(path.stat().st_mtime_ns))
            loaded = ctx.resources.loaded(
                (*memo, *key.values()), lambda: CascadeThresholds.load(path, key=key)
            )
            return loaded, 0, 0.0
        spent: list[tuple[int, float]] = []

        def fit() -> CascadeThresholds:
            start = time.perf_counter()
            fitted, calls = self._fit(work, ctx)
            if self.thresholds is not None:
                fitted.save(self.thresholds)
            spent.append((calls, time.perf_counter() - start))
            return fitted

        fitted = ctx.resources.loaded(("cascade-fit", *key.values()), fit)
        calls, seconds = spent[0] if spent else (0, 0.0)
        return fitted, calls, seconds

    def _fit(self, work: list[_Work], ctx: SearchContext) -> tuple[CascadeThresholds, int]:
        pool: list[tuple[int, int, int]] = []  # (work index, atom row, candidate position)
        scores: list[float] = []
        for w_i, w in enumerate(work):
            probs = w.state.probs
            for row in w.rows:
                for pos in range(len(w.state.candidates)):
                    pool.append((w_i, row, pos))
                    scores.append(float(probs[row, pos]))
        sample = CascadeSample()
        if not pool:
            return CascadeThresholds(sample, self._key_dict(ctx)), 0
        rng = np.random.default_rng(self.seed)
        draws, weights = importance_sample(np.asarray(scores), self.sample_size, rng)
        unique = sorted(set(draws.tolist()))
        self._ask(work, [pool[i] for i in unique], ctx)
        for d, weight in zip(draws.tolist(), weights.tolist(), strict=True):
            w_i, row, pos = pool[d]
            w = work[w_i]
            if np.isnan(w.costly[row, pos]):
                continue  # an unusable answer labels nothing
            sample.add(scores[d], float(w.costly[row, pos]), weight, w.positive[row])
        return CascadeThresholds(sample, self._key_dict(ctx)), len(unique)

    # ------------------------------------------------------------------ asking
    def _ask(
        self, work: list[_Work], pairs: list[tuple[int, int, int]], ctx: SearchContext
    ) -> None:
        """Costly verdicts for ``pairs`` (work index, atom row, position), in one call."""
        todo = [
            (w_i, row, pos)
            for w_i, row, pos in pairs
            if np.isnan(work[w_i].costly[row, pos]) and not work[w_i].failed[row, pos]
        ]
        if not todo:
            return
        by_state = {id(w.state): w for w in work}
        asked = [(work[w_i].state, row, pos) for w_i, row, pos in todo]
        for state, row, positions, verdicts in check_pairs(self.expensive, asked, ctx):
            w = by_state[id(state)]
            w.asked += len(positions)
            # An unusable answer (NaN) is no verdict: the pair stays open, is not asked
            # again, and keeps the expected verdict for its cheap score.
            usable = np.isfinite(verdicts)
            w.failed[row, positions[~usable]] = True
            w.unusable += int((~usable).sum())
            positions, verdicts = positions[usable], verdicts[usable]
            w.costly[row, positions] = verdicts
            w.values[row, positions] = np.where(verdicts >= 0.5, TRUE, FALSE)
            w.state.mark_checked(np.full(len(positions), row), positions, self.expensive.name)

    @staticmethod
    def _settling_atom(w: _Work, pos: int, expected: dict[int, float]) -> int | None:
        """The open atom of page ``pos`` most likely to settle its truth if asked."""
        logic = w.state.plan.logic
        atoms = w.state.plan.atoms
        open_rows = [r for r in w.rows if w.values[r, pos] == UNKNOWN and not w.failed[r, pos]]
        if not open_rows:
            return None
        best, best_gain = open_rows[0], -1.0
        for r in open_rows:
            gain = 0.0
            for verdict, chance in ((TRUE, expected[r]), (FALSE, 1.0 - expected[r])):
                trial = {a.text: w.values[i, pos : pos + 1] for i, a in enumerate(atoms)}
                trial[atoms[r].text] = np.array([verdict], dtype=np.int8)
                if kleene_truth(logic, trial)[0] != UNKNOWN:
                    gain += chance
            if gain > best_gain:
                best, best_gain = r, gain
        return best

    # ------------------------------------------------------------------ the stage
    def fit(self, batch: SearchBatch, ctx: SearchContext) -> CascadeThresholds:
        """Fit thresholds on ``batch`` (cheap probabilities already filled) and keep them.

        Labels ``sample_size`` importance-sampled pairs of the batch with the costly
        verifier; saves them to ``thresholds`` when set. This is the one-off cost that
        :func:`fit_cascade` pays on a set of training queries.
        """
        work = self._work(batch)
        fitted, _calls = self._fit(work, ctx)
        if self.thresholds is not None:
            fitted.save(self.thresholds)
        return fitted

    def _work(self, batch: SearchBatch) -> list[_Work]:
        work: list[_Work] = []
        for state in batch:
            if not len(state.candidates):
                continue
            # Kept beside the declared need: fit() reaches here outside a pipeline.
            if state.probs is None:
                raise ValueError(
                    "CascadeVerify needs a cheap verifier's probabilities first: put "
                    "Verify(EmbeddingVerifier()) (or a cross-encoder) before it"
                )
            rows = self._eligible(state)
            n_atoms, n = state.probs.shape
            negated = state.plan.negated
            work.append(
                _Work(
                    state=state,
                    rows=rows,
                    positive={i: a not in negated for i, a in enumerate(state.plan.atoms)},
                    bands={},
                    values=np.full((n_atoms, n), UNKNOWN, dtype=np.int8),
                    costly=np.full((n_atoms, n), np.nan),
                    failed=np.zeros((n_atoms, n), dtype=bool),
                )
            )
        return work

    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        start = time.perf_counter()
        stats_before = _stats(self.expensive)
        work = self._work(batch)
        if not work:
            return
        thresholds, fit_calls, fit_seconds = self._thresholds(work, ctx)
        # Bands per atom from the query's split target; decided pairs get 1 / 0.
        for w in work:
            needs = atom_requirements(w.state.plan.logic, self.recall)
            delta = self.delta / max(1, len(w.rows))
            for r in w.rows:
                atom = w.state.plan.atoms[r]
                positive = w.positive[r]
                recall = needs.get((atom.text, positive), self.recall)
                band = thresholds.band(
                    positive=positive, recall=recall, precision=self.precision, delta=delta
                )
                w.bands[r] = band
                # The costly verifier's expected verdict per page, computed once per atom.
                w.expected[r] = thresholds.expected(w.state.probs[r], positive=positive)
                decided = band.decide(w.state.probs[r])
                keep = np.isnan(w.costly[r])  # pairs the fitting sample asked stay asked
                w.values[r, keep] = decided[keep]
        # Rounds: one open atom per undecided page, the most settling one first.
        while True:
            pairs: list[tuple[int, int, int]] = []
            for w_i, w in enumerate(work):
                if not w.rows:
                    continue
                atoms = w.state.plan.atoms
                truth = kleene_truth(
                    w.state.plan.logic, {a.text: w.values[i] for i, a in enumerate(atoms)}
                )
                if not self.short_circuit:
                    truth = np.full_like(truth, UNKNOWN)
                for pos in np.flatnonzero(truth == UNKNOWN).tolist():
                    expected = {r: float(w.expected[r][pos]) for r in w.rows}
                    row = self._settling_atom(w, pos, expected)
                    if row is not None:
                        pairs.append((w_i, row, pos))
            if not pairs:
                break
            self._ask(work, pairs, ctx)
            for w_i in {p[0] for p in pairs}:
                work[w_i].rounds += 1
        # Probabilities: asked pairs take the costly verdict, the rest its expectation.
        seconds = time.perf_counter() - start
        stats_after = _stats(self.expensive)
        tokens = stats_after.get("prompt_tokens", 0) - stats_before.get("prompt_tokens", 0)
        total_asked = sum(w.asked for w in work) or 1
        for w in work:
            probs = w.state.probs.copy()
            for r in w.rows:
                asked = ~np.isnan(w.costly[r])
                probs[r] = np.where(asked, w.costly[r], w.expected[r])
            w.state.probs = probs
            all_pairs = len(w.rows) * len(w.state.candidates)
            aside = 0 if w.state.set_aside is None else len(w.state.set_aside[0])
            share = w.asked / total_asked
            # For checking the guarantee (a trace: not copied into hits).
            w.state.trace["cascade_values"] = (list(w.rows), w.values.copy())
            w.state.info["cascade"] = {
                "expensive_calls": w.asked,
                "all_pairs_calls": all_pairs,
                # What checking every candidate before a Cutoff would have cost.
                "uncut_pairs_calls": len(w.rows) * (len(w.state.candidates) + aside),
                "call_share": round(w.asked / all_pairs, 4) if all_pairs else 0.0,
                "rounds": w.rounds,
                "recall_target": self.recall,
                "precision_target": self.precision,
                "delta": self.delta,
                "bands": {
                    w.state.plan.atoms[r].text: [round(b.lo, 4), round(b.hi, 4)]
                    for r, b in w.bands.items()
                },
                # Batch costs are shared out by each query's share of the calls.
                "prompt_tokens": int(round(tokens * share)),
                "seconds": round(seconds * share, 3),
                "fit_calls": fit_calls,
                "fit_seconds": round(fit_seconds, 3),
                "unusable": w.unusable,
            }


def _stats(verifier: Verifier) -> dict[str, Any]:
    stats = getattr(verifier, "stats", None)
    return dict(stats()) if callable(stats) else {}


def fit_cascade(
    retriever: Any,
    queries: list[str],
    out: str | Path,
    *,
    strategy: str = "quality",
    batch_size: int = 256,
    sample_size: int = 300,
    seed: int = 0,
) -> CascadeThresholds:
    """Label a sample of a strategy's (constraint, page) pairs with its LLM and save it.

    Runs the strategy's stages up to its costly stage (:class:`CascadeVerify` or
    :class:`~logic_rag.verifiers.certified.CertifiedTopK`) over the first ``batch_size``
    queries (the cheap verifier scores every pair of the pool), then asks the costly
    verifier about ``sample_size`` importance-sampled pairs. The file is keyed by the
    corpus, the encoder and the costly verifier (:func:`thresholds_key`); ``quality``
    with calibrated bounds (``QualitySettings(bounds="calibrated", thresholds=out)``)
    reads it. Fit once per corpus and model pair, on queries like the ones to be served.
    """
    from logic_rag.pipeline.context import SearchContext
    from logic_rag.pipeline.state import QueryState
    from logic_rag.verifiers.certified import CertifiedTopK

    if not queries:
        raise ValueError("fit_cascade needs at least one query")
    if sample_size < 1:
        raise ValueError("sample_size must be >= 1")
    try:
        before, costly = retriever.pipeline(strategy).until((CascadeVerify, CertifiedTopK))
    except ValueError:
        raise ValueError(f"strategy {strategy!r} has no LLM stage to fit; use 'quality'") from None
    verifier = costly.expensive
    polarity = costly.polarity
    cascade = CascadeVerify(
        verifier, polarity=polarity, thresholds=str(out), sample_size=sample_size, seed=seed
    )
    plans = retriever.plan(list(queries[:batch_size]), None, decompose=True)
    batch = SearchBatch([QueryState(p) for p in plans], k=1)
    ctx = SearchContext(retriever.resources)
    before(batch, ctx)
    cascade.prepare(batch, ctx)
    ctx.run_wanted()
    return cascade.fit(batch, ctx)
