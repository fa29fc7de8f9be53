"""Certified top-k verification: the costly verifier checks what decides the top k.

A ranking is not a filter. The caller asked for ``k`` pages (the search ``k``, a
reranker's ``top_n``), so the LLM's work should go where it can change those ``k``, not
into every page of the candidate pool. Each candidate's final score is

    score = prior + truth_weight × truth(logic, P(atom))

where ``prior`` is a fixed weighted sum of signals (the whole-query cosine blended with the
positive atoms' under a negation) and ``P(atom)`` is, for the atoms the costly verifier
checks, its verdict: a point once asked, an interval before (:mod:`.pair_bounds`). The
truth's interval follows from the logic (:func:`~logic_rag.compose.bounds.truth_bounds`),
so every candidate carries an interval ``[L, U]`` on its final score.

The stage works like Minimal Probing (Chang & Hwang, SIGMOD 2002) and Fagin's threshold
algorithm, batched: while the ``k`` best lower bounds do not clear every other upper
bound, it asks, for each unsettled candidate that can still change the top k (highest
upper bound first, at most ``per_round`` per query and round), the atom that most narrows
its interval (a conjunct that comes back false settles a page), all pairs of all queries
of a round in one call to the verifier. It stops when the top k is certified or when the
query's budget ``max_llm_calls`` is spent.

* With hard bounds the certified top k is exactly the top k that checking every pair of
  the pool gives (the property test compares them).
* With calibrated bounds (a labelled sample, ``logic-rag fit-cascade``), it is the same
  with probability at least ``1 - delta``: half of ``delta`` for the fit, half for the
  risks of the calibrated bounds the certificate relied on.

The score is the stage's :class:`~logic_rag.compose.score.Score`, the one the ranking
after it uses (``score.logic() >> score.combine()``; a pipeline that puts another
``SoftLogic`` or ``Combine`` after it is refused when built). Pairs never asked keep a
point estimate inside their bounds, so that ranking orders the certified top k first. Every query's ``info["llm"]`` reports the
calls, what checking every pair of the pool would have asked, prompt tokens, seconds,
rounds, whether the top k was certified and the probability stated.

**What a certificate covers.** A certified order alone says nothing about a constraint
the LLM was never asked: a NOT left to embeddings can be broken by a "certified" top k
(issue 49: "salads without cheese" answered with a Greek salad). So the stage asks about
every atom, NOT atoms included (``polarity="all"``, the default), and certifies a *hit*
only when its constraints, read in three-valued logic (an LLM verdict >= 0.5 true, < 0.5
false, never asked: unknown), make the query true: each constraint is decided by the LLM
or provably irrelevant (the query is true whatever it is). It keeps asking about hits of
the top k whose truth is still unknown. The top k is ``certified`` only when its order is
certified and every hit is; ``info["llm"]["hits"]`` says, per hit (by document id), which
constraints the LLM decided, which were irrelevant, which rest on embeddings only (an
atom outside ``polarity``) and which got no usable answer. An answer that names neither
Yes nor No (a NaN verdict from :class:`~logic_rag.verifiers.llm.LLMVerifier`) is not a
check: the pair stays open, is not asked again, and is counted in ``unusable``.

**Whole query first** (``whole_query=True``). One yes/no per page with the query itself
as the question (what ``llm-rerank`` asks), then the atoms only where that verdict is
unsure (inside ``(whole_query_band, 1 - whole_query_band)``), unusable, or disagrees with
the logic over the cheap evidence. A page whose whole-query verdict is kept has that
verdict as its truth (a point: the signal ``query_truth``, which
:class:`~logic_rag.verifiers.whole_query.WholeQueryTruth` puts in place of the soft
truth after ``SoftLogic``); its certificate says ``covered_by: "whole query"``: one LLM
verdict on the whole logic, not one per constraint.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from logic_rag.compose.bounds import truth_bounds
from logic_rag.compose.logic import SoftLogic
from logic_rag.compose.score import Score
from logic_rag.pipeline.context import SearchContext
from logic_rag.pipeline.ranking import Combine, signal
from logic_rag.pipeline.stage import Stage, signal_needs
from logic_rag.pipeline.state import QueryState, SearchBatch
from logic_rag.verifiers.base import Polarity, Verifier, check_pairs
from logic_rag.verifiers.pair_bounds import CalibratedBounds, HardBounds, PairBounds

__all__ = ["CertifiedTopK", "BoundKind", "QUERY_TRUTH", "certificate_line", "verifier_stats"]

BoundKind = Literal["hard", "calibrated"]

#: What a certificate covers, by the stage's polarity.
_COVERS = {
    "all": "every constraint",
    "positive": "positive constraints",
    "negated": "NOT constraints",
}

#: The signal a whole-query-first stage fills: a page's kept whole-query verdict (NaN: none).
QUERY_TRUTH = "query_truth"


@dataclass
class _Query:
    """One query's bookkeeping: the eligible atoms and what is known of each pair."""

    state: QueryState
    rows: list[int]
    prior: np.ndarray
    lo: np.ndarray  # (atoms, candidates): current bounds (points where asked or fixed)
    hi: np.ndarray
    risk_lo: np.ndarray
    risk_hi: np.ndarray
    estimate: np.ndarray
    asked: np.ndarray  # bool (atoms, candidates)
    failed: np.ndarray  # bool (atoms, candidates): asked, but the answer was unusable
    fixed: np.ndarray | None = None  # whole-query truth per candidate (NaN: not kept)
    whole_calls: int = 0
    calls: int = 0
    unusable: int = 0
    order_certified: bool = False
    rounds: int = 0
    certified: bool = False
    risk: float = 0.0
    done: bool = False
    tested: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CertifiedTopK(Stage):
    """Ask the costly verifier only what decides the top k (see the module doc).

    Attributes:
        expensive: the costly verifier (an LLM yes/no, any backend).
        score: the final score (prior, truth weight, t-norm) that the ``SoftLogic >>
            Combine`` after this stage ranks by (``score.logic() >> score.combine()``).
        polarity: which atoms the costly verifier checks (``all``: NOT atoms too, what a
            certificate that covers the whole logic needs); the others keep their cheap
            probabilities, and a hit that depends on one of them is not certified.
        bounds: ``hard`` (exact; no fit needed) or ``calibrated`` (needs ``thresholds``).
        thresholds: a labelled sample saved by ``logic-rag fit-cascade`` (JSON), for the
            same corpus, encoder and costly verifier; required for calibrated bounds.
        delta: with calibrated bounds, the stated failure probability.
        max_llm_calls: the most pairs asked per query; ``None``: no limit.
        per_round: candidates probed per query and round; ``None``: the batch's ``k``.
        whole_query: ask the whole query about every page first, the atoms only where
            that verdict is unsure or disagrees with the cheap logic (module doc).
        whole_query_band: a whole-query verdict at most this far from 0 or 1 is sure.
    """

    expensive: Verifier
    score: Score = Score()
    polarity: Polarity = "all"
    bounds: BoundKind = "hard"
    thresholds: str | None = None
    delta: float = 0.1
    max_llm_calls: int | None = 60
    per_round: int | None = None
    whole_query: bool = False
    whole_query_band: float = 0.2

    needs: ClassVar[frozenset[str]] = frozenset({"candidates", "probs"})
    fills: ClassVar[frozenset[str]] = frozenset({"probs", "checked_by", "pair_source"})

    def __post_init__(self) -> None:
        if self.bounds not in ("hard", "calibrated"):
            raise ValueError(f"bounds must be 'hard' or 'calibrated', got {self.bounds!r}")
        if self.bounds == "calibrated" and not self.thresholds:
            raise ValueError(
                "calibrated bounds need a labelled sample: run `logic-rag fit-cascade` and "
                "pass its file as thresholds (or use bounds='hard')"
            )
        if not 0.0 < self.delta < 1.0:
            raise ValueError("delta must be in (0, 1)")
        if self.max_llm_calls is not None and self.max_llm_calls < 0:
            raise ValueError("max_llm_calls must be >= 0 (or None for no limit)")
        if self.per_round is not None and self.per_round < 1:
            raise ValueError("per_round must be >= 1 (or None for the batch's k)")
        if self.polarity not in ("all", "positive", "negated"):
            raise ValueError("polarity must be all, positive or negated")
        if not 0.0 <= self.whole_query_band < 0.5:
            raise ValueError("whole_query_band must be in [0, 0.5)")

    def needed(self) -> frozenset[str]:
        """The cheap probabilities, and the signals of the prior."""
        return self.needs | signal_needs(name for name, w in self.score.prior if w)

    def filled(self) -> frozenset[str]:
        return self.fills | ({f"signals.{QUERY_TRUTH}"} if self.whole_query else set())

    def check_place(self, after: tuple[Stage, ...]) -> None:
        """The ``SoftLogic`` and ``Combine`` after this stage must rank by its score: the
        pairs it asks are those that decide that ranking's top k."""
        logic = next((s for s in after if isinstance(s, SoftLogic)), None)
        combine = next((s for s in after if isinstance(s, Combine)), None)
        want = self.score
        if logic is not None and logic != want.logic():
            raise ValueError(
                f"CertifiedTopK scores by {want.describe()}, but the {logic.describe()} after "
                f"it does not: build both from one Score (score.logic())"
            )
        if combine is not None and combine != want.combine():
            raise ValueError(
                f"CertifiedTopK scores by {want.describe()}, but the {combine.describe()} "
                f"after it does not: build both from one Score (score.combine())"
            )

    # ------------------------------------------------------------------ set-up
    def prepare(self, batch: SearchBatch, ctx: SearchContext) -> None:
        self.expensive.prepare([a.text for q in batch for a in q.plan.atoms], ctx)
        names = {name for name, _ in self.score.prior}
        if "cosine" in names:
            ctx.want([q.plan.text for q in batch])
        if "positive_cosine" in names:
            from logic_rag.pipeline.ranking import positive_texts

            ctx.want([t for q in batch for t in positive_texts(q)])

    def pair_bounds(self, ctx: SearchContext) -> HardBounds | CalibratedBounds:
        """The bounds of unchecked pairs; a calibrated sample is loaded once per retriever
        and refused when it was fitted for another corpus, encoder or verifier."""
        if self.bounds == "hard":
            return HardBounds()
        from logic_rag.verifiers.thresholds import CascadeThresholds, thresholds_key

        key = thresholds_key(self.expensive, ctx, self.polarity)
        path = Path(str(self.thresholds))
        if not path.is_file():
            raise ValueError(
                f"no cascade thresholds at {path}: run `logic-rag fit-cascade INDEX --queries "
                f"FILE --out {path}` first (or use bounds='hard')"
            )
        stamp = str(path.stat().st_mtime_ns)
        return ctx.resources.loaded(
            ("certified-bounds", str(path.resolve()), stamp, *key.values(), str(self.delta)),
            lambda: CalibratedBounds(
                CascadeThresholds.load(path, key=key), fit_delta=self.delta / 2
            ),
        )

    def _eligible(self, state: QueryState) -> list[int]:
        negated = state.plan.negated
        return [
            i
            for i, a in enumerate(state.plan.atoms)
            if self.polarity == "all" or (a in negated) == (self.polarity == "negated")
        ]

    def _start(self, state: QueryState, bounds: Any, ctx: SearchContext) -> _Query:
        probs = state.probs
        assert probs is not None
        prior = np.zeros(len(state.candidates))
        for name, weight in self.score.prior:
            if weight:
                prior = prior + weight * signal(state, name, ctx)
        rows = self._eligible(state)
        lo, hi = probs.copy(), probs.copy()  # atoms the stage does not check are fixed
        zeros = np.zeros(probs.shape)
        risk_lo, risk_hi, estimate = zeros.copy(), zeros.copy(), probs.copy()
        negated = state.plan.negated
        for r in rows:
            got: PairBounds = bounds.bounds(probs[r], positive=state.plan.atoms[r] not in negated)
            lo[r], hi[r] = got.lo, got.hi
            risk_lo[r], risk_hi[r], estimate[r] = got.risk_lo, got.risk_hi, got.estimate
        asked = np.zeros(probs.shape, dtype=bool)
        failed = np.zeros(probs.shape, dtype=bool)
        return _Query(state, rows, prior, lo, hi, risk_lo, risk_hi, estimate, asked, failed)

    # ------------------------------------------------------------------ reasoning
    def _truth_bounds(self, q: _Query, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, ...]:
        """Bounds of the query's truth for atom bounds ``lo``/``hi`` (atoms x columns)."""
        atoms = q.state.plan.atoms
        return truth_bounds(
            q.state.plan.logic,
            {a.text: lo[i] for i, a in enumerate(atoms)},
            {a.text: hi[i] for i, a in enumerate(atoms)},
            self.score.tnorm,
        )

    def _score_bounds(self, q: _Query, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, ...]:
        t_lo, t_hi = self._truth_bounds(q, lo, hi)
        if q.fixed is not None:  # pages whose whole-query verdict is their truth
            kept = np.isfinite(q.fixed)
            t_lo, t_hi = np.where(kept, q.fixed, t_lo), np.where(kept, q.fixed, t_hi)
        return q.prior + self.score.truth_weight * t_lo, q.prior + self.score.truth_weight * t_hi

    def _hard(self, q: _Query) -> tuple[np.ndarray, np.ndarray]:
        """Interval ends with every unchecked eligible pair at [0, 1] (no risk taken)."""
        lo, hi = q.lo.copy(), q.hi.copy()
        for r in q.rows:
            open_ = ~q.asked[r]
            lo[r, open_], hi[r, open_] = 0.0, 1.0
        return lo, hi

    def _status(self, q: _Query, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Score bounds, the current answer set and the risk a certificate would take."""
        low, high = self._score_bounds(q, q.lo, q.hi)
        n = len(low)
        answer = np.zeros(n, dtype=bool)
        answer[np.argsort(-low, kind="stable")[:k]] = True
        if answer.all():
            return low, high, answer, 0.0
        kth = low[answer].min()
        best_out = high[~answer].max()
        if kth < best_out:
            return low, high, answer, float("inf")
        # Certified with these bounds: what did it rely on beyond the hard bounds?
        hard_lo, hard_hi = self._score_bounds(q, *self._hard(q))
        risk = 0.0
        for pos in np.flatnonzero(~answer & (hard_hi > kth)).tolist():
            risk += self._page_risk(q, pos, kth, upper=True)
        for pos in np.flatnonzero(answer & (hard_lo < best_out)).tolist():
            risk += self._page_risk(q, pos, best_out, upper=False)
        return low, high, answer, risk

    def _page_risk(self, q: _Query, pos: int, bar: float, *, upper: bool) -> float:
        """The chance that page ``pos`` crosses ``bar`` although its calibrated bounds say
        it cannot. If keeping one pair at its calibrated bound (every other unasked pair
        at [0, 1]) already keeps the page on its side, crossing needs that pair to break
        its bound: the page's risk is the smallest such pair's; otherwise the union bound
        over its pairs."""
        risks = q.risk_hi if upper else q.risk_lo
        pairs = [r for r in q.rows if not q.asked[r, pos] and risks[r, pos] > 0]
        hard_lo, hard_hi = self._hard_column(q, pos)
        single = []
        for r in pairs:
            lo, hi = hard_lo.copy(), hard_hi.copy()
            lo[r], hi[r] = q.lo[r, pos], q.hi[r, pos]
            t_lo, t_hi = self._truth_bounds(q, lo[:, None], hi[:, None])
            score = q.prior[pos] + self.score.truth_weight * float(t_hi[0] if upper else t_lo[0])
            if (score <= bar) if upper else (score >= bar):
                single.append(float(risks[r, pos]))
        if single:
            return min(single)
        return float(sum(risks[r, pos] for r in pairs))

    def _hard_column(self, q: _Query, pos: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = q.lo[:, pos].copy(), q.hi[:, pos].copy()
        for r in q.rows:
            if not q.asked[r, pos]:
                lo[r], hi[r] = 0.0, 1.0
        return lo, hi

    def _decisive_atom(self, q: _Query, pos: int) -> int | None:
        """The unasked eligible atom of candidate ``pos`` whose answer most narrows its
        score interval, judged by setting it to its point estimate."""
        if q.fixed is not None and np.isfinite(q.fixed[pos]):
            return None  # decided by its whole-query verdict
        open_rows = [r for r in q.rows if not q.asked[r, pos] and not q.failed[r, pos]]
        if not open_rows:
            return None
        best, best_width = open_rows[0], np.inf
        for r in open_rows:
            lo, hi = q.lo[:, pos : pos + 1].copy(), q.hi[:, pos : pos + 1].copy()
            lo[r, 0] = hi[r, 0] = q.estimate[r, pos]
            low, high = self._truth_bounds(q, lo, hi)
            width = float(high[0] - low[0])
            if width < best_width:
                best, best_width = r, width
        return best

    def _hit_truth(self, q: _Query, positions: np.ndarray) -> np.ndarray:
        """Three-valued truth of the query for candidates ``positions``: an atom the LLM
        answered is true at P >= 0.5, false below; any other is unknown."""
        from logic_rag.compose.kleene import FALSE, TRUE, UNKNOWN, kleene_truth

        values = {}
        for i, atom in enumerate(q.state.plan.atoms):
            asked = q.asked[i, positions]
            verdict = np.where(q.estimate[i, positions] >= 0.5, TRUE, FALSE)
            values[atom.text] = np.where(asked, verdict, UNKNOWN).astype(np.int8)
        truth = kleene_truth(q.state.plan.logic, values)
        if q.fixed is not None:
            fixed = q.fixed[positions]
            kept = np.isfinite(fixed)
            truth = np.where(kept, np.where(fixed >= 0.5, TRUE, FALSE), truth)
        return truth

    def _hit_probes(self, q: _Query, answer: np.ndarray, limit: int) -> list[tuple[int, int]]:
        """Pairs that could decide a hit of the top k whose truth is still unknown."""
        from logic_rag.compose.kleene import UNKNOWN

        positions = np.flatnonzero(answer)
        truth = self._hit_truth(q, positions)
        probes: list[tuple[int, int]] = []
        for pos in positions[truth == UNKNOWN].tolist():
            if len(probes) >= limit:
                break
            row = self._decisive_atom(q, pos)
            if row is not None:
                probes.append((row, pos))
        return probes

    def _probes(self, q: _Query, k: int, budget: float) -> list[tuple[int, int]]:
        """This round's (atom row, position) pairs for query ``q`` (empty: stop)."""
        low, high, answer, risk = self._status(q, k)
        limit = self.per_round or k
        left = None if self.max_llm_calls is None else self.max_llm_calls - q.calls
        if left is not None:
            limit = min(limit, left)
        if risk <= budget:
            q.order_certified, q.risk = True, risk
            # The order holds; now every hit's constraints must decide it.
            probes = self._hit_probes(q, answer, limit) if limit > 0 else []
            q.certified = not probes and self._hits_certified(q, answer)
            return probes
        q.order_certified = False
        kth = low[answer].min()
        best_out = high[~answer].max()
        # Candidates that can still change the top k: outside ones that could enter,
        # inside ones that could drop out; highest upper bound first.
        contending = (~answer & (high > kth)) | (answer & (low < best_out))
        if risk != float("inf"):  # certified, but relying on too much calibrated risk
            hard_lo, hard_hi = self._score_bounds(q, *self._hard(q))
            contending |= (~answer & (hard_hi > kth)) | (answer & (hard_lo < best_out))
        order = [p for p in np.argsort(-high, kind="stable").tolist() if contending[p]]
        probes: list[tuple[int, int]] = []
        for pos in order:
            if len(probes) >= limit:
                break
            row = self._decisive_atom(q, pos)
            if row is not None:
                probes.append((row, pos))
        q.risk = risk
        return probes

    def _hits_certified(self, q: _Query, answer: np.ndarray) -> bool:
        from logic_rag.compose.kleene import TRUE

        return bool((self._hit_truth(q, np.flatnonzero(answer)) == TRUE).all())

    # ------------------------------------------------------------------ the stage
    def run(self, batch: SearchBatch, ctx: SearchContext) -> None:
        start = time.perf_counter()
        before = verifier_stats(self.expensive)
        work: list[_Query] = []
        bounds = None
        for state in batch:
            if not len(state.candidates):
                continue
            if bounds is None:
                bounds = self.pair_bounds(ctx)
            work.append(self._start(state, bounds, ctx))
        if self.whole_query and work:
            self._whole_query_pass(work, ctx)
        budget = self.delta / 2 if self.bounds == "calibrated" else 0.0
        while True:
            round_pairs: list[tuple[_Query, int, int]] = []
            for q in work:
                if q.done:
                    continue
                probes = self._probes(q, batch.k, budget) if q.rows else []
                if not probes:
                    q.done = True
                    continue
                round_pairs.extend((q, row, pos) for row, pos in probes)
            if not round_pairs:
                break
            self._ask(round_pairs, ctx)
        seconds = time.perf_counter() - start
        after = verifier_stats(self.expensive)
        tokens = after.get("prompt_tokens", 0) - before.get("prompt_tokens", 0)
        total = sum(q.calls for q in work) or 1
        for q in work:
            self._finish(q, batch.k, seconds * q.calls / total, tokens * q.calls / total, ctx)

    def _whole_query_pass(self, work: list[_Query], ctx: SearchContext) -> None:
        """One whole-query verdict per page (within each query's budget, best prior
        first); a sure verdict that agrees with the cheap logic becomes the page's truth."""
        from logic_rag.compose.soft_logic import soft_truth
        from logic_rag.verifiers.base import CheckRequest

        asked: list[tuple[_Query, np.ndarray]] = []
        for q in work:
            n = len(q.state.candidates)
            limit = n if self.max_llm_calls is None else min(n, self.max_llm_calls)
            positions = np.argsort(-q.prior, kind="stable")[:limit]
            if len(positions):
                asked.append((q, positions))
        if not asked:
            return
        requests = [CheckRequest((q.state.plan.text,), q.state.candidates[p]) for q, p in asked]
        checked = self.expensive.check(requests, ctx)
        band = self.whole_query_band
        for (q, positions), result in zip(asked, checked, strict=True):
            verdicts = np.asarray(result.probs, np.float64)[0]
            atoms = q.state.plan.atoms
            cheap = soft_truth(
                q.state.plan.logic,
                {a.text: q.estimate[i, positions] for i, a in enumerate(atoms)},
                self.score.tnorm,
            )
            usable = np.isfinite(verdicts)
            sure = usable & ((verdicts <= band) | (verdicts >= 1.0 - band))
            agrees = (verdicts >= 0.5) == (cheap >= 0.5)
            keep = sure & agrees
            q.fixed = np.full(len(q.state.candidates), np.nan)
            q.fixed[positions[keep]] = verdicts[keep]
            q.calls += len(positions)
            q.whole_calls += len(positions)
            q.unusable += int((~usable).sum())
        for q in work:
            if q.fixed is not None:
                q.state.set_signal(QUERY_TRUTH, q.fixed.copy())

    def _ask(self, pairs: list[tuple[_Query, int, int]], ctx: SearchContext) -> None:
        """The costly verdicts of one round, all queries in one call."""
        owners = {id(q.state): q for q, _, _ in pairs}
        asked = [(q.state, row, pos) for q, row, pos in pairs]
        for state, row, positions, verdicts in check_pairs(self.expensive, asked, ctx):
            q = owners[id(state)]
            q.calls += len(positions)
            usable = np.isfinite(verdicts)
            # An unusable answer is not a check: the pair keeps its bounds, is not asked
            # again, and cannot support a certificate.
            q.failed[row, positions[~usable]] = True
            q.unusable += int((~usable).sum())
            positions, verdicts = positions[usable], verdicts[usable]
            q.lo[row, positions] = q.hi[row, positions] = verdicts
            q.estimate[row, positions] = verdicts
            q.risk_lo[row, positions] = q.risk_hi[row, positions] = 0.0
            q.asked[row, positions] = True
            q.state.mark_checked(np.full(len(positions), row), positions, self.expensive.name)
        for q in {id(q): q for q, _, _ in pairs}.values():
            q.rounds += 1

    def _finish(self, q: _Query, k: int, seconds: float, tokens: float, ctx: SearchContext) -> None:
        state = q.state
        state.probs = q.estimate.copy()
        hits = self._hit_report(q, k, ctx)
        if q.rows:
            q.certified = q.order_certified and all(h["certified"] for h in hits.values())
        stated = None
        if q.certified:
            stated = 1.0 if self.bounds == "hard" else max(0.0, 1.0 - self.delta / 2 - q.risk)
        state.info["llm"] = {
            "calls": q.calls,
            "all_pairs_calls": len(q.rows) * len(state.candidates),
            "prompt_tokens": int(round(tokens)),
            "seconds": round(seconds, 3),
            "rounds": q.rounds,
            "k": k,
            "certified": q.certified,
            "bounds": self.bounds,
            # The probability that the top k equals the all-pairs top k (None: the budget
            # ran out first).
            "probability": None if stated is None else round(stated, 4),
            "budget": self.max_llm_calls,
            "order_certified": q.order_certified,
            "certified_hits": sum(h["certified"] for h in hits.values()),
            "covers": _COVERS[self.polarity],
            "unusable": q.unusable,
            "hits": hits,
        }
        if self.whole_query:
            kept = 0 if q.fixed is None else int(np.isfinite(q.fixed).sum())
            state.info["llm"]["whole_query"] = {"calls": q.whole_calls, "kept": kept}
        if len(state.candidates) <= k:
            # Every candidate is in the top k already: the checks only decide the hits.
            state.info["llm"]["note"] = (
                f"the pool ({len(state.candidates)} candidates) is no larger than k={k}: "
                f"the LLM checks decide which hits satisfy the query, not which pages make "
                f"the top k; ask for fewer hits (k, top_n)"
            )

    def _hit_report(self, q: _Query, k: int, ctx: SearchContext) -> dict[str, dict[str, Any]]:
        """Per hit of the current top k (by document id): whether it is certified, the
        query's three-valued truth from the LLM's verdicts, and which constraints the
        LLM decided, which were irrelevant, which rest on embeddings only and which got
        no usable answer (or were never asked before the budget ran out)."""
        from logic_rag.compose.kleene import FALSE, TRUE

        state = q.state
        low, _ = self._score_bounds(q, q.lo, q.hi)
        answer = np.argsort(-low, kind="stable")[:k]
        truth = self._hit_truth(q, answer)
        plan = state.plan
        eligible = set(q.rows)
        out: dict[str, dict[str, Any]] = {}
        # Keyed by the id a hit will carry (the row, where no documents are at hand).
        documents = getattr(getattr(ctx, "resources", None), "documents", None)
        for pos, value in zip(answer.tolist(), truth.tolist(), strict=True):
            groups: dict[str, list[str]] = {
                "llm": [],
                "irrelevant": [],
                "embedding_only": [],
                "unanswered": [],
                "open": [],
            }
            decided = value != -1
            for i, atom in enumerate(plan.atoms):
                name = f"NOT {atom.text}" if atom in plan.negated else atom.text
                if q.asked[i, pos]:
                    groups["llm"].append(name)
                elif decided:
                    groups["irrelevant"].append(name)
                elif i not in eligible:
                    groups["embedding_only"].append(name)
                elif q.failed[i, pos]:
                    groups["unanswered"].append(name)
                else:
                    groups["open"].append(name)
            verdict = {TRUE: "satisfies", FALSE: "fails"}.get(value, "undecided")
            row = int(state.candidates[pos])
            key = str(row) if documents is None else str(documents[row].id)
            whole = q.fixed is not None and bool(np.isfinite(q.fixed[pos]))
            if whole:  # one verdict on the whole logic covers every constraint
                groups["irrelevant"] = []
            out[key] = {
                "certified": value == TRUE,
                "verdict": verdict,
                "covered_by": "whole query" if whole else "constraints",
                **groups,
            }
        return out


def certificate_line(cost: dict[str, Any]) -> str:
    """What a query's certificate covers, in words (the CLI's cost line ends with it)."""
    k = cost.get("k")
    hits = cost.get("hits") or {}
    covers = cost.get("covers", "every constraint")
    if cost.get("certified"):
        p = cost.get("probability")
        line = f"top {k} certified ({covers} of every hit decided by the LLM or irrelevant)"
        return line + ("" if p in (None, 1.0) else f" with probability >= {p:.2f}")
    parts = [f"{cost.get('certified_hits', 0)} of {len(hits)} hits certified"]
    fails = [key for key, h in hits.items() if h.get("verdict") == "fails"]
    if fails:
        parts.append(f"the LLM says {', '.join(fails)} break the query")
    embedding = sorted({c for h in hits.values() for c in h.get("embedding_only", [])})
    if embedding:
        parts.append(f"{', '.join(embedding)} rest on embeddings only")
    if cost.get("unusable"):
        parts.append(f"{cost['unusable']} unusable LLM answers")
    if not cost.get("order_certified", False):
        parts.append(f"order not certified within the budget of {cost.get('budget')}")
    elif any(h.get("open") for h in hits.values()):
        parts.append(f"budget of {cost.get('budget')} spent")
    return f"top {k} not certified: " + "; ".join(parts)


def verifier_stats(verifier: Verifier) -> dict[str, Any]:
    """The verifier's counters (pairs scored, prompt tokens) where it keeps them."""
    stats = getattr(verifier, "stats", None)
    return dict(stats()) if callable(stats) else {}
