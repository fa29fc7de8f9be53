"""The cascade stage against the all-pairs verifier, on small inputs with test doubles.

The cheap probabilities are set by hand, the costly verifier is a table that records
every pair it is asked; the thresholds come from a saved sample, so the bands are known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest

from logic_rag.compose.kleene import kleene_truth
from logic_rag.pipeline.state import QueryPlan, QueryState, SearchBatch
from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or
from logic_rag.verifiers.base import Checked, Verifier, Verify
from logic_rag.verifiers.cascade import CascadeVerify
from logic_rag.verifiers.thresholds import CascadeSample, CascadeThresholds


@dataclass(frozen=True, eq=False)
class TableVerifier(Verifier):
    """P(row satisfies atom) from a table; remembers every (atom, row) it was asked."""

    table: dict = field(default_factory=dict)
    asked: list = field(default_factory=list)
    name: str = "table"

    def fingerprint(self) -> str:
        return "table"

    def check(self, requests, ctx):
        out = []
        for r in requests:
            probs = np.array([[self.table[(a, int(row))] for row in r.rows] for a in r.atoms])
            self.asked.extend((a, int(row)) for a in r.atoms for row in r.rows)
            out.append(Checked(probs))
        return out


@dataclass(frozen=True)
class FixedVerifier(Verifier):
    """The cheap verifier: probabilities given per atom as a tuple over rows."""

    probs: tuple = ()
    name: str = "cheap"

    def check(self, requests, ctx):
        table = dict(self.probs)
        return [
            Checked(np.array([[table[a][int(row)] for row in r.rows] for a in r.atoms]))
            for r in requests
        ]


class _Resources:
    """What the cascade reads of a retriever's resources: encoder name, corpus
    fingerprint, and the per-retriever memo (fresh for every run here)."""

    dense = SimpleNamespace(encoder=SimpleNamespace(name="enc"))

    def __init__(self) -> None:
        self.memo: dict = {}

    def corpus_fingerprint(self) -> str:
        return "corpus"

    def loaded(self, key, load):
        if key not in self.memo:
            self.memo[key] = load()
        return self.memo[key]


def _ctx() -> SimpleNamespace:
    return SimpleNamespace(resources=_Resources())


CTX = _ctx()


def _key(polarity: str = "all") -> dict[str, str]:
    return {"expensive": "table", "encoder": "enc", "polarity": polarity, "corpus": "corpus"}


def _thresholds(tmp_path, lo: float, hi: float, name: str = "t.json", polarity: str = "all") -> str:
    """A saved sample whose fitted positive band is about [lo, hi): many clean labels."""
    sample = CascadeSample()
    for s in np.linspace(0, 1, 2001):
        label = 1.0 if s >= hi else 0.0 if s < lo else (1.0 if (s * 1000) % 2 < 1 else 0.0)
        sample.add(float(s), label, 1.0, True)
        sample.add(float(s), 1.0 - label, 1.0, False)
    path = tmp_path / name
    CascadeThresholds(sample, _key(polarity)).save(path)
    return str(path)


def _run(logic: LogicalQuery, cheap: dict, costly: TableVerifier, stage: CascadeVerify):
    atoms = [a.text for a in QueryPlan("q", logic).atoms]
    n = len(next(iter(cheap.values())))
    state = QueryState(QueryPlan("q", logic))
    state.add_candidates("given", np.arange(n), -np.arange(n, dtype=float))
    batch = SearchBatch([state], k=n)
    ctx = _ctx()
    Verify(FixedVerifier(tuple((a, tuple(cheap[a])) for a in atoms))).run(batch, ctx)
    stage.run(batch, ctx)
    return state


def _costly(logic, rng, n):
    atoms = [a.text for a in QueryPlan("q", logic).atoms]
    return TableVerifier(
        {(a, r): float(rng.random() < 0.5) * 0.9 + 0.05 for a in atoms for r in range(n)}
    )


LOGICS = [
    Atom("a"),
    And((Atom("a"), Atom("b"))),
    Or((Atom("a"), Atom("b"))),
    And((Atom("a"), Not(Atom("b")))),
    And((Or((Atom("a"), Atom("b"))), Not(Atom("c")))),
]


@pytest.mark.parametrize("logic", LOGICS)
def test_a_band_over_everything_without_short_circuit_is_the_all_pairs_verifier(tmp_path, logic):
    rng = np.random.default_rng(0)
    n = 12
    atoms = [a.text for a in QueryPlan("q", logic).atoms]
    cheap = {a: rng.random(n).tolist() for a in atoms}
    costly = _costly(logic, rng, n)
    path = _thresholds(tmp_path, 0.3, 0.7)
    # Targets of 1 can only be met by deciding nothing: every pair is open.
    stage = CascadeVerify(
        costly, polarity="all", thresholds=path, short_circuit=False, recall=1.0, precision=1.0
    )
    got = _run(logic, cheap, costly, stage)
    all_pairs = QueryState(QueryPlan("q", logic))
    all_pairs.add_candidates("given", np.arange(n), -np.arange(n, dtype=float))
    batch = SearchBatch([all_pairs], k=n)
    Verify(FixedVerifier(tuple((a, tuple(cheap[a])) for a in atoms))).run(batch, CTX)
    Verify(TableVerifier(costly.table)).run(batch, CTX)
    np.testing.assert_array_equal(got.probs, all_pairs.probs)
    assert got.info["cascade"]["expensive_calls"] == len(atoms) * n
    assert got.info["cascade"]["all_pairs_calls"] == len(atoms) * n


@pytest.mark.parametrize("logic", LOGICS)
def test_short_circuit_keeps_the_all_pairs_truth_and_asks_less(tmp_path, logic):
    rng = np.random.default_rng(1)
    n = 30
    atoms = [a.text for a in QueryPlan("q", logic).atoms]
    cheap = {a: rng.random(n).tolist() for a in atoms}
    costly = _costly(logic, rng, n)
    path = _thresholds(tmp_path, 0.3, 0.7)
    stage = CascadeVerify(costly, polarity="all", thresholds=path, recall=1.0, precision=1.0)
    got = _run(logic, cheap, costly, stage)
    verdict = {
        a: np.array([costly.table[(a, r)] >= 0.5 for r in range(n)], dtype=np.int8) for a in atoms
    }
    want = kleene_truth(logic, verdict)
    asked = {a: np.zeros(n, dtype=np.int8) - 1 for a in atoms}
    for a, r in costly.asked:
        asked[a][r] = verdict[a][r]
    # The asked verdicts alone settle every page, and settle it as all pairs would.
    np.testing.assert_array_equal(kleene_truth(logic, asked), want)
    assert len(set(costly.asked)) == len(costly.asked)  # nothing asked twice
    for a, r in costly.asked:  # asked pairs carry the costly verdict itself
        assert got.probs[atoms.index(a), r] == costly.table[(a, r)]
    if len(atoms) > 1:
        assert len(costly.asked) < len(atoms) * n


def test_the_costly_verifier_is_never_asked_outside_the_band(tmp_path):
    rng = np.random.default_rng(2)
    n = 200
    logic = And((Atom("a"), Atom("b")))
    cheap = {"a": rng.random(n).tolist(), "b": rng.random(n).tolist()}
    costly = _costly(logic, rng, n)
    path = _thresholds(tmp_path, 0.3, 0.7)
    state = _run(logic, cheap, costly, CascadeVerify(costly, polarity="all", thresholds=path))
    bands = state.info["cascade"]["bands"]
    assert costly.asked
    for atom, row in costly.asked:
        lo, hi = bands[atom]
        assert lo <= cheap[atom][row] < hi, (atom, row, cheap[atom][row], bands[atom])
    assert 0 < state.info["cascade"]["expensive_calls"] < state.info["cascade"]["all_pairs_calls"]


def test_a_confident_false_conjunct_sends_nothing_else():
    """AND: page 0's first atom is confidently false, so its second is never asked; OR:
    page 1's first atom is confidently true, so its second is never asked."""
    sample = CascadeSample()
    for s in np.linspace(0, 1, 4001):
        sample.add(float(s), float(s >= 0.5), 1.0, True)
        sample.add(float(s), float(s >= 0.5), 1.0, False)
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    path = CascadeThresholds(sample, _key()).save(folder / "t.json")
    costly = TableVerifier({(a, r): 0.9 for a in "ab" for r in range(2)})
    cheap = {"a": [0.01, 0.5], "b": [0.5, 0.5]}  # 0.5 lies in the band
    state = _run(
        And((Atom("a"), Atom("b"))),
        cheap,
        costly,
        CascadeVerify(costly, polarity="all", thresholds=str(path), precision=0.999),
    )
    assert ("b", 0) not in costly.asked and ("a", 0) not in costly.asked
    assert state.probs[0, 0] < 0.05  # decided false: the costly verifier's expectation
    costly2 = TableVerifier({(a, r): 0.9 for a in "ab" for r in range(2)})
    cheap = {"a": [0.5, 0.999], "b": [0.5, 0.5]}
    _run(
        Or((Atom("a"), Atom("b"))),
        cheap,
        costly2,
        CascadeVerify(costly2, polarity="all", thresholds=str(path), recall=0.5),
    )
    assert ("b", 1) not in costly2.asked


