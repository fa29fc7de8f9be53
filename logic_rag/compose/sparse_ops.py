"""Zero-shot set operations on query vectors (AND / OR / NOT without training).

Krasakis, Yates and Kanoulas, "Constructing Set-Compositional and Negated Representations
for First-Stage Ranking" (arXiv:2501.07679, 2025) compose the SPLADE vectors of the atomic
queries of a logical query instead of encoding the whole query text:

=====================  =========================================  ==========================
set expression         operation                                  function
=====================  =========================================  ==========================
whole query text       vanilla: encode the full query             (nothing to compose)
A ∪ B                  MaxPool: ``max(a, b)`` per term            :func:`maxpool_union`
A ∖ B                  Disentangled Negation ``a − (b − 1_a ⊙ b)`` :func:`disentangled_negation`
A ∩ B                  Combined Pseudo-Terms (top-5 ⊗ top-5)      :func:`combined_pseudo_terms`
A ∖ B (baseline)       NRF ``a − λ b``                            :func:`nrf`
A ∖ B (baseline)       orthogonal negation ``a − (a·b / b·b) b``  :func:`orthogonal_negation`
=====================  =========================================  ==========================

Score fusion (+, ·, −) of separately retrieved atoms is a result-level operation and lives
with the result-set algebra, not here.

Representation: every function takes and returns 1-D float32 numpy arrays over the
vocabulary (30,522 floats, 120 KB: cheap, and elementwise formulas read like the paper).
Sparse inputs (a 1-row CSR from :class:`~logic_rag.encoders.sparse.SpladeEncoder`) are
converted at the boundary by :func:`as_vector`; :func:`to_csr` converts back for
:meth:`logic_rag.index.inverted.InvertedIndex.search`.

The exact equations could only be checked against the paper's abstract and the design
summary here (the body of the paper was not reachable); each function states the formula
it implements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:  # pragma: no cover
    from logic_rag.index.inverted import InvertedIndex

__all__ = [
    "as_vector",
    "to_csr",
    "maxpool_union",
    "disentangled_negation",
    "nrf",
    "orthogonal_negation",
    "combined_pseudo_terms",
    "MAX_PSEUDO_TERMS",
    "PseudoTermQuery",
    "pseudo_term_scores",
    "search_pseudo_terms",
]

CITATION = (
    "Krasakis, A. M., Yates, A., Kanoulas, E. Constructing Set-Compositional and Negated "
    "Representations for First-Stage Ranking. arXiv:2501.07679 (2025)."
)

DocWeight = Literal["geometric", "min", "product"]
# Documents scored per block by pseudo_term_scores (bounds its (block, m, n) temporary).
_DOC_BLOCK = 32_768
# Floats in one (block, m, n) temporary of pseudo_term_scores (32 MiB at float64).
_BLOCK_FLOATS = 4_000_000
#: Most pseudo-terms one intersection builds: 5^3, so up to three atoms keep the paper's
#: top-5 outer product exactly; with more atoms each atom contributes fewer top terms
#: (``top_k = floor(MAX_PSEUDO_TERMS ** (1/n))``, at least 1), instead of 5^n tuples.
MAX_PSEUDO_TERMS = 125


def as_vector(x: Any, size: int | None = None) -> np.ndarray:
    """A query vector as a 1-D float32 array (accepts a 1-row sparse matrix or an array)."""
    if sp.issparse(x):
        if x.shape[0] != 1:
            raise ValueError(f"expected one query row, got a sparse matrix of shape {x.shape}")
        vec = np.asarray(x.toarray(), dtype=np.float32).ravel()
    else:
        vec = np.asarray(x, dtype=np.float32)
        if vec.ndim == 2 and vec.shape[0] == 1:
            vec = vec.ravel()
        if vec.ndim != 1:
            raise ValueError(f"expected a 1-D query vector, got shape {vec.shape}")
    if size is not None and vec.shape[0] != size:
        raise ValueError(f"query vectors differ in size: {vec.shape[0]} vs {size}")
    if not np.all(np.isfinite(vec)):
        raise ValueError("query vector contains NaN or infinite weights")
    return vec


def _vectors(vectors: Sequence[Any], minimum: int, op: str) -> list[np.ndarray]:
    if len(vectors) < minimum:
        raise ValueError(f"{op} needs at least {minimum} query vectors, got {len(vectors)}")
    first = as_vector(vectors[0])
    return [first, *(as_vector(v, first.shape[0]) for v in vectors[1:])]


def to_csr(*vectors: np.ndarray) -> sp.csr_matrix:
    """Stack 1-D vectors into a CSR query matrix for ``InvertedIndex.search``."""
    return sp.csr_matrix(np.vstack([as_vector(v) for v in vectors]))


def maxpool_union(*vectors: Any) -> np.ndarray:
    """A ∪ B (∪ C ...): elementwise maximum, ``u_j = max(a_j, b_j, ...)``.

    A document matching any atom keeps that atom's term weights, so it scores at least as
    well as under the atom's own query. (Krasakis et al., MaxPool.)
    """
    vecs = _vectors(vectors, 2, "maxpool_union")
    return np.maximum.reduce(vecs).astype(np.float32, copy=False)


def disentangled_negation(a: Any, *negated: Any) -> np.ndarray:
    """A ∖ B: Disentangled Negation, ``a − (b − 1_a ⊙ b)``.

    ``1_a`` is the indicator of the terms present in ``a`` (``a_j != 0``), so
    ``b − 1_a ⊙ b`` keeps only the terms of ``b`` that ``a`` does not use, and the result is
    ``a_j`` where ``a_j != 0`` and ``−b_j`` elsewhere: only the negated *parts* of the query
    are penalised, and terms shared by both atoms ("orchids of Malaysia" ∖ "orchids of
    Thailand" shares "orchid") are left alone. With several negated atoms,
    A ∖ B ∖ C = A ∖ (B ∪ C), the negated vectors are max-pooled first.

    ``a`` may be a :class:`PseudoTermQuery` (A ∩ B ∖ C): then the terms "in a" are its
    base terms plus every term of its pseudo-terms, and the penalty goes into its base.
    (Krasakis et al., Disentangled Negation.)
    """
    if isinstance(a, PseudoTermQuery):
        return _negate_pseudo_terms(a, negated)
    vecs = _vectors([a, *negated], 2, "disentangled_negation")
    av = vecs[0]
    b = maxpool_union(*vecs[1:]) if len(vecs) > 2 else vecs[1]
    in_a = (av != 0).astype(np.float32)
    return (av - (b - in_a * b)).astype(np.float32, copy=False)


def nrf(a: Any, b: Any, lam: float = 1.0) -> np.ndarray:
    """A ∖ B baseline: ``a − λ b`` (subtract the whole negated vector, shared terms too).

    Baseline in Krasakis et al.; it also penalises terms both atoms share, which is the
    failure Disentangled Negation fixes.
    """
    if not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam must be a finite non-negative number, got {lam}")
    av, bv = _vectors([a, b], 2, "nrf")
    return (av - np.float32(lam) * bv).astype(np.float32, copy=False)


def orthogonal_negation(a: Any, b: Any, *, eps: float = 1e-12) -> np.ndarray:
    """A ∖ B baseline: project ``a`` onto the orthogonal complement of ``b``.

    ``a − (a·b / b·b) b``, so the result has zero dot product with ``b``. Works for dense
    embeddings and sparse term vectors alike (baseline in Krasakis et al.). When ``b`` is
    (numerically) zero there is nothing to remove and ``a`` is returned unchanged.
    """
    av, bv = _vectors([a, b], 2, "orthogonal_negation")
    a64, b64 = av.astype(np.float64), bv.astype(np.float64)
    bb = float(b64 @ b64)
    if bb <= eps:
        return av.copy()
    return (a64 - (float(a64 @ b64) / bb) * b64).astype(np.float32)


@dataclass(frozen=True)
class PseudoTermQuery:
    """A query made of pseudo-terms: tuples of vocabulary terms that must co-occur.

    Score of a document vector ``d``::

        score(d) = base · d + Σ_p weights[p] · g(d[terms[p, 0]], ..., d[terms[p, n-1]])

    where ``g`` is the document-side weight of a pseudo-term, chosen by ``doc_weight``:

    - ``"geometric"`` (default): ``(Π_i d_i)^(1/n)``, the same geometric mean that builds
      the query weights (``sqrt`` for pairs), so a pseudo-term is scored symmetrically;
    - ``"min"``: ``min_i d_i`` (fuzzy AND);
    - ``"product"``: ``Π_i d_i``.

    All three are 0 unless the document has every term of the tuple, which is what makes a
    pseudo-term an AND. ``base`` holds ordinary term weights added on top (zeros by
    default; negative after a negation).

    ``top_k`` is the number of top terms each atom contributed and ``truncated`` says
    whether that is fewer than asked for, because ``top_k ** n_atoms`` would have exceeded
    :data:`MAX_PSEUDO_TERMS` (see :func:`combined_pseudo_terms`); :meth:`info` reports both.
    """

    terms: np.ndarray  # (m, n) int64 vocabulary ids
    weights: np.ndarray  # (m,) float32
    base: np.ndarray  # (vocab,) float32
    doc_weight: DocWeight = "geometric"
    top_k: int | None = None
    truncated: bool = False
    support: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        terms = np.asarray(self.terms, dtype=np.int64)
        weights = np.asarray(self.weights, dtype=np.float32)
        base = as_vector(self.base)
        if terms.ndim != 2 or terms.shape[0] != weights.shape[0] or weights.ndim != 1:
            raise ValueError(
                f"terms (m, n) and weights (m,) disagree: {terms.shape}, {weights.shape}"
            )
        if terms.size and (terms.min() < 0 or terms.max() >= base.shape[0]):
            raise ValueError("pseudo-term ids fall outside the vocabulary")
        if self.doc_weight not in ("geometric", "min", "product"):
            raise ValueError(f"doc_weight must be geometric, min or product: {self.doc_weight!r}")
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "base", base)
        support = np.union1d(np.flatnonzero(base), np.unique(terms))
        object.__setattr__(self, "support", support.astype(np.int64))

    @property
    def vocab_size(self) -> int:
        return int(self.base.shape[0])

    @property
    def terms_used(self) -> int:
        """Number of pseudo-terms (tuples) in the query."""
        return int(self.terms.shape[0])

    def info(self) -> dict[str, Any]:
        """What the intersection kept, for a hit's logic explanation."""
        return {
            "pseudo_terms": self.terms_used,
            "atoms": int(self.terms.shape[1]),
            "top_k_per_atom": self.top_k,
            "truncated": bool(self.truncated),
            "max_pseudo_terms": MAX_PSEUDO_TERMS,
        }


def _top_terms(vec: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    positive = np.flatnonzero(vec > 0)
    if positive.size == 0:
        raise ValueError("an intersected query vector has no positive term weight")
    order = np.lexsort((positive, -vec[positive]))[:k]
    ids = positive[order]
    return ids, vec[ids]


def combined_pseudo_terms(
    *vectors: Any,
    top_k: int = 5,
    doc_weight: DocWeight = "geometric",
    include_atoms: bool = False,
    max_terms: int = MAX_PSEUDO_TERMS,
) -> PseudoTermQuery:
    """A ∩ B (∩ C ...): Combined Pseudo-Terms.

    Take the ``top_k`` (default 5, as in Krasakis et al.) heaviest positive terms of each
    atom and form their outer product: every tuple ``(s, t)`` with ``s`` from A's top terms
    and ``t`` from B's becomes a pseudo-term of weight ``sqrt(a_s · b_t)``; for n atoms,
    tuples of n terms with weight ``(Π w)^(1/n)``. A pseudo-term only matches documents that
    contain all its terms (see :class:`PseudoTermQuery` for the document side), so the
    score rewards co-occurrence instead of a high weight on either atom alone.

    The outer product has ``top_k ** n`` tuples, which a long query ("A and B and ... and
    H") would blow up; at most ``max_terms`` are built: each atom then contributes
    ``floor(max_terms ** (1/n))`` top terms (at least 1), and the result is marked
    ``truncated``.

    ``include_atoms=True`` also adds the atoms' summed vectors as ordinary terms (``base``),
    which breaks ties among documents that match no pseudo-term.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    if max_terms < 1:
        raise ValueError(f"max_terms must be >= 1, got {max_terms}")
    vecs = _vectors(vectors, 2, "combined_pseudo_terms")
    n = len(vecs)
    per_atom = top_k
    while per_atom > 1 and per_atom**n > max_terms:
        per_atom -= 1
    full = [_top_terms(v, top_k) for v in vecs]  # heaviest first, so a prefix is a top
    tops = [(ids[:per_atom], w[:per_atom]) for ids, w in full]
    truncated = any(len(ids) > per_atom for ids, _ in full)
    # Cartesian product built column by column: no n-dimensional grids (numpy allows 64).
    terms = np.zeros((1, 0), dtype=np.int64)
    log_w = np.zeros(1, dtype=np.float64)
    for ids, w in tops:
        m = terms.shape[0]
        terms = np.concatenate(
            [np.repeat(terms, len(ids), axis=0), np.tile(ids.astype(np.int64), m)[:, None]], axis=1
        )
        log_w = np.repeat(log_w, len(ids)) + np.tile(np.log(w.astype(np.float64)), m)
    weights = np.exp(log_w / n).astype(np.float32)
    base = np.sum(vecs, axis=0) if include_atoms else np.zeros_like(vecs[0])
    return PseudoTermQuery(
        terms=terms,
        weights=weights,
        base=base,
        doc_weight=doc_weight,
        top_k=per_atom,
        truncated=bool(truncated),
    )


def _negate_pseudo_terms(query: PseudoTermQuery, negated: Sequence[Any]) -> PseudoTermQuery:
    if not negated:
        raise ValueError("disentangled_negation needs at least one negated query vector")
    vecs = [as_vector(v, query.vocab_size) for v in negated]
    b = maxpool_union(*vecs) if len(vecs) > 1 else vecs[0]
    in_a = np.zeros(query.vocab_size, dtype=np.float32)
    in_a[query.support] = 1.0
    base = (query.base - (b - in_a * b)).astype(np.float32)
    return PseudoTermQuery(
        terms=query.terms,
        weights=query.weights,
        base=base,
        doc_weight=query.doc_weight,
        top_k=query.top_k,
        truncated=query.truncated,
    )


def pseudo_term_scores(query: PseudoTermQuery, doc_matrix: Any) -> np.ndarray:
    """Scores ``(n_docs,)`` of every document under a :class:`PseudoTermQuery`.

    ``doc_matrix`` is a doc x term sparse matrix. Document weights must be non-negative
    (SPLADE outputs are), since a geometric mean of negative weights is undefined. Over an
    :class:`~logic_rag.index.inverted.InvertedIndex`, :func:`search_pseudo_terms` reads the
    posting lists instead, which avoids slicing columns of a large CSR matrix.
    """
    if not sp.issparse(doc_matrix):
        raise TypeError("doc_matrix must be a scipy.sparse doc x term matrix")
    postings = sp.csr_matrix(sp.csr_matrix(doc_matrix).T, dtype=np.float32)
    return _pseudo_term_scores(query, postings)


def _pseudo_term_scores(query: PseudoTermQuery, postings: sp.csr_matrix) -> np.ndarray:
    """Scores from term x doc posting lists; reads only the rows of the query's terms."""
    if postings.shape[0] != query.vocab_size:
        raise ValueError(
            f"documents have {postings.shape[0]} term dimensions, the query {query.vocab_size}"
        )
    base_terms = np.flatnonzero(query.base)
    base = query.base[base_terms].astype(np.float64)
    scores = np.asarray(postings[base_terms].T @ base, dtype=np.float64).ravel()
    if query.terms.shape[0] == 0:
        return scores.astype(np.float32)
    uniq, local = np.unique(query.terms, return_inverse=True)
    local = local.reshape(query.terms.shape)
    cols = sp.csr_matrix(postings[uniq].T)  # (n_docs, n_unique): the posting lists involved
    if cols.nnz and cols.data.min() < 0:
        raise ValueError("pseudo-term scoring needs non-negative document term weights")
    weights = query.weights.astype(np.float64)
    m, n = query.terms.shape
    rows = max(1, min(_DOC_BLOCK, _BLOCK_FLOATS // max(m * n, 1)))
    for start in range(0, cols.shape[0], rows):
        block = cols[start : start + rows].toarray().astype(np.float64)
        per_term = block[:, local]  # (block, m, n)
        if query.doc_weight == "min":
            doc_w = per_term.min(axis=2)
        elif query.doc_weight == "product":
            doc_w = per_term.prod(axis=2)
        else:
            doc_w = per_term.prod(axis=2) ** (1.0 / n)
        scores[start : start + block.shape[0]] += doc_w @ weights
    return scores.astype(np.float32)


def search_pseudo_terms(
    index: InvertedIndex, queries: Sequence[PseudoTermQuery], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-``k`` of an :class:`~logic_rag.index.inverted.InvertedIndex` under
    pseudo-term queries; same output convention as ``InvertedIndex.search``."""
    from logic_rag.index.inverted import top_k

    if isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    k = int(min(k, len(index)))  # capped before anything of size k is allocated
    postings = index.postings
    if not queries or k == 0:
        return np.zeros((len(queries), k), np.float32), np.zeros((len(queries), k), np.int64)
    scores = np.vstack([_pseudo_term_scores(q, postings) for q in queries])
    return top_k(scores, k)
