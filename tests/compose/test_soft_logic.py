"""Soft set algebra reduces to exact set algebra on 0/1 inputs; fusion on hand cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logic_rag.compose.soft_logic import fuse_scores, soft_truth
from logic_rag.query import And, Atom, Not, Or, evaluate

ATOMS = ["a", "b", "c", "d"]


def trees(depth: int = 3):
    leaf = st.sampled_from(ATOMS).map(Atom)
    return st.recursive(
        leaf,
        lambda kids: st.one_of(
            st.lists(kids, min_size=2, max_size=3).map(lambda xs: And(tuple(xs))),
            st.lists(kids, min_size=2, max_size=3).map(lambda xs: Or(tuple(xs))),
            kids.map(Not),
        ),
        max_leaves=6,
    )


@settings(max_examples=150, deadline=None)
@given(q=trees(), seed=st.integers(0, 10_000), tnorm=st.sampled_from(["product", "godel"]))
def test_crisp_inputs_give_exact_set_algebra(q, seed, tnorm):
    rng = np.random.default_rng(seed)
    universe = list(range(25))
    member = {a: rng.random(len(universe)) < 0.4 for a in ATOMS}
    sets = {a: {u for u in universe if member[a][u]} for a in ATOMS}
    probs = {a: member[a].astype(float) for a in ATOMS}
    soft = soft_truth(q, probs, tnorm)
    exact = evaluate(q, sets, set(universe))
    assert {u for u in universe if soft[u] > 0.5} == exact
    assert set(np.unique(soft)) <= {0.0, 1.0}


@settings(max_examples=100, deadline=None)
@given(q=trees(), seed=st.integers(0, 10_000))
def test_soft_values_stay_in_unit_interval_and_godel_bounds_product_for_and(q, seed):
    rng = np.random.default_rng(seed)
    probs = {a: rng.random(10) for a in ATOMS}
    for tnorm in ("product", "godel"):
        v = soft_truth(q, probs, tnorm)
        assert np.all((v >= -1e-12) & (v <= 1 + 1e-12))
    conj = And((Atom("a"), Atom("b")))
    assert np.all(soft_truth(conj, probs, "product") <= soft_truth(conj, probs, "godel") + 1e-12)


def test_hand_values():
    probs = {"a": np.array([0.9]), "b": np.array([0.2])}
    a, b = Atom("a"), Atom("b")
    assert soft_truth(And((a, Not(b))), probs)[0] == pytest.approx(0.9 * 0.8)
    assert soft_truth(Or((a, b)), probs)[0] == pytest.approx(1 - 0.1 * 0.8)
    assert soft_truth(Or((a, b)), probs, "godel")[0] == pytest.approx(0.9)
    with pytest.raises(KeyError, match="'c'"):
        soft_truth(Atom("c"), probs)


def test_fusion_adds_intersects_and_subtracts():
    s = {"a": np.array([0.5, 0.1]), "b": np.array([0.3, 0.6]), "c": np.array([0.2, 0.0])}
    a, b, c = Atom("a"), Atom("b"), Atom("c")
    np.testing.assert_allclose(fuse_scores(And((a, b)), s), [0.8, 0.7])
    np.testing.assert_allclose(fuse_scores(And((a, b, Not(c))), s), [0.6, 0.7])
    np.testing.assert_allclose(fuse_scores(Or((a, b)), s), [0.5, 0.6])
    np.testing.assert_allclose(fuse_scores(And((a, b)), s, op="product"), [0.75 * 0.65, 0.55 * 0.8])
    np.testing.assert_allclose(
        fuse_scores(And((a, Not(c))), s, negation_weight=0.5), [0.5 - 0.1, 0.1]
    )
