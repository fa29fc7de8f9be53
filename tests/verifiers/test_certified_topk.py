"""Certified top-k verification against brute force: the all-pairs verifier's top k.

The stage is run on hand-built query states (random priors, cheap probabilities, costly
verdicts and logic trees), with a table verifier as the costly one, and compared with
checking every eligible pair of the pool: the same top-k set under hard bounds, on every
case; under calibrated bounds, the same with the stated probability over many fits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from logic_rag.compose.bounds import truth_bounds
from logic_rag.compose.score import Score
from logic_rag.compose.soft_logic import soft_truth
from logic_rag.pipeline.state import QueryPlan, QueryState, SearchBatch
from logic_rag.query.algebra import And, Atom, Not, Or, negated_atoms
from logic_rag.verifiers.base import Checked, Verifier
from logic_rag.verifiers.certified import CertifiedTopK
from logic_rag.verifiers.thresholds import CascadeSample, CascadeThresholds

PRIOR = (("cosine", 1.0),)
W = 0.75
SCORE = Score(PRIOR, W)


@dataclass(frozen=True, eq=False)
class TableVerifier(Verifier):
    """Costly verdicts looked up in a table: {(query index, atom, row): P(yes)}."""

    table: dict = field(default_factory=dict)
    asked: list = field(default_factory=list)
    name: str = "llm"

    def check(self, requests, ctx):
        out = []
        for request in requests:
            (atom,) = request.atoms
            values = [self.table[(atom, int(r))] for r in request.rows.tolist()]
            self.asked.extend((atom, int(r)) for r in request.rows.tolist())
            out.append(Checked(np.array([values]), None))
        return out


class _Ctx:
    resources = None


def _random_logic(rng: np.random.Generator, names: list[str]):
    """A random tree over 1-3 distinct atoms (each used once), NOT only on atoms."""
    atoms = [Atom(n) for n in names[: rng.integers(1, 4)]]
    leaves = [Not(a) if rng.random() < 0.3 and len(atoms) > 1 else a for a in atoms]
    if len(leaves) == 1:
        return leaves[0] if isinstance(leaves[0], Atom) else atoms[0]
    if all(isinstance(x, Not) for x in leaves):
        leaves[0] = atoms[0]
    if len(leaves) == 3 and rng.random() < 0.5:
        inner = Or((leaves[1], leaves[2])) if rng.random() < 0.5 else And((leaves[1], leaves[2]))
        return And((leaves[0], inner)) if rng.random() < 0.7 else Or((leaves[0], inner))
    return And(tuple(leaves)) if rng.random() < 0.7 else Or(tuple(leaves))


def _case(rng: np.random.Generator, *, proxy_noise: float = 0.35):
    n = int(rng.integers(2, 40))
    logic = _random_logic(rng, [f"atom{i}" for i in range(3)])
    state = QueryState(QueryPlan("query", logic))
    state.candidates = np.arange(n, dtype=np.int64)
    atoms = state.plan.atoms
    truth = rng.random((len(atoms), n)) < 0.4  # what the costly verifier will say
    costly = np.where(truth, rng.uniform(0.6, 1.0, truth.shape), rng.uniform(0.0, 0.4, truth.shape))
    cheap = np.clip(costly + rng.normal(0, proxy_noise, costly.shape), 0.0, 1.0)
    state.set_probs(cheap, None, "embedding")
    state.set_signal("cosine", rng.uniform(0.2, 0.6, n))
    table = {(a.text, j): float(costly[i, j]) for i, a in enumerate(atoms) for j in range(n)}
    return state, costly, table


def _all_pairs_topk(state: QueryState, costly: np.ndarray, k: int, polarity: str) -> set[int]:
    probs = state.probs.copy()
    negated = state.plan.negated
    for i, a in enumerate(state.plan.atoms):
        if polarity == "all" or (a in negated) == (polarity == "negated"):
            probs[i] = costly[i]
    truth = soft_truth(state.plan.logic, {a.text: probs[i] for i, a in enumerate(state.plan.atoms)})
    score = state.signals["cosine"] + W * truth
    return set(np.argsort(-score)[:k].tolist())


def _certified_topk(state: QueryState, k: int) -> set[int]:
    truth = soft_truth(
        state.plan.logic, {a.text: state.probs[i] for i, a in enumerate(state.plan.atoms)}
    )
    score = state.signals["cosine"] + W * truth
    return set(np.argsort(-score)[:k].tolist())


@pytest.mark.parametrize("polarity", ["positive", "all"])
def test_hard_bounds_give_exactly_the_all_pairs_top_k(polarity: str) -> None:
    rng = np.random.default_rng(7)
    fewer = 0
    for _ in range(300):
        state, costly, table = _case(rng)
        k = int(rng.integers(1, 8))
        verifier = TableVerifier(table)
        before = _all_pairs_topk(state, costly, k, polarity)
        stage = CertifiedTopK(verifier, score=SCORE, polarity=polarity, max_llm_calls=None)
        stage.run(SearchBatch([state], k), _Ctx())
        info = state.info["llm"]
        assert info["order_certified"]
        assert _certified_topk(state, k) == before, (state.plan.logic, k)
        assert info["calls"] == len(set(verifier.asked)) <= info["all_pairs_calls"]
        # A hit is certified exactly when the LLM's verdicts (all of them, under "all")
        # make the query true in three-valued logic; the top k when all its hits are.
        truth = _kleene(state, costly, polarity)
        for key, hit in info["hits"].items():
            assert hit["certified"] == (truth[int(key)] == 1), (state.plan.logic, key, hit)
        assert info["certified"] == all(h["certified"] for h in info["hits"].values())
        assert (info["probability"] == 1.0) == info["certified"]
        fewer += info["calls"] < info["all_pairs_calls"]
    assert fewer > 100  # certification usually needs far fewer than all pairs


def _kleene(state: QueryState, costly: np.ndarray, polarity: str) -> np.ndarray:
    """The query's three-valued truth per candidate when the costly verifier answered
    every eligible atom (the others unknown)."""
    from logic_rag.compose.kleene import kleene_truth

    negated = state.plan.negated
    values = {}
    for i, a in enumerate(state.plan.atoms):
        eligible = polarity == "all" or (a in negated) == (polarity == "negated")
        known = (costly[i] >= 0.5).astype(np.int8)
        values[a.text] = known if eligible else np.full(len(known), -1, np.int8)
    return kleene_truth(state.plan.logic, values)


def test_budget_stops_early_and_says_it_is_not_certified() -> None:
    rng = np.random.default_rng(3)
    state, _costly, table = _case(rng)
    while len(state.candidates) < 20:
        state, _costly, table = _case(rng)
    stage = CertifiedTopK(TableVerifier(table), score=SCORE, max_llm_calls=2)
    stage.run(SearchBatch([state], 5), _Ctx())
    info = state.info["llm"]
    assert info["calls"] <= 2
    assert info["certified"] is False and info["probability"] is None


def test_checked_pairs_are_marked_as_the_llm_s() -> None:
    rng = np.random.default_rng(11)
    state, _costly, table = _case(rng)
    verifier = TableVerifier(table)
    CertifiedTopK(verifier, score=SCORE, max_llm_calls=None).run(SearchBatch([state], 3), _Ctx())
    rows, positions = np.nonzero(state.pair_source == "llm")
    asked = {(state.plan.atoms[i].text, j) for i, j in zip(rows, positions, strict=True)}
    assert asked == set(verifier.asked)


def test_truth_bounds_enclose_every_assignment() -> None:
    rng = np.random.default_rng(5)
    for _ in range(200):
        logic = _random_logic(rng, ["a", "b", "c"])
        names = sorted({a.text for a in _atoms(logic)})
        lo = {n: rng.uniform(0, 1, 1) for n in names}
        hi = {n: np.minimum(1.0, lo[n] + rng.uniform(0, 1, 1)) for n in names}
        low, high = truth_bounds(logic, lo, hi)
        for _ in range(20):
            point = {n: lo[n] + rng.random() * (hi[n] - lo[n]) for n in names}
            t = soft_truth(logic, point)
            assert low[0] - 1e-12 <= t[0] <= high[0] + 1e-12


def _atoms(q):
    from logic_rag.query.algebra import atoms

    return atoms(q)


def test_calibrated_bounds_hold_with_the_stated_probability() -> None:
    """Over 120 simulated fits: a fresh labelled sample each time, then queries whose
    cheap scores predict the costly verdicts well; the calibrated certificate must match
    the all-pairs top k in at least 1 - delta of the queries it certifies."""
    delta = 0.2
    wrong = certified = 0
    calls_cal = calls_hard = 0
    for fit in range(120):
        rng = np.random.default_rng(1000 + fit)
        sample = CascadeSample()
        for _ in range(2000):
            yes = rng.random() < 0.3
            costly = rng.uniform(0.7, 1.0) if yes else rng.uniform(0.0, 0.3)
            cheap = float(np.clip((0.8 if yes else 0.2) + rng.normal(0, 0.12), 0, 1))
            sample.add(cheap, costly, 1.0, True)
        thresholds = CascadeThresholds(sample, {})
        state, costly, table = _case(rng, proxy_noise=0.0)
        # Regenerate the cheap scores from the same model as the sample.
        atoms = state.plan.atoms
        yes = costly >= 0.5
        cheap = np.clip(np.where(yes, 0.8, 0.2) + rng.normal(0, 0.12, costly.shape), 0, 1)
        state.set_probs(cheap, None, "embedding")
        if not any(a not in state.plan.negated for a in atoms):
            continue
        k = 3
        expected = _all_pairs_topk(state, costly, k, "positive")
        hard_state = _copy(state)
        stage = CertifiedTopK(
            TableVerifier(table),
            score=SCORE,
            polarity="positive",
            max_llm_calls=None,
        )
        stage.run(SearchBatch([hard_state], k), _Ctx())
        calls_hard += hard_state.info["llm"]["calls"]
        cal = _CalibratedStage(thresholds, table, delta)
        cal.stage.run(SearchBatch([state], k), _Ctx())
        info = state.info["llm"]
        calls_cal += info["calls"]
        if info["order_certified"]:
            certified += 1
            wrong += _certified_topk(state, k) != expected
    assert certified >= 60
    assert wrong / certified <= delta
    assert calls_cal <= calls_hard


class _CalibratedStage:
    def __init__(self, thresholds, table, delta):
        from logic_rag.verifiers.pair_bounds import CalibratedBounds

        bounds = CalibratedBounds(thresholds, fit_delta=delta / 2)

        class Stage(CertifiedTopK):
            def pair_bounds(self, ctx):
                return bounds

        self.stage = Stage(
            TableVerifier(table),
            score=SCORE,
            polarity="positive",
            bounds="calibrated",
            thresholds="unused.json",
            delta=delta,
            max_llm_calls=None,
        )


def _copy(state: QueryState) -> QueryState:
    out = QueryState(state.plan)
    out.candidates = state.candidates.copy()
    out.set_probs(state.probs.copy(), None, "embedding")
    out.set_signal("cosine", state.signals["cosine"].copy())
    return out


def test_negated_atoms_never_asked_under_positive_polarity() -> None:
    rng = np.random.default_rng(2)
    for _ in range(50):
        state, _costly, table = _case(rng)
        verifier = TableVerifier(table)
        CertifiedTopK(verifier, score=SCORE, polarity="positive", max_llm_calls=None).run(
            SearchBatch([state], 2), _Ctx()
        )
        negated = {a.text for a in negated_atoms(state.plan.logic)}
        assert not negated & {atom for atom, _ in verifier.asked}


def test_a_pool_no_larger_than_k_asks_only_what_decides_the_hits_and_says_why() -> None:
    rng = np.random.default_rng(9)
    state, costly, table = _case(rng)
    verifier = TableVerifier(table)
    CertifiedTopK(verifier, score=SCORE, max_llm_calls=None).run(
        SearchBatch([state], len(state.candidates)), _Ctx()
    )
    info = state.info["llm"]
    assert info["order_certified"] and "no larger than k" in info["note"]
    truth = _kleene(state, costly, "all")
    assert info["certified"] == bool((truth == 1).all())
    assert all(h["verdict"] != "undecided" for h in info["hits"].values())
    assert info["calls"] <= info["all_pairs_calls"]


def _salads(*, polarity: str, answers: dict | None = None):
    """Four recipes for "salads without cheese": the two with the best prior contain
    cheese, as the LLM (the table) says; the cheap evidence missed it."""
    logic = And((Atom("salads"), Not(Atom("cheese"))))
    state = QueryState(QueryPlan("salads without cheese", logic))
    state.candidates = np.arange(4, dtype=np.int64)
    # rows: salads, cheese; the cheap evidence thinks no page has cheese.
    state.set_probs(np.array([[0.9, 0.9, 0.9, 0.9], [0.1, 0.1, 0.1, 0.1]]), None, "embedding")
    state.set_signal("cosine", np.array([0.6, 0.55, 0.3, 0.25]))
    table = answers or {
        **{("salads", j): 0.95 for j in range(4)},
        **{("cheese", 0): 0.97, ("cheese", 1): 0.9, ("cheese", 2): 0.05, ("cheese", 3): 0.1},
    }
    verifier = TableVerifier(table)
    stage = CertifiedTopK(verifier, score=SCORE, polarity=polarity, max_llm_calls=None)
    return state, verifier, stage


def test_a_hit_the_llm_says_breaks_a_not_is_never_in_a_certified_top_k() -> None:
    state, verifier, stage = _salads(polarity="all")
    stage.run(SearchBatch([state], 2), _Ctx())
    info = state.info["llm"]
    assert info["certified"] and info["covers"] == "every constraint"
    assert set(info["hits"]) == {"2", "3"}  # the cheese salads fell out of the top 2
    assert all(h["verdict"] == "satisfies" for h in info["hits"].values())
    assert all("NOT cheese" in h["llm"] for h in info["hits"].values())
    # Asked for k = 3, one hit must be a cheese salad: the top 3 is not certified.
    state, verifier, stage = _salads(polarity="all")
    stage.run(SearchBatch([state], 3), _Ctx())
    info = state.info["llm"]
    assert not info["certified"] and info["order_certified"]
    failing = [key for key, h in info["hits"].items() if h["verdict"] == "fails"]
    assert failing == ["0"] and not info["hits"]["0"]["certified"]
    assert info["certified_hits"] == 2


def test_a_not_left_to_embeddings_is_named_and_never_certified() -> None:
    state, verifier, stage = _salads(polarity="positive")
    stage.run(SearchBatch([state], 2), _Ctx())
    info = state.info["llm"]
    assert not info["certified"] and info["certified_hits"] == 0
    assert not {atom for atom, _ in verifier.asked} & {"cheese"}
    for hit in info["hits"].values():
        assert hit["embedding_only"] == ["NOT cheese"] and hit["verdict"] == "undecided"
    from logic_rag.verifiers.certified import certificate_line

    line = certificate_line(info)
    assert "not certified" in line and "NOT cheese rest on embeddings only" in line


def test_unusable_answers_are_not_checks_and_cannot_certify() -> None:
    answers = {(a, j): float("nan") for a in ("salads", "cheese") for j in range(4)}
    state, verifier, stage = _salads(polarity="all", answers=answers)
    stage.run(SearchBatch([state], 2), _Ctx())
    info = state.info["llm"]
    assert not info["certified"] and info["certified_hits"] == 0
    assert info["unusable"] == info["calls"] > 0
    assert len(verifier.asked) == len(set(verifier.asked))  # never asked twice
    assert state.pair_source is None or not (state.pair_source == "llm").any()
    assert all(h["unanswered"] for h in info["hits"].values())
    assert np.isfinite(state.probs).all()  # the ranking keeps the cheap estimates
