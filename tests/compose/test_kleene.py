"""Three-valued logic against brute force, and the recall split over a query's logic."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from logic_rag.compose.kleene import FALSE, TRUE, UNKNOWN, atom_requirements, kleene_truth
from logic_rag.query.algebra import And, Atom, LogicalQuery, Not, Or, atoms, truth

A, B, C, D = (Atom(t) for t in "ABCD")


def _random_formula(rng: random.Random, names: list[str], depth: int = 0) -> LogicalQuery:
    if depth >= 2 or rng.random() < 0.3:
        node: LogicalQuery = Atom(rng.choice(names))
    else:
        kind = rng.choice([And, Or])
        node = kind(tuple(_random_formula(rng, names, depth + 1) for _ in range(rng.randint(2, 3))))
    return Not(node) if rng.random() < 0.25 else node


def _occurrences(q: LogicalQuery) -> int:
    if isinstance(q, Atom):
        return 1
    if isinstance(q, Not):
        return _occurrences(q.arg)
    return sum(_occurrences(a) for a in q.args)


def _completions(values: dict[str, int]):
    open_atoms = [k for k, v in values.items() if v == UNKNOWN]
    for bits in itertools.product([False, True], repeat=len(open_atoms)):
        full = {k: bool(v) for k, v in values.items() if v != UNKNOWN}
        full.update(dict(zip(open_atoms, bits, strict=True)))
        yield full


def test_kleene_is_sound_and_complete_for_read_once_formulas():
    rng = random.Random(0)
    checked = 0
    for _ in range(300):
        q = _random_formula(rng, ["A", "B", "C", "D"])
        names = sorted({a.text for a in atoms(q)})
        read_once = _occurrences(q) == len(names)
        for combo in itertools.product([TRUE, FALSE, UNKNOWN], repeat=len(names)):
            values = dict(zip(names, combo, strict=True))
            got = int(kleene_truth(q, {k: np.array([v]) for k, v in values.items()})[0])
            outcomes = {truth(q, full) for full in _completions(values)}
            if got != UNKNOWN:  # sound: every completion agrees
                assert outcomes == {bool(got)}, (q, values)
            if read_once:  # complete: unknown only when completions disagree
                assert (got == UNKNOWN) == (len(outcomes) == 2), (q, values)
            checked += 1
    assert checked > 1000


def test_kleene_short_circuits():
    def k(q, **v):
        return int(kleene_truth(q, {n: np.array([x]) for n, x in v.items()})[0])

    assert k(And((A, B)), A=FALSE, B=UNKNOWN) == FALSE
    assert k(Or((A, B)), A=TRUE, B=UNKNOWN) == TRUE
    assert k(And((A, Not(B))), A=UNKNOWN, B=TRUE) == FALSE
    assert k(And((A, B)), A=TRUE, B=UNKNOWN) == UNKNOWN
    with pytest.raises(KeyError, match="no verdicts"):
        kleene_truth(A, {})


def test_requirements_split_over_the_logic():
    assert atom_requirements(A, 0.9) == {("A", True): 0.9}
    assert atom_requirements(And((A, B)), 0.9) == pytest.approx(
        {("A", True): 0.95, ("B", True): 0.95}
    )
    assert atom_requirements(Or((A, B, C)), 0.9) == {(n, True): 0.9 for n in "ABC"}
    got = atom_requirements(And((A, Not(B))), 0.9)
    assert got == pytest.approx({("A", True): 0.95, ("B", False): 0.95})
    # De Morgan: NOT (A AND B) is (NOT A) OR (NOT B): each keeps the whole target.
    assert atom_requirements(Not(And((A, B))), 0.8) == {("A", False): 0.8, ("B", False): 0.8}
    # NOT (C OR D) is (NOT C) AND (NOT D): the AND's 0.9 is split again.
    got = atom_requirements(And((A, B, Not(Or((C, D))))), 0.7)
    expected = {("A", True): 0.9, ("B", True): 0.9, ("C", False): 0.95, ("D", False): 0.95}
    assert got == pytest.approx(expected)
    with pytest.raises(ValueError):
        atom_requirements(A, 0.0)


def test_meeting_every_atom_requirement_keeps_the_result_set_recall():
    """Simulate a cascade that loses each atom's verdicts at exactly its allowed rate."""
    rng = random.Random(1)
    gen = np.random.default_rng(1)
    for _ in range(40):
        q = _random_formula(rng, ["A", "B", "C"])
        target = 0.8
        needs = atom_requirements(q, target)
        names = sorted({a.text for a in atoms(q)})
        n = 20000
        oracle = {t: gen.random(n) < 0.5 for t in names}
        truth_oracle = kleene_truth(q, {t: v.astype(np.int8) for t, v in oracle.items()}) == TRUE
        if truth_oracle.sum() < 500:
            continue
        decided = {}
        for t in names:
            v = oracle[t].copy()
            if (t, True) in needs:  # lose true verdicts at 1 - target
                v[v & (gen.random(n) < 1 - needs[(t, True)])] = False
            if (t, False) in needs:  # turn false verdicts true at 1 - target
                v[~oracle[t] & (gen.random(n) < 1 - needs[(t, False)])] = True
            decided[t] = v.astype(np.int8)
        kept = kleene_truth(q, decided) == TRUE
        recall = (kept & truth_oracle).sum() / truth_oracle.sum()
        assert recall >= target - 0.01, (q, recall)
