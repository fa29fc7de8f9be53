"""Set operations on query vectors against slow references written from the formulas."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from logic_rag.compose.sparse_ops import (
    PseudoTermQuery,
    as_vector,
    combined_pseudo_terms,
    disentangled_negation,
    maxpool_union,
    nrf,
    orthogonal_negation,
    pseudo_term_scores,
    search_pseudo_terms,
    to_csr,
)
from logic_rag.index.inverted import InvertedIndex

V = 60


def _sparse_vec(rng: np.random.Generator, nnz: int = 12) -> np.ndarray:
    """A SPLADE-like query vector: non-negative weights on a few terms."""
    v = np.zeros(V, dtype=np.float32)
    v[rng.choice(V, size=nnz, replace=False)] = rng.uniform(0.1, 3.0, size=nnz)
    return v


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def test_maxpool_union_reference(rng) -> None:
    a, b, c = (_sparse_vec(rng) for _ in range(3))
    ref2 = [max(float(a[j]), float(b[j])) for j in range(V)]
    ref3 = [max(float(a[j]), float(b[j]), float(c[j])) for j in range(V)]
    np.testing.assert_array_equal(maxpool_union(a, b), np.float32(ref2))
    np.testing.assert_array_equal(maxpool_union(a, b, c), np.float32(ref3))
    assert maxpool_union(a, b).dtype == np.float32


def test_disentangled_negation_reference(rng) -> None:
    a, b = _sparse_vec(rng, 20), _sparse_vec(rng, 20)
    shared = np.flatnonzero((a != 0) & (b != 0))
    assert shared.size > 0  # the case the method exists for
    # a − (b − 1_a ⊙ b), term by term
    ref = [
        float(a[j]) - (float(b[j]) - (1.0 if a[j] != 0 else 0.0) * float(b[j])) for j in range(V)
    ]
    got = disentangled_negation(a, b)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-6)
    # what the formula means: A's terms untouched (shared ones too), B-only terms negated
    np.testing.assert_array_equal(got[a != 0], a[a != 0])
    only_b = (a == 0) & (b != 0)
    np.testing.assert_array_equal(got[only_b], -b[only_b])
    assert (got[shared] > 0).all()


def test_disentangled_negation_n_ary_is_negation_of_union(rng) -> None:
    a, b, c = (_sparse_vec(rng, 15) for _ in range(3))
    got = disentangled_negation(a, b, c)
    ref = [float(a[j]) if a[j] != 0 else -max(float(b[j]), float(c[j])) for j in range(V)]
    np.testing.assert_allclose(got, ref, atol=1e-6)


def test_nrf_reference(rng) -> None:
    a, b = _sparse_vec(rng), _sparse_vec(rng)
    for lam in (0.0, 0.5, 2.0):
        ref = [float(a[j]) - lam * float(b[j]) for j in range(V)]
        np.testing.assert_allclose(nrf(a, b, lam), ref, atol=1e-6)
    with pytest.raises(ValueError, match="lam"):
        nrf(a, b, -1.0)


def test_orthogonal_negation(rng) -> None:
    a = rng.normal(size=384).astype(np.float32)  # dense embeddings work too
    b = rng.normal(size=384).astype(np.float32)
    got = orthogonal_negation(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    coef = sum(x * y for x, y in zip(a64, b64, strict=True)) / sum(y * y for y in b64)
    np.testing.assert_allclose(got, a64 - coef * b64, rtol=1e-5, atol=1e-5)
    assert abs(float(got.astype(np.float64) @ b64)) < 1e-3
    np.testing.assert_array_equal(orthogonal_negation(a, np.zeros_like(b)), a)


def test_sparse_rows_are_accepted(rng) -> None:
    a, b = _sparse_vec(rng), _sparse_vec(rng)
    np.testing.assert_array_equal(
        disentangled_negation(sp.csr_matrix(a), sp.csr_matrix(b)), disentangled_negation(a, b)
    )
    csr = to_csr(a, b)
    assert csr.shape == (2, V)
    np.testing.assert_array_equal(as_vector(csr[1]), b)


def test_bad_inputs(rng) -> None:
    a = _sparse_vec(rng)
    with pytest.raises(ValueError, match="differ in size"):
        maxpool_union(a, np.zeros(V + 1))
    with pytest.raises(ValueError, match="at least 2"):
        maxpool_union(a)
    with pytest.raises(ValueError, match="NaN"):
        nrf(a, np.full(V, np.nan))
    with pytest.raises(ValueError, match="no positive term"):
        combined_pseudo_terms(a, np.zeros(V, dtype=np.float32))


def _reference_pseudo_terms(vecs, k):
    """Top-k of each atom by weight (ties to lower id), outer product, (Π w)^(1/n)."""
    tops = []
    for v in vecs:
        pos = [j for j in range(len(v)) if v[j] > 0]
        tops.append(sorted(pos, key=lambda j: (-float(v[j]), j))[:k])
    out = {}
    for combo in itertools.product(*tops):
        w = math.prod(float(v[j]) for v, j in zip(vecs, combo, strict=True))
        out[combo] = w ** (1.0 / len(vecs))
    return out


@pytest.mark.parametrize("n_atoms", [2, 3])
def test_combined_pseudo_terms_reference(rng, n_atoms: int) -> None:
    vecs = [_sparse_vec(rng) for _ in range(n_atoms)]
    vecs[1][np.flatnonzero(vecs[0])[0]] = 5.0  # one term in the top-5 of two atoms
    q = combined_pseudo_terms(*vecs, top_k=5)
    got = {tuple(int(t) for t in row): float(w) for row, w in zip(q.terms, q.weights, strict=True)}
    ref = _reference_pseudo_terms(vecs, 5)
    assert got.keys() == ref.keys() and len(got) == 5**n_atoms
    for key, w in ref.items():
        assert got[key] == pytest.approx(w, rel=1e-6)
    if n_atoms == 2:  # the paper's sqrt(w_a · w_b)
        s, t = next(iter(ref))
        assert got[(s, t)] == pytest.approx(math.sqrt(vecs[0][s] * vecs[1][t]), rel=1e-6)
    assert not q.base.any()
    np.testing.assert_allclose(
        combined_pseudo_terms(*vecs, include_atoms=True).base, np.sum(vecs, axis=0)
    )


def test_combined_pseudo_terms_short_vectors(rng) -> None:
    a = np.zeros(V, dtype=np.float32)
    a[[3, 7]] = [1.0, 2.0]  # only two positive terms: fewer than top_k
    q = combined_pseudo_terms(a, _sparse_vec(rng), top_k=5)
    assert q.terms.shape == (10, 2) and set(q.terms[:, 0]) == {3, 7}


def _reference_scores(query: PseudoTermQuery, docs: np.ndarray) -> list[float]:
    out = []
    for d in docs:
        s = sum(float(query.base[j]) * float(d[j]) for j in range(len(d)))
        for tup, w in zip(query.terms, query.weights, strict=True):
            vals = [float(d[j]) for j in tup]
            if query.doc_weight == "min":
                g = min(vals)
            elif query.doc_weight == "product":
                g = math.prod(vals)
            else:
                g = math.prod(vals) ** (1.0 / len(vals))
            s += float(w) * g
        out.append(s)
    return out


@pytest.mark.parametrize("doc_weight", ["geometric", "min", "product"])
@pytest.mark.parametrize("n_atoms", [2, 3])
def test_pseudo_term_scores_brute_force(rng, doc_weight: str, n_atoms: int) -> None:
    vecs = [_sparse_vec(rng, 8) for _ in range(n_atoms)]
    docs = sp.random(70, V, density=0.3, format="csr", random_state=rng, dtype=np.float32)
    q = combined_pseudo_terms(*vecs, doc_weight=doc_weight, include_atoms=True)
    q = disentangled_negation(q, _sparse_vec(rng, 8))  # exercises a negative base
    assert (q.base < 0).any()
    got = pseudo_term_scores(q, docs)
    np.testing.assert_allclose(got, _reference_scores(q, docs.toarray()), rtol=1e-5, atol=1e-5)


def test_pseudo_terms_need_every_term_of_the_tuple() -> None:
    a = np.zeros(V, dtype=np.float32)
    b = np.zeros(V, dtype=np.float32)
    a[1], b[2] = 1.0, 4.0
    q = combined_pseudo_terms(a, b)
    docs = sp.csr_matrix(
        np.array(
            [[0, 9, 0] + [0] * (V - 3), [0, 0, 9] + [0] * (V - 3), [0, 1, 1] + [0] * (V - 3)],
            dtype=np.float32,
        )
    )
    scores = pseudo_term_scores(q, docs)
    # doc 0 has only A's term, doc 1 only B's: neither matches the AND; doc 2 has both
    assert scores.tolist() == pytest.approx([0.0, 0.0, 2.0])  # sqrt(1·4) · sqrt(1·1)


def test_negation_of_pseudo_term_query_spares_its_terms(rng) -> None:
    a, b, c = (_sparse_vec(rng, 10) for _ in range(3))
    q = combined_pseudo_terms(a, b)
    c[q.terms[0, 0]] = 2.0  # the negated atom shares a pseudo-term's term
    neg = disentangled_negation(q, c)
    in_q = np.zeros(V, dtype=bool)
    in_q[np.unique(q.terms)] = True
    ref = [-(float(c[j]) - (1.0 if in_q[j] else 0.0) * float(c[j])) for j in range(V)]
    np.testing.assert_allclose(neg.base, ref, atol=1e-6)
    assert neg.base[q.terms[0, 0]] == 0
    np.testing.assert_array_equal(neg.terms, q.terms)


def test_search_pseudo_terms_matches_brute_force(rng) -> None:
    docs = sp.random(120, V, density=0.25, format="csr", random_state=rng, dtype=np.float32)
    index = InvertedIndex(V)
    index.add(docs)
    queries = [combined_pseudo_terms(_sparse_vec(rng), _sparse_vec(rng)) for _ in range(3)]
    scores, ids = search_pseudo_terms(index, queries, 10)
    for r, q in enumerate(queries):
        ref = np.asarray(_reference_scores(q, docs.toarray()))
        np.testing.assert_allclose(scores[r], -np.sort(-ref)[:10], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ref[ids[r]], scores[r], rtol=1e-5, atol=1e-6)