def test_only_the_chosen_polarity_goes_to_the_costly_verifier(tmp_path):
    rng = np.random.default_rng(4)
    n = 20
    logic = And((Atom("a"), Not(Atom("b"))))
    cheap = {"a": rng.random(n).tolist(), "b": rng.random(n).tolist()}
    costly = _costly(logic, rng, n)
    path = _thresholds(tmp_path, 0.3, 0.7, polarity="positive")
    state = _run(logic, cheap, costly, CascadeVerify(costly, thresholds=path))
    assert costly.asked and all(a == "a" for a, _ in costly.asked)
    np.testing.assert_array_equal(state.probs[1], np.array(cheap["b"]))  # untouched


def test_fitting_on_the_batch_labels_a_sample_and_reuses_its_answers(tmp_path):
    rng = np.random.default_rng(5)
    n = 60
    logic = And((Atom("a"), Atom("b")))
    cheap = {"a": rng.random(n).tolist(), "b": rng.random(n).tolist()}
    costly = _costly(logic, rng, n)
    out = tmp_path / "fitted.json"
    state = _run(logic, cheap, costly, CascadeVerify(costly, thresholds=str(out), sample_size=40))
    info = state.info["cascade"]
    assert out.is_file() and len(CascadeThresholds.load(out).sample) == 40
    assert 0 < info["fit_calls"] <= 40
    assert len(set(costly.asked)) == len(costly.asked)  # sampled pairs are not re-asked


def test_settings_are_checked_and_a_missing_cheap_verifier_is_explained():
    costly = TableVerifier({})
    with pytest.raises(ValueError):
        CascadeVerify(costly, recall=0.0)
    with pytest.raises(ValueError):
        CascadeVerify(costly, delta=1.0)
    state = QueryState(QueryPlan("q", Atom("a")))
    state.add_candidates("given", np.arange(2), np.zeros(2))
    with pytest.raises(ValueError, match="cheap verifier"):
        CascadeVerify(costly).run(SearchBatch([state], k=2), CTX)


def test_thresholds_of_another_corpus_are_refused(tmp_path):
    rng = np.random.default_rng(6)
    logic = And((Atom("a"), Atom("b")))
    cheap = {"a": rng.random(5).tolist(), "b": rng.random(5).tolist()}
    costly = _costly(logic, rng, 5)
    sample = CascadeSample()
    sample.add(0.5, 1.0, 1.0, True)
    path = tmp_path / "other.json"
    CascadeThresholds(sample, {**_key(), "corpus": "another corpus"}).save(path)
    stage = CascadeVerify(costly, polarity="all", thresholds=str(path))
    with pytest.raises(ValueError, match="fitted for another corpus"):
        _run(logic, cheap, costly, stage)
