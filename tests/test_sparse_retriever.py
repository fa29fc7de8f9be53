"""Composition of SPLADE query vectors from a LogicalQuery."""

from __future__ import annotations

import numpy as np
import pytest

from logic_rag.compose.sparse_ops import PseudoTermQuery, disentangled_negation, maxpool_union, nrf
from logic_rag.query import And, Atom, Not, Or
from logic_rag.sparse_retriever import compose_sparse

V = {
    "a": np.array([1.0, 2.0, 0.0, 0.0, 0.5], dtype=np.float32),
    "b": np.array([0.0, 1.0, 3.0, 0.0, 0.0], dtype=np.float32),
    "c": np.array([0.5, 0.0, 0.0, 2.0, 0.0], dtype=np.float32),
}
A, B, C = Atom("a"), Atom("b"), Atom("c")


def test_union_is_maxpool_and_negation_is_disentangled():
    np.testing.assert_array_equal(
        compose_sparse(Or((A, B)), V, mode="compose"), maxpool_union(V["a"], V["b"])
    )
    np.testing.assert_array_equal(
        compose_sparse(And((A, Not(C))), V, mode="compose"), disentangled_negation(V["a"], V["c"])
    )
    np.testing.assert_array_equal(
        compose_sparse(And((A, Not(C))), V, mode="nrf", lam=0.5), nrf(V["a"], V["c"], 0.5)
    )


def test_intersection_builds_pseudo_terms_and_keeps_negation():
    q = compose_sparse(And((A, B, Not(C))), V, mode="compose")
    assert isinstance(q, PseudoTermQuery)
    assert q.terms.shape[1] == 2
    assert q.base[3] < 0  # term 3 belongs only to the negated atom: penalised
    np.testing.assert_array_equal(compose_sparse(And((A, B)), V, mode="nrf"), V["a"] + V["b"])


def test_bare_negation_is_refused():
    with pytest.raises(ValueError, match="bare negation"):
        compose_sparse(Not(A), V, mode="compose")
