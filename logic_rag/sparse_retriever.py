"""The learned-sparse (SPLADE) side of the logical retriever.

Krasakis et al. compose SPLADE vectors of the atoms of a query directly, with no
training: union is an element-wise max (MaxPool), intersection builds Combined
Pseudo-Terms from the atoms' top-5 terms (a pseudo-term only matches documents that hold
all its terms), and negation is Disentangled Negation (subtract only the negated atom's
terms that the positive side does not use). NRF (A − λB) is the simple baseline.

Strategies:

- ``splade``: the whole query's SPLADE vector (vanilla sparse retrieval);
- ``splade-compose``: AND → Combined Pseudo-Terms, OR → MaxPool, NOT → Disentangled
  Negation;
- ``splade-nrf``: AND → sum, OR → MaxPool, NOT → A − λB with λ = ``config.negation_weight``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from logic_rag.compose.sparse_ops import (
    PseudoTermQuery,
    combined_pseudo_terms,
    disentangled_negation,
    maxpool_union,
    nrf,
    search_pseudo_terms,
)
from logic_rag.corpus import Document
from logic_rag.errors import IndexMismatchError
from logic_rag.index.inverted import InvertedIndex
from logic_rag.query.algebra import Atom, LogicalQuery, Not, Or
from logic_rag.retriever import Hit, make_hits

__all__ = ["SparseSide", "compose_sparse"]

_NPZ = "sparse/inverted.npz"

SparseQuery = np.ndarray | PseudoTermQuery


def compose_sparse(
    q: LogicalQuery, vectors: dict[str, np.ndarray], *, mode: str, lam: float = 1.0
) -> SparseQuery:
    """Build one sparse query for ``q`` from its atoms' SPLADE vectors.

    ``mode`` is ``compose`` (Krasakis et al.'s CPT / MaxPool / Disentangled Negation) or
    ``nrf`` (sum / MaxPool / A − λB).
    """
    if isinstance(q, Atom):
        return vectors[q.text]
    if isinstance(q, Not):
        raise ValueError("a query cannot be a bare negation: NOT needs something to subtract from")
    children_pos = [a for a in q.args if not isinstance(a, Not)]
    children_neg = [a.arg for a in q.args if isinstance(a, Not)]
    if isinstance(q, Or):
        parts = [compose_sparse(a, vectors, mode=mode, lam=lam) for a in q.args]
        return maxpool_union(*[_dense_part(p) for p in parts])
    pos = [compose_sparse(a, vectors, mode=mode, lam=lam) for a in children_pos]
    if not pos:
        raise ValueError("an AND needs at least one positive constraint")
    neg = [_dense_part(compose_sparse(a, vectors, mode=mode, lam=lam)) for a in children_neg]
    if mode == "compose":
        base: SparseQuery = (
            combined_pseudo_terms(*[_dense_part(p) for p in pos]) if len(pos) > 1 else pos[0]
        )
        return disentangled_negation(base, *neg) if neg else base
    combined = np.sum([_dense_part(p) for p in pos], axis=0)
    for b in neg:
        combined = nrf(combined, b, lam)
    return combined


def _dense_part(q: SparseQuery) -> np.ndarray:
    """A plain vector for a sub-query (a nested pseudo-term query keeps its terms' weights)."""
    if isinstance(q, PseudoTermQuery):
        vec = q.base.copy()
        np.maximum.at(vec, q.terms.ravel(), np.repeat(q.weights, q.terms.shape[1]))
        return vec
    return q


class SparseSide:
    """SPLADE encoder + inverted index over the same documents as the dense side."""

    def __init__(self, encoder: Any, index: InvertedIndex, documents: Sequence[Document]) -> None:
        if len(index) != len(documents):
            raise IndexMismatchError(
                f"the SPLADE index holds {len(index)} documents, the corpus {len(documents)}"
            )
        self.encoder = encoder
        self.index = index
        self.documents = list(documents)

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        *,
        model: str | os.PathLike[str] = "splade-tiny",
        show_progress_bar: bool | None = None,
    ) -> SparseSide:
        from logic_rag.encoders.sparse import SpladeEncoder

        docs = list(documents)
        encoder = SpladeEncoder(model)
        index = InvertedIndex(encoder.vocab_size, metadata={"model": encoder.name})
        index.add(
            encoder.encode_documents([d.content for d in docs], show_progress_bar=show_progress_bar)
        )
        return cls(encoder, index, docs)

    def writers(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Files and manifest entries for the index folder."""

        def write(path: Path) -> None:
            self.index.save(path.parent)

        manifest = {
            "model": self.encoder.name,
            "weights_sha256": self.encoder.fingerprint,
            "vocab_size": self.index.vocab_size,
            "file": _NPZ,
        }
        return {_NPZ: write}, manifest

    @classmethod
    def load(
        cls, folder: Path, manifest: dict[str, Any], documents: Sequence[Document]
    ) -> SparseSide:
        from logic_rag.encoders.sparse import SpladeEncoder

        encoder = SpladeEncoder(manifest["model"])
        if encoder.fingerprint != manifest.get("weights_sha256"):
            raise IndexMismatchError(
                f"{folder}: the SPLADE index was built with other weights than "
                f"{manifest['model']!r}; rebuild the index"
            )
        index = InvertedIndex.load(
            folder / Path(_NPZ).parent, expected_vocab_size=encoder.vocab_size
        )
        return cls(encoder, index, documents)

    def search(
        self, plans: Sequence[Any], k: int, mode: str, negation_weight: float = 1.0
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Search the plans (``text``, ``logic``, ``atoms``) of a batch: one encoder call.

        ``mode`` is ``query`` (the whole query's vector), ``compose`` (Krasakis et al.) or
        ``nrf``; queries with a single atom always use their whole-query vector. Returns
        ``(scores, rows)`` per plan.
        """
        texts: list[str] = []
        rows: list[int] = []
        for plan in plans:
            rows.append(len(texts))
            texts.extend([plan.text, *(a.text for a in plan.atoms)])
        matrix = self.encoder.encode_queries(texts)
        queries: list[SparseQuery] = []
        for plan, row in zip(plans, rows, strict=True):
            atoms = list(plan.atoms)
            if mode == "query" or len(atoms) < 2:
                queries.append(matrix[row].toarray().ravel())
                continue
            vectors = {a.text: matrix[row + 1 + i].toarray().ravel() for i, a in enumerate(atoms)}
            queries.append(compose_sparse(plan.logic, vectors, mode=mode, lam=negation_weight))
        k = min(k, len(self.documents))
        results: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(queries)
        plain = [i for i, q in enumerate(queries) if isinstance(q, np.ndarray)]
        if plain:
            from scipy import sparse as sp

            scores, ids = self.index.search(
                sp.csr_matrix(np.vstack([queries[i] for i in plain])), k
            )
            for j, i in enumerate(plain):
                results[i] = (scores[j], ids[j])
        pseudo = [i for i, q in enumerate(queries) if isinstance(q, PseudoTermQuery)]
        if pseudo:
            scores, ids = search_pseudo_terms(self.index, [queries[i] for i in pseudo], k)
            for j, i in enumerate(pseudo):
                results[i] = (scores[j], ids[j])
        return [r for r in results if r is not None]

    def _hits(self, scores: np.ndarray, ids: np.ndarray) -> list[Hit]:
        return make_hits(self.documents, scores, ids)
